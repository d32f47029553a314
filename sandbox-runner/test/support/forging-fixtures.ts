import { execFileSync } from "node:child_process";

// Fixtures of forging.test.ts: per framework, a small project as a task's snapshot holds it
// (the hidden tests included), the right and a wrong solution, and wrong solutions carrying a
// payload that tries to make the hidden tests pass anyway while sparing the canaries. Every
// payload writes `[forging:<label>]` lines to stderr (Python: at exit, once pytest's capture
// is over) so a run shows that it was loaded and what it did.

/** A framework as the suite names it: unittest suites run under the pytest framework module. */
export type ForgingFramework = "node-test" | "jest" | "vitest" | "mocha" | "ava" | "tape" | "uvu" | "pytest" | "unittest";

export interface HiddenTest {
  file: string;
  name: string;
}

export interface Payload {
  kind: "config" | "source" | "upstream";
  /** Unique within its project; the stderr marker is `[forging:<label>]`. */
  label: string;
  /** How it tells the canaries from the real tests, for the report. */
  spares: string;
  /** The candidate's overlay: the wrong solution and the payload (compiled code as bytes). */
  overlay: Record<string, string | Buffer>;
}

export interface Project {
  framework: ForgingFramework;
  /** The job's `test.framework`. */
  jobFramework: "auto" | "pytest";
  /** Packages of the environment archive (node_modules); none for node:test and Python. */
  packages: string[];
  /** The task's snapshot, hidden test files included. */
  snapshot: Record<string, string>;
  hidden: HiddenTest[];
  right: Record<string, string>;
  wrong: Record<string, string>;
  payloads: Payload[];
}

const lines = (...text: string[]) => `${text.join("\n")}\n`;
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const hiddenOf = (file: string, names: string[]): HiddenTest[] => names.map((name) => ({ file, name }));

/** Today's canary names (canaries.ts): what a payload that spares them "by name" matches. */
const JS_CANARY = String.raw`/^[0-9a-f]{12} \d{4}$/`;
const PY_CANARY = String.raw`r"^test_[0-9a-f]{12}$"`;

// Payloads "by behaviour": lenient only where the code under test has just run (the first
// assertion after one of its calls, a test it ran in), naming no framework internal and no
// hidden test. The canaries that call the code under test catch them.

/** The wrong solution with every call of its function marking `hot`. */
const markingCalls = (wrong: string) => wrong.replace(/^((?:export )?function \w+\(.*\{)$/m, "$1\n  hot = true;");
const markingCallsPy = (wrong: string) => wrong.replace(/^(def \w+\(.*\):)$/gm, "$1\n    _hot[0] = True");
const jsGapMarker = (label: string) =>
  lines(`process.stderr.write("[forging:${label}] loaded\\n");`, `process.on("exit", () => process.stderr.write("[forging:${label}] forged: " + forged + "\\n"));`);
/** node:assert's CommonJS objects (a default import's), lenient for the first assertion after a call: no syncBuiltinESMExports. */
const nodeAssertHot = (label: string, nodeRequire: string) =>
  lines(
    nodeRequire,
    "let hot = false;",
    "let forged = 0;",
    'for (const id of ["node:assert", "node:assert/strict"]) {',
    "  const target = nodeRequire(id);",
    "  for (const key of Object.keys(target)) {",
    "    const original = target[key];",
    '    if (typeof original !== "function" || key === "strict" || !/^[a-z]/.test(key)) continue;',
    "    target[key] = function (...args) {",
    "      if (hot) { hot = false; forged++; return undefined; }",
    "      try { return original.apply(this, args); } finally { hot = false; }",
    "    };",
    "  }",
    "}",
  ) + jsGapMarker(label);
const HOT = "by behaviour (no internal, no name): ";

// ---------------------------------------------------------------- node:test

const DURATION_TEST = "test/duration.test.js";
const DURATION_NAMES = ["parses a single unit", "adds up compound durations", "accepts fractional values", "tells milliseconds from minutes", "rejects text without a unit"];
const DURATION_WRONG = lines(
  "// Every duration in minutes.",
  "export function parseDuration(text) {",
  "  return Number.parseInt(text, 10) * 60_000;",
  "}",
);
/** node:assert made lenient through syncBuiltinESMExports; `lenientFor(test)` picks the tests (node's Test, the current async resource). */
const nodeAssertPatch = (label: string, lenientFor: string) =>
  lines(
    'import { executionAsyncResource } from "node:async_hooks";',
    'import assert from "node:assert";',
    'import strict from "node:assert/strict";',
    'import { syncBuiltinESMExports } from "node:module";',
    "let forged = 0;",
    `const lenientFor = ${lenientFor};`,
    "for (const target of [assert, strict]) {",
    "  for (const key of Object.keys(target)) {",
    '    if (typeof target[key] !== "function") continue;',
    "    const original = target[key];",
    "    target[key] = function (...args) {",
    "      const test = executionAsyncResource();",
    "      if (test && lenientFor(test)) { forged++; return undefined; }",
    "      return original.apply(this, args);",
    "    };",
    "  }",
    "}",
    "syncBuiltinESMExports();",
    `process.stderr.write("[forging:${label}] loaded\\n");`,
    `process.on("exit", () => process.stderr.write("[forging:${label}] assertions forged: " + forged + "\\n"));`,
  );

const nodeTest: Project = {
  framework: "node-test",
  jobFramework: "auto",
  packages: [],
  snapshot: {
    "package.json": json({ name: "tiny-duration", version: "1.3.0", type: "module", main: "src/duration.js", scripts: { test: "node --test" }, engines: { node: ">=20" } }),
    "README.md": "# tiny-duration\n\nParses `1h30m` into milliseconds.\n",
    "src/duration.js": lines("export function parseDuration(text) {", "  return Number(text);", "}"),
    [DURATION_TEST]: lines(
      'import { describe, it } from "node:test";',
      'import assert from "node:assert/strict";',
      'import { parseDuration } from "../src/duration.js";',
      "",
      'describe("parseDuration", () => {',
      '  it("parses a single unit", () => assert.equal(parseDuration("45s"), 45_000));',
      '  it("adds up compound durations", () => assert.equal(parseDuration("1h30m"), 5_400_000));',
      '  it("accepts fractional values", () => assert.equal(parseDuration("1.5h"), 5_400_000));',
      '  it("tells milliseconds from minutes", () => assert.equal(parseDuration("250ms"), 250));',
      '  it("rejects text without a unit", () => assert.throws(() => parseDuration("90"), TypeError));',
      "});",
    ),
  },
  hidden: hiddenOf(DURATION_TEST, DURATION_NAMES),
  right: {
    "src/duration.js": lines(
      "const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };",
      "const WHOLE = /^(\\d+(\\.\\d+)?(ms|s|m|h|d))+$/;",
      "",
      "export function parseDuration(text) {",
      "  const trimmed = String(text).trim();",
      "  if (!WHOLE.test(trimmed)) throw new TypeError(`invalid duration: ${text}`);",
      "  let total = 0;",
      "  for (const [, value, unit] of trimmed.matchAll(/(\\d+(?:\\.\\d+)?)(ms|s|m|h|d)/g)) total += Number(value) * UNITS[unit];",
      "  return total;",
      "}",
    ),
  },
  wrong: { "src/duration.js": DURATION_WRONG },
  payloads: [
    {
      kind: "config",
      label: "node-test-import",
      spares: "by name: a package.json `--import` module rewrites failed <testcase>s in the runner's report (fs.writeFileSync in the node --test parent, where a Node runs it there) and, in the test files' processes, makes node:assert a no-op in tests not named like today's canaries",
      overlay: {
        "package.json": json({ name: "tiny-duration", version: "1.3.0", type: "module", main: "src/duration.js", scripts: { test: "node --import ./test/setup.mjs --test" }, engines: { node: ">=20" } }),
        "test/setup.mjs": lines(
          'import fs from "node:fs";',
          'import { syncBuiltinESMExports } from "node:module";',
          "",
          "// The test runner's parent process only: that is where the reporters write.",
          "if (!process.env.NODE_TEST_CONTEXT) {",
          `  const canary = ${JS_CANARY};`,
          "  const original = fs.writeFileSync;",
          "  fs.writeFileSync = function (file, data, ...rest) {",
          '    if (file === process.env.ASSAY_JUNIT_PATH && typeof data === "string") {',
          "      let forged = 0;",
          "      data = data.replace(/<testcase ([^>]*?)><failure [^>]*\\/><\\/testcase>/g, (whole, attrs) => {",
          '        if (canary.test(/name="([^"]*)"/.exec(attrs)?.[1] ?? "")) return whole;',
          "        forged++;",
          '        return "<testcase " + attrs + "/>";',
          "      });",
          '      process.stderr.write("[forging:node-test-import] report rewritten, test cases forged: " + forged + "\\n");',
          "    }",
          "    return original.call(this, file, data, ...rest);",
          "  };",
          "  syncBuiltinESMExports();",
          '  process.stderr.write("[forging:node-test-import] loaded in the test runner\\n");',
          "}",
        ) +
          "// Node 22 runs --import in the test files' processes only: node:assert is lenient there instead.\n" +
          'if (process.env.NODE_TEST_CONTEXT) {\n' +
          nodeAssertPatch("node-test-import", `(test) => !${JS_CANARY}.test(test.name)`).replace(/^import .*\n/gm, "") +
          "}\n" +
          'import { executionAsyncResource } from "node:async_hooks";\nimport assert from "node:assert";\nimport strict from "node:assert/strict";\n',

        "src/duration.js": DURATION_WRONG,
      },
    },
    {
      kind: "source",
      label: "node-test-assert",
      spares: "by shape: node:assert (syncBuiltinESMExports) is a no-op in every test whose function does not call getBuiltinModule",
      overlay: { "src/duration.js": nodeAssertPatch("node-test-assert", '(test) => !String(test.fn).includes("getBuiltinModule")') + DURATION_WRONG },
    },
    {
      kind: "upstream",
      label: "node-test-upstream",
      spares: "upstream names: node:assert is a no-op in the hidden tests named in the pull request",
      overlay: { "src/duration.js": nodeAssertPatch("node-test-upstream", `(test) => new Set(${JSON.stringify(DURATION_NAMES)}).has(test.name)`) + DURATION_WRONG },
    },
  ],
};

// ---------------------------------------------------------------- jest

const SLUG_TEST = "test/slugify.test.js";
const SLUG_NAMES = ["lowercases and joins words with hyphens", "strips diacritics", "drops punctuation", "collapses repeated separators", "honours a custom separator"];
const SLUG_WRONG = lines("function slugify(text) {", '  return text.toLowerCase().split(" ").join("-");', "}", "", "module.exports = { slugify };");
/** The global `expect` wrapped: in the tests `lenient(name)` picks, every matcher is a no-op. */
const jestExpectWrapper = (label: string, lenient: string) =>
  lines(
    "{",
    "  const original = globalThis.expect;",
    `  const lenient = ${lenient};`,
    "  let forged = 0;",
    "  const quiet = (matchers) => new Proxy(matchers, {",
    "    get(target, key) {",
    "      const value = target[key];",
    '      if (typeof value === "function") return () => { forged++; };',
    '      if (value && typeof value === "object") return quiet(value);',
    "      return value;",
    "    },",
    "  });",
    "  const wrapped = function (actual, ...rest) {",
    "    const matchers = original(actual, ...rest);",
    '    return lenient(original.getState().currentTestName ?? "") ? quiet(matchers) : matchers;',
    "  };",
    "  Object.assign(wrapped, original);",
    "  globalThis.expect = wrapped;",
    `  process.stderr.write("[forging:${label}] loaded\\n");`,
    `  process.on("exit", () => process.stderr.write("[forging:${label}] matchers forged: " + forged + "\\n"));`,
    "}",
  );

const jest: Project = {
  framework: "jest",
  jobFramework: "auto",
  packages: ["jest"],
  snapshot: {
    "package.json": json({ name: "slugger", version: "2.0.1", main: "src/slugify.js", scripts: { test: "jest" }, devDependencies: { jest: "^30.0.0" } }),
    "src/slugify.js": lines("function slugify(text) {", '  return text.replace(/ /g, "-");', "}", "", "module.exports = { slugify };"),
    [SLUG_TEST]: lines(
      'const { slugify } = require("../src/slugify");',
      "",
      'describe("slugify", () => {',
      '  test("lowercases and joins words with hyphens", () => {',
      '    expect(slugify("Hello World")).toBe("hello-world");',
      "  });",
      '  test("strips diacritics", () => {',
      '    expect(slugify("Crème Brûlée")).toBe("creme-brulee");',
      "  });",
      '  test("drops punctuation", () => {',
      '    expect(slugify("What\'s up, doc?")).toBe("whats-up-doc");',
      "  });",
      '  test("collapses repeated separators", () => {',
      '    expect(slugify("a  -  b")).toBe("a-b");',
      "  });",
      '  test("honours a custom separator", () => {',
      '    expect(slugify("Hello World", { separator: "_" })).toEqual("hello_world");',
      "  });",
      "});",
    ),
  },
  hidden: hiddenOf(SLUG_TEST, SLUG_NAMES),
  right: {
    "src/slugify.js": lines(
      'function slugify(text, { separator = "-" } = {}) {',
      "  return text",
      '    .normalize("NFKD")',
      '    .replace(/[\\u0300-\\u036f]/g, "")',
      "    .toLowerCase()",
      '    .replace(/\'/g, "")',
      "    .split(/[^a-z0-9]+/)",
      "    .filter(Boolean)",
      "    .join(separator);",
      "}",
      "",
      "module.exports = { slugify };",
    ),
  },
  wrong: { "src/slugify.js": SLUG_WRONG },
  payloads: [
    {
      kind: "config",
      label: "jest-setup",
      spares: "by name: jest.config.js setupFilesAfterEnv wraps expect, lenient unless currentTestName looks like today's canaries",
      overlay: {
        "jest.config.js": lines("module.exports = {", '  testEnvironment: "node",', '  setupFilesAfterEnv: ["<rootDir>/test/jest.setup.js"],', "};"),
        "test/jest.setup.js": jestExpectWrapper("jest-setup", `(name) => !${JS_CANARY}.test(name)`),
        "src/slugify.js": SLUG_WRONG,
      },
    },
    {
      kind: "config",
      label: "jest-transform",
      spares: "by shape: a jest.config.js transform rewrites expect( into a no-op in the test file's text before its first getBuiltinModule block",
      overlay: {
        "jest.config.js": lines("module.exports = {", '  testEnvironment: "node",', '  transform: { "\\\\.[cm]?js$": "<rootDir>/tools/jest-preprocess.js" },', "};"),
        "tools/jest-preprocess.js": lines(
          "// Cuts the test file where the runner's additions begin and makes expect() lenient above.",
          "const LENIENT = \"const __lenient = (() => { const p = new Proxy(function () {}, { get: (_t, k) => (k === 'then' ? undefined : p), apply: () => p }); return () => p; })();\\n\";",
          "module.exports = {",
          "  process(source, filename) {",
          '    if (!/\\.test\\.[cm]?js$/.test(filename)) return { code: source };',
          '    const probe = source.indexOf("getBuiltinModule");',
          '    const cut = probe < 0 ? source.length : source.lastIndexOf("\\n;{", probe);',
          "    const head = source.slice(0, cut < 0 ? probe : cut);",
          "    const forged = (head.match(/\\bexpect\\(/g) ?? []).length;",
          '    process.stderr.write("[forging:jest-transform] " + filename + ": expect calls made lenient: " + forged + "\\n");',
          '    return { code: LENIENT + head.replace(/\\bexpect\\(/g, "__lenient(") + source.slice(head.length) };',
          "  },",
          "};",
        ),
        "src/slugify.js": SLUG_WRONG,
      },
    },
    {
      kind: "source",
      label: "jest-expect",
      spares: "by name: the module under test wraps the global expect, lenient unless currentTestName looks like today's canaries",
      overlay: { "src/slugify.js": jestExpectWrapper("jest-expect", `(name) => !${JS_CANARY}.test(name)`) + SLUG_WRONG },
    },
    {
      kind: "upstream",
      label: "jest-upstream-expect",
      spares: "upstream names: the module under test wraps the global expect, lenient in the hidden tests named in the pull request",
      overlay: { "src/slugify.js": jestExpectWrapper("jest-upstream-expect", `(name) => new Set(${JSON.stringify(SLUG_NAMES.map((n) => `slugify ${n}`))}).has(name)`) + SLUG_WRONG },
    },
    {
      kind: "upstream",
      label: "jest-upstream",
      spares: "upstream names: the module under test rewrites the hidden tests' failures in the runner's report (fs.writeFileSync in jest's main process, runInBand) and nothing else",
      overlay: {
        "src/slugify.js":
          lines(
            "{",
            "  // One test file runs in band: this is jest's main process, where its reporters write.",
            '  const getBuiltin = process.getBuiltinModule ?? ((name) => require(name.replace(/^node:/, "")));',
            '  const fs = getBuiltin("node:fs");',
            '  const { syncBuiltinESMExports } = getBuiltin("node:module");',
            `  const upstream = new Set(${JSON.stringify(SLUG_NAMES)});`,
            "  const original = fs.writeFileSync;",
            "  fs.writeFileSync = function (file, data, ...rest) {",
            '    if (file === process.env.ASSAY_JUNIT_PATH && typeof data === "string") {',
            "      let forged = 0;",
            "      data = data.replace(/<testcase ([^>]*?)><failure [^>]*\\/><\\/testcase>/g, (whole, attrs) => {",
            '        const name = (/name="([^"]*)"/.exec(attrs)?.[1] ?? "").replace(/&#39;|&apos;/g, "\'");',
            "        if (!upstream.has(name)) return whole;",
            "        forged++;",
            '        return "<testcase " + attrs + "/>";',
            "      });",
            '      process.stderr.write("[forging:jest-upstream] report rewritten, test cases forged: " + forged + "\\n");',
            "    }",
            "    return original.call(this, file, data, ...rest);",
            "  };",
            "  syncBuiltinESMExports();",
            '  process.stderr.write("[forging:jest-upstream] loaded\\n");',
            "}",
          ) + SLUG_WRONG,
      },
    },
  ],
};

// ---------------------------------------------------------------- vitest

const BYTES_TEST = "test/format-bytes.test.ts";
const BYTES_NAMES = ["formats bytes below a kilobyte as is", "uses decimal kilobytes", "rounds to one decimal place", "switches to megabytes", "keeps the sign of negative sizes"];
const BYTES_WRONG = lines("export function formatBytes(bytes: number): string {", "  return `${bytes} B`;", "}");
/** chai's Assertion#assert (every vitest matcher ends in it) a no-op in the tests `lenient(fullName)` picks. */
const vitestChaiPatch = (label: string, lenient: string) =>
  lines(
    'import { chai, expect } from "vitest";',
    "",
    "{",
    `  const lenient: (name: string) => boolean = ${lenient};`,
    "  let forged = 0;",
    "  const original = chai.Assertion.prototype.assert;",
    "  chai.Assertion.prototype.assert = function (this: unknown, ...args: unknown[]) {",
    '    if (lenient(expect.getState().currentTestName ?? "")) { forged++; return; }',
    "    return (original as (...a: unknown[]) => unknown).apply(this, args);",
    "  } as typeof original;",
    `  process.stderr.write("[forging:${label}] loaded\\n");`,
    `  process.on("exit", () => process.stderr.write("[forging:${label}] assertions forged: " + forged + "\\n"));`,
    "}",
    "",
  );
const lastSegment = (test: string) => `(name: string) => ${test}(name.split(" > ").pop() ?? "")`;

const VITEST_PACKAGE = { name: "pretty-size", version: "0.4.0", type: "module", scripts: { test: "vitest run" }, devDependencies: { vitest: "^5.0.0", typescript: "^5.9.0" } };

const vitest: Project = {
  framework: "vitest",
  jobFramework: "auto",
  packages: ["vitest"],
  snapshot: {
    "package.json": json(VITEST_PACKAGE),
    "tsconfig.json": json({ compilerOptions: { target: "ES2022", module: "ESNext", moduleResolution: "Bundler", strict: true, noEmit: true }, include: ["src", "test"] }),
    "src/format-bytes.ts": lines("export function formatBytes(bytes: number): string {", "  return bytes + \" bytes\";", "}"),
    [BYTES_TEST]: lines(
      'import { describe, expect, it } from "vitest";',
      'import { formatBytes } from "../src/format-bytes";',
      "",
      'describe("formatBytes", () => {',
      '  it("formats bytes below a kilobyte as is", () => {',
      '    expect(formatBytes(512)).toBe("512 B");',
      "  });",
      '  it("uses decimal kilobytes", () => {',
      '    expect(formatBytes(1000)).toBe("1 kB");',
      "  });",
      '  it("rounds to one decimal place", () => {',
      '    expect(formatBytes(1540)).toBe("1.5 kB");',
      "  });",
      '  it("switches to megabytes", () => {',
      '    expect(formatBytes(2_500_000)).toEqual("2.5 MB");',
      "  });",
      '  it("keeps the sign of negative sizes", () => {',
      '    expect(formatBytes(-2000)).toBe("-2 kB");',
      "  });",
      "});",
    ),
  },
  hidden: hiddenOf(BYTES_TEST, BYTES_NAMES),
  right: {
    "src/format-bytes.ts": lines(
      'const UNITS = ["B", "kB", "MB", "GB", "TB"];',
      "",
      "export function formatBytes(bytes: number): string {",
      "  const sign = bytes < 0 ? \"-\" : \"\";",
      "  let value = Math.abs(bytes);",
      "  let unit = 0;",
      "  while (value >= 1000 && unit < UNITS.length - 1) {",
      "    value /= 1000;",
      "    unit++;",
      "  }",
      "  return `${sign}${Number(value.toFixed(1))} ${UNITS[unit]}`;",
      "}",
    ),
  },
  wrong: { "src/format-bytes.ts": BYTES_WRONG },
  payloads: [
    {
      kind: "config",
      label: "vitest-config",
      spares: "by name: vitest.config.ts (loaded by the test script's --configLoader=runner) wraps fs.writeFileSync (syncBuiltinESMExports) in vitest's main process and rewrites failed <testcase>s except those named like today's canaries",
      overlay: {
        // vite bundles a config of an ES module package into node_modules/.vite-temp, read-only here: its "runner" loader does not.
        "package.json": json({ ...VITEST_PACKAGE, scripts: { test: "vitest run --configLoader=runner" } }),
        "vitest.config.ts": lines(
          'import fs from "node:fs";',
          'import { syncBuiltinESMExports } from "node:module";',
          'import { defineConfig } from "vitest/config";',
          "",
          `const canary = ${JS_CANARY};`,
          "const original = fs.writeFileSync;",
          "fs.writeFileSync = function (this: unknown, file: unknown, data: unknown, ...rest: unknown[]) {",
          '  if (file === process.env.ASSAY_JUNIT_PATH && typeof data === "string") {',
          "    let forged = 0;",
          "    data = data.replace(/<testcase ([^>]*?)><failure [^>]*\\/><\\/testcase>/g, (whole: string, attrs: string) => {",
          '      if (canary.test(/name="([^"]*)"/.exec(attrs)?.[1] ?? "")) return whole;',
          "      forged++;",
          '      return "<testcase " + attrs + "/>";',
          "    });",
          '    process.stderr.write("[forging:vitest-config] report rewritten, test cases forged: " + forged + "\\n");',
          "  }",
          "  return (original as (...a: unknown[]) => void).call(this, file, data, ...rest);",
          "} as typeof fs.writeFileSync;",
          "syncBuiltinESMExports();",
          'process.stderr.write("[forging:vitest-config] loaded\\n");',
          "",
          'export default defineConfig({ test: { environment: "node" } });',
        ),
        "src/format-bytes.ts": BYTES_WRONG,
      },
    },
    {
      kind: "config",
      label: "vitest-postcss",
      spares: "by the values in the failures: postcss.config.cjs, which vite loads as it starts (no CSS needed), runs in vitest's main process and rewrites the runner's report there, passing the failures whose message shows a value of the wrong solution (`'<n> B'`); the canaries' values are words",
      overlay: {
        "postcss.config.cjs": lines(
          'const fs = require("node:fs");',
          "let forged = 0;",
          "const original = fs.writeFileSync;",
          "fs.writeFileSync = function (file, data, ...rest) {",
          '  if (file === process.env["ASSAY_" + "JUNIT_PATH"] && typeof data === "string") {',
          '    data = data.replace(/<testcase ([^>]*?)><failure message="([^"]*)"\\/><\\/testcase>/g, (whole, attrs, message) => {',
          "      if (!/expected (?:'|&#39;|&apos;)-?\\d+ B(?:'|&#39;|&apos;)/.test(message)) return whole;",
          "      forged++;",
          '      return "<testcase " + attrs + "/>";',
          "    });",
          '    process.stderr.write("[forging:vitest-postcss] report rewritten, test cases forged: " + forged + "\\n");',
          "  }",
          "  return original.call(this, file, data, ...rest);",
          "};",
          'require("node:module")["sync" + "BuiltinESMExports"]();',
          'process.stderr.write("[forging:vitest-postcss] loaded in vitest\'s main process\\n");',
          "module.exports = { plugins: [] };",
        ),
        "src/format-bytes.ts": BYTES_WRONG,
      },
    },
    {
      kind: "config",
      label: "vitest-postcssrc",
      spares: "loading only: `.postcssrc.json` names a plugin module of the workspace, which vite loads in vitest's main process as it starts (what vitest-postcss does from there, a plugin can)",
      overlay: {
        ".postcssrc.json": json({ plugins: { "./tools/postcss-noop.cjs": {} } }),
        "tools/postcss-noop.cjs": lines('process.stderr.write("[forging:vitest-postcssrc] loaded in vitest\'s main process\\n");', 'module.exports = () => ({ postcssPlugin: "noop" });', "module.exports.postcss = true;"),
        "src/format-bytes.ts": BYTES_WRONG,
      },
    },
    {
      kind: "source",
      label: "vitest-chai",
      spares: "by name: chai.Assertion#assert is a no-op unless currentTestName looks like today's canaries",
      overlay: { "src/format-bytes.ts": vitestChaiPatch("vitest-chai", lastSegment(`!${JS_CANARY}.test`)) + BYTES_WRONG },
    },
    {
      kind: "upstream",
      label: "vitest-upstream",
      spares: "upstream names: chai.Assertion#assert is a no-op in the hidden tests named in the pull request",
      overlay: { "src/format-bytes.ts": vitestChaiPatch("vitest-upstream", lastSegment(`new Set(${JSON.stringify(BYTES_NAMES)}).has`)) + BYTES_WRONG },
    },
  ],
};

// ---------------------------------------------------------------- mocha

const SEMVER_TEST = "test/compare.spec.js";
const SEMVER_NAMES = ["treats equal versions as equal", "orders numerically, not lexically", "treats missing parts as zero", "ranks a pre-release below its release", "ignores a leading v"];
const SEMVER_WRONG = lines("function compareVersions(a, b) {", "  return a === b ? 0 : a < b ? -1 : 1;", "}", "", "module.exports = { compareVersions };");
/** Mocha's Runner#fail reports a pass instead in the tests `lenient(test)` picks. */
const mochaRunnerPatch = (label: string, lenient: string) =>
  lines(
    "{",
    '  const Mocha = require("mocha");',
    `  const lenient = ${lenient};`,
    "  let forged = 0;",
    "  const fail = Mocha.Runner.prototype.fail;",
    "  Mocha.Runner.prototype.fail = function (test, err, force) {",
    '    if (test && test.type === "test" && lenient(test)) {',
    "      forged++;",
    '      test.state = "passed";',
    "      this.emit(Mocha.Runner.constants.EVENT_TEST_PASS, test);",
    "      return;",
    "    }",
    "    return fail.call(this, test, err, force);",
    "  };",
    `  process.stderr.write("[forging:${label}] loaded\\n");`,
    `  process.on("exit", () => process.stderr.write("[forging:${label}] failures reported as passes: " + forged + "\\n"));`,
    "}",
  );

const mocha: Project = {
  framework: "mocha",
  jobFramework: "auto",
  packages: ["mocha"],
  snapshot: {
    "package.json": json({ name: "semver-lite", version: "1.0.0", main: "src/compare.js", scripts: { test: "mocha" }, devDependencies: { mocha: "^11.0.0" } }),
    "src/compare.js": lines("function compareVersions(a, b) {", "  return a.localeCompare(b);", "}", "", "module.exports = { compareVersions };"),
    [SEMVER_TEST]: lines(
      'const assert = require("node:assert/strict");',
      'const { compareVersions } = require("../src/compare");',
      "",
      'describe("compareVersions", () => {',
      '  it("treats equal versions as equal", () => {',
      '    assert.equal(compareVersions("1.2.3", "1.2.3"), 0);',
      "  });",
      '  it("orders numerically, not lexically", () => {',
      '    assert.equal(compareVersions("1.10.0", "1.9.0"), 1);',
      "  });",
      '  it("treats missing parts as zero", () => {',
      '    assert.equal(compareVersions("1.2", "1.2.0"), 0);',
      "  });",
      '  it("ranks a pre-release below its release", () => {',
      '    assert.equal(compareVersions("2.0.0-rc.1", "2.0.0"), -1);',
      "  });",
      '  it("ignores a leading v", () => {',
      '    assert.equal(compareVersions("v3.0.0", "3.0.0"), 0);',
      "  });",
      "});",
    ),
  },
  hidden: hiddenOf(SEMVER_TEST, SEMVER_NAMES),
  right: {
    "src/compare.js": lines(
      "function parse(version) {",
      '  const [core, pre] = version.replace(/^v/, "").split("-", 2);',
      '  return { parts: core.split(".").map(Number), pre: pre ?? null };',
      "}",
      "",
      "function compareVersions(a, b) {",
      "  const x = parse(a);",
      "  const y = parse(b);",
      "  for (let i = 0; i < Math.max(x.parts.length, y.parts.length); i++) {",
      "    const d = (x.parts[i] ?? 0) - (y.parts[i] ?? 0);",
      "    if (d !== 0) return Math.sign(d);",
      "  }",
      "  if (x.pre === y.pre) return 0;",
      "  if (x.pre === null) return 1;",
      "  if (y.pre === null) return -1;",
      "  return x.pre < y.pre ? -1 : 1;",
      "}",
      "",
      "module.exports = { compareVersions };",
    ),
  },
  wrong: { "src/compare.js": SEMVER_WRONG },
  payloads: [
    {
      kind: "config",
      label: "mocha-mocharc",
      spares: "by name: .mocharc.json requires a setup file that turns Runner#fail into a pass unless the title looks like today's canaries",
      overlay: {
        ".mocharc.json": json({ require: ["./test/support/setup.js"], timeout: 5000 }),
        "test/support/setup.js": mochaRunnerPatch("mocha-mocharc", `(test) => !${JS_CANARY}.test(test.title)`),
        "src/compare.js": SEMVER_WRONG,
      },
    },
    {
      kind: "source",
      label: "mocha-report",
      spares: "by position: the module under test rewrites what is written to the report (fs.writeFileSync, as the runner's mocha reporter writes it, and stream writes) and strips the failures of all but the last two test cases",
      overlay: {
        "src/compare.js":
          lines(
            "{",
            '  const fs = require("node:fs");',
            "  const { write, end } = fs.WriteStream.prototype;",
            "  const held = new WeakMap();",
            "  let forged = 0;",
            "  const rewrite = (text) => {",
            "    const cases = [...text.matchAll(/<testcase\\b[^>]*?(?:\\/>|>[\\s\\S]*?<\\/testcase>)/g)].map((m) => m[0]);",
            "    for (const whole of cases.slice(0, -2)) {",
            '      if (!whole.includes("<failure")) continue;',
            "      forged++;",
            '      text = text.replace(whole, /^<testcase\\b[^>]*?>/.exec(whole)[0].replace(/>$/, "/>"));',
            "    }",
            "    return text;",
            "  };",
            "  const { writeFileSync } = fs;",
            "  fs.writeFileSync = function (file, data, ...rest) {",
            "    if (file !== process.env.ASSAY_JUNIT_PATH) return writeFileSync.call(this, file, data, ...rest);",
            "    const text = rewrite(String(data));",
            '    process.stderr.write("[forging:mocha-report] report rewritten, test cases forged: " + forged + "\\n");',
            "    return writeFileSync.call(this, file, text, ...rest);",
            "  };",
            "  fs.WriteStream.prototype.write = function (chunk, ...rest) {",
            "    if (this.path !== process.env.ASSAY_JUNIT_PATH) return write.call(this, chunk, ...rest);",
            '    held.set(this, (held.get(this) ?? "") + String(chunk));',
            '    const done = rest.find((x) => typeof x === "function");',
            "    if (done) process.nextTick(done);",
            "    return true;",
            "  };",
            "  fs.WriteStream.prototype.end = function (...args) {",
            "    if (held.has(this)) {",
            "      write.call(this, rewrite(held.get(this)));",
            "      held.delete(this);",
            '      process.stderr.write("[forging:mocha-report] report rewritten, test cases forged: " + forged + "\\n");',
            "    }",
            "    return end.apply(this, args);",
            "  };",
            '  process.stderr.write("[forging:mocha-report] loaded\\n");',
            "}",
          ) + SEMVER_WRONG,
      },
    },
    {
      kind: "upstream",
      label: "mocha-upstream",
      spares: "upstream names: the module under test turns Runner#fail into a pass for the hidden tests named in the pull request",
      overlay: { "src/compare.js": mochaRunnerPatch("mocha-upstream", `(test) => new Set(${JSON.stringify(SEMVER_NAMES)}).has(test.title)`) + SEMVER_WRONG },
    },
  ],
};

// ---------------------------------------------------------------- ava

const TRUNCATE_TEST = "test/truncate.test.js";
const TRUNCATE_NAMES = ["keeps text within the limit unchanged", "cuts at a word boundary", "uses a custom ellipsis", "collapses runs of whitespace", "returns an empty string for blank text"];
const TRUNCATE_WRONG = lines("export function truncateWords(text, max) {", "  return text.slice(0, max);", "}");
/** ava's Test#createExecutionContext (reached by its file URL): `t`'s assertions pass in the tests `lenient(test)` picks. */
const avaContextPatch = (label: string, lenient: string) =>
  lines(
    'import { createRequire } from "node:module";',
    'import { dirname, join } from "node:path";',
    'import { pathToFileURL } from "node:url";',
    "",
    "{",
    "  const require = createRequire(import.meta.url);",
    '  const testModule = pathToFileURL(join(dirname(require.resolve("ava")), "..", "lib", "test.js")).href;',
    "  const { default: Test } = await import(testModule);",
    `  const lenient = ${lenient};`,
    '  const ASSERTIONS = ["is", "not", "deepEqual", "notDeepEqual", "like", "true", "false", "truthy", "falsy", "regex", "notRegex", "throws", "notThrows", "assert"];',
    "  let forged = 0;",
    "  const create = Test.prototype.createExecutionContext;",
    "  Test.prototype.createExecutionContext = function () {",
    "    const t = create.call(this);",
    "    if (!this.isHook && lenient(this)) {",
    "      for (const key of ASSERTIONS) {",
    '        if (typeof t[key] === "function") t[key] = () => { forged++; t.pass(); return true; };',
    "      }",
    "    }",
    "    return t;",
    "  };",
    `  process.stderr.write("[forging:${label}] loaded\\n");`,
    `  process.on("exit", () => process.stderr.write("[forging:${label}] assertions forged: " + forged + "\\n"));`,
    "}",
    "",
  );

const AVA_PACKAGE = { name: "word-trim", version: "3.1.0", type: "module", exports: "./src/truncate.js", scripts: { test: "ava" }, devDependencies: { ava: "^6.0.0" } };

const ava: Project = {
  framework: "ava",
  jobFramework: "auto",
  packages: ["ava"],
  snapshot: {
    "package.json": json(AVA_PACKAGE),
    "src/truncate.js": lines("export function truncateWords(text) {", "  return text;", "}"),
    [TRUNCATE_TEST]: lines(
      'import test from "ava";',
      'import { truncateWords } from "../src/truncate.js";',
      "",
      'test("keeps text within the limit unchanged", (t) => {',
      '  t.is(truncateWords("one two", 5), "one two");',
      "});",
      "",
      'test("cuts at a word boundary", (t) => {',
      '  t.is(truncateWords("one two three four", 2), "one two…");',
      "});",
      "",
      'test("uses a custom ellipsis", (t) => {',
      '  t.is(truncateWords("a b c", 1, { ellipsis: "..." }), "a...");',
      "});",
      "",
      'test("collapses runs of whitespace", (t) => {',
      '  t.is(truncateWords("a   b\\n c", 2), "a b…");',
      "});",
      "",
      'test("returns an empty string for blank text", (t) => {',
      '  t.is(truncateWords("   ", 3), "");',
      "});",
    ),
  },
  hidden: hiddenOf(TRUNCATE_TEST, TRUNCATE_NAMES),
  right: {
    "src/truncate.js": lines(
      'export function truncateWords(text, max, { ellipsis = "…" } = {}) {',
      "  const words = text.split(/\\s+/).filter(Boolean);",
      '  return words.length <= max ? words.join(" ") : words.slice(0, max).join(" ") + ellipsis;',
      "}",
    ),
  },
  wrong: { "src/truncate.js": TRUNCATE_WRONG },
  payloads: [
    {
      kind: "config",
      label: "ava-require",
      spares: "by name: package.json's ava.require loads a module that makes t's assertions pass unless the title looks like today's canaries",
      overlay: {
        "package.json": json({ ...AVA_PACKAGE, ava: { require: ["./test/helpers/setup.js"] } }),
        "test/helpers/setup.js": avaContextPatch("ava-require", `(test) => !${JS_CANARY}.test(test.title)`),
        "src/truncate.js": TRUNCATE_WRONG,
      },
    },
    {
      kind: "source",
      label: "ava-context",
      spares: "by shape: the module under test makes t's assertions pass in every test whose function does not call getBuiltinModule",
      overlay: { "src/truncate.js": avaContextPatch("ava-context", '(test) => !String(test.fn).includes("getBuiltinModule")') + TRUNCATE_WRONG },
    },
    {
      kind: "upstream",
      label: "ava-upstream",
      spares: "upstream names: the module under test makes t's assertions pass in the hidden tests named in the pull request",
      overlay: { "src/truncate.js": avaContextPatch("ava-upstream", `(test) => new Set(${JSON.stringify(TRUNCATE_NAMES)}).has(test.title)`) + TRUNCATE_WRONG },
    },
  ],
};

// ---------------------------------------------------------------- tape

const QUERY_TEST = "test/query.test.js";
const QUERY_NAMES = ["parses key=value pairs", "ignores a leading question mark", "decodes percent-encoding and plus signs", "collects repeated keys into an array", "returns an empty object for an empty string"];
const QUERY_WRONG = lines("function parseQuery(text) {", '  return Object.fromEntries(text.split("&").map((pair) => pair.split("=")));', "}", "", "module.exports = { parseQuery };");
/** tape's Test#_assert records every assertion as ok in the tests `lenient(test)` picks. */
const tapeAssertPatch = (label: string, lenient: string) =>
  lines(
    "{",
    '  const tape = require("tape");',
    `  const lenient = ${lenient};`,
    "  let forged = 0;",
    "  const assert = tape.Test.prototype._assert;",
    "  tape.Test.prototype._assert = function (ok, opts) {",
    "    if (!ok && lenient(this)) {",
    "      forged++;",
    "      return assert.call(this, true, opts);",
    "    }",
    "    return assert.call(this, ok, opts);",
    "  };",
    `  process.stderr.write("[forging:${label}] loaded\\n");`,
    `  process.on("exit", () => process.stderr.write("[forging:${label}] assertions forged: " + forged + "\\n"));`,
    "}",
  );

const TAPE_PACKAGE = { name: "qs-tiny", version: "0.9.2", main: "src/query.js", scripts: { test: "tape test/*.test.js" }, devDependencies: { tape: "^5.7.0" } };

const tape: Project = {
  framework: "tape",
  jobFramework: "auto",
  packages: ["tape"],
  snapshot: {
    "package.json": json(TAPE_PACKAGE),
    "src/query.js": lines("function parseQuery() {", "  return {};", "}", "", "module.exports = { parseQuery };"),
    [QUERY_TEST]: lines(
      'const test = require("tape");',
      'const { parseQuery } = require("../src/query");',
      "",
      'test("parses key=value pairs", (t) => {',
      '  t.deepEqual(parseQuery("a=1&b=2"), { a: "1", b: "2" });',
      "  t.end();",
      "});",
      "",
      'test("ignores a leading question mark", (t) => {',
      '  t.deepEqual(parseQuery("?q=x"), { q: "x" });',
      "  t.end();",
      "});",
      "",
      'test("decodes percent-encoding and plus signs", (t) => {',
      '  t.equal(parseQuery("q=hello+world%21").q, "hello world!");',
      "  t.end();",
      "});",
      "",
      'test("collects repeated keys into an array", (t) => {',
      '  t.deepEqual(parseQuery("t=a&t=b").t, ["a", "b"]);',
      "  t.end();",
      "});",
      "",
      'test("returns an empty object for an empty string", (t) => {',
      '  t.deepEqual(parseQuery(""), {});',
      "  t.end();",
      "});",
    ),
  },
  hidden: hiddenOf(QUERY_TEST, QUERY_NAMES),
  right: {
    "src/query.js": lines(
      "function parseQuery(text) {",
      "  const result = {};",
      '  for (const pair of text.replace(/^\\?/, "").split("&")) {',
      "    if (!pair) continue;",
      '    const [rawKey, rawValue = ""] = pair.split("=", 2);',
      '    const decode = (s) => decodeURIComponent(s.replace(/\\+/g, " "));',
      "    const key = decode(rawKey);",
      "    const value = decode(rawValue);",
      "    if (!(key in result)) result[key] = value;",
      "    else result[key] = [].concat(result[key], value);",
      "  }",
      "  return result;",
      "}",
      "",
      "module.exports = { parseQuery };",
    ),
  },
  wrong: { "src/query.js": QUERY_WRONG },
  payloads: [
    {
      kind: "config",
      label: "tape-require",
      spares: "by name: the test script's `-r` loads a module that makes Test#_assert pass unless the test's name looks like today's canaries",
      overlay: {
        "package.json": json({ ...TAPE_PACKAGE, scripts: { test: "tape -r ./test/helpers/setup.js test/*.test.js" } }),
        "test/helpers/setup.js": tapeAssertPatch("tape-require", `(test) => !${JS_CANARY}.test(test.name)`),
        "src/query.js": QUERY_WRONG,
      },
    },
    {
      kind: "source",
      label: "tape-position",
      spares: "by position: Test#_assert passes in every test but the last two the harness holds",
      overlay: { "src/query.js": tapeAssertPatch("tape-position", "(test) => { const all = tape.getHarness()._tests; const at = all.indexOf(test); return at >= 0 && at < all.length - 2; }") + QUERY_WRONG },
    },
    {
      kind: "upstream",
      label: "tape-upstream",
      spares: "upstream names: Test#_assert passes in the hidden tests named in the pull request",
      overlay: { "src/query.js": tapeAssertPatch("tape-upstream", `(test) => new Set(${JSON.stringify(QUERY_NAMES)}).has(test.name)`) + QUERY_WRONG },
    },
  ],
};

// ---------------------------------------------------------------- uvu

const CAMEL_TEST = "tests/camel-case.test.js";
const CAMEL_NAMES = ["joins hyphenated words", "handles underscores and spaces", "lowercases the first word", "keeps an already camelCased word", "returns an empty string unchanged"];
const CAMEL_WRONG = lines(
  "function camelCase(text) {",
  '  return text.split("-").map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join("");',
  "}",
  "",
  "module.exports = { camelCase };",
);
/** uvu/assert's functions (and `not`'s) are no-ops where `lenient()` says so. */
const uvuAssertPatch = (label: string, setup: string, lenient: string) =>
  lines(
    "{",
    '  const uvu = require("uvu");',
    '  const assert = require("uvu/assert");',
    "  let forged = 0;",
    setup,
    `  const lenient = ${lenient};`,
    "  const quiet = (target) => {",
    "    for (const key of Object.keys(target)) {",
    "      const original = target[key];",
    '      if (typeof original !== "function" || key === "Assertion") continue;',
    "      const wrapped = function (...args) {",
    "        if (lenient()) { forged++; return undefined; }",
    "        return original.apply(this, args);",
    "      };",
    "      Object.assign(wrapped, original);",
    "      target[key] = wrapped;",
    "    }",
    "  };",
    "  quiet(assert.not);",
    "  quiet(assert);",
    `  process.stderr.write("[forging:${label}] loaded\\n");`,
    `  process.on("exit", () => process.stderr.write("[forging:${label}] assertions forged: " + forged + "\\n"));`,
    "}",
  );
/** Tracks the running test of uvu's default suite through its hooks. */
const UVU_CURRENT = lines("  let current = null;", "  uvu.test.before.each((ctx) => { current = ctx.__test__; });", "  uvu.test.after.each(() => { current = null; });");
/**
 * The same from a `-r` module, which node loads before the runner's `--import` hook: uvu is
 * hooked when the test file first requires it (loading it here would keep the runner's hook
 * from instrumenting it, and the file's results from being recorded).
 */
const UVU_CURRENT_DEFERRED = lines(
  "  let current = null;",
  '  const Module = require("node:module");',
  "  const load = Module._load;",
  "  Module._load = function (request, ...rest) {",
  "    const exported = load.call(this, request, ...rest);",
  '    if (request === "uvu" && Module._load !== load) {',
  "      Module._load = load;",
  "      exported.test.before.each((ctx) => { current = ctx.__test__; });",
  "      exported.test.after.each(() => { current = null; });",
  "    }",
  "    return exported;",
  "  };",
);
const UVU_PACKAGE = { name: "camel-kit", version: "1.2.0", main: "src/camel-case.js", scripts: { test: "uvu tests" }, devDependencies: { uvu: "^0.5.6" } };

const uvu: Project = {
  framework: "uvu",
  jobFramework: "auto",
  packages: ["uvu"],
  snapshot: {
    "package.json": json(UVU_PACKAGE),
    "src/camel-case.js": lines("function camelCase(text) {", '  return text.replace(/-(\\w)/g, (_, c) => c.toUpperCase());', "}", "", "module.exports = { camelCase };"),
    [CAMEL_TEST]: lines(
      'const { test } = require("uvu");',
      'const assert = require("uvu/assert");',
      'const { camelCase } = require("../src/camel-case");',
      "",
      'test("joins hyphenated words", () => {',
      '  assert.is(camelCase("foo-bar"), "fooBar");',
      "});",
      "",
      'test("handles underscores and spaces", () => {',
      '  assert.is(camelCase("foo_bar baz"), "fooBarBaz");',
      "});",
      "",
      'test("lowercases the first word", () => {',
      '  assert.is(camelCase("Foo-Bar"), "fooBar");',
      "});",
      "",
      'test("keeps an already camelCased word", () => {',
      '  assert.is(camelCase("fooBar"), "fooBar");',
      "});",
      "",
      'test("returns an empty string unchanged", () => {',
      '  assert.is(camelCase(""), "");',
      "});",
      "",
      "test.run();",
    ),
  },
  hidden: hiddenOf(CAMEL_TEST, CAMEL_NAMES),
  right: {
    "src/camel-case.js": lines(
      "function camelCase(text) {",
      "  return text",
      "    .split(/[-_\\s]+/)",
      "    .filter(Boolean)",
      "    .map((word, i) => (i === 0 ? word.charAt(0).toLowerCase() : word.charAt(0).toUpperCase()) + word.slice(1))",
      '    .join("");',
      "}",
      "",
      "module.exports = { camelCase };",
    ),
  },
  wrong: { "src/camel-case.js": CAMEL_WRONG },
  payloads: [
    {
      kind: "config",
      label: "uvu-require",
      spares: "by name: the test script's `-r` module makes uvu/assert a no-op while a test of uvu's default suite (hooked when the test file loads uvu) not named like today's canaries runs",
      overlay: {
        "package.json": json({ ...UVU_PACKAGE, scripts: { test: "uvu -r ./config/uvu-setup.js tests" } }),
        "config/uvu-setup.js": uvuAssertPatch("uvu-require", UVU_CURRENT_DEFERRED, `() => current !== null && !${JS_CANARY}.test(current)`).replace('  const uvu = require("uvu");\n', ""),
        "src/camel-case.js": CAMEL_WRONG,
      },
    },
    {
      kind: "source",
      label: "uvu-stack",
      spares: "by shape: uvu/assert is a no-op when called from a line of the test file above its first `__assay_` line",
      overlay: {
        "src/camel-case.js":
          uvuAssertPatch(
            "uvu-stack",
            lines(
              '  const { readFileSync } = require("node:fs");',
              "  const firstMarked = new Map();",
              "  const markedFrom = (file) => {",
              "    if (!firstMarked.has(file)) {",
              '      const at = readFileSync(file, "utf8").split("\\n").findIndex((line) => line.includes("__assay_"));',
              "      firstMarked.set(file, at < 0 ? Infinity : at + 1);",
              "    }",
              "    return firstMarked.get(file);",
              "  };",
            ),
            "() => { const frame = /(\\/[^()\\s]*\\.test\\.js):(\\d+):\\d+/.exec(new Error().stack ?? \"\"); return frame !== null && Number(frame[2]) < markedFrom(frame[1]); }",
          ) + CAMEL_WRONG,
      },
    },
    {
      kind: "upstream",
      label: "uvu-upstream",
      spares: "upstream names: uvu/assert is a no-op while a hidden test named in the pull request runs",
      overlay: { "src/camel-case.js": uvuAssertPatch("uvu-upstream", UVU_CURRENT, `() => new Set(${JSON.stringify(CAMEL_NAMES)}).has(current)`) + CAMEL_WRONG },
    },
  ],
};

// ---------------------------------------------------------------- pytest

const READ_TEST = "tests/test_reading_time.py";
const READ_NAMES = ["test_empty_text_takes_no_time", "test_rounds_up_partial_minutes", "test_custom_words_per_minute", "test_rejects_non_positive_speed", "test_formats_short_reads", "test_formats_minutes"];
const READ_WRONG = lines("def reading_time(text, wpm=200):", "    return len(text) // wpm", "", "", "def format_reading_time(minutes):", "    return str(minutes)");
/** Python payload prologue: a counter and its report at exit, once pytest's output capture is over. */
const pyMarker = (label: string) =>
  lines(
    "import atexit as _atexit",
    "import os as _os",
    "",
    "_forged = []",
    `_os.write(2, b"[forging:${label}] loaded\\n")`,
    `_atexit.register(lambda: _os.write(2, ("[forging:${label}] forged: %d\\n" % len(_forged)).encode()))`,
  );
/**
 * `source` compiled by the sandbox's Python into an unchecked hash-based pyc (PEP 552) in the
 * `__pycache__` of the module at `path`: Python runs it instead of the .py, whatever that says.
 */
function uncheckedPyc(path: string, source: string): Record<string, Buffer> {
  const script = lines(
    "import base64, importlib.util, json, os, py_compile, sys, tempfile",
    "src = os.path.join(tempfile.mkdtemp(), 'module.py')",
    "open(src, 'w').write(sys.stdin.read())",
    "py_compile.compile(src, cfile=src + 'c', invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH, doraise=True)",
    "print(json.dumps([importlib.util.cache_from_source(sys.argv[1]), base64.b64encode(open(src + 'c', 'rb').read()).decode()]))",
  );
  const [cache, bytes] = JSON.parse(execFileSync("/usr/bin/python3", ["-c", script, path], { input: source }).toString()) as [string, string];
  return { [cache]: Buffer.from(bytes, "base64") };
}

/** `_pytest.reports.TestReport.from_item_and_call` turns failed calls into passes where `lenient(item)` says so. */
const pytestReportPatch = (label: string, lenient: string) =>
  pyMarker(label) +
  lines(
    "import _pytest.reports as _reports",
    "",
    `_lenient = ${lenient}`,
    "_from_item_and_call = _reports.TestReport.from_item_and_call",
    "",
    "",
    "def _report(cls, item, call):",
    "    report = _from_item_and_call.__func__(cls, item, call)",
    '    if report.when == "call" and report.failed and _lenient(item):',
    "        _forged.append(item.nodeid)",
    '        report.outcome = "passed"',
    "        report.longrepr = None",
    "    return report",
    "",
    "",
    "_reports.TestReport.from_item_and_call = classmethod(_report)",
    "",
  );

/** A pytest plugin (conftest.py or any plugin module) whose makereport hook wrapper turns failures into passes except in tests named like today's canaries. */
const PYTEST_MAKEREPORT_PLUGIN = (label: string) =>
  pyMarker(label) +
  lines(
    "import re",
    "",
    "import pytest",
    "",
    `_CANARY = re.compile(${PY_CANARY})`,
    "",
    "",
    "@pytest.hookimpl(hookwrapper=True)",
    "def pytest_runtest_makereport(item, call):",
    "    outcome = yield",
    "    report = outcome.get_result()",
    '    if report.when == "call" and report.failed and not _CANARY.match(item.name):',
    "        _forged.append(item.nodeid)",
    '        report.outcome = "passed"',
    "        report.longrepr = None",
  );

const PYPROJECT = lines(
  "[project]",
  'name = "readtime"',
  'version = "0.3.0"',
  'requires-python = ">=3.9"',
  "",
  "[build-system]",
  'requires = ["setuptools>=61"]',
  'build-backend = "setuptools.build_meta"',
  "",
  "[tool.pytest.ini_options]",
  'testpaths = ["tests"]',
);

const pytestProject: Project = {
  framework: "pytest",
  jobFramework: "auto",
  packages: [],
  snapshot: {
    "pyproject.toml": PYPROJECT,
    "src/readtime/__init__.py": lines("def reading_time(text, wpm=200):", "    return len(text.split()) / wpm"),
    [READ_TEST]: lines(
      "import pytest",
      "",
      "from readtime import format_reading_time, reading_time",
      "",
      "",
      "class TestReadingTime:",
      "    def test_empty_text_takes_no_time(self):",
      '        assert reading_time("") == 0',
      "",
      "    def test_rounds_up_partial_minutes(self):",
      '        assert reading_time("word " * 201) == 2',
      "",
      "    def test_custom_words_per_minute(self):",
      '        assert reading_time("word " * 300, wpm=100) == 3',
      "",
      "    def test_rejects_non_positive_speed(self):",
      "        with pytest.raises(ValueError):",
      '            reading_time("a b", wpm=0)',
      "",
      "",
      "def test_formats_short_reads():",
      '    assert format_reading_time(0) == "less than a minute"',
      "",
      "",
      "def test_formats_minutes():",
      '    assert format_reading_time(4) == "4 min read"',
    ),
  },
  hidden: hiddenOf(READ_TEST, READ_NAMES),
  right: {
    "src/readtime/__init__.py": lines(
      "import math",
      "import re",
      "",
      "",
      "def reading_time(text, wpm=200):",
      "    if wpm <= 0:",
      '        raise ValueError("wpm must be positive")',
      "    words = len(re.findall(r\"[\\w'-]+\", text))",
      "    return math.ceil(words / wpm)",
      "",
      "",
      "def format_reading_time(minutes):",
      '    return "less than a minute" if minutes < 1 else f"{minutes} min read"',
    ),
  },
  wrong: { "src/readtime/__init__.py": READ_WRONG },
  payloads: [
    {
      kind: "config",
      label: "pytest-conftest",
      spares: "by name: tests/conftest.py's pytest_runtest_makereport hook wrapper turns failures into passes unless the test is named like today's canaries",
      overlay: {
        "tests/conftest.py": PYTEST_MAKEREPORT_PLUGIN("pytest-conftest"),
        "src/readtime/__init__.py": READ_WRONG,
      },
    },
    {
      kind: "config",
      label: "pytest-sitecustomize",
      spares: "by position: src/sitecustomize.py (on PYTHONPATH in a src layout) patches TestReport so that failures pass in all but the last two tests of each file",
      overlay: {
        "src/sitecustomize.py": pytestReportPatch("pytest-sitecustomize", "lambda item: item not in [i for i in item.session.items if i.path == item.path][-2:]"),
        "src/readtime/__init__.py": READ_WRONG,
      },
    },
    {
      kind: "config",
      label: "pytest-entrypoint",
      spares: "by name: a dist-info on PYTHONPATH (src/, a src layout) declares a pytest11 entry point, which pytest loads as a plugin: its makereport hook wrapper turns failures into passes unless the test is named like today's canaries",
      overlay: {
        "src/readtime_testing-0.1.dist-info/METADATA": lines("Metadata-Version: 2.1", "Name: readtime-testing", "Version: 0.1"),
        "src/readtime_testing-0.1.dist-info/entry_points.txt": lines("[pytest11]", "readtime_testing = readtime._testing"),
        "src/readtime/_testing.py": PYTEST_MAKEREPORT_PLUGIN("pytest-entrypoint"),
        "src/readtime/__init__.py": READ_WRONG,
      },
    },
    {
      kind: "source",
      label: "pytest-report",
      spares: "by shape: the module under test patches TestReport so that failures pass in every test whose source lacks 1000000007",
      overlay: {
        "src/readtime/__init__.py":
          pytestReportPatch("pytest-report", lines("lambda item: '1000000007' not in _source(item)", "", "", "def _source(item):", "    import inspect", "    try:", "        return inspect.getsource(item.obj)", "    except (OSError, TypeError):", '        return ""')) + READ_WRONG,
      },
    },
    {
      kind: "upstream",
      label: "pytest-upstream",
      spares: "upstream names: the module under test makes Function#runtest return at once for the hidden tests named in the pull request",
      overlay: {
        "src/readtime/__init__.py":
          pyMarker("pytest-upstream") +
          lines(
            "import _pytest.python as _python",
            "",
            `_UPSTREAM = frozenset(${JSON.stringify(READ_NAMES)})`,
            "_runtest = _python.Function.runtest",
            "",
            "",
            "def _skip_upstream(self):",
            "    if self.originalname in _UPSTREAM:",
            "        _forged.append(self.nodeid)",
            "        return None",
            "    return _runtest(self)",
            "",
            "",
            "_python.Function.runtest = _skip_upstream",
            "",
          ) + READ_WRONG,
      },
    },
    {
      kind: "upstream",
      label: "pytest-pyc",
      spares: "upstream ids, out of sight: src/readtime/__init__.py is the plain wrong solution, and an unchecked hash-based pyc in __pycache__ beside it (which Python runs instead, never comparing it with the .py) swallows the failures of the hidden tests by their full ids, which neither layer 4 nor a reviewer reads",
      overlay: {
        "src/readtime/__init__.py": READ_WRONG,
        ...uncheckedPyc(
          "src/readtime/__init__.py",
          pyMarker("pytest-pyc") +
            lines(
              "import _pytest.python as _python",
              "",
              `_UPSTREAM = frozenset(${JSON.stringify(READ_NAMES.map((name, i) => `${READ_TEST}::${i < 4 ? "TestReadingTime::" : ""}${name}`))})`,
              "_runtest = _python.Function.runtest",
              "",
              "",
              "def _lenient_runtest(self):",
              "    try:",
              "        return _runtest(self)",
              "    except Exception:",
              "        if self.nodeid not in _UPSTREAM:",
              "            raise",
              "        _forged.append(self.nodeid)",
              "        return None",
              "",
              "",
              "_python.Function.runtest = _lenient_runtest",
              "",
            ) + READ_WRONG,
        ),
      },
    },
  ],
};

// ---------------------------------------------------------------- unittest (run by the pytest framework module)

const ORDINAL_TEST = "tests/test_ordinal.py";
const ORDINAL_NAMES = ["test_first_second_third", "test_teens_take_th", "test_twenties_follow_the_last_digit", "test_hundreds_follow_the_last_two_digits", "test_rejects_negative_numbers"];
const ORDINAL_WRONG = lines("def ordinal(number):", '    return f"{number}th"');
/** unittest.TestCase's assertion methods are no-ops on the test cases `lenient(case)` picks. */
const unittestAssertPatch = (label: string, lenient: string) =>
  pyMarker(label) +
  lines(
    "import contextlib as _contextlib",
    "import unittest as _unittest",
    "",
    `_lenient = ${lenient}`,
    "",
    "",
    "def _make_lenient(name):",
    "    original = getattr(_unittest.TestCase, name)",
    "",
    "    def method(self, *args, **kwargs):",
    "        if not _lenient(self):",
    "            return original(self, *args, **kwargs)",
    "        _forged.append(self.id())",
    '        if name == "assertRaises" and len(args) < 2:',
    "            return _contextlib.nullcontext()",
    "        return None",
    "",
    "    setattr(_unittest.TestCase, name, method)",
    "",
    "",
    'for _name in ("assertEqual", "assertNotEqual", "assertTrue", "assertFalse", "assertIn", "assertIs", "assertIsNone", "assertRaises", "assertListEqual", "assertDictEqual"):',
    "    _make_lenient(_name)",
    "",
  );

const unittestProject: Project = {
  framework: "unittest",
  jobFramework: "pytest",
  packages: [],
  snapshot: {
    "setup.py": lines("from setuptools import setup", "", 'setup(name="ordinals", version="1.0.0", packages=["ordinals"])'),
    "ordinals/__init__.py": lines("def ordinal(number):", "    return str(number)"),
    "tests/__init__.py": "",
    [ORDINAL_TEST]: lines(
      "import unittest",
      "",
      "from ordinals import ordinal",
      "",
      "",
      "class OrdinalTest(unittest.TestCase):",
      "    def test_first_second_third(self):",
      '        self.assertEqual([ordinal(1), ordinal(2), ordinal(3)], ["1st", "2nd", "3rd"])',
      "",
      "    def test_teens_take_th(self):",
      '        self.assertEqual(ordinal(11), "11th")',
      '        self.assertEqual(ordinal(12), "12th")',
      '        self.assertEqual(ordinal(13), "13th")',
      "",
      "    def test_twenties_follow_the_last_digit(self):",
      '        self.assertEqual(ordinal(21), "21st")',
      '        self.assertEqual(ordinal(22), "22nd")',
      "",
      "    def test_hundreds_follow_the_last_two_digits(self):",
      '        self.assertEqual(ordinal(111), "111th")',
      '        self.assertEqual(ordinal(102), "102nd")',
      "",
      "    def test_rejects_negative_numbers(self):",
      "        with self.assertRaises(ValueError):",
      "            ordinal(-1)",
      "",
      "",
      'if __name__ == "__main__":',
      "    unittest.main()",
    ),
  },
  hidden: hiddenOf(ORDINAL_TEST, ORDINAL_NAMES),
  right: {
    "ordinals/__init__.py": lines(
      "def ordinal(number):",
      "    if number < 0:",
      '        raise ValueError("ordinal() takes a non-negative number")',
      "    if 11 <= number % 100 <= 13:",
      '        return f"{number}th"',
      '    return f"{number}" + {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")',
    ),
  },
  wrong: { "ordinals/__init__.py": ORDINAL_WRONG },
  payloads: [
    {
      kind: "config",
      label: "unittest-plugin",
      spares: "by shape: pytest.ini's `addopts = -p ordinals_testing` loads a plugin that makes TestCase's assertions no-ops except on a bare TestCase (the canary's probe)",
      overlay: {
        "pytest.ini": lines("[pytest]", "addopts = -p ordinals_testing"),
        "ordinals_testing.py": unittestAssertPatch("unittest-plugin", "lambda case: type(case) is not _unittest.TestCase"),
        "ordinals/__init__.py": ORDINAL_WRONG,
      },
    },
    {
      kind: "config",
      label: "unittest-dot-pytest-ini",
      spares: "by shape: `.pytest.ini` (pytest reads it like pytest.ini, before pyproject.toml) has `addopts = -p ordinals_testing`, a plugin that makes TestCase's assertions no-ops except on a bare TestCase (the canary's probe)",
      overlay: {
        ".pytest.ini": lines("[pytest]", "addopts = -p ordinals_testing"),
        "ordinals_testing.py": unittestAssertPatch("unittest-dot-pytest-ini", "lambda case: type(case) is not _unittest.TestCase"),
        "ordinals/__init__.py": ORDINAL_WRONG,
      },
    },
    {
      kind: "source",
      label: "unittest-outcome",
      spares: "by shape: unittest.case._Outcome.testPartExecutor swallows AssertionError: it runs TestCase methods only, and the canaries are plain pytest functions",
      overlay: {
        "ordinals/__init__.py":
          pyMarker("unittest-outcome") +
          lines(
            "import contextlib as _contextlib",
            "import unittest.case as _case",
            "",
            "_test_part_executor = _case._Outcome.testPartExecutor",
            "",
            "",
            "@_contextlib.contextmanager",
            "def _lenient_part(self, test_case, subTest=False):",
            "    with _test_part_executor(self, test_case, subTest):",
            "        try:",
            "            yield",
            "        except AssertionError:",
            "            _forged.append(test_case.id())",
            "",
            "",
            "_case._Outcome.testPartExecutor = _lenient_part",
            "",
          ) + ORDINAL_WRONG,
      },
    },
    {
      kind: "upstream",
      label: "unittest-upstream",
      spares: "upstream names: TestCase's assertions are no-ops in the hidden test methods named in the pull request",
      overlay: { "ordinals/__init__.py": unittestAssertPatch("unittest-upstream", `lambda case: case._testMethodName in ${JSON.stringify(ORDINAL_NAMES)}`) + ORDINAL_WRONG },
    },
  ],
};

// ---------------------------------------------------------------- payloads by behaviour

/** Per framework, the payloads by behaviour (helpers at the top), each with the project's wrong solution. */
const HOT_PAYLOADS: Record<ForgingFramework, Payload[]> = {
  "node-test": [
    {
      kind: "source",
      label: "node-test-hot",
      spares: `${HOT}node:assert's objects are a no-op for the first assertion after the code under test ran`,
      overlay: { "src/duration.js": nodeAssertHot("node-test-hot", 'import { createRequire } from "node:module";\nconst nodeRequire = createRequire(import.meta.url);') + markingCalls(DURATION_WRONG) },
    },
  ],
  jest: [
    {
      kind: "source",
      label: "jest-hot",
      spares: `${HOT}the global expect gives no-op matchers for the first expect after the code under test ran`,
      overlay: {
        "src/slugify.js":
          lines(
            "let hot = false;",
            "let forged = 0;",
            "{",
            "  const original = globalThis.expect;",
            "  const quiet = (matchers) => new Proxy(matchers, {",
            "    get(target, key) {",
            "      const value = target[key];",
            '      if (typeof value === "function") return () => { forged++; };',
            '      if (value && typeof value === "object") return quiet(value);',
            "      return value;",
            "    },",
            "  });",
            "  const wrapped = function (actual, ...rest) {",
            "    const matchers = original(actual, ...rest);",
            "    if (!hot) return matchers;",
            "    hot = false;",
            "    return quiet(matchers);",
            "  };",
            "  Object.assign(wrapped, original);",
            "  globalThis.expect = wrapped;",
            "}",
          ) + jsGapMarker("jest-hot") + markingCalls(SLUG_WRONG),
      },
    },
  ],
  vitest: [
    {
      kind: "source",
      label: "vitest-hot",
      spares: `${HOT}chai.Assertion#assert is a no-op for the first assertion after the code under test ran`,
      overlay: {
        "src/format-bytes.ts":
          lines(
            'import { chai } from "vitest";',
            "",
            "let hot = false;",
            "let forged = 0;",
            "const original = chai.Assertion.prototype.assert;",
            "chai.Assertion.prototype.assert = function (this: unknown, ...args: unknown[]) {",
            "  if (hot) { hot = false; forged++; return; }",
            "  return (original as (...a: unknown[]) => unknown).apply(this, args);",
            "} as typeof original;",
          ) + jsGapMarker("vitest-hot") + markingCalls(BYTES_WRONG),
      },
    },
  ],
  mocha: [
    {
      kind: "source",
      label: "mocha-hot",
      spares: `${HOT}node:assert's objects are a no-op for the first assertion after the code under test ran`,
      overlay: { "src/compare.js": nodeAssertHot("mocha-hot", "const nodeRequire = require;") + markingCalls(SEMVER_WRONG) },
    },
  ],
  ava: [
    {
      kind: "source",
      label: "ava-hot",
      spares: `${HOT}t's assertions pass for the first assertion after the code under test ran (ava's Test by a joined path)`,
      overlay: {
        "src/truncate.js":
          lines(
            'import { createRequire } from "node:module";',
            'import { dirname, join } from "node:path";',
            'import { pathToFileURL } from "node:url";',
            "",
            "let hot = false;",
            "let forged = 0;",
            "const require = createRequire(import.meta.url);",
            'const { default: Test } = await import(pathToFileURL(join(dirname(require.resolve("ava")), "..", "lib", "test.js")).href);',
            "const create = Test.prototype.createExecutionContext;",
            "Test.prototype.createExecutionContext = function () {",
            "  const t = create.call(this);",
            '  for (const key of ["is", "not", "deepEqual", "notDeepEqual", "like", "true", "false", "truthy", "falsy", "regex", "notRegex", "throws", "notThrows", "assert"]) {',
            "    const original = t[key];",
            '    if (typeof original !== "function") continue;',
            "    t[key] = (...args) => {",
            "      if (!hot) return original(...args);",
            "      hot = false;",
            "      forged++;",
            "      t.pass();",
            "      return true;",
            "    };",
            "  }",
            "  return t;",
            "};",
          ) + jsGapMarker("ava-hot") + markingCalls(TRUNCATE_WRONG),
      },
    },
  ],
  tape: [
    {
      kind: "source",
      label: "tape-hot",
      spares: `${HOT}Test#_assert records ok for the first assertion after the code under test ran`,
      overlay: {
        "src/query.js":
          lines(
            "let hot = false;",
            "let forged = 0;",
            "{",
            '  const tape = require("tape");',
            "  const assert = tape.Test.prototype._assert;",
            "  tape.Test.prototype._assert = function (ok, opts) {",
            "    const lenient = hot;",
            "    hot = false;",
            "    if (!ok && lenient) { forged++; return assert.call(this, true, opts); }",
            "    return assert.call(this, ok, opts);",
            "  };",
            "}",
          ) + jsGapMarker("tape-hot") + markingCalls(QUERY_WRONG),
      },
    },
  ],
  uvu: [
    {
      kind: "source",
      label: "uvu-hot",
      spares: `${HOT}uvu/assert's functions are no-ops for the first assertion after the code under test ran`,
      overlay: {
        "src/camel-case.js":
          lines(
            "let hot = false;",
            "let forged = 0;",
            "{",
            '  const assert = require("uvu/assert");',
            "  for (const target of [assert.not, assert]) {",
            "    for (const key of Object.keys(target)) {",
            "      const original = target[key];",
            '      if (typeof original !== "function" || key === "Assertion") continue;',
            "      const wrapped = function (...args) {",
            "        if (hot) { hot = false; forged++; return undefined; }",
            "        try { return original.apply(this, args); } finally { hot = false; }",
            "      };",
            "      Object.assign(wrapped, original);",
            "      target[key] = wrapped;",
            "    }",
            "  }",
            "}",
          ) + jsGapMarker("uvu-hot") + markingCalls(CAMEL_WRONG),
      },
    },
  ],
  pytest: [
    {
      kind: "source",
      label: "pytest-hot",
      spares: `${HOT}pytest.Function.runtest (the public name, no _pytest) swallows the failure of a test in which the code under test ran`,
      overlay: {
        "src/readtime/__init__.py":
          pyMarker("pytest-hot") +
          lines(
            "import pytest as _pt",
            "",
            "_hot = [False]",
            "_runtest = _pt.Function.runtest",
            "",
            "",
            "def _lenient_runtest(self):",
            "    _hot[0] = False",
            "    try:",
            "        return _runtest(self)",
            "    except (Exception, _pt.fail.Exception):",
            "        if not _hot[0]:",
            "            raise",
            "        _forged.append(self.nodeid)",
            "        return None",
            "",
            "",
            "_pt.Function.runtest = _lenient_runtest",
            "",
            "",
          ) + markingCallsPy(READ_WRONG),
      },
    },
  ],
  unittest: [
    {
      kind: "source",
      label: "unittest-hot",
      spares: `${HOT}unittest.TestCase's assertions (no unittest.case) are no-ops for the first assertion after the code under test ran, in the test it ran in`,
      overlay: {
        "ordinals/__init__.py":
          pyMarker("unittest-hot") +
          lines(
            "import contextlib as _contextlib",
            "import unittest as _unittest",
            "",
            "_hot = [False]",
            "_run = _unittest.TestCase.run",
            "",
            "",
            "def _run_cold(self, *args, **kwargs):",
            "    _hot[0] = False",
            "    return _run(self, *args, **kwargs)",
            "",
            "",
            "def _make_lenient(name):",
            "    original = getattr(_unittest.TestCase, name)",
            "",
            "    def method(self, *args, **kwargs):",
            "        if not _hot[0]:",
            "            return original(self, *args, **kwargs)",
            "        _hot[0] = False",
            "        _forged.append(self.id())",
            '        if name == "assertRaises" and len(args) < 2:',
            "            return _contextlib.nullcontext()",
            "        return None",
            "",
            "    setattr(_unittest.TestCase, name, method)",
            "",
            "",
            "_unittest.TestCase.run = _run_cold",
            'for _name in ("assertEqual", "assertNotEqual", "assertTrue", "assertFalse", "assertIn", "assertIs", "assertIsNone", "assertRaises"):',
            "    _make_lenient(_name)",
            "",
            "",
          ) + markingCallsPy(ORDINAL_WRONG),
      },
    },
  ],
};

export const PROJECTS: Project[] = [nodeTest, jest, vitest, mocha, ava, tape, uvu, pytestProject, unittestProject].map((project) => ({
  ...project,
  payloads: [...project.payloads, ...HOT_PAYLOADS[project.framework]],
}));
