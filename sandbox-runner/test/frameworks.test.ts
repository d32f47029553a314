import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, jobId, startHarness } from "./support/harness";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ sandboxUidBase: 62200 });
});
afterAll(() => h.close());

const nodeSuite = {
  "package.json": JSON.stringify({ name: "node-suite", scripts: { test: "node --test" } }),
  "test/math.test.js": `
const { test, describe, before, it } = require("node:test");
const assert = require("node:assert");
test("passes", () => assert.equal(1 + 1, 2));
test("fails", () => assert.equal(1 + 1, 3));
test("skipped", { skip: "not today" }, () => {});
describe("broken setup", () => {
  before(() => { throw new Error("hook exploded"); });
  it("never runs", () => {});
});
describe("group", () => { it("passes", () => {}); });
`,
};

const pySuite = {
  "pytest.ini": "[pytest]\n",
  "tests/test_math.py": `
import pytest

def test_passes():
    assert 1 + 1 == 2

def test_fails():
    assert 1 + 1 == 3

@pytest.mark.skip(reason="not today")
def test_skipped():
    pass

@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")

def test_errors(broken):
    pass
`,
};

describe("node:test", () => {
  it("reports passed, failed, errored and skipped tests from the JUnit report", async () => {
    const cb = await h.run(h.job(jobId("node"), nodeSuite));
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.framework).toBe("node-test");
    expect(cb.command).toEqual(["node", "--test"]);
    expect(cb.exit_code).toBe(1);
    const byName = Object.fromEntries(cb.tests.map((t) => [`${t.classname}/${t.name}`, t.status]));
    expect(byName).toMatchObject({ "/passes": "passed", "/fails": "failed", "/skipped": "skipped", "broken setup/never runs": "errored", "group/passes": "passed" });
    expect(cb.counts).toEqual({ total: 5, passed: 2, failed: 1, skipped: 1, errored: 1 });
    expect(cb.tests.find((t) => t.name === "fails")?.message).toMatch(/2 == 3/);
    expect(h.worker.uploads.get(`${cb.job_id}/junit.xml`)?.toString()).toMatch(/<testsuites>/);
    expect(cb.artifacts).toEqual({ junit: true, log: true });
  });

  it("is FAILED, never a pass, when the command exits 0 without a report", async () => {
    const cb = await h.run(h.job(jobId("node-noreport"), nodeSuite, { test: { framework: "node-test", command: ["node", "-e", "process.exit(0)"], coverage: false } }));
    expect(cb.exit_code).toBe(0);
    expect(cb.status).toBe("FAILED");
    expect(cb.reason).toMatch(/no JUnit report \(exit code 0\)/);
    expect(cb.counts.total).toBe(0);
  });

  it("collects line coverage when asked", async () => {
    const cb = await h.run(
      h.job(jobId("node-cov"), { "lib.js": "exports.f = (x) => {\n  if (x) return 1;\n  return 2;\n};\n", "lib.test.js": `require("node:test")("f", () => require("node:assert").equal(require("./lib").f(true), 1));` }, {
        test: { framework: "node-test", command: null, coverage: true },
      }),
    );
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.coverage?.files.map((f) => f.file)).toContain("lib.js");
    const lib = cb.coverage?.files.find((f) => f.file === "lib.js");
    expect(lib?.lines_covered).toBeLessThan(lib?.lines_total ?? 0);
  });
});

describe("pytest", () => {
  it("reports passed, failed, errored and skipped tests from the JUnit report", async () => {
    const cb = await h.run(h.job(jobId("py"), pySuite));
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.framework).toBe("pytest");
    expect(cb.command).toEqual(["python3", "-m", "pytest"]);
    const byName = Object.fromEntries(cb.tests.map((t) => [t.name, t.status]));
    expect(byName).toEqual({ test_passes: "passed", test_fails: "failed", test_skipped: "skipped", test_errors: "errored" });
    expect(cb.tests[0]).toMatchObject({ classname: "tests.test_math", file: "tests/test_math.py" });
    expect(cb.counts).toEqual({ total: 4, passed: 1, failed: 1, skipped: 1, errored: 1 });
  });

  it("honours an explicit command and is FAILED when nothing is collected", async () => {
    const cb = await h.run(h.job(jobId("py-empty"), { "tests/helper.py": "X = 1\n" }, { test: { framework: "auto", command: ["python3", "-m", "pytest", "tests"], coverage: false } }));
    expect(cb.framework).toBe("pytest");
    expect(cb.exit_code).toBe(5);
    expect(cb.status).toBe("FAILED");
    expect(cb.reason).toMatch(/lists no tests/);
  });

  it("collects line coverage with pytest-cov", async () => {
    const cb = await h.run(
      h.job(jobId("py-cov"), { "calc.py": "def f(x):\n    if x:\n        return 1\n    return 2\n", "test_calc.py": "from calc import f\n\ndef test_f():\n    assert f(True) == 1\n" }, {
        test: { framework: "pytest", command: null, coverage: true },
      }),
    );
    expect(cb.status).toBe("SUCCEEDED");
    const calc = cb.coverage?.files.find((f) => f.file === "calc.py");
    expect(calc?.lines_total).toBe(4);
    expect(calc?.lines_covered).toBe(3);
  });
});

it("says when no framework can be detected", async () => {
  const cb = await h.run(h.job(jobId("none"), { "README.md": "nothing here" }));
  expect(cb.status).toBe("ERROR");
  expect(cb.reason).toMatch(/no test framework detected/);
});
