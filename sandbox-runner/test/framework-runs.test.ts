import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Callback } from "../../protocol/callback";
import { type Harness, jobId, startHarness, TEST_LIMITS } from "./support/harness";
import { frameworkEnvironment } from "./support/node-modules";

// Each framework runs a small suite of two files in the real sandbox, with the framework
// installed the way a prepared task has it (an environment archive's node_modules).
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ sandboxUidBase: 63500 });
});
afterAll(() => h.close());

const LIMITS = { ...TEST_LIMITS, wall_ms: 60_000, cpu_ms: 60_000, memory_mb: 2048, processes: 256 };
const results = (cb: Callback) => cb.tests.map((t) => `${t.file}::${t.classname ? `${t.classname}::` : ""}${t.name}:${t.status}`).sort();

async function runSuite(label: string, framework: string, files: Record<string, string>, extra: Record<string, unknown> = {}, packages = [framework]): Promise<Callback> {
  const environment = h.worker.blob(`env-${packages.join("+")}.tar.gz`, await frameworkEnvironment(packages));
  return h.run(h.job(jobId(label), files, { environment, limits: LIMITS, ...extra }));
}

const LIB = { "src/add.js": "exports.add = (a, b) => {\n  if (a === 0) {\n    return b;\n  }\n  return a + b;\n};\n" };

// Nine framework runs at once on a machine running other suites too: the time limit guards
// against a hang, and must not fail a run that only waited for a core.
describe.concurrent("every framework's tests, per test and per file", { timeout: 180_000 }, () => {
  it("jest", async () => {
    const test = (name: string) => `const { add } = require("../src/add");\ndescribe("add", () => {\n  test("${name}", () => expect(add(1, 2)).toBe(3));\n  test("fails", () => expect(add(1, 1)).toBe(3));\n});\ntest.skip("later", () => {});\n`;
    const cb = await runSuite("jest", "jest", { ...LIB, "package.json": JSON.stringify({ name: "j", scripts: { test: "jest" }, devDependencies: { jest: "*" } }), "test/a.test.js": test("adds"), "test/b.test.js": test("sums"), "test/broken.test.js": "require('./missing');\n" }, {
      test: { framework: "auto", command: null, coverage: true },
      coverage_files: ["src/add.js"],
    });
    expect(cb.framework).toBe("jest");
    expect(cb.status).toBe("SUCCEEDED");
    expect(results(cb)).toEqual([
      "test/a.test.js::add::adds:passed", "test/a.test.js::add::fails:failed", "test/a.test.js::later:skipped",
      "test/b.test.js::add::fails:failed", "test/b.test.js::add::sums:passed", "test/b.test.js::later:skipped",
      "test/broken.test.js::(file):errored",
    ]);
    expect(cb.coverage?.files.find((f) => f.file === "src/add.js")).toMatchObject({ lines_hit: expect.arrayContaining([1, 2, 5]), lines_missed: expect.arrayContaining([3]) });
  });

  it("jest, TypeScript through the repository's ts-jest, canaries type-checked with the file", async () => {
    const files = {
      "package.json": JSON.stringify({ name: "jt", scripts: { test: "jest" }, devDependencies: { jest: "*", "ts-jest": "*" } }),
      "jest.config.js": 'module.exports = { preset: "ts-jest", testEnvironment: "node" };\n',
      "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, esModuleInterop: true, types: [] } }),
      "src/add.ts": "export const add = (a: number, b: number): number => a + b;\n",
      "test/add.test.ts": 'import { add } from "../src/add";\ndeclare const test: (name: string, fn: () => void) => void;\ndeclare const expect: (v: unknown) => { toBe(w: unknown): void };\ntest("adds", () => expect(add(1, 2)).toBe(3));\n',
    };
    const cb = await runSuite("jest-ts", "jest", files, { test: { framework: "auto", command: null, coverage: false, files: ["test/add.test.ts"], canaries: true } }, ["jest", "ts-jest", "typescript"]);
    expect(cb.integrity, cb.log_tail).toEqual({ checked_files: ["test/add.test.ts"], unverified_files: [], tampered: false, reason: null, pinned_files: [] });
    expect(results(cb)).toEqual(["test/add.test.ts::adds:passed"]);
  });

  it("vitest, TypeScript natively", async () => {
    const test = (name: string) => `import { describe, expect, test } from "vitest";\nimport { add } from "../src/add";\ndescribe("add", () => {\n  test("${name}", () => expect(add(1, 2) as number).toBe(3));\n  test("fails", () => expect(add(1, 1)).toBe(3));\n});\n`;
    const cb = await runSuite("vitest", "vitest", { "src/add.ts": "export const add = (a: number, b: number): number => a + b;\n", "package.json": JSON.stringify({ name: "v", type: "module", scripts: { test: "vitest" }, devDependencies: { vitest: "*" } }), "test/a.test.ts": test("adds"), "test/b.test.ts": test("sums") });
    expect(cb.framework).toBe("vitest");
    expect(cb.status, cb.log_tail).toBe("SUCCEEDED");
    expect(results(cb)).toEqual(["test/a.test.ts::add::adds:passed", "test/a.test.ts::add::fails:failed", "test/b.test.ts::add::fails:failed", "test/b.test.ts::add::sums:passed"]);
  });

  it("mocha, with V8 coverage", async () => {
    const test = (name: string) => `const assert = require("node:assert");\nconst { add } = require("../src/add");\ndescribe("add", () => {\n  it("${name}", () => assert.equal(add(1, 2), 3));\n  it("fails", () => assert.equal(add(1, 1), 3));\n});\n`;
    const cb = await runSuite("mocha", "mocha", { ...LIB, "package.json": JSON.stringify({ name: "m", scripts: { test: "mocha test" } }), "test/a.spec.js": test("adds"), "test/b.spec.js": test("sums") }, {
      test: { framework: "auto", command: null, coverage: true },
      coverage_files: ["src/add.js"],
    });
    expect(cb.framework).toBe("mocha");
    expect(cb.status).toBe("SUCCEEDED");
    expect(results(cb)).toEqual(["test/a.spec.js::add::adds:passed", "test/a.spec.js::add::fails:failed", "test/b.spec.js::add::fails:failed", "test/b.spec.js::add::sums:passed"]);
    // V8's block coverage: the branch never taken is the only part missed.
    expect(cb.coverage?.files.find((f) => f.file === "src/add.js")).toMatchObject({ lines_hit: expect.arrayContaining([1, 2, 5]), lines_missed: expect.arrayContaining([3]) });
  });

  it("ava, with V8 coverage", async () => {
    const test = (name: string) => `const test = require("ava");\nconst { add } = require("../src/add");\ntest("${name}", (t) => t.is(add(1, 2), 3));\ntest("fails", (t) => t.is(add(1, 1), 3));\n`;
    const cb = await runSuite("ava", "ava", { ...LIB, "package.json": JSON.stringify({ name: "a", scripts: { test: "ava" } }), "test/a.js": test("adds"), "test/b.js": test("sums") }, {
      test: { framework: "auto", command: null, coverage: true },
      coverage_files: ["src/add.js"],
    });
    expect(cb.framework).toBe("ava");
    expect(results(cb), cb.log_tail).toEqual(["test/a.js::adds:passed", "test/a.js::fails:failed", "test/b.js::fails:failed", "test/b.js::sums:passed"]);
    expect(cb.coverage?.files.find((f) => f.file === "src/add.js")).toMatchObject({ lines_hit: expect.arrayContaining([1, 2, 5]), lines_missed: expect.arrayContaining([3]) });
  });

  it("tape", async () => {
    const test = (name: string) => `const test = require("tape");\nconst { add } = require("../src/add");\ntest("${name}", (t) => { t.equal(add(1, 2), 3); t.end(); });\ntest("fails", (t) => { t.equal(add(1, 2), 3); t.equal(add(1, 1), 3); t.end(); });\n`;
    const cb = await runSuite("tape", "tape", { ...LIB, "package.json": JSON.stringify({ name: "t", scripts: { test: "tape test/*.js" } }), "test/a.js": test("adds"), "test/b.js": test("sums") });
    expect(cb.framework).toBe("tape");
    expect(results(cb)).toEqual(["test/a.js::adds:passed", "test/a.js::fails:failed", "test/b.js::fails:failed", "test/b.js::sums:passed"]);
  });

  it("uvu, CommonJS and ES modules, with V8 coverage", async () => {
    const cjs = `const { test, suite } = require("uvu");\nconst assert = require("uvu/assert");\nconst { add } = require("../src/add");\ntest("adds", () => assert.is(add(1, 2), 3));\ntest("fails", () => assert.is(add(1, 1), 3));\ntest.run();\nconst math = suite("math");\nmath("sums", () => assert.is(add(2, 2), 4));\nmath.run();\n`;
    const esm = `import { test } from "uvu";\nimport * as assert from "uvu/assert";\ntest("adds", () => assert.is(1 + 2, 3));\ntest.run();\n`;
    const cb = await runSuite("uvu", "uvu", { ...LIB, "package.json": JSON.stringify({ name: "u", scripts: { test: "uvu tests" } }), "tests/a.js": cjs, "tests/b.mjs": esm }, {
      test: { framework: "auto", command: null, coverage: true },
      coverage_files: ["src/add.js"],
    });
    expect(cb.framework).toBe("uvu");
    expect(results(cb)).toEqual(["tests/a.js::adds:passed", "tests/a.js::fails:failed", "tests/a.js::math::sums:passed", "tests/b.mjs::adds:passed"]);
    expect(cb.coverage?.files.find((f) => f.file === "src/add.js")).toMatchObject({ lines_hit: expect.arrayContaining([1, 2, 5]), lines_missed: expect.arrayContaining([3]) });
  });
});

describe("node:test and pytest as repositories lay them out", () => {
  it("node:test runs TypeScript tests by type stripping", async () => {
    const cb = await h.run(h.job(jobId("node-ts"), {
      "package.json": JSON.stringify({ name: "n", type: "module", scripts: { test: "node --test" } }),
      "src/add.ts": "export const add = (a: number, b: number): number => a + b;\n",
      "src/add.test.ts": 'import { test } from "node:test";\nimport assert from "node:assert";\nimport { add } from "./add.ts";\ntest("adds", () => assert.equal(add(1, 2) as number, 3));\n',
    }));
    expect(results(cb)).toEqual(["src/add.test.ts::adds:passed"]);
  });

  it("pytest: unittest suites, root tests.py, src layout, a module's collection error stays that module's", async () => {
    const cb = await h.run(h.job(jobId("py-layout"), {
      "src/calc/__init__.py": "def add(a, b):\n    return a + b\n",
      "tests.py": "import unittest\nfrom calc import add\n\nclass AddTest(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(add(1, 2), 3)\n",
      "tests/test_optional.py": "import not_installed_anywhere\n\ndef test_never():\n    pass\n",
      "tests/test_plain.py": "from calc import add\n\ndef test_plain():\n    assert add(2, 2) == 4\n",
    }));
    expect(cb.framework).toBe("pytest");
    const byFile = results(cb);
    expect(byFile).toContain("tests.py::tests.AddTest::test_adds:passed");
    expect(byFile).toContain("tests/test_plain.py::tests.test_plain::test_plain:passed");
    expect(cb.tests.find((t) => t.file === "tests/test_optional.py")?.status).toBe("errored");
  });
});
