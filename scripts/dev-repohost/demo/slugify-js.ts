import { type DemoRepo, nodePackageJson } from "./demo-repo.js";

const SLUGIFY_BASE = `const COMBINING_MARKS = /[\\u0300-\\u036f]/g;

/**
 * Turns text into a URL slug: ASCII letters and digits, words joined by a separator.
 * @param {string} input
 * @param {{ separator?: string, lowercase?: boolean }} [options]
 * @returns {string}
 */
export function slugify(input, options = {}) {
  const { separator = "-", lowercase = true } = options;
  if (typeof input !== "string") throw new TypeError("slugify expects a string");
  const slug = words(input).join(separator);
  return lowercase ? slug.toLowerCase() : slug;
}

function words(input) {
  return input
    .normalize("NFKD")
    .replace(COMBINING_MARKS, "")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
}
`;

const SLUGIFY_MAX_LENGTH = `const COMBINING_MARKS = /[\\u0300-\\u036f]/g;

/**
 * Turns text into a URL slug: ASCII letters and digits, words joined by a separator.
 * With maxLength, the slug keeps as many whole words as fit; a first word longer than
 * the limit is cut. The slug never ends with a separator.
 * @param {string} input
 * @param {{ separator?: string, lowercase?: boolean, maxLength?: number }} [options]
 * @returns {string}
 */
export function slugify(input, options = {}) {
  const { separator = "-", lowercase = true, maxLength = Infinity } = options;
  if (typeof input !== "string") throw new TypeError("slugify expects a string");
  if (!(maxLength >= 0)) throw new RangeError("maxLength must be a non-negative number");
  const slug = joinWithin(words(input), separator, maxLength);
  return lowercase ? slug.toLowerCase() : slug;
}

function words(input) {
  return input
    .normalize("NFKD")
    .replace(COMBINING_MARKS, "")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
}

function joinWithin(parts, separator, maxLength) {
  let slug = "";
  for (const part of parts) {
    const longer = slug === "" ? part : slug + separator + part;
    if (longer.length > maxLength) return slug === "" ? part.slice(0, maxLength) : slug;
    slug = longer;
  }
  return slug;
}
`;

const TESTS_BASE = `import { test } from "node:test";
import assert from "node:assert/strict";
import { slugify } from "../src/index.js";

test("joins words with hyphens", () => {
  assert.equal(slugify("Hello World"), "hello-world");
});

test("drops punctuation", () => {
  assert.equal(slugify("Hello, World! How are you?"), "hello-world-how-are-you");
});

test("removes accents", () => {
  assert.equal(slugify("Crème brûlée à la carte"), "creme-brulee-a-la-carte");
});

test("uses a custom separator", () => {
  assert.equal(slugify("Hello World", { separator: "_" }), "hello_world");
});

test("keeps case when asked", () => {
  assert.equal(slugify("Hello World", { lowercase: false }), "Hello-World");
});

test("gives an empty slug for text without letters or digits", () => {
  assert.equal(slugify("!!! ???"), "");
});

test("rejects non-strings", () => {
  assert.throws(() => slugify(42), TypeError);
});
`;

const TESTS_MAX_LENGTH = `${TESTS_BASE}
test("maxLength keeps whole words that fit", () => {
  assert.equal(slugify("The quick brown fox", { maxLength: 12 }), "the-quick");
});

test("maxLength cuts a first word longer than the limit", () => {
  assert.equal(slugify("Supercalifragilistic", { maxLength: 5 }), "super");
});

test("maxLength never leaves a trailing separator", () => {
  assert.equal(slugify("ab cd ef", { maxLength: 6, separator: "--" }), "ab--cd");
});

test("maxLength must not be negative", () => {
  assert.throws(() => slugify("text", { maxLength: -1 }), RangeError);
});
`;

const README_BASE = `# slugify-js

\`slugify(text, options)\` turns text into a URL slug.

Options: \`separator\` (default \`-\`), \`lowercase\` (default \`true\`).

Run the tests with \`npm test\`.
`;

const README_MAX_LENGTH = README_BASE.replace(
  "(default `true`).",
  "(default `true`), `maxLength` (keeps the whole words that fit).",
);

/** A JavaScript package whose PR 1 adds a feature with tests that fail before it. */
export function slugifyDemo(owner: string, name: string): DemoRepo {
  return {
    owner,
    name,
    files: {
      "package.json": nodePackageJson(name, "Turn text into URL slugs"),
      "README.md": README_BASE,
      ".gitignore": "node_modules/\n",
      "src/index.js": 'export { slugify } from "./slugify.js";\n',
      "src/slugify.js": SLUGIFY_BASE,
      "test/slugify.test.js": TESTS_BASE,
    },
    pulls: [
      {
        number: 1,
        title: "Add a maxLength option to slugify",
        body:
          "Long titles make unwieldy URLs. `maxLength` limits the slug to whole words that fit,\n" +
          "cuts a single overlong word, and never leaves a trailing separator.",
        changes: {
          "src/slugify.js": SLUGIFY_MAX_LENGTH,
          "test/slugify.test.js": TESTS_MAX_LENGTH,
          "README.md": README_MAX_LENGTH,
        },
      },
    ],
    issues: [
      {
        number: 2,
        title: "Slugs of long titles are too long for URLs",
        body:
          "Blog posts with long titles get slugs of 150 characters and more, which some of our\n" +
          "share targets cut off. slugify needs a way to keep slugs short: keep as many whole\n" +
          "words as fit in a maximum length, cut a single word that is longer than the limit,\n" +
          "and never end the slug with a separator.\n\n" +
          "First seen after 3f2a9c1d7e5b4a6c8d0e2f4a6b8c0d2e4f6a8b0c, reported in\n" +
          "https://github.com/assay-demo/slugify-js/discussions/7 by @ada.",
      },
    ],
  };
}
