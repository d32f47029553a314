import { randomBytes, randomInt } from "node:crypto";
import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import type { Integrity, TestResult } from "../../protocol/callback";
import type { Framework } from "../../protocol/jobs";
import { readPackageJson } from "./frameworks/repo";
import { lstatNoLinks, readRegularFile } from "./workspace-fs";

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

const SCRIPT_FILE = /\.(c|m)?[jt]sx?$/;
const PY_FILE = /\.py$/;
const SOURCE_MAX_BYTES = 16 * 1024 * 1024;

/** Appends the canaries to each file the framework can hold them; returns what was placed. */
export async function placeCanaries(workspace: string, framework: Framework, files: string[]): Promise<CanaryPlan> {
  const plan: CanaryPlan = { files: new Map() };
  const packageType = (await readPackageJson(workspace))?.type;
  for (const file of files) {
    if (!(framework === "pytest" ? PY_FILE : SCRIPT_FILE).test(file)) continue;
    if (!(await lstatNoLinks(workspace, file))?.isFile()) continue;
    const names = { fail: testName(framework), pass: testName(framework) };
    const seed = randomBytes(12).toString("hex");
    const expected = runtimeValue(seed);
    const source = (await readRegularFile(join(workspace, file), SOURCE_MAX_BYTES))?.toString("utf8") ?? "";
    const shape: FileShape = {
      esm: isModule(file, source, packageType),
      typescript: /\.(c|m)?tsx?$/.test(file),
      chai: /\bfrom\s+["']chai["']|require\(\s*["']chai["']\s*\)/.test(source),
      alias: `__assay_${randomBytes(4).toString("hex")}`,
    };
    const canaries = framework === "pytest" ? pythonCanaries(names, seed, expected) : scriptCanaries(framework, shape, names, seed, expected);
    await appendFile(join(workspace, file), canaries);
    plan.files.set(file, names);
  }
  return plan;
}

/** How a test file is written: the canaries follow its module system and language. */
interface FileShape {
  esm: boolean;
  typescript: boolean;
  /** Whether the file asserts with chai (mocha's usual companion): its assertions are probed too. */
  chai: boolean;
  /** A fresh prefix for the names the canaries bring in, clashing with nothing in the file. */
  alias: string;
}

/** Whether a file is an ES module: by extension, by the package's type, or by its own import/export statements. */
function isModule(file: string, source: string, packageType: unknown): boolean {
  if (/\.m[jt]s$/.test(file)) return true;
  if (/\.c[jt]s$/.test(file)) return false;
  return packageType === "module" || /^\s*(import\s[^(]|export\s)/m.test(source);
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

/**
 * node:assert probes every JavaScript canary runs: a test file may assert with node:assert
 * whatever its framework. `onNoThrow` is what the failing canary does when one of them
 * does not throw (ends early, so it is reported as passing).
 */
function nodeAssertProbes(proc: string, value: string, extra: string[], onNoThrow: string): string {
  return `const v = ${value};
    const loose = ${proc}.getBuiltinModule("node:assert");
    const strict = ${proc}.getBuiltinModule("node:assert/strict");
    const probes = [
      () => loose.strictEqual(v, v + 1), () => loose.equal(v, v + 1), () => loose.deepStrictEqual({ v }, { v: v + 1 }),
      () => loose.deepEqual([v], [v + 1]), () => loose.ok(v < 0), () => loose(v < 0), () => loose.notStrictEqual(v, v),
      () => loose.match(String(v), /^$/), () => loose.throws(() => v), () => loose.fail(String(v)),
      () => strict.equal(v, v + 1), () => strict.deepEqual([v], [v + 1]), () => strict.ok(v < 0), () => strict(v < 0),
      ${extra.join(", ")}
    ];
    for (const probe of probes) {
      let threw = false;
      try { probe(); } catch { threw = true; }
      if (!threw) { ${onNoThrow} }
    }`;
}

/**
 * The canary pair in the syntax of the file's framework. Each block keeps its names out of
 * the file's scope; imports (ES modules) are hoisted by the language, so they may come last.
 * The pair runs after the file's own tests: uvu's gets a suite of its own, queued after the
 * file's suites have been, since tests added to a suite after its run() never run.
 */
function scriptCanaries(framework: Framework, shape: FileShape, names: { fail: string; pass: string }, seed: string, expected: number): string {
  const value = `[...${JSON.stringify(seed)}].reduce((v${shape.typescript ? ": number" : ""}, c${shape.typescript ? ": string" : ""}, i${shape.typescript ? ": number" : ""}) => (v * 31 + c.charCodeAt(0) * (i + 1)) % 1000000007, 0)`;
  const fail = JSON.stringify(names.fail);
  const pass = JSON.stringify(names.pass);
  const any = shape.typescript ? " as any" : "";
  // A TypeScript file may be type-checked (ts-jest) in a repository without Node's types.
  const proc = `(globalThis${any}).process`;
  const a = shape.alias;
  const importOf = (what: string, from: string, cjs: string) => (shape.esm || shape.typescript ? `import ${what} from ${JSON.stringify(from)};\n` : `const ${cjs} = require(${JSON.stringify(from)});\n`);
  switch (framework) {
    case "node-test":
      return `
;{
  const { test } = ${proc}.getBuiltinModule("node:test");
  test(${fail}, () => {
    ${nodeAssertProbes(proc, value, [], "return;")}
    loose.strictEqual(v, v + 1);
  });
  test(${pass}, () => {
    ${proc}.getBuiltinModule("node:assert").strictEqual(${value}, ${expected});
  });
}
`;
    case "jest":
    case "vitest":
    case "mocha": {
      const chai = framework === "mocha" && shape.chai;
      const header =
        framework === "vitest"
          ? `import { test as ${a}_test, expect as ${a}_expect } from "vitest";\n`
          : chai
            ? shape.esm || shape.typescript ? `import * as ${a}_chai from "chai";\n` : `const ${a}_chai = require("chai");\n`
            : "";
      const testFn = framework === "vitest" ? `${a}_test` : framework === "jest" ? `(globalThis${any}).test` : `((globalThis${any}).it ?? (globalThis${any}).test)`;
      const expectFn = framework === "vitest" ? `${a}_expect` : framework === "jest" ? `(globalThis${any}).expect` : null;
      const expectProbes = expectFn
        ? [`() => ${expectFn}(v).toBe(v + 1)`, `() => ${expectFn}({ v }).toEqual({ v: v + 1 })`, `() => ${expectFn}([v]).toStrictEqual([v + 1])`, `() => ${expectFn}(v < 0).toBeTruthy()`, `() => ${expectFn}(v).not.toBe(v)`, `() => ${expectFn}(() => v).toThrow()`, `() => ${expectFn}([v]).toContain(v + 1)`]
        : chai
          ? [`() => ${a}_chai.expect(v).to.equal(v + 1)`, `() => ${a}_chai.expect([v]).to.deep.equal([v + 1])`, `() => ${a}_chai.assert.equal(v, v + 1)`, `() => ${a}_chai.assert.isTrue(v < 0)`]
          : [];
      return `
${header};{
  const test = ${testFn};
  test(${fail}, () => {
    ${nodeAssertProbes(proc, value, expectProbes, "return;")}
    ${expectFn ? `${expectFn}(v).toBe(v + 1);` : "loose.strictEqual(v, v + 1);"}
  });
  test(${pass}, () => {
    ${proc}.getBuiltinModule("node:assert").strictEqual(${value}, ${expected});
  });
}
`;
    }
    case "ava":
    case "tape": {
      const header = importOf(`${a}_test`, framework, `${a}_test`);
      const param = shape.typescript ? "(t: any)" : "(t)";
      const [check, end, ok] = framework === "ava" ? ["t.is(v, v + 1);", "", "t.pass(); return;"] : ["t.equal(v, v + 1);", "t.end();", "t.pass(); t.end(); return;"];
      return `
${header};{
  ${a}_test(${fail}, ${param} => {
    ${nodeAssertProbes(proc, value, [], ok)}
    ${check}
    ${end}
  });
  ${a}_test(${pass}, ${param} => {
    ${framework === "ava" ? `t.is(${value}, ${expected});` : `t.equal(${value}, ${expected});\n    t.end();`}
  });
}
`;
    }
    case "uvu": {
      const header = shape.esm || shape.typescript
        ? `import { suite as ${a}_suite } from "uvu";\nimport * as ${a}_assert from "uvu/assert";\n`
        : `const { suite: ${a}_suite } = require("uvu");\nconst ${a}_assert = require("uvu/assert");\n`;
      const probes = [`() => ${a}_assert.is(v, v + 1)`, `() => ${a}_assert.equal([v], [v + 1])`, `() => ${a}_assert.ok(v < 0)`, `() => ${a}_assert.not.ok(v > 0)`, `() => ${a}_assert.unreachable()`];
      return `
${header};{
  const canaries = ${a}_suite("");
  canaries(${fail}, () => {
    ${nodeAssertProbes(proc, value, probes, "return;")}
    ${a}_assert.is(v, v + 1);
  });
  canaries(${pass}, () => {
    ${a}_assert.is(${value}, ${expected});
  });
  canaries.run();
}
`;
    }
    default:
      return "";
  }
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
