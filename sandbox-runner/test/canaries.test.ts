import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TestResult } from "../../protocol/callback";
import type { Job } from "../../protocol/jobs";
import { type CanaryPlan, checkCanaries, placeCanaries } from "../src/canaries";
import { jsShape, pyShape, syntaxErrors } from "../src/canary-sites";
import { frameworkReach, namedHiddenTests } from "../src/framework-reach";
import { HARNESS_GLOBS } from "../src/frameworks";
import { taskHarness } from "../src/harness-files";
import { applyPatch, createEmptyGitDir, patchPaths } from "../src/patches";
import { temporaryWorkspaces } from "./support/workspaces";

// The parts of issue #36's defences that need no sandbox: where canaries go and how they are
// written, how their results are read, which overlay files a hidden-test run keeps at the
// task's version, and what in the candidate's code voids the run.

const { workspace, scratch: scratchDir } = temporaryWorkspaces("assay-canaries-");

const upsert = (path: string, content: string) => ({ path, content_b64: Buffer.from(content).toString("base64") });
const result = (file: string, name: string, status: TestResult["status"], classname = ""): TestResult => ({ file, name, classname, status, duration_ms: 1, message: null });

const VITEST_FILE = [
  "import { describe, expect, it } from 'vitest'",
  "import { slug } from '../src/slug'",
  "",
  "describe('slug', () => {",
  "  it('lowercases every word', () => {",
  "    expect(slug('A B')).toBe('a-b')",
  "  })",
  "",
  "  it('trims the spaces around', () => expect(slug(' x ')).toEqual('x'))",
  "})",
  "",
  "it('keeps digits as they are', () => {",
  "  expect(slug('a1')).toBe('a1')",
  "})",
  "",
].join("\n");

describe("placing canaries", () => {
  it("among a JavaScript file's tests, in its style: its test function, its assertions, its quotes and semicolons, names of its words", async () => {
    const dir = await workspace({ "test/slug.test.ts": VITEST_FILE });
    const plan = await placeCanaries(dir, "vitest", ["test/slug.test.ts"]);
    const placed = await readFile(join(dir, "test/slug.test.ts"), "utf8");
    const canaries = plan.files.get("test/slug.test.ts") ?? [];
    expect(syntaxErrors("test/slug.test.ts", placed)).toBe(0);
    // No marker a candidate could look for: no runner names, no built-in module lookups, no hex, no new imports.
    expect(placed).not.toMatch(/__assay|getBuiltinModule|[0-9a-f]{12}|1000000007/);
    expect(placed.match(/^import /gm)).toHaveLength(2);
    expect(placed).not.toContain('"');
    expect(placed).not.toMatch(/;\s*$/m);
    // Each test's name has a copy that must fail; two or three fresh ones must fail, one passes, one anchors the end.
    expect(canaries.filter((c) => c.role === "mirror").map((c) => c.name).sort()).toEqual(["keeps digits as they are", "lowercases every word", "trims the spaces around"]);
    expect(canaries.filter((c) => c.role === "fail").length).toBeGreaterThanOrEqual(2);
    expect(canaries.filter((c) => c.role === "pass")).toHaveLength(1);
    expect(canaries.filter((c) => c.role === "anchor")).toHaveLength(1);
    for (const c of canaries.filter((c) => c.role !== "mirror")) expect(c.name).toMatch(/^[a-z]+( [a-z]+)+$/);
    expect(plan.tests.sort()).toEqual(["keeps digits as they are", "lowercases every word", "trims the spaces around"]);
    // The anchor is the file's last test.
    const anchor = canaries.find((c) => c.role === "anchor")?.name as string;
    expect(jsShape("test/slug.test.ts", placed, "vitest").sites.at(-1)?.name).toBe(anchor);
  });

  it("asserts only with libraries whose assertions throw: a project's own `equal` helper is never used", () => {
    const shape = jsShape("test/a.test.js", [
      "const { equal } = require('./helpers')",
      "const assert = require('node:assert/strict')",
      "test('a', () => { equal(1, 1); assert.deepEqual([1], [1]) })",
      "test('b', ({ expect }) => { expect(1).toBe(1) })",
      "",
    ].join("\n"), "node-test");
    expect(shape.assertions.map((a) => a.callee)).toEqual(["assert.deepEqual"]);
    // The destructured test context cannot be written again: that test is no site.
    expect(shape.sites.map((s) => s.name)).toEqual(["a"]);
  });

  it("never in a type test, which vitest checks and never runs", async () => {
    const dir = await workspace({ "src/slug.test-d.ts": "import { expectTypeOf, test } from 'vitest'\ntest('types', () => { expectTypeOf(1).toBeNumber() })\n" });
    const plan = await placeCanaries(dir, "vitest", ["src/slug.test-d.ts"]);
    expect(plan.files.size).toBe(0);
    expect(await readFile(join(dir, "src/slug.test-d.ts"), "utf8")).not.toContain("toBe(");
  });

  it("a file whose tests cannot be found gets the appended pair, and still parses", async () => {
    const source = "const cases = [['a', 1]]\nfor (const [name, n] of cases) test(name, () => expect(n).toBe(1))\n";
    const dir = await workspace({ "test/gen.test.js": source });
    const plan = await placeCanaries(dir, "jest", ["test/gen.test.js"]);
    expect(plan.files.get("test/gen.test.js")?.map((c) => c.role)).toEqual(["fail", "anchor"]);
    expect(syntaxErrors("test/gen.test.js", await readFile(join(dir, "test/gen.test.js"), "utf8"))).toBe(0);
  });

  it("never gives two canaries of one file the same name, however the words fall (two once met by chance in CI)", async () => {
    const source = "const cases = [['a', 1]]\nfor (const [name, n] of cases) test(name, () => expect(n).toBe(1))\n";
    const dir = await workspace({});
    for (let i = 0; i < 400; i++) {
      await writeFile(join(dir, "gen.test.js"), source);
      const names = (await placeCanaries(dir, "jest", ["gen.test.js"])).files.get("gen.test.js")?.map((c) => c.name) ?? [];
      expect(names).toHaveLength(2);
      expect(new Set(names).size).toBe(2);
    }
  });

  it("in Python: functions and methods among the file's, and a class of copies named like each test (a TestCase when the file's tests are)", async () => {
    const source = [
      "import unittest",
      "from textstats import words",
      "",
      "",
      "def test_counts_the_words():",
      "    assert words('a b c') == 3",
      "",
      "",
      "class WordsCase(unittest.TestCase):",
      "    def test_one_word_is_one(self):",
      "        self.assertEqual(words('a'), 1)",
      "",
    ].join("\n");
    const dir = await workspace({ "tests/test_words.py": source });
    const plan = await placeCanaries(dir, "pytest", ["tests/test_words.py"]);
    const placed = await readFile(join(dir, "tests/test_words.py"), "utf8");
    const canaries = plan.files.get("tests/test_words.py") ?? [];
    expect(canaries.filter((c) => c.role === "mirror").map((c) => c.name).sort()).toEqual(["test_counts_the_words", "test_one_word_is_one"]);
    for (const c of canaries) expect(c.name).toMatch(/^test_[a-z_]+$/);
    expect(placed).toMatch(/^class Test\w+\(unittest\.TestCase\):$/m);
    // Python itself reads it, and every canary is a test pytest collects.
    const tests = execFileSync("python3", ["-c", "import ast,sys; t=ast.parse(sys.stdin.read()); print(sum(1 for n in ast.walk(t) if isinstance(n, ast.FunctionDef) and n.name.startswith('test')))"], { input: placed }).toString();
    expect(Number(tests)).toBe(2 + canaries.length);
  });
});

describe("placing canaries where real projects' tests are", () => {
  it("never names a canary like a test the file may declare: with options, skipped, from a table, in a loop", async () => {
    const source = [
      "const { add } = require('../src/add')",
      "test('adds one', () => expect(add(1)).toBe(1))",
      "test('adds two', () => expect(add(2)).toBe(2), 1000)",
      "test.skip('adds three', () => {})",
      "test.each([[4]])('adds %i', (n) => expect(add(n)).toBe(n))",
      "for (const n of [5]) test(`one more ${n}`, () => expect(add(n)).toBe(n))",
      "",
    ].join("\n");
    const dir = await workspace({});
    for (let i = 0; i < 100; i++) {
      await writeFile(join(dir, "add.test.js"), source);
      const names = (await placeCanaries(dir, "jest", ["add.test.js"])).files.get("add.test.js")?.filter((c) => c.role !== "mirror").map((c) => c.name) ?? [];
      for (const name of names) expect(name).not.toMatch(/^adds |^one more /);
    }
  });

  it("beside a table's tests and concurrent ones, as plain tests: never a copy of a table's title", async () => {
    const source = [
      "const { describe, expect, test } = require('@jest/globals')",
      "describe('add', () => {",
      "  test.each([[1, 1, 2]])('adds %i and %i', (a, b, sum) => {",
      "    expect(a + b).toBe(sum)",
      "  })",
      "  test.concurrent('adds at once', async () => expect(1 + 1).toBe(2))",
      "  test.only('adds only this', () => expect(1).toBe(1))",
      "})",
      "",
    ].join("\n");
    expect(jsShape("add.test.js", source, "jest").sites.map((s) => `${s.callee}:${s.name}:${s.table}`)).toEqual(["test:adds %i and %i:true", "test:adds at once:false"]);
    const dir = await workspace({ "add.test.js": source });
    const canaries = (await placeCanaries(dir, "jest", ["add.test.js"])).files.get("add.test.js") ?? [];
    expect(canaries.filter((c) => c.role === "mirror").map((c) => c.name)).toEqual(["adds at once"]);
    expect(await readFile(join(dir, "add.test.js"), "utf8")).not.toMatch(/globalThis/);
  });

  it("jest's and vitest's expect: a file that only matches snapshots or errors still asserts with its expect, never through a promise", () => {
    const shape = jsShape("test/r.test.js", [
      "describe('render', () => {",
      "  it('renders', () => { expect(render()).toMatchSnapshot() })",
      "  it('resolves', async () => { await expect(load()).resolves.toBe(1) })",
      "})",
      "",
    ].join("\n"), "jest");
    expect(shape.assertions).toEqual([{ kind: "equal", form: "chain", callee: "expect", path: ".toBe", param: null }]);
    const chai = jsShape("test/r.spec.js", "const { expect } = require('chai')\nit('renders', () => { expect(render()).to.have.length(1) })\n", "mocha");
    expect(chai.assertions).toEqual([]);
  });

  it("in Python, never in a class that marks its methods (parametrized, patched, skipped, xfail), whose names are still copied", async () => {
    const marked = [
      '@pytest.mark.parametrize("base", [0, 10])',
      "class TestAdd:",
      "    def test_adds_one(self, base):",
      "        assert add(base, 1) == base + 1",
      "",
      "    def test_adds_zero(self, base):",
      "        assert add(base, 0) == base",
      "",
      "",
      '@mock.patch("os.getcwd", return_value="/nowhere")',
      "class AddCase(unittest.TestCase):",
      "    def test_adds_two(self, getcwd):",
      "        self.assertEqual(add(1, 1), 2)",
      "",
      "    def test_adds_three(self, getcwd):",
      "        self.assertEqual(add(1, 2), 3)",
      "",
      "",
      "class TestLater:",
      "    pytestmark = pytest.mark.xfail(strict=True)",
      "",
      "    def test_adds_lists(self):",
      "        assert add([1], [2]) == 3",
      "",
      "    def test_adds_sets(self):",
      "        assert add({1}, {2}) == 3",
      "",
    ].join("\n");
    const plain = "import unittest\nfrom unittest import mock\n\nimport pytest\n\nfrom calc import add\n\n\nclass TestPlain:\n    def test_adds(self):\n        assert add(1, 1) == 2\n\n\n";
    const dir = await workspace({});
    for (let i = 0; i < 20; i++) {
      for (const source of [`${plain}${marked}`, `import unittest\nfrom unittest import mock\n\nimport pytest\n\n\n${marked}`]) {
        await writeFile(join(dir, "test_add.py"), source);
        const canaries = (await placeCanaries(dir, "pytest", ["test_add.py"])).files.get("test_add.py") ?? [];
        const placed = await readFile(join(dir, "test_add.py"), "utf8");
        for (const block of marked.split("\n\n\n")) expect(placed).toContain(block);
        expect(canaries.filter((c) => c.role === "mirror").map((c) => c.name)).toEqual(expect.arrayContaining(["test_adds_one", "test_adds_two", "test_adds_lists"]));
        expect(canaries.filter((c) => c.role === "anchor")).toHaveLength(1);
      }
    }
  });
});

describe("canaries that call the code under test", () => {
  it("take the calls the file's equality assertions compare, naming only module-level bindings: never a local, a test's parameter, this, await or a function", () => {
    const shape = jsShape("test/slug.test.js", [
      "const assert = require('node:assert/strict')",
      "const { slug, Slugger } = require('../src/slug')",
      "const OPTIONS = { lower: true }",
      "let mode = 'a'",
      "function helper(value) { return value }",
      "test('module level', () => {",
      "  assert.equal(slug('A B', OPTIONS), 'a-b')",
      "  assert.equal(slug('A B', OPTIONS), 'a-b')",
      "  assert.deepEqual(new Slugger().parts('a b'), ['a', 'b'])",
      "  assert.equal(slug(`x${OPTIONS.lower}`), 12)",
      "})",
      "test('refused', async function (t) {",
      "  const text = 'a'",
      "  assert.equal(slug(text), 'a')",
      "  assert.equal(slug(t.name), 'a')",
      "  assert.equal(slug(this.text), 'a')",
      "  assert.equal(slug(await Promise.resolve('a')), 'a')",
      "  assert.equal(slug(mode), 'a')",
      "  assert.equal(slug(helper('a')), 'a')",
      "  assert.equal([1].map((n) => slug(n)), 'a')",
      "  assert.equal(slug(undefined), 'a')",
      "  assert.equal(await slug('a'), 'a')",
      "  assert.notEqual(slug('b'), 'a')",
      "})",
      "",
    ].join("\n"), "node-test");
    expect(shape.calls.map((c) => [c.text, c.expected])).toEqual([
      ["slug('A B', OPTIONS)", "string"],
      ["new Slugger().parts('a b')", "other"],
      ["slug(`x${OPTIONS.lower}`)", "number"],
      ["slug(helper('a'))", "string"],
    ]);
    expect(shape.calls[0]?.form).toMatchObject({ form: "call", callee: "assert.equal" });
  });

  it("go after the test that runs last, before the anchor: the call and an expected value no code returns, in the file's own assertion", async () => {
    const dir = await workspace({});
    for (let i = 0; i < 20; i++) {
      await writeFile(join(dir, "slug.test.ts"), VITEST_FILE);
      const plan = await placeCanaries(dir, "vitest", ["slug.test.ts"]);
      const placed = await readFile(join(dir, "slug.test.ts"), "utf8");
      const canaries = plan.files.get("slug.test.ts") ?? [];
      const names = jsShape("slug.test.ts", placed, "vitest").sites.map((s) => s.name);
      const calling = canaries.filter((c) => c.role === "fail" && new RegExp(`it\\('${c.name}', \\(\\) => \\{\\n  expect\\(slug\\(`).test(placed)).map((c) => c.name);
      expect(calling.length).toBeGreaterThanOrEqual(1);
      expect(calling.length).toBeLessThanOrEqual(2);
      // Nothing after them but the anchor, and they are canaries that must fail.
      expect(names.slice(-calling.length - 1)).toEqual([...calling, canaries.find((c) => c.role === "anchor")?.name]);
      expect(placed).toMatch(/expect\(slug\('[^']*'\)\)\.to(Be|Equal)\(\[('[a-z]+', ){1}'[a-z]+'\]\.join\('[^']'\) \+ '\d{5}'\)/);
      expect(syntaxErrors("slug.test.ts", placed)).toBe(0);
    }
  });

  it("never where a test of the file's may run after them: mocha's tests beside a describe(), tests made after the last one, ava's tests that wait", async () => {
    const withCalls = (framework: "mocha" | "jest" | "ava", source: string) => jsShape("t.test.js", source, framework);
    const mocha = ["const assert = require('assert')", "const { f } = require('../f')", "describe('f', () => {", "  it('a', () => assert.equal(f(1), 1))", "})", "it('b', () => assert.equal(f(2), 2))", ""].join("\n");
    expect(withCalls("mocha", mocha).tail).toBeNull();
    expect(withCalls("jest", mocha.replace("require('assert')", "require('node:assert')")).tail).not.toBeNull();
    const loop = ["const { f } = require('../f')", "test('a', () => expect(f(1)).toBe(1))", "for (const n of [2]) test(`n ${n}`, () => expect(f(n)).toBe(n))", ""].join("\n");
    expect(withCalls("jest", loop).tail).toBeNull();
    const hooks = ["const { f } = require('../f')", "test('a', () => expect(f(1)).toBe(1))", "afterAll(() => {})", ""].join("\n");
    expect(withCalls("jest", hooks).tail).not.toBeNull();
    const ava = ["import test from 'ava'", "import { f } from '../f.js'", "test('a', async (t) => { t.is(await f(1), 1) })", "test('b', (t) => { t.is(f(2), 2) })", ""].join("\n");
    expect(withCalls("ava", ava).tail).toBeNull();
    expect(withCalls("ava", ava.replace("async (t) => { t.is(await f(1), 1) }", "(t) => { t.is(f(1), 1) }")).tail).not.toBeNull();
    const dir = await workspace({ "t.spec.js": mocha });
    const canaries = (await placeCanaries(dir, "mocha", ["t.spec.js"])).files.get("t.spec.js") ?? [];
    expect(await readFile(join(dir, "t.spec.js"), "utf8")).not.toMatch(/f\([12]\), (\d+\.\d+|\[)/);
    expect(canaries.filter((c) => c.role === "fail").length).toBeLessThanOrEqual(3);
  });

  it("in Python: module-level calls only; after the last test in its scope, or, after a TestCase (its methods run by name), in a TestCase of their own", async () => {
    const shape = await pyShape([
      "import pytest",
      "from readtime import reading_time as rt",
      "WPM = 100",
      "",
      "",
      "def test_a(tmp_path):",
      "    words = 'a b'",
      "    assert rt('a b', wpm=WPM) == 1",
      "    assert rt(words) == 1",
      "    assert rt(str(tmp_path)) == 1",
      "    assert rt((lambda: 'a')()) == 1",
      "    assert rt('') == 'none'",
      "",
    ].join("\n"));
    expect(shape?.calls.map((c) => [c.text, c.expected])).toEqual([["rt('a b', wpm=WPM)", "number"], ["rt('')", "string"]]);
    expect(shape?.tail).not.toBeNull();
    const source = [
      "import unittest",
      "from ordinals import ordinal",
      "",
      "",
      "class OrdinalTest(unittest.TestCase):",
      "    def test_z_last_by_name(self):",
      "        self.assertEqual(ordinal(1), '1st')",
      "",
      "    def test_a_first_by_name(self):",
      "        self.assertEqual(ordinal(2), '2nd')",
      "",
      "",
      'if __name__ == "__main__":',
      "    unittest.main()",
      "",
    ].join("\n");
    const dir = await workspace({ "tests/test_ordinal.py": source });
    const plan = await placeCanaries(dir, "pytest", ["tests/test_ordinal.py"]);
    const placed = await readFile(join(dir, "tests/test_ordinal.py"), "utf8");
    const classes = [...placed.matchAll(/^class (\w+)/gm)].map((m) => m[1]);
    const own = /\nclass (\w+)\(unittest\.TestCase\):\n( {4}def test_\w+\(self\):\n {8}self\.assertEqual\(ordinal\(\d\), "[^"]*"\.join\(\[("[a-z]+", )"[a-z]+"\]\) \+ "\d{5}"\)\n\n?)+/.exec(placed.replace(/'/g, '"'));
    expect(own).not.toBeNull();
    // Right after the class of the file's tests: pytest runs a module's classes in the order they are defined.
    expect(classes.indexOf(own?.[1] as string)).toBe(classes.indexOf("OrdinalTest") + 1);
    const calling = (plan.files.get("tests/test_ordinal.py") ?? []).filter((c) => c.scope?.[0] === own?.[1]);
    expect(calling.length).toBeGreaterThanOrEqual(1);
    for (const c of calling) expect(c.role).toBe("fail");
    // Never when a class follows (it may inherit the file's tests) or the module marks every test.
    expect((await pyShape(`${source}\n\nclass Later(OrdinalTest):\n    pass\n`))?.tail).toBeNull();
    expect((await pyShape(`pytestmark = []\n${source}`))?.tail).toBeNull();
  });
});

describe("reading the canaries' results", () => {
  const FILE = "test/slug.test.js";
  const plan: CanaryPlan = {
    files: new Map([[FILE, [
      { name: "words keep order", role: "fail" as const },
      { name: "order of words", role: "pass" as const },
      { name: "lowercases", role: "mirror" as const },
      { name: "keeps words", role: "anchor" as const },
    ]]]),
    tests: ["lowercases"],
  };
  const canaryResults = (status: TestResult["status"] = "failed", classname = "") => [
    result(FILE, "words keep order", status, classname),
    result(FILE, "order of words", "passed", classname),
    result(FILE, "keeps words", "passed", classname),
  ];

  it("an honest right answer: the copy fails, the real test passes and is all that is left", () => {
    const checked = checkCanaries(plan, [result(FILE, "lowercases", "passed"), result(FILE, "lowercases", "failed"), ...canaryResults()]);
    expect(checked.integrity).toEqual({ checked_files: [FILE], unverified_files: [], tampered: false, reason: null });
    expect(checked.tests).toEqual([result(FILE, "lowercases", "passed")]);
  });

  it("an honest wrong answer: both fail and one failure is left for the real test", () => {
    const checked = checkCanaries(plan, [result(FILE, "lowercases", "failed"), result(FILE, "lowercases", "failed"), ...canaryResults()]);
    expect(checked.integrity.tampered).toBe(false);
    expect(checked.tests.map((t) => t.status)).toEqual(["failed"]);
  });

  it("in Python the copy's failure is dropped, not the real test's: the copy sits in a class of its own", async () => {
    const py = "tests/test_calc.py";
    const source = [
      "import os",
      "import unittest",
      "",
      "from calc import add",
      "",
      "",
      "class DbCase(unittest.TestCase):",
      "    @classmethod",
      "    def setUpClass(cls):",
      "        raise RuntimeError('no database')",
      "",
      "    def test_stores(self):",
      "        self.assertEqual(add(1, 1), 2)",
      "",
      "",
      "class TestPlain:",
      "    def test_adds(self):",
      "        assert add(2, 2) == 4",
      "",
    ].join("\n");
    const dir = await workspace({ [py]: source });
    // The plan the runner makes for this file: its copies' class is drawn at random.
    const plan = await placeCanaries(dir, "pytest", [py]);
    const canaries = plan.files.get(py) ?? [];
    const mirror = canaries.find((c) => c.role === "mirror" && c.name === "test_stores");
    expect(mirror?.copyIn).toMatch(/^Test\w+$/);
    // The real test errored (its class's set-up failed); the copy, in its class, failed; every other canary as it should.
    const others = canaries.filter((c) => c.role !== "mirror").map((c) => result(py, c.name, c.role === "fail" ? "failed" : "passed", "tests.test_calc"));
    const copies = canaries.filter((c) => c.role === "mirror" && c !== mirror).map((c) => result(py, c.name, "failed", `tests.test_calc.${mirror?.copyIn}`));
    const real = result(py, "test_stores", "errored", "tests.test_calc.DbCase");
    const copy = result(py, "test_stores", "failed", `tests.test_calc.${mirror?.copyIn}`);
    const plain = result(py, "test_adds", "passed", "tests.test_calc.TestPlain");
    for (const pair of [[real, copy], [copy, real]]) {
      const checked = checkCanaries(plan, [...pair, plain, ...copies, ...others]);
      expect(checked.integrity.tampered).toBe(false);
      expect(checked.tests.filter((t) => t.name === "test_stores")).toEqual([real]);
    }
  });

  it("results made to pass by the hidden tests' names: the copy passes too, and the run is tampered", () => {
    const checked = checkCanaries(plan, [result(FILE, "lowercases", "passed"), result(FILE, "lowercases", "passed"), ...canaryResults()]);
    expect(checked.integrity).toMatchObject({ tampered: true, reason: expect.stringMatching(/a copy of the test "lowercases" that must fail was reported passed/) });
  });

  it("a canary that must fail reported passed: tampered", () => {
    const checked = checkCanaries(plan, [result(FILE, "lowercases", "passed"), result(FILE, "lowercases", "failed"), ...canaryResults("passed")]);
    expect(checked.integrity).toMatchObject({ tampered: true, reason: expect.stringMatching(/a canary test that must fail was reported passed/) });
  });

  it("the file never reached its end (no anchor), or a canary was skipped: unverified, not tampered", () => {
    const early = checkCanaries(plan, [result(FILE, "lowercases", "passed"), result(FILE, "words keep order", "failed")]);
    expect(early.integrity).toMatchObject({ tampered: false, unverified_files: [FILE] });
    const skipped = checkCanaries(plan, [result(FILE, "lowercases", "skipped"), result(FILE, "lowercases", "skipped"), ...canaryResults("skipped")]);
    expect(skipped.integrity).toMatchObject({ tampered: false, unverified_files: [FILE] });
  });

  it("a test of the file's own by a canary's name (made at run time) is not the canary's failure to fail", () => {
    const checked = checkCanaries(plan, [result(FILE, "lowercases", "passed"), result(FILE, "lowercases", "failed"), ...canaryResults(), result(FILE, "words keep order", "passed", "table")]);
    expect(checked.integrity).toMatchObject({ tampered: false, unverified_files: [] });
  });

  it("a scope that does not run here (its hook failed or skipped): canaries that came out as the test beside them are no sign of anything", () => {
    const beside: CanaryPlan = {
      files: new Map([[FILE, [
        { name: "words keep order", role: "fail" as const, beside: "lowercases" },
        { name: "order of words", role: "pass" as const, beside: "lowercases" },
        { name: "lowercases", role: "mirror" as const, beside: "lowercases" },
        { name: "keeps words", role: "anchor" as const, beside: "trims" },
      ]]]),
      tests: ["lowercases", "trims"],
    };
    const run = (status: TestResult["status"], canary: TestResult["status"] = status) => [
      result(FILE, "lowercases", status, "db"), result(FILE, "lowercases", status === "passed" ? "failed" : status, "db"), result(FILE, "trims", "passed"),
      result(FILE, "words keep order", status === "skipped" ? "skipped" : "failed", "db"), result(FILE, "order of words", canary, "db"), result(FILE, "keeps words", "passed"),
    ];
    for (const status of ["errored", "skipped", "failed"] as const) expect(checkCanaries(beside, run(status)).integrity, status).toMatchObject({ tampered: false, unverified_files: [] });
    // The test beside passed (only its copy failed): a must-pass canary that failed is not explained.
    expect(checkCanaries(beside, run("passed", "failed")).integrity).toMatchObject({ tampered: false, unverified_files: [FILE] });
    expect(checkCanaries(beside, run("passed", "skipped")).integrity).toMatchObject({ tampered: false, unverified_files: [FILE] });
  });

  it("mocha's failed before hook: the tests and canaries of its describe() are not reported, only the hook", () => {
    const plan: CanaryPlan = {
      files: new Map([[FILE, [
        { name: "words keep order", role: "fail" as const, beside: "lowercases", scope: ["db", "rows"] },
        { name: "order of words", role: "pass" as const, beside: "lowercases", scope: ["db", "rows"] },
        { name: "lowercases", role: "mirror" as const, beside: "lowercases", scope: ["db", "rows"] },
        { name: "keeps words", role: "anchor" as const, beside: "trims", scope: [] },
      ]]]),
      tests: ["lowercases", "trims"],
    };
    const hook = result(FILE, '"before all" hook for "lowercases"', "errored", "db");
    expect(checkCanaries(plan, [hook, result(FILE, "trims", "passed"), result(FILE, "keeps words", "passed")]).integrity).toMatchObject({ tampered: false, unverified_files: [] });
    // Without the hook's record, or with one of another describe(), the missing canaries are unexplained.
    expect(checkCanaries(plan, [result(FILE, "trims", "passed"), result(FILE, "keeps words", "passed")]).integrity).toMatchObject({ tampered: false, unverified_files: [FILE] });
    expect(checkCanaries(plan, [{ ...hook, classname: "dbs" }, result(FILE, "trims", "passed"), result(FILE, "keeps words", "passed")]).integrity).toMatchObject({ tampered: false, unverified_files: [FILE] });
  });

  it("a file run twice (two projects): every canary twice, each real test kept twice", () => {
    const run = (project: string) => [result(FILE, "lowercases", "passed", project), result(FILE, "lowercases", "failed", project), ...canaryResults("failed", project)];
    const checked = checkCanaries(plan, [...run("[node]"), ...run("[edge]")]);
    expect(checked.integrity).toMatchObject({ tampered: false, unverified_files: [] });
    expect(checked.tests.map((t) => `${t.classname}:${t.status}`).sort()).toEqual(["[edge]:passed", "[node]:passed"]);
  });

  it("a file only vitest's typecheck mode takes (not in the run's include globs): never run, so nothing to verify, and its checks count", () => {
    const checked = checkCanaries(plan, [result(FILE, "lowercases", "passed", "[typecheck]"), result(FILE, "lowercases", "passed", "[typecheck]"), ...canaryResults("passed", "[typecheck]")]);
    expect(checked.integrity).toMatchObject({ tampered: false, unverified_files: [] });
    expect(checked.tests.map((t) => `${t.classname}:${t.name}:${t.status}`)).toEqual(["[typecheck]:lowercases:passed"]);
  });

  it("vitest's typecheck mode: its results are checks of types, its canaries and copies are dropped unchecked", () => {
    const typecheck = [result(FILE, "lowercases", "passed", "[typecheck]"), result(FILE, "lowercases", "passed", "[typecheck]"), ...canaryResults("passed", "[typecheck]")];
    const runtime = [result(FILE, "lowercases", "passed"), result(FILE, "lowercases", "failed"), ...canaryResults()];
    const checked = checkCanaries(plan, [...runtime, ...typecheck]);
    expect(checked.integrity).toMatchObject({ tampered: false, unverified_files: [] });
    expect(checked.tests.map((t) => `${t.classname}:${t.name}:${t.status}`).sort()).toEqual([":lowercases:passed", "[typecheck]:lowercases:passed"]);
  });
});

describe("the harness a hidden-test run keeps", () => {
  const TASK = {
    "package.json": JSON.stringify({ name: "slug", scripts: { test: "node --import ./tools/preload.mjs --test" } }),
    "vitest.config.ts": "import { defineConfig } from 'vitest/config'\nimport { plugin } from './src/plugin'\nexport default defineConfig({ plugins: [plugin()], test: { setupFiles: ['./src/test-setup.ts'], globalSetup: 'scripts/global.ts' } })\n",
    "pytest.ini": "[pytest]\naddopts = -p textstats.testing\n",
    "tests/conftest.py": "pytest_plugins = ['textstats.fixtures']\n",
    "src/slug.ts": "export const slug = (s: string) => s\n",
  };

  it("configs of every framework, what the task's configs name as setup, plugins and preloads, and Python's start-up hooks; never the code under test", async () => {
    const dir = await workspace(TASK);
    const overlay = [
      "vitest.config.ts", "vite.config.mjs", "jest.config.js", "babel.config.cjs", ".mocharc.yml", "ava.config.js", "tsconfig.json", ".env", "packages/web/vitest.config.ts",
      "src/test-setup.ts", "scripts/global.ts", "tools/preload.mjs", "src/setupTests.js",
      "textstats/testing.py", "textstats/fixtures/__init__.py", ".pytest.ini", "src/sitecustomize.py", "lib/x.pth", "src/pkg.dist-info/entry_points.txt",
      "src/slug.ts", "src/plugin.ts", "textstats/__init__.py", "README.md",
    ];
    const pinned = [...(await taskHarness(dir, overlay, HARNESS_GLOBS, null, () => Promise.resolve(false)))];
    expect(pinned.sort()).toEqual(overlay.filter((p) => !["src/slug.ts", "src/plugin.ts", "textstats/__init__.py", "README.md"].includes(p)).sort());
  });
});

describe("the solution's changes to the harness", () => {
  it("are applied (a config, then the setup file the changed config names); the code under test's never are", async () => {
    const dir = await workspace({
      "jest.config.js": "module.exports = { testEnvironment: 'node' };\n",
      "src/slug.js": "exports.slug = (s) => s;\n",
    });
    const section = (path: string, before: string | null, after: string) => [
      `diff --git a/${path} b/${path}`,
      ...(before === null ? ["new file mode 100644", "--- /dev/null"] : [`--- a/${path}`]),
      `+++ b/${path}`,
      before === null ? "@@ -0,0 +1 @@" : "@@ -1 +1 @@",
      ...(before === null ? [] : [`-${before}`]),
      `+${after}`,
      "",
    ].join("\n");
    // A section that smuggles the code under test in behind a harness file's header, and one that leaves the workspace, are never applied.
    const smuggled = section("jest.config.js", "module.exports = { testEnvironment: 'node' };", "module.exports = {};").replace(/\n$/, "\n--- a/src/slug.js\n+++ b/src/slug.js\n@@ -1 +1 @@\n-exports.slug = (s) => s;\n+exports.slug = () => 'forged';\n");
    const outside = section("../.npmrc", null, "registry=http://evil.test/");
    const solution = [
      smuggled,
      outside,
      section("src/slug.js", "exports.slug = (s) => s;", "exports.slug = (s) => s.toLowerCase();"),
      section("test/setup-dom.js", null, "globalThis.ready = true;"),
      section("jest.config.js", "module.exports = { testEnvironment: 'node' };", "module.exports = { testEnvironment: 'node', setupFiles: ['<rootDir>/test/setup-dom.js'] };"),
    ].join("");
    const scratch = await scratchDir();
    await createEmptyGitDir(join(scratch, "git"));
    const applied: string[] = [];
    const pinned = await taskHarness(dir, ["src/slug.js", "jest.config.js", "test/setup-dom.js"], HARNESS_GLOBS, solution, async (text, i) => {
      await applyPatch(dir, text, scratch, i, join(scratch, "git"));
      applied.push(...patchPaths(text));
      return true;
    });
    expect(applied.sort()).toEqual(["jest.config.js", "test/setup-dom.js"]);
    // The candidate's versions of what the solution changed in the harness are left out; the code under test is theirs.
    expect([...pinned].sort()).toEqual(["jest.config.js", "test/setup-dom.js"]);
    expect(await readFile(join(dir, "jest.config.js"), "utf8")).toContain("setupFiles");
    expect(await readFile(join(dir, "src/slug.js"), "utf8")).toBe("exports.slug = (s) => s;\n");
  });
});

describe("what in the candidate's code voids the run", () => {
  it("a changed line naming the framework's internals, unless the task's code beside it does; comments and unchanged lines aside", async () => {
    const dir = await workspace({ "readtime/core.py": "def minutes(words):\n    return words // 200\n", "plugin/hooks.py": "import _pytest.reports\n" });
    const files: Job["files"] = [
      upsert("readtime/core.py", "import _pytest.python as _python  # the payload\n# _pytest is mentioned here only\ndef minutes(words):\n    return words // 200\n"),
      upsert("plugin/extra.py", "from _pytest.reports import TestReport\n"),
    ];
    const { found } = await frameworkReach(dir, files, ["_pytest"]);
    expect(found).toEqual([{ file: "readtime/core.py", line: 1, text: "import _pytest.python as _python  # the payload", marker: "_pytest" }]);
  });

  it("code that lists two of the hidden tests (ids, Python test names, an array of names); one, names it already had, or messages a test is named after, are left to the reviewer", async () => {
    const dir = await workspace({ "src/slug.js": "const known = ['keeps digits as they are'];\n" });
    const names = ["lowercases every word", "keeps digits as they are", "trims"];
    const payload = upsert("src/slug.js", "const known = ['keeps digits as they are'];\nconst spare = new Set(['test/slug.test.js::slug > lowercases every word', \"trims\"]);\n");
    const { base } = await frameworkReach(dir, [payload], []);
    expect(namedHiddenTests([payload], names, base)).toEqual([]);
    const two = upsert("src/slug.js", "const spare = new Set(['lowercases every word', 'keeps digits as they are']);\n");
    expect(namedHiddenTests([two], names, new Map()).map((r) => r.marker)).toEqual(["lowercases every word", "keeps digits as they are"]);
    const ids = upsert("src/slug.js", "const a = 'test/slug.test.js::lowercases every word';\nconst b = `slug > keeps digits as they are`;\n");
    expect(namedHiddenTests([ids], names, new Map()).map((r) => r.line)).toEqual([1, 2]);
    const python = upsert("textstats/__init__.py", "SPARE = {'test_counts_words', \"test_empty_text\"}\n");
    expect(namedHiddenTests([python], ["test_counts_words", "test_empty_text"], new Map())).toHaveLength(2);
    // An honest change whose messages are what the tests are named after.
    const messages = upsert("src/slug.js", "if (!s) throw new Error('lowercases every word');\nconst MESSAGES = { digits: 'keeps digits as they are', other: 'trims' };\n");
    expect(namedHiddenTests([messages], names, new Map())).toEqual([]);
  });
});

