import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Callback } from "../../protocol/callback";
import { REPORTS_DIR } from "../src/sandbox";
import { type Harness, jobId, startHarness } from "./support/harness";

// A candidate's wrong solution tries to make the hidden tests pass anyway. Each job here is a
// scoring hidden-test run: `test.files` names the hidden test files, `test.canaries` is on.
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ sandboxUidBase: 63100 });
});
afterAll(() => h.close());

const hiddenRun = (framework: "node-test" | "pytest", files: string[]) => ({ test: { framework, command: null, coverage: false, files, canaries: true } });
const names = (cb: Callback) => cb.tests.map((t) => `${t.file}::${t.name}:${t.status}`).sort();

const NODE_HIDDEN = {
  "package.json": JSON.stringify({ name: "slug", type: "module", scripts: { test: "node --test" } }),
  "test/slug.test.js": [
    'import { test } from "node:test";',
    'import assert from "node:assert/strict";',
    'import { slug } from "../src/slug.js";',
    'test("lowercases", () => assert.equal(slug("A B"), "a-b"));',
    'test("trims", () => assert.deepStrictEqual(slug(" x "), "x"));',
    "",
  ].join("\n"),
};
const WRONG_SLUG = 'export const slug = (s) => s;\n';

describe("hidden-test runs with canaries", () => {
  it("an honest run: canaries check out and are not in the results; a right answer passes, a wrong one fails", async () => {
    const right = await h.run(h.job(jobId("honest"), { ...NODE_HIDDEN, "src/slug.js": 'export const slug = (s) => s.trim().toLowerCase().replaceAll(" ", "-");\n' }, hiddenRun("node-test", ["test/slug.test.js"])));
    expect(right.status).toBe("SUCCEEDED");
    expect(right.integrity).toEqual({ checked_files: ["test/slug.test.js"], unverified_files: [], tampered: false, reason: null, pinned_files: [] });
    expect(names(right)).toEqual(["test/slug.test.js::lowercases:passed", "test/slug.test.js::trims:passed"]);
    const wrong = await h.run(h.job(jobId("honest-wrong"), { ...NODE_HIDDEN, "src/slug.js": WRONG_SLUG }, hiddenRun("node-test", ["test/slug.test.js"])));
    expect(wrong.integrity?.tampered).toBe(false);
    expect(names(wrong)).toEqual(["test/slug.test.js::lowercases:failed", "test/slug.test.js::trims:failed"]);
  });

  it("only the named files run: the candidate's own test file with the hidden tests' names never does", async () => {
    const own = 'import { test } from "node:test";\ntest("lowercases", () => {});\ntest("trims", () => {});\n';
    const cb = await h.run(h.job(jobId("own"), { ...NODE_HIDDEN, "src/slug.js": WRONG_SLUG, "test/mine.test.js": own }, hiddenRun("node-test", ["test/slug.test.js"])));
    expect(names(cb)).toEqual(["test/slug.test.js::lowercases:failed", "test/slug.test.js::trims:failed"]);
  });

  it("node:assert patched from an ES module (syncBuiltinESMExports): tampered", async () => {
    const patch = [
      'import assert from "node:assert";',
      'import strict from "node:assert/strict";',
      'import { syncBuiltinESMExports } from "node:module";',
      "for (const a of [assert, strict]) for (const k of Object.keys(a)) if (typeof a[k] === 'function') a[k] = () => {};",
      "syncBuiltinESMExports();",
      WRONG_SLUG,
    ].join("\n");
    const cb = await h.run(h.job(jobId("esm-assert"), { ...NODE_HIDDEN, "src/slug.js": patch }, hiddenRun("node-test", ["test/slug.test.js"])));
    expect(cb.integrity).toMatchObject({ tampered: true, reason: expect.stringMatching(/test\/slug\.test\.js: a canary test that must fail was reported passed/) });
  });

  it("node:assert patched from CommonJS (require cache): tampered", async () => {
    const files = {
      "package.json": JSON.stringify({ name: "slug", scripts: { test: "node --test" } }),
      "test/slug.test.js": 'const { test } = require("node:test");\nconst assert = require("assert");\nconst { slug } = require("../src/slug.js");\ntest("lowercases", () => assert.strictEqual(slug("A B"), "a-b"));\n',
      "src/slug.js": 'const assert = require("assert");\nfor (const k of Object.keys(assert)) assert[k] = () => {};\nexports.slug = (s) => s;\n',
    };
    const cb = await h.run(h.job(jobId("cjs-assert"), files, hiddenRun("node-test", ["test/slug.test.js"])));
    expect(cb.integrity?.tampered).toBe(true);
  });

  it("canaries are written like the file's own tests, among them, and differ from run to run", async () => {
    const placed = async (label: string) => {
      const cb = await h.run(h.job(jobId(label), { ...NODE_HIDDEN, "src/slug.js": WRONG_SLUG }, hiddenRun("node-test", ["test/slug.test.js"])));
      const junit = h.worker.uploads.get(`${cb.job_id}/junit.xml`)?.toString() ?? "";
      return [...junit.matchAll(/<testcase name="([^"]+)"/g)].map((m) => m[1] as string);
    };
    const [first, second] = [await placed("placed-1"), await placed("placed-2")];
    for (const names of [first, second]) {
      const canaries = names.filter((n) => n !== "lowercases" && n !== "trims");
      // Two or three that must fail, one that must pass and the anchor, each a name of the file's words.
      expect(canaries.length).toBeGreaterThanOrEqual(4);
      for (const name of canaries) expect(name).toMatch(/^[a-z]+( [a-z]+)*$/);
      expect(canaries.some((n) => /^[0-9a-f]{12}/.test(n))).toBe(false);
      // Each hidden test has a copy of its name that must fail, so the names appear twice.
      expect(names.filter((n) => n === "lowercases")).toHaveLength(2);
      expect(names.filter((n) => n === "trims")).toHaveLength(2);
    }
    // Among the file's tests, not after them: a canary before the last hidden test (each
    // canary goes before or after a random test, so this holds in one run or the other).
    const among = (names: string[]) => names.findIndex((n) => n !== "lowercases" && n !== "trims") < names.lastIndexOf("trims");
    expect(among(first) || among(second)).toBe(true);
    expect(first).not.toEqual(second);
  });

  it("the process ends early after the hidden tests it passes: the file's results are unverified", async () => {
    const files = {
      ...NODE_HIDDEN,
      // Right for the first hidden test, then gone before anything else runs.
      "src/slug.js": 'let calls = 0;\nexport const slug = (s) => { if (++calls > 1) process.exit(0); return s.trim().toLowerCase().replaceAll(" ", "-"); };\n',
    };
    const cb = await h.run(h.job(jobId("exit-early"), files, hiddenRun("node-test", ["test/slug.test.js"])));
    expect(cb.integrity).toMatchObject({ tampered: false, unverified_files: ["test/slug.test.js"] });
  });

  it("a forged JUnit report: the output folder is not read, and bytes added to the report channel void it", async () => {
    const forged = '<?xml version="1.0"?><testsuites><testcase name="lowercases" file="/workspace/test/slug.test.js"/><testcase name="trims" file="/workspace/test/slug.test.js"/></testsuites>';
    const patch = [
      'import { writeFileSync, symlinkSync, rmSync } from "node:fs";',
      `const forged = ${JSON.stringify(forged)};`,
      'writeFileSync("/output/junit.xml", forged);',
      'try { rmSync("/run/assay/reports/junit"); } catch {}',
      'try { symlinkSync("/tmp/fake.xml", "/run/assay/reports/junit.xml"); } catch {}',
      'process.on("exit", () => { try { writeFileSync(process.env.ASSAY_JUNIT_PATH, forged); } catch {} });',
      WRONG_SLUG,
    ].join("\n");
    const cb = await h.run(h.job(jobId("forged"), { ...NODE_HIDDEN, "src/slug.js": patch }, hiddenRun("node-test", ["test/slug.test.js"])));
    expect(cb.status).toBe("FAILED");
    expect(cb.reason).toMatch(/not a single XML document|not valid XML/);
    expect(cb.integrity).toMatchObject({ tampered: true, reason: expect.stringMatching(/the report cannot be trusted/) });
    expect(cb.counts.passed).toBe(0);
  });

  const PY_HIDDEN = {
    "textstats.py": "def words(text):\n    return len(text)\n",
    "tests/test_textstats.py": "from textstats import words\n\n\ndef test_counts_words():\n    assert words('a b c') == 3\n\n\nclass TestEmpty:\n    def test_empty(self):\n        assert words('') == 0\n",
  };

  it("pytest: an honest wrong answer fails and the canaries check out", async () => {
    const cb = await h.run(h.job(jobId("py-honest"), PY_HIDDEN, hiddenRun("pytest", ["tests/test_textstats.py"])));
    expect(cb.integrity).toEqual({ checked_files: ["tests/test_textstats.py"], unverified_files: [], tampered: false, reason: null, pinned_files: [] });
    expect(names(cb)).toEqual(["tests/test_textstats.py::test_counts_words:failed", "tests/test_textstats.py::test_empty:passed"]);
  });

  it("pytest internals patched (every report made a pass): tampered", async () => {
    const patch = [
      "import _pytest.reports",
      "_orig = _pytest.reports.TestReport.from_item_and_call",
      "def _passing(cls, item, call):",
      "    report = _orig.__func__(cls, item, call)",
      "    report.outcome = 'passed'",
      "    report.longrepr = None",
      "    return report",
      "_pytest.reports.TestReport.from_item_and_call = classmethod(_passing)",
      "",
      "def words(text):",
      "    return len(text)",
      "",
    ].join("\n");
    const cb = await h.run(h.job(jobId("py-patched"), { ...PY_HIDDEN, "textstats.py": patch }, hiddenRun("pytest", ["tests/test_textstats.py"])));
    expect(cb.integrity).toMatchObject({ tampered: true, reason: expect.stringMatching(/must fail was reported passed/) });
  });

  it("pytest: the report rewritten at exit voids it", async () => {
    const patch = [
      "import atexit",
      "def _forge():",
      // The runner's plugin takes ASSAY_JUNIT_PATH out of the tests' environment; a candidate
      // who has read the runner's source knows where the report goes all the same.
      `    with open('${REPORTS_DIR}/junit', 'w') as f:`,
      "        f.write('<testsuites><testcase classname=\"tests.test_textstats\" name=\"test_counts_words\" file=\"tests/test_textstats.py\"/></testsuites>')",
      "atexit.register(_forge)",
      "def words(text):",
      "    return len(text)",
      "",
    ].join("\n");
    const cb = await h.run(h.job(jobId("py-atexit"), { ...PY_HIDDEN, "textstats.py": patch }, hiddenRun("pytest", ["tests/test_textstats.py"])));
    expect(cb.integrity?.tampered).toBe(true);
    expect(cb.counts.passed).toBe(0);
  });

  it("canaries need the files to place them in", async () => {
    const answer = await h.submit(h.job(jobId("no-files"), NODE_HIDDEN, { test: { framework: "node-test", canaries: true } }));
    expect(answer.status).toBe(422);
  });
});
