import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Callback } from "../../protocol/callback";
import { type Harness, jobId, startHarness, TEST_LIMITS } from "./support/harness";
import { frameworkEnvironment } from "./support/node-modules";

// Scoring's hidden-test runs for every framework: canaries in each framework's syntax, only
// the named files run, and a candidate who patches the framework's assertions or forges
// report lines is caught. The hidden tests are "lowercases" and "trims".
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ sandboxUidBase: 63700 });
});
afterAll(() => h.close());

const LIMITS = { ...TEST_LIMITS, wall_ms: 60_000, cpu_ms: 60_000, memory_mb: 2048, processes: 256 };
const names = (cb: Callback) => cb.tests.map((t) => `${t.file}::${t.name}:${t.status}`).sort();
const RIGHT_CJS = 'exports.slug = (s) => s.trim().toLowerCase().replaceAll(" ", "-");\n';

interface Case {
  framework: "jest" | "vitest" | "mocha" | "ava" | "tape" | "uvu";
  hidden: string;
  files: Record<string, string>;
  right: Record<string, string>;
  /** A wrong answer that makes the framework's assertions pass, or forges report lines. */
  tamper: Record<string, string>;
  /** The candidate's own test file, with the hidden tests' names, that must never run. */
  own: Record<string, string>;
  /** Why the tampering run is caught. */
  caught: RegExp;
  /** A wrong answer that writes passing results for the hidden tests where the report is made. */
  forge: Record<string, string>;
}

const CASES: Case[] = [
  {
    framework: "jest",
    hidden: "test/slug.test.js",
    files: { "package.json": JSON.stringify({ name: "s", scripts: { test: "jest" } }), "test/slug.test.js": 'const { slug } = require("../src/slug");\ntest("lowercases", () => expect(slug("A B")).toBe("a-b"));\ntest("trims", () => expect(slug(" x ")).toEqual("x"));\n' },
    right: { "src/slug.js": RIGHT_CJS },
    tamper: { "src/slug.js": 'const pass = () => ({ pass: true, message: () => "" });\nexpect.extend({ toBe: pass, toEqual: pass, toStrictEqual: pass });\nexports.slug = (s) => s;\n' },
    own: { "test/mine.test.js": 'test("lowercases", () => {});\ntest("trims", () => {});\n' },
    caught: /canary test that must fail was reported passed/,
    forge: { "src/slug.js": 'require("node:fs").appendFileSync(process.env.ASSAY_JUNIT_PATH, \'<testsuites><testcase name="lowercases" file="test/slug.test.js"/><testcase name="trims" file="test/slug.test.js"/></testsuites>\');\nexports.slug = (s) => s;\n' },
  },
  {
    framework: "vitest",
    hidden: "test/slug.test.ts",
    files: {
      "package.json": JSON.stringify({ name: "s", type: "module", scripts: { test: "vitest run" } }),
      "test/slug.test.ts": 'import { expect, test } from "vitest";\nimport { slug } from "../src/slug";\ntest("lowercases", () => expect(slug("A B")).toBe("a-b"));\ntest("trims", () => expect(slug(" x ")).toEqual("x"));\n',
    },
    right: { "src/slug.ts": 'export const slug = (s: string): string => s.trim().toLowerCase().replaceAll(" ", "-");\n' },
    tamper: { "src/slug.ts": 'import { expect } from "vitest";\nconst pass = () => ({ pass: true, message: () => "" });\nexpect.extend({ toBe: pass, toEqual: pass, toStrictEqual: pass });\nexport const slug = (s: string): string => s;\n' },
    own: { "test/mine.test.ts": 'import { test } from "vitest";\ntest("lowercases", () => {});\ntest("trims", () => {});\n' },
    caught: /canary test that must fail was reported passed/,
    forge: { "src/slug.ts": 'import { appendFileSync } from "node:fs";\nappendFileSync(process.env.ASSAY_JUNIT_PATH as string, \'<testsuites><testcase name="lowercases" file="test/slug.test.ts"/><testcase name="trims" file="test/slug.test.ts"/></testsuites>\');\nexport const slug = (s: string): string => s;\n' },
  },
  {
    framework: "mocha",
    hidden: "test/slug.spec.js",
    files: { "package.json": JSON.stringify({ name: "s", scripts: { test: "mocha test" } }), "test/slug.spec.js": 'const assert = require("node:assert");\nconst { slug } = require("../src/slug");\nit("lowercases", () => assert.equal(slug("A B"), "a-b"));\nit("trims", () => assert.deepEqual(slug(" x "), "x"));\n' },
    right: { "src/slug.js": RIGHT_CJS },
    tamper: { "src/slug.js": 'const assert = require("node:assert");\nfor (const k of Object.keys(assert)) if (typeof assert[k] === "function") assert[k] = () => {};\nexports.slug = (s) => s;\n' },
    own: { "test/mine.spec.js": 'it("lowercases", () => {});\nit("trims", () => {});\n' },
    caught: /canary test that must fail was reported passed/,
    forge: { "src/slug.js": 'require("node:fs").appendFileSync(process.env.ASSAY_JUNIT_PATH, \'<testsuites><testcase name="lowercases" file="test/slug.spec.js"/><testcase name="trims" file="test/slug.spec.js"/></testsuites>\');\nexports.slug = (s) => s;\n' },
  },
  {
    framework: "ava",
    hidden: "test/slug.mjs",
    files: { "package.json": JSON.stringify({ name: "s", scripts: { test: "ava" } }), "test/slug.mjs": 'import test from "ava";\nimport { slug } from "../src/slug.mjs";\ntest("lowercases", (t) => t.is(slug("A B"), "a-b"));\ntest("trims", (t) => t.is(slug(" x "), "x"));\n' },
    right: { "src/slug.mjs": 'export const slug = (s) => s.trim().toLowerCase().replaceAll(" ", "-");\n' },
    // Straight onto the TAP stream, past ava.
    tamper: { "src/slug.mjs": 'import { writeSync } from "node:fs";\nwriteSync(1, "ok 1 - lowercases\\nok 2 - trims\\n");\nexport const slug = (s) => s;\n' },
    own: { "test/mine.mjs": 'import test from "ava";\ntest("lowercases", (t) => t.pass());\ntest("trims", (t) => t.pass());\n' },
    caught: /the report cannot be trusted: .*TAP report is inconsistent/,
    forge: { "src/slug.mjs": 'import { writeSync } from "node:fs";\nwriteSync(1, "ok 3 - lowercases\\nok 4 - trims\\n");\nexport const slug = (s) => s;\n' },
  },
  {
    framework: "tape",
    hidden: "test/slug.js",
    files: { "package.json": JSON.stringify({ name: "s", scripts: { test: "tape test/*.js" } }), "test/slug.js": 'const test = require("tape");\nconst { slug } = require("../src/slug");\ntest("lowercases", (t) => { t.equal(slug("A B"), "a-b"); t.end(); });\ntest("trims", (t) => { t.equal(slug(" x "), "x"); t.end(); });\n' },
    right: { "src/slug.js": RIGHT_CJS },
    tamper: { "src/slug.js": 'const { Test } = require("tape");\nconst assert = Test.prototype._assert;\nTest.prototype._assert = function (ok, opts) { return assert.call(this, true, opts); };\nexports.slug = (s) => s;\n' },
    own: { "test/mine.js": 'const test = require("tape");\ntest("lowercases", (t) => t.end());\ntest("trims", (t) => t.end());\n' },
    caught: /canary test that must fail was reported passed/,
    forge: { "src/slug.js": 'require("node:fs").writeSync(1, "# lowercases\\nok 1 should be equal\\n# trims\\nok 2 should be equal\\n");\nexports.slug = (s) => s;\n' },
  },
  {
    framework: "uvu",
    hidden: "tests/slug.js",
    files: { "package.json": JSON.stringify({ name: "s", scripts: { test: "uvu tests" } }), "tests/slug.js": 'const { test } = require("uvu");\nconst assert = require("uvu/assert");\nconst { slug } = require("../src/slug");\ntest("lowercases", () => assert.is(slug("A B"), "a-b"));\ntest("trims", () => assert.is(slug(" x "), "x"));\ntest.run();\n' },
    right: { "src/slug.js": RIGHT_CJS },
    // Patches uvu's assertions and forges the runner's records as well.
    tamper: { "src/slug.js": 'const assert = require("uvu/assert");\nfor (const k of Object.keys(assert)) if (typeof assert[k] === "function") assert[k] = () => {};\nglobalThis.__assayUvuRecord("", "lowercases", null);\nexports.slug = (s) => s;\n' },
    own: { "tests/mine.js": 'const { test } = require("uvu");\ntest("lowercases", () => {});\ntest("trims", () => {});\ntest.run();\n' },
    caught: /canary test that must fail was reported passed/,
    // Its own records on the driver's channel, and through the recorder.
    forge: { "src/slug.js": 'require("node:fs").writeSync(3, JSON.stringify({ records: [{ suite: "", name: "lowercases", ok: true, message: null, duration_ms: 1 }] }));\nglobalThis.__assayUvuRecord("", "trims", null);\nexports.slug = (s) => s;\n' },
  },
];

async function hiddenRun(label: string, c: Case, files: Record<string, string>): Promise<Callback> {
  const environment = h.worker.blob(`env-${c.framework}.tar.gz`, await frameworkEnvironment([c.framework]));
  return h.run(h.job(jobId(label), files, { environment, limits: LIMITS, test: { framework: "auto", command: null, coverage: false, files: [c.hidden], canaries: true } }));
}

// Every framework's cases at once, beside other suites: the limit guards against a hang only.
describe.concurrent.each(CASES)("$framework", { timeout: 180_000 }, (c) => {
  it("an honest run: canaries check out, only the named file runs, a right answer passes", async () => {
    const cb = await hiddenRun(`${c.framework}-honest`, c, { ...c.files, ...c.right, ...c.own });
    expect(cb.framework).toBe(c.framework);
    expect(cb.integrity, cb.log_tail).toEqual({ checked_files: [c.hidden], unverified_files: [], tampered: false, reason: null, pinned_files: [] });
    expect(names(cb)).toEqual([`${c.hidden}::lowercases:passed`, `${c.hidden}::trims:passed`]);
  });

  it("a wrong answer that tampers with the framework is caught", async () => {
    const cb = await hiddenRun(`${c.framework}-tamper`, c, { ...c.files, ...c.tamper });
    expect(cb.integrity?.tampered, JSON.stringify({ integrity: cb.integrity, tests: names(cb), log: cb.log_tail })).toBe(true);
    expect(cb.integrity?.reason).toMatch(c.caught);
  });

  it("results forged where the report is made never count", async () => {
    const cb = await hiddenRun(`${c.framework}-forge`, c, { ...c.files, ...c.forge });
    const context = JSON.stringify({ integrity: cb.integrity, tests: names(cb), log: cb.log_tail });
    expect(cb.tests.filter((t) => t.status === "passed"), context).toEqual([]);
    expect(cb.integrity?.tampered || cb.integrity?.unverified_files.includes(c.hidden), context).toBe(true);
  });
});

describe("mocha with chai", () => {
  const files = {
    "package.json": JSON.stringify({ name: "s", scripts: { test: "mocha" } }),
    "test/slug.spec.js": 'const { expect } = require("chai");\nconst { slug } = require("../src/slug");\nit("lowercases", () => expect(slug("A B")).to.equal("a-b"));\nit("trims", () => expect(slug(" x ")).to.equal("x"));\n',
  };
  const run = async (label: string, src: string) => {
    const environment = h.worker.blob("env-mocha+chai.tar.gz", await frameworkEnvironment(["mocha", "chai"]));
    return h.run(h.job(jobId(label), { ...files, "src/slug.js": src }, { environment, limits: LIMITS, test: { framework: "auto", command: null, coverage: false, files: ["test/slug.spec.js"], canaries: true } }));
  };

  it.concurrent("chai's assertions are probed: an honest run checks out, a wrong answer that disables them is caught", async () => {
    const [honest, tampered] = await Promise.all([
      run("chai-honest", RIGHT_CJS),
      run("chai-tamper", 'const { Assertion } = require("chai");\nAssertion.prototype.assert = function () {};\nexports.slug = (s) => s;\n'),
    ]);
    expect(honest.integrity, honest.log_tail).toEqual({ checked_files: ["test/slug.spec.js"], unverified_files: [], tampered: false, reason: null, pinned_files: [] });
    expect(names(honest)).toEqual(["test/slug.spec.js::lowercases:passed", "test/slug.spec.js::trims:passed"]);
    expect(tampered.integrity?.reason, JSON.stringify({ tests: names(tampered), log: tampered.log_tail })).toMatch(/canary test that must fail was reported passed/);
  });
});
