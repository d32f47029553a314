import { createHash } from "node:crypto";
import type { FileTree } from "../repo-builder.js";
import { type DemoRepo, nodePackageJson } from "./demo-repo.js";
import { gradientPng } from "./png.js";

const MATH = `export function sum(values) {
  let total = 0;
  for (const value of values) total += value;
  return total;
}

export function mean(values) {
  if (values.length === 0) return NaN;
  let total = 0;
  for (const value of values) total += value;
  return total / values.length;
}

export function clamp(value, min, max) {
  return Math.min(Math.max(value, min), max);
}
`;

const STRINGS = `export function capitalize(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function truncate(text, length, ellipsis = "…") {
  if (text.length <= length) return text;
  return text.slice(0, Math.max(0, length - ellipsis.length)) + ellipsis;
}
`;

const INDEX = `export { clamp, mean, sum } from "./math.js";
export { capitalize, truncate } from "./strings.js";
`;

const MATH_TESTS = `import { test } from "node:test";
import assert from "node:assert/strict";
import { clamp, mean, sum } from "../src/index.js";

test("sum adds values", () => {
  assert.equal(sum([1, 2, 3]), 6);
});

test("sum of nothing is zero", () => {
  assert.equal(sum([]), 0);
});

test("mean averages values", () => {
  assert.equal(mean([2, 4]), 3);
});

test("mean of nothing is NaN", () => {
  assert.ok(Number.isNaN(mean([])));
});

test("clamp keeps values inside the range", () => {
  assert.equal(clamp(5, 0, 10), 5);
});

test("clamp raises values below the range", () => {
  assert.equal(clamp(-1, 0, 10), 0);
});

test("clamp lowers values above the range", () => {
  assert.equal(clamp(11, 0, 10), 10);
});
`;

const STRINGS_TESTS = `import { test } from "node:test";
import assert from "node:assert/strict";
import { capitalize, truncate } from "../src/index.js";

test("capitalize uppercases the first letter", () => {
  assert.equal(capitalize("hello"), "Hello");
});

test("capitalize leaves empty text alone", () => {
  assert.equal(capitalize(""), "");
});

test("capitalize keeps the rest of the word", () => {
  assert.equal(capitalize("mcDonald"), "McDonald");
});

test("truncate shortens long text with an ellipsis", () => {
  assert.equal(truncate("hello world", 8), "hello w…");
});

test("truncate leaves short text alone", () => {
  assert.equal(truncate("short", 10), "short");
});
`;

const NOTES = `# Notes

Scratch notes from the first version; the README is the reference now.
`;

const README = `# cases-js

Small math and string helpers. Each pull request of this repository is one case of the
pull request import pipeline (see docs/dev-repohost.md in Assay).

Run the tests with \`npm test\`.
`;

/** PR 1: a refactor of source only; no test file changes. */
const MEAN_REUSES_SUM = MATH.replace(
  `  if (values.length === 0) return NaN;
  let total = 0;
  for (const value of values) total += value;
  return total / values.length;`,
  `  if (values.length === 0) return NaN;
  return sum(values) / values.length;`,
);

/** PR 2: clamp validates its bounds, but the added tests only cover behaviour that already worked. */
const CLAMP_CHECKS_BOUNDS = MATH.replace(
  `export function clamp(value, min, max) {
  return`,
  `export function clamp(value, min, max) {
  if (min > max) throw new RangeError("clamp: min is greater than max");
  return`,
);

const CLAMP_EDGE_TESTS = `${MATH_TESTS}
test("clamp keeps a value equal to min", () => {
  assert.equal(clamp(0, 0, 10), 0);
});

test("clamp works with negative ranges", () => {
  assert.equal(clamp(-20, -10, -5), -10);
});
`;

/** PR 3: capitalize lowercases the rest, which breaks the existing "keeps the rest" test. */
const CAPITALIZE_LOWERS_REST = STRINGS.replace(
  "text.charAt(0).toUpperCase() + text.slice(1)",
  "text.charAt(0).toUpperCase() + text.slice(1).toLowerCase()",
);

const CAPITALIZE_LOWERS_REST_TESTS = `${STRINGS_TESTS}
test("capitalize lowercases the rest of the word", () => {
  assert.equal(capitalize("hELLO"), "Hello");
});
`;

/** PR 4: more than 300 generated files and more than 2 MiB of diff. */
const OVERSIZE_FILE_COUNT = 320;
const OVERSIZE_LINES_PER_FILE = 128;

function generatedTables(): FileTree {
  const files: FileTree = {};
  for (let table = 0; table < OVERSIZE_FILE_COUNT; table += 1) {
    const id = String(table).padStart(3, "0");
    const rows = Array.from(
      { length: OVERSIZE_LINES_PER_FILE },
      (_, row) => `  "${createHash("sha256").update(`${table}:${row}`).digest("hex")}",`,
    );
    files[`src/generated/table-${id}.js`] = `export const TABLE_${id} = [\n${rows.join("\n")}\n];\n`;
  }
  return files;
}

/** PR 5: a rename, a removal, additions (one binary) and test changes in one PR. */
const WORDS = `export function words(text) {
  return text.split(/\\s+/).filter(Boolean);
}

export function wordCount(text) {
  return words(text).length;
}
`;

const INDEX_WITH_WORDS = `export { clamp, mean, sum } from "./math.js";
export { capitalize, truncate } from "./text.js";
export { wordCount, words } from "./words.js";
`;

// A namespace import, so that before the change each test fails on its own instead of
// the whole file failing to load.
const WORDS_TESTS = `import { test } from "node:test";
import assert from "node:assert/strict";
import * as lib from "../src/index.js";

test("words splits on whitespace", () => {
  assert.deepEqual(lib.words("  one two\\tthree\\n"), ["one", "two", "three"]);
});

test("wordCount counts words", () => {
  assert.equal(lib.wordCount("a b c d"), 4);
});
`;

const STRINGS_TESTS_WITH_ELLIPSIS = `${STRINGS_TESTS}
test("truncate takes a custom ellipsis", () => {
  assert.equal(truncate("hello world", 8, "..."), "hello...");
});
`;

/** The import pipeline's failure and edge cases, one pull request each. */
export function casesDemo(): DemoRepo {
  return {
    owner: "assay-fixtures",
    name: "cases-js",
    files: {
      "package.json": nodePackageJson("cases-js", "Import pipeline cases"),
      "README.md": README,
      "NOTES.md": NOTES,
      "src/index.js": INDEX,
      "src/math.js": MATH,
      "src/strings.js": STRINGS,
      "test/math.test.js": MATH_TESTS,
      "test/strings.test.js": STRINGS_TESTS,
    },
    pulls: [
      {
        number: 1,
        title: "Reuse sum in mean",
        body: "A refactor with no behaviour change and no test changes.",
        changes: { "src/math.js": MEAN_REUSES_SUM },
      },
      {
        number: 2,
        title: "Check clamp bounds",
        body: "clamp now rejects min > max. The new tests cover only cases that already worked.",
        changes: { "src/math.js": CLAMP_CHECKS_BOUNDS, "test/math.test.js": CLAMP_EDGE_TESTS },
      },
      {
        number: 3,
        title: "Capitalize lowercases the rest of the word",
        body: "Breaks the existing test that expects the rest of the word to be kept.",
        changes: { "src/strings.js": CAPITALIZE_LOWERS_REST, "test/strings.test.js": CAPITALIZE_LOWERS_REST_TESTS },
      },
      {
        number: 4,
        title: "Vendor generated lookup tables",
        body: `Adds ${OVERSIZE_FILE_COUNT} generated files: larger than an assessment task may be.`,
        changes: generatedTables(),
      },
      {
        number: 5,
        title: "Rename strings to text and add word helpers",
        body: "Renames a module, removes stale notes, adds a logo (binary) and word helpers with tests.",
        renames: { "src/strings.js": "src/text.js" },
        changes: {
          "NOTES.md": null,
          "assets/logo.png": gradientPng(16),
          "src/index.js": INDEX_WITH_WORDS,
          "src/words.js": WORDS,
          "test/strings.test.js": STRINGS_TESTS_WITH_ELLIPSIS,
          "test/words.test.js": WORDS_TESTS,
        },
      },
    ],
    issues: [
      {
        number: 6,
        title: "clamp accepts a minimum above the maximum",
        body: "clamp(5, 10, 1) quietly returns a number; it should reject bounds where min > max.",
      },
    ],
  };
}
