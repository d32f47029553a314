import { randomBytes, randomInt } from "node:crypto";
import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import type { Framework, Integrity, TestResult } from "./job-schema";
import { lstatNoLinks } from "./workspace-fs";

/**
 * Canary tests (docs/scoring.md, "Threat model"). The runner appends two tests with fresh
 * random names to every test file a scoring run counts, after the service's patches and
 * before any sandboxed code runs. They run last in the file's process, after the candidate's
 * code has been loaded by the file's real tests:
 *
 * - the *failing* canary makes the assertion functions tests rely on fail on a value computed
 *   at run time; if any of them does not throw it returns early, and if they all do it fails.
 *   Reported as anything but failed (a no-op assertion, a framework that turns failures into
 *   passes, a forged report that says "passed"), the run is tampered with.
 * - the *passing* canary asserts a value computed at run time. With the failing one it shows
 *   that the file's tests ran to the end and were reported: a file whose canaries are missing
 *   (the process exited early, the file never loaded) has its results discarded.
 */
export interface CanaryPlan {
  /** Per workspace-relative file: the two canaries' test names. */
  files: Map<string, { fail: string; pass: string }>;
}

const NODE_FILE = /\.(c|m)?js$/;
const PY_FILE = /\.py$/;

/** Appends the canaries to each file the framework can hold them; returns what was placed. */
export async function placeCanaries(workspace: string, framework: Framework, files: string[]): Promise<CanaryPlan> {
  const plan: CanaryPlan = { files: new Map() };
  for (const file of files) {
    if (!(framework === "node-test" ? NODE_FILE : PY_FILE).test(file)) continue;
    if (!(await lstatNoLinks(workspace, file))?.isFile()) continue;
    const names = { fail: testName(framework), pass: testName(framework) };
    const seed = randomBytes(12).toString("hex");
    const expected = runtimeValue(seed);
    const source = framework === "node-test" ? nodeCanaries(names, seed, expected) : pythonCanaries(names, seed, expected);
    await appendFile(join(workspace, file), source);
    plan.files.set(file, names);
  }
  return plan;
}

/** A name like the tests around it, never the same twice: nothing in the workspace predicts it. */
function testName(framework: Framework): string {
  const word = randomBytes(6).toString("hex");
  return framework === "pytest" ? `test_${word}` : `${word} ${randomInt(1000, 9999)}`;
}

/** What the canaries compute at run time from their seed, in JavaScript and Python alike. */
export function runtimeValue(seed: string): number {
  let value = 0;
  for (let i = 0; i < seed.length; i++) value = (value * 31 + seed.charCodeAt(i) * (i + 1)) % 1_000_000_007;
  return value;
}

function nodeCanaries(names: { fail: string; pass: string }, seed: string, expected: number): string {
  const value = `[...${JSON.stringify(seed)}].reduce((v, c, i) => (v * 31 + c.charCodeAt(0) * (i + 1)) % 1000000007, 0)`;
  // process.getBuiltinModule works in CommonJS and ES modules alike, and the block keeps every
  // name out of the file's scope.
  return `
;{
  const { test } = process.getBuiltinModule("node:test");
  const loose = process.getBuiltinModule("node:assert");
  const strict = process.getBuiltinModule("node:assert/strict");
  test(${JSON.stringify(names.fail)}, () => {
    const v = ${value};
    const probes = [
      () => loose.strictEqual(v, v + 1), () => loose.equal(v, v + 1), () => loose.deepStrictEqual({ v }, { v: v + 1 }),
      () => loose.deepEqual([v], [v + 1]), () => loose.ok(v < 0), () => loose(v < 0), () => loose.notStrictEqual(v, v),
      () => loose.match(String(v), /^$/), () => loose.throws(() => v), () => loose.fail(String(v)),
      () => strict.equal(v, v + 1), () => strict.deepEqual([v], [v + 1]), () => strict.ok(v < 0), () => strict(v < 0),
    ];
    for (const probe of probes) {
      let threw = false;
      try { probe(); } catch { threw = true; }
      if (!threw) return;
    }
    loose.strictEqual(v, v + 1);
  });
  test(${JSON.stringify(names.pass)}, () => {
    loose.strictEqual(${value}, ${expected});
  });
}
`;
}

function pythonCanaries(names: { fail: string; pass: string }, seed: string, expected: number): string {
  const value = `v = 0
    for i, c in enumerate(${JSON.stringify(seed)}):
        v = (v * 31 + ord(c) * (i + 1)) % 1000000007`;
  return `


def ${names.fail}():
    import unittest
    ${value}
    case = unittest.TestCase()
    probes = (
        lambda: case.assertEqual(v, v + 1),
        lambda: case.assertTrue(v < 0),
        lambda: case.assertIn(v, ()),
        lambda: case.assertRaises(ValueError, lambda: v),
        lambda: case.fail(str(v)),
    )
    for probe in probes:
        try:
            probe()
        except Exception:
            continue
        return
    assert v == v + 1


def ${names.pass}():
    ${value}
    assert v == ${expected}
`;
}

/**
 * Checks the canaries in a run's results and takes them out. A file whose failing canary did
 * not fail, or whose canary appears twice, marks the run tampered with; a file without both
 * canaries reported as expected is unverified, and its other results are not to be counted.
 */
export function checkCanaries(plan: CanaryPlan, tests: TestResult[]): { tests: TestResult[]; integrity: Integrity } {
  const byFile = new Map<string, TestResult[]>();
  const kept: TestResult[] = [];
  const canaryNames = new Map([...plan.files].map(([file, n]) => [file, new Set([n.fail, n.pass])]));
  for (const t of tests) {
    if (t.file !== null && canaryNames.get(t.file)?.has(t.name)) {
      const list = byFile.get(t.file) ?? [];
      list.push(t);
      byFile.set(t.file, list);
    } else kept.push(t);
  }
  const problems: string[] = [];
  const unverified: string[] = [];
  for (const [file, names] of plan.files) {
    const found = byFile.get(file) ?? [];
    const fail = found.filter((t) => t.name === names.fail);
    const pass = found.filter((t) => t.name === names.pass);
    if (fail.length > 1 || pass.length > 1) problems.push(`${file}: a canary test was reported more than once`);
    else if (fail[0] && fail[0].status !== "failed" && fail[0].status !== "errored") {
      problems.push(`${file}: the canary test that must fail was reported ${fail[0].status}: assertions or the test framework were tampered with`);
    } else if (fail[0]?.status !== "failed" || pass[0]?.status !== "passed") unverified.push(file);
  }
  return {
    tests: kept,
    integrity: {
      checked_files: [...plan.files.keys()],
      unverified_files: unverified,
      tampered: problems.length > 0,
      reason: problems.length > 0 ? problems.join("; ") : null,
    },
  };
}
