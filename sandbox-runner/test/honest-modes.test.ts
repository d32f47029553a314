import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Callback } from "../../protocol/callback";
import { testId } from "../../src/domain/test-outcomes";
import { jsShape, pyShape } from "../src/canary-sites";
import { jest } from "../src/frameworks/jest";
import { nodeTest } from "../src/frameworks/node-test";
import { openRepo } from "../src/frameworks/repo";
import type { RunOptions, RunPaths } from "../src/frameworks/types";
import { vitest } from "../src/frameworks/vitest";
import { type Harness, jobId, startHarness, TEST_LIMITS } from "./support/harness";
import { frameworkEnvironment } from "./support/node-modules";

// Issue #36, the honest side: real projects whose configuration runs a test file more than
// once (vitest's typecheck, several vitest or jest projects) score a right solution in full,
// each run of a file with ids of its own; test files in shapes canaries once tripped over
// (promises' matchers, a setup file's expect.hasAssertions(), describe() blocks that do not run
// here, Python classes that mark their methods, code under test with state that the canaries
// calling it must not change before a test) do too; and jest's report is made in a process
// the candidate's code never enters, even for one test file.
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ sandboxUidBase: 64300 });
});
afterAll(() => h.close());

const LIMITS = { ...TEST_LIMITS, wall_ms: 90_000, cpu_ms: 90_000, memory_mb: 2048, processes: 256 };
const TOOLS = resolve(import.meta.dirname, "../src/tools");
/** Every result as its id (file::scope::name, as the service matches them) with its status. */
const ids = (cb: Callback) => cb.tests.map((t) => `${testId(t)}:${t.status}`).sort();
const context = (cb: Callback) => JSON.stringify({ integrity: cb.integrity, tests: ids(cb), log: cb.log_tail });

function hiddenRun(label: string, packages: string[], files: Record<string, string>, hidden: string[]): Promise<Callback> {
  return run(label, packages, files, { framework: "auto", command: null, coverage: false, files: hidden, canaries: true });
}

async function run(label: string, packages: string[], files: Record<string, string>, test: Record<string, unknown>): Promise<Callback> {
  const environment = packages.length > 0 ? h.worker.blob(`env-${packages.join("+")}.tar.gz`, await frameworkEnvironment(packages)) : null;
  return h.run(h.job(jobId(label), files, { environment, limits: LIMITS, test }));
}

/** The run counted every file and found nothing wrong. */
function expectHonest(cb: Callback): void {
  expect(cb.integrity?.tampered, context(cb)).toBe(false);
  expect(cb.integrity?.reason, context(cb)).toBeNull();
  expect(cb.integrity?.unverified_files, context(cb)).toEqual([]);
}

const TSCONFIG = JSON.stringify({ compilerOptions: { target: "ES2022", module: "ESNext", moduleResolution: "Bundler", strict: true, noEmit: true, skipLibCheck: true }, include: ["src", "test"] }, null, 2);
const VITEST_PACKAGE = JSON.stringify({ name: "parse-duration", version: "1.0.0", type: "module", scripts: { test: "vitest run" }, devDependencies: { typescript: "^5.9.0", vitest: "^5.1.0" } }, null, 2);
const PARSE_TS = `/** "1h30m" as seconds. */
export function parseDuration(text: string): number {
  let seconds = 0;
  for (const [, amount, unit] of text.matchAll(/(\\d+)([hms])/g)) seconds += Number(amount) * { h: 3600, m: 60, s: 1 }[unit as "h" | "m" | "s"];
  return seconds;
}
`;
const PARSE_TEST_TS = `import { describe, expect, test } from "vitest";
import { parseDuration } from "../src/parse";

describe("parseDuration", () => {
  test("reads hours and minutes", () => expect(parseDuration("1h30m")).toBe(5400));
  describe("nested", () => {
    test("reads seconds", () => expect(parseDuration("45s")).toBe(45));
  });
});
`;
const PARSE_TYPE_TEST = `import { describe, expectTypeOf, test } from "vitest";
import { parseDuration } from "./parse";

describe("types", () => {
  test("takes a string, gives a number", () => {
    expectTypeOf(parseDuration).parameter(0).toEqualTypeOf<string>();
    expectTypeOf(parseDuration).returns.toEqualTypeOf<number>();
  });
});
`;
const vitestConfig = (test: string) => `import { defineConfig } from "vitest/config";

export default defineConfig({
  test: ${test},
});
`;

describe("vitest with typecheck", { timeout: 240_000 }, () => {
  const project = (typecheckInclude: string[]) => ({
    "package.json": VITEST_PACKAGE,
    "tsconfig.json": TSCONFIG,
    "vitest.config.ts": vitestConfig(`{ include: ["test/**/*.test.ts"], typecheck: { enabled: true, include: ${JSON.stringify(typecheckInclude)} } }`),
    "src/parse.ts": PARSE_TS,
    "src/parse.test-d.ts": PARSE_TYPE_TEST,
    "test/parse.test.ts": PARSE_TEST_TS,
  });

  it.concurrent("a type test and a runtime test: the type test is checked, never run, and a right answer passes both", async () => {
    const cb = await hiddenRun("vitest-typecheck", ["vitest", "typescript"], project(["src/**/*.test-d.ts"]), ["src/parse.test-d.ts", "test/parse.test.ts"]);
    expect(cb.framework).toBe("vitest");
    expectHonest(cb);
    expect(ids(cb), context(cb)).toEqual([
      "src/parse.test-d.ts::[typecheck] > types::takes a string, gives a number:passed",
      "test/parse.test.ts::parseDuration > nested::reads seconds:passed",
      "test/parse.test.ts::parseDuration::reads hours and minutes:passed",
    ]);
  });

  it.concurrent("typecheck covers the runtime test file too: it is reported run and type-checked, with distinct ids", async () => {
    const cb = await hiddenRun("vitest-typecheck-both", ["vitest", "typescript"], project(["src/**/*.test-d.ts", "test/**/*.test.ts"]), ["src/parse.test-d.ts", "test/parse.test.ts"]);
    expectHonest(cb);
    // Each id once: the copies of the tests' names that type checking passed are taken out too.
    expect(ids(cb), context(cb)).toEqual([
      "src/parse.test-d.ts::[typecheck] > types::takes a string, gives a number:passed",
      "test/parse.test.ts::[typecheck] > parseDuration > nested::reads seconds:passed",
      "test/parse.test.ts::[typecheck] > parseDuration::reads hours and minutes:passed",
      "test/parse.test.ts::parseDuration > nested::reads seconds:passed",
      "test/parse.test.ts::parseDuration::reads hours and minutes:passed",
    ]);
  });
});

it.concurrent("the solution changes the harness (an alias in vitest.config.ts): the hidden run takes the solution's config, not the candidate's, and a right answer passes", { timeout: 240_000 }, async () => {
  const base = 'export default defineConfig({ test: { include: ["test/**/*.test.ts"] } });';
  const gold = 'export default defineConfig({ resolve: { alias: { "~/": new URL("./src/", import.meta.url).pathname } }, test: { include: ["test/**/*.test.ts"] } });';
  const solutionPatch = [
    "diff --git a/vitest.config.ts b/vitest.config.ts",
    "--- a/vitest.config.ts",
    "+++ b/vitest.config.ts",
    "@@ -1,2 +1,2 @@",
    ' import { defineConfig } from "vitest/config";',
    `-${base}`,
    `+${gold}`,
    "diff --git a/src/parse.ts b/src/parse.ts",
    "--- a/src/parse.ts",
    "+++ b/src/parse.ts",
    `@@ -1 +1,${PARSE_TS.trimEnd().split("\n").length} @@`,
    "-export const parseDuration = (text: string): number => Number.NaN;",
    ...PARSE_TS.trimEnd().split("\n").map((line) => `+${line}`),
    "",
  ].join("\n");
  const task = {
    "package.json": VITEST_PACKAGE,
    "vitest.config.ts": `import { defineConfig } from "vitest/config";\n${base}\n`,
    "src/parse.ts": "export const parseDuration = (text: string): number => Number.NaN;\n",
    "test/parse.test.ts": PARSE_TEST_TS.replace('from "../src/parse"', 'from "~/parse"'),
  };
  // The candidate's solution: the same fix, and a config of their own that would load a setup file.
  const overlay = [
    { path: "src/parse.ts", content_b64: Buffer.from(PARSE_TS).toString("base64") },
    { path: "vitest.config.ts", content_b64: Buffer.from(`import { defineConfig } from "vitest/config";\n${gold.replace("test: {", 'test: { setupFiles: ["./src/setup.ts"], ')}\n`).toString("base64") },
  ];
  const environment = h.worker.blob("env-vitest.tar.gz", await frameworkEnvironment(["vitest"]));
  const cb = await h.run(h.job(jobId("vitest-solution-harness"), task, {
    environment, limits: LIMITS, files: overlay,
    test: { framework: "auto", command: null, coverage: false, files: ["test/parse.test.ts"], canaries: true, harness_patch: solutionPatch },
  }));
  expectHonest(cb);
  expect(cb.integrity?.pinned_files, context(cb)).toEqual(["vitest.config.ts"]);
  expect(ids(cb), context(cb)).toEqual(["test/parse.test.ts::parseDuration > nested::reads seconds:passed", "test/parse.test.ts::parseDuration::reads hours and minutes:passed"]);
});

it.concurrent("vitest with two projects on the same file: each reports it under its name, and hidden runs fork even a threads project", { timeout: 240_000 }, async () => {
  const files = {
    "package.json": VITEST_PACKAGE,
    // "node" asks for worker threads, which would share vitest's main process with the reporter.
    "vitest.config.ts": vitestConfig(`{
    projects: [
      { test: { name: "node", include: ["test/**/*.test.ts"], pool: "threads" } },
      { test: { name: "edge", include: ["test/**/*.test.ts"] } },
    ],
  }`),
    "src/parse.ts": PARSE_TS,
    "test/parse.test.ts": `${PARSE_TEST_TS}
import { isMainThread } from "node:worker_threads";
test("runs in a process of its own", () => expect(isMainThread).toBe(true));
`,
  };
  const cb = await hiddenRun("vitest-projects", ["vitest"], files, ["test/parse.test.ts"]);
  expectHonest(cb);
  expect(ids(cb), context(cb)).toEqual([
    "test/parse.test.ts::[edge] > parseDuration > nested::reads seconds:passed",
    "test/parse.test.ts::[edge] > parseDuration::reads hours and minutes:passed",
    "test/parse.test.ts::[edge]::runs in a process of its own:passed",
    "test/parse.test.ts::[node] > parseDuration > nested::reads seconds:passed",
    "test/parse.test.ts::[node] > parseDuration::reads hours and minutes:passed",
    "test/parse.test.ts::[node]::runs in a process of its own:passed",
  ]);
});

const JEST_PACKAGE = JSON.stringify({ name: "slugs", version: "1.0.0", scripts: { test: "jest" }, devDependencies: { jest: "^30.0.0" } }, null, 2);
const SLUG_JS = 'exports.slug = (s) => s.trim().toLowerCase().replaceAll(" ", "-");\n';
const SLUG_TEST_JS = `const { slug } = require("../src/slug");

describe("slug", () => {
  test("lowercases", () => expect(slug("A B")).toBe("a-b"));
  test("trims", () => expect(slug(" x ")).toEqual("x"));
});
`;
const jestProjects = (projects: string) => ({
  "package.json": JEST_PACKAGE,
  "jest.config.js": `/** @type {import('jest').Config} */
module.exports = {
  projects: ${projects},
};
`,
  "src/slug.js": SLUG_JS,
  "test/slug.test.js": SLUG_TEST_JS,
});

describe("jest with projects", { timeout: 240_000 }, () => {
  it.concurrent("two projects with a displayName (a string, and a name with a colour): each reports the file under its name", async () => {
    const files = jestProjects(`[
    { displayName: "unit", testMatch: ["<rootDir>/test/**/*.test.js"] },
    { displayName: { name: "ci", color: "blue" }, testEnvironment: "node", testMatch: ["<rootDir>/test/**/*.test.js"] },
  ]`);
    const cb = await hiddenRun("jest-projects-named", ["jest"], files, ["test/slug.test.js"]);
    expect(cb.framework).toBe("jest");
    expectHonest(cb);
    expect(ids(cb), context(cb)).toEqual([
      "test/slug.test.js::[ci] > slug::lowercases:passed",
      "test/slug.test.js::[ci] > slug::trims:passed",
      "test/slug.test.js::[unit] > slug::lowercases:passed",
      "test/slug.test.js::[unit] > slug::trims:passed",
    ]);
  });

  it.concurrent("two projects without names: the same ids twice, all passed", async () => {
    const files = jestProjects(`[
    { testMatch: ["<rootDir>/test/**/*.test.js"] },
    { testMatch: ["<rootDir>/test/**/*.test.js"], testEnvironment: "node" },
  ]`);
    const cb = await hiddenRun("jest-projects-unnamed", ["jest"], files, ["test/slug.test.js"]);
    expectHonest(cb);
    expect(ids(cb), context(cb)).toEqual([
      "test/slug.test.js::slug::lowercases:passed",
      "test/slug.test.js::slug::lowercases:passed",
      "test/slug.test.js::slug::trims:passed",
      "test/slug.test.js::slug::trims:passed",
    ]);
  });
});

describe("jest's report is made where no candidate code runs", { timeout: 240_000 }, () => {
  // A wrong answer that, loaded in the reporter's process, rewrites the failures of the
  // hidden tests (whose names it knows from upstream) as passes and leaves the canaries
  // alone: jest's in-band module registry hands out the host's fs, and a host function's
  // realm gives the host's own `process` (jest's sandbox copy only offers a module whose
  // syncBuiltinESMExports does nothing), so the reporter's `writeFileSync` import follows.
  const FORGE = `const fs = require("fs");
const host = Object.getPrototypeOf(fs.readdirSync(".")).constructor.constructor("return process")();
const write = fs.writeFileSync;
const forge = (text) => text.replace(/(<testcase name="(?:lowercases|trims)"[^>]*)><failure message="[^"]*"\\/><\\/testcase>/g, "$1/>");
fs.writeFileSync = function (path, data, ...rest) {
  return write.call(this, path, typeof data === "string" ? forge(data) : data, ...rest);
};
host.getBuiltinModule("node:module").syncBuiltinESMExports();
exports.slug = (s) => s;
`;
  const files = {
    "package.json": JEST_PACKAGE,
    "jest.config.js": "module.exports = { testEnvironment: \"node\" };\n",
    "src/slug.js": FORGE,
    "test/slug.test.js": SLUG_TEST_JS,
  };

  it.concurrent("a single-file hidden run (in band by jest's rule, and by -i in the script) runs the file in a worker: the patch never reaches the report", async () => {
    const cb = await hiddenRun("jest-inband-forge", ["jest"], { ...files, "package.json": JSON.stringify({ ...JSON.parse(JEST_PACKAGE), scripts: { test: "jest -i --detectOpenHandles" } }) }, ["test/slug.test.js"]);
    expect(cb.framework).toBe("jest");
    // The report is the workers' genuine one: the wrong answer fails, and nothing was rewritten.
    expectHonest(cb);
    expect(ids(cb), context(cb)).toEqual(["test/slug.test.js::slug::lowercases:failed", "test/slug.test.js::slug::trims:failed"]);
  });

  it.concurrent("the control: where jest runs the file in its own process (a candidate's run), the same patch does rewrite the report", async () => {
    const cb = await run("jest-inband-control", ["jest"], files, { framework: "auto", command: null, coverage: false });
    expect(ids(cb), context(cb)).toEqual(["test/slug.test.js::slug::lowercases:passed", "test/slug.test.js::slug::trims:passed"]);
  });
});

it.concurrent("node:test: a hidden run drops test isolation \"none\", so each file runs in a child of the reporting process", { timeout: 240_000 }, async () => {
  const files = {
    "package.json": JSON.stringify({ name: "env", version: "1.0.0", scripts: { test: "node --test --experimental-test-isolation=none test/" } }),
    "src/env.js": "exports.flag = (value) => value === \"1\" || value === \"true\";\n",
    "test/env.test.js": `const { test } = require("node:test");
const assert = require("node:assert");
const { flag } = require("../src/env");

test("reads flags", () => assert.equal(flag("true"), true));
test("runs in a child of the test runner", () => assert.ok(process.env.NODE_TEST_CONTEXT));
`,
  };
  const environment = null;
  const cb = await h.run(h.job(jobId("node-isolation"), files, { environment, limits: LIMITS, test: { framework: "auto", command: null, coverage: false, files: ["test/env.test.js"], canaries: true } }));
  expect(cb.framework).toBe("node-test");
  expectHonest(cb);
  expect(ids(cb), context(cb)).toEqual(["test/env.test.js::reads flags:passed", "test/env.test.js::runs in a child of the test runner:passed"]);
});

describe("test files shaped as real projects write them", { timeout: 240_000 }, () => {
  it.concurrent("vitest: tables, concurrent tests with their own expect, fails, options, loops, and a promise's matcher a canary must not copy", async () => {
    const test = `import { describe, expect, it, test } from 'vitest'
import { parseDuration } from '../src/parse'

describe('parseDuration', () => {
  test.each([['1h', 3600], ['2m', 120]])('reads %s', (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds)
  })

  describe.concurrent('at once', () => {
    test('reads hours', async ({ expect }) => expect(parseDuration('1h')).toBe(3600))
  })

  test.fails('reads days', () => expect(parseDuration('1d')).toBe(86400))
  test('has options', { timeout: 10_000 }, () => expect(parseDuration('1s')).toBe(1))
  for (const unit of ['h', 'm']) it(\`reads 0\${unit}\`, () => expect(parseDuration(\`0\${unit}\`)).toBe(0))

  it('resolves', async () => {
    await expect(Promise.resolve(parseDuration('1m'))).resolves.toBe(60)
  })

  it('reads minutes and seconds', () => {
    expect(parseDuration('1m1s')).toBe(61)
  })
})
`;
    const cb = await hiddenRun("vitest-shapes", ["vitest"], { "package.json": VITEST_PACKAGE, "src/parse.ts": PARSE_TS, "test/parse.test.ts": test }, ["test/parse.test.ts"]);
    expectHonest(cb);
    expect(ids(cb), context(cb)).toEqual([
      "test/parse.test.ts::parseDuration > at once::reads hours:passed",
      "test/parse.test.ts::parseDuration::has options:passed",
      "test/parse.test.ts::parseDuration::reads 0h:passed",
      "test/parse.test.ts::parseDuration::reads 0m:passed",
      "test/parse.test.ts::parseDuration::reads 1h:passed",
      "test/parse.test.ts::parseDuration::reads 2m:passed",
      "test/parse.test.ts::parseDuration::reads days:passed",
      "test/parse.test.ts::parseDuration::reads minutes and seconds:passed",
      "test/parse.test.ts::parseDuration::resolves:passed",
    ]);
  });

  it.concurrent("jest: a setup file's expect.hasAssertions() and fake timers, and a file that asserts only with snapshots (committed, under --ci) and toThrow", async () => {
    const files = {
      "package.json": JEST_PACKAGE,
      "jest.config.js": 'module.exports = { setupFilesAfterEnv: ["<rootDir>/test/setup.js"] };\n',
      "test/setup.js": "beforeEach(() => {\n  expect.hasAssertions();\n  jest.useFakeTimers();\n});\nafterEach(() => jest.useRealTimers());\n",
      "src/slug.js": 'exports.slug = (s) => {\n  if (typeof s !== "string") throw new TypeError("not a string");\n  return s.trim().toLowerCase().replaceAll(" ", "-");\n};\n',
      "test/slug.test.js": `const { slug } = require("../src/slug");

describe("slug", () => {
  it("lowercases", () => {
    expect(slug("A B")).toMatchSnapshot();
  });

  it("trims", () => {
    expect(slug(" x ")).toMatchInlineSnapshot(\`"x"\`);
  });

  it("refuses a number", () => {
    expect(() => slug(1)).toThrow("not a string");
  });
});
`,
      "test/__snapshots__/slug.test.js.snap": '// Jest Snapshot v1, https://jestjs.io/docs/snapshot-testing\n\nexports[`slug lowercases 1`] = `"a-b"`;\n',
    };
    const cb = await hiddenRun("jest-has-assertions", ["jest"], files, ["test/slug.test.js"]);
    expectHonest(cb);
    expect(ids(cb), context(cb)).toEqual(["test/slug.test.js::slug::lowercases:passed", "test/slug.test.js::slug::refuses a number:passed", "test/slug.test.js::slug::trims:passed"]);
  });

  it.concurrent("jest without globals (injectGlobals: false) and only tables of tests: canaries stand beside them as plain tests, nothing is appended", async () => {
    const files = {
      "package.json": JEST_PACKAGE,
      "jest.config.js": "module.exports = { injectGlobals: false };\n",
      "src/slug.js": SLUG_JS,
      "test/slug.test.js": `const { describe, expect, test } = require("@jest/globals");
const { slug } = require("../src/slug");

describe("slug", () => {
  test.each([["A B", "a-b"], [" x ", "x"]])("slugs %j", (text, expected) => {
    expect(slug(text)).toBe(expected);
  });
});
`,
    };
    const cb = await hiddenRun("jest-no-globals", ["jest", "@jest/globals"], files, ["test/slug.test.js"]);
    expectHonest(cb);
    expect(ids(cb), context(cb)).toEqual(['test/slug.test.js::slug::slugs " x ":passed', 'test/slug.test.js::slug::slugs "A B":passed']);
  });

  it.concurrent("describe() blocks that do not run here (no database, no server): a hook that throws (jest), skips (mocha) or fails before any test (mocha)", async () => {
    const block = (name: string, hook: string, tests: string[], wrap: (name: string, body: string) => string) => `describe("${name}", function () {\n  ${hook}\n\n${tests.map((t) => `  ${wrap(t, 'slug("A B") === "a-b"')}\n`).join("")}});\n`;
    const jestTest = (name: string, ok: string) => `test("${name}", () => expect(${ok}).toBe(true));`;
    const mochaTest = (name: string, ok: string) => `it("${name}", () => assert.equal(${ok}, true));`;
    const jestFile = [
      'const { slug } = require("../src/slug");\n',
      block("with a database", 'beforeAll(() => { if (!process.env.DATABASE_URL) throw new Error("no database"); });', ["stores a slug", "finds a slug"], jestTest),
      block("in memory", "", ["keeps a slug"], jestTest),
      block("on a server", 'beforeEach(() => { if (!process.env.SERVER) throw new Error("no server"); });', ["posts a slug", "gets a slug"], jestTest),
    ].join("\n");
    const mochaFile = [
      'const assert = require("node:assert");\nconst { slug } = require("../src/slug");\n',
      block("on a server", "before(function () { if (!process.env.SERVER) this.skip(); });", ["posts a slug", "gets a slug"], mochaTest),
      block("in memory", "", ["keeps a slug"], mochaTest),
      block("with a database", 'before(function () { if (!process.env.DATABASE_URL) throw new Error("no database"); });', ["stores a slug", "finds a slug"], mochaTest),
    ].join("\n");
    const [jestRun, mochaRun] = await Promise.all([
      hiddenRun("jest-scopes", ["jest"], { "package.json": JEST_PACKAGE, "src/slug.js": SLUG_JS, "test/slug.test.js": jestFile }, ["test/slug.test.js"]),
      hiddenRun("mocha-scopes", ["mocha"], { "package.json": JSON.stringify({ name: "slugs", scripts: { test: "mocha" } }), "src/slug.js": SLUG_JS, "test/slug.spec.js": mochaFile }, ["test/slug.spec.js"]),
    ]);
    expectHonest(jestRun);
    expect(ids(jestRun), context(jestRun)).toEqual([
      "test/slug.test.js::in memory::keeps a slug:passed",
      "test/slug.test.js::on a server::gets a slug:failed",
      "test/slug.test.js::on a server::posts a slug:failed",
      "test/slug.test.js::with a database::finds a slug:failed",
      "test/slug.test.js::with a database::stores a slug:failed",
    ]);
    expectHonest(mochaRun);
    expect(ids(mochaRun), context(mochaRun)).toEqual([
      "test/slug.spec.js::in memory::keeps a slug:passed",
      "test/slug.spec.js::on a server::gets a slug:skipped",
      "test/slug.spec.js::on a server::posts a slug:skipped",
      // mocha names the hook after the first test of its describe(), a canary placed before "stores a slug" included.
      expect.stringMatching(/^test\/slug\.spec\.js::with a database::"before all" hook for "[^"]+":errored$/),
    ]);
  });

  it.concurrent("code under test with state (a counter): the canaries that call it run after every test of the file, in every framework", async () => {
    const COUNTER_CJS = "let count = 0;\nexports.next = () => ++count;\n";
    const COUNTER_ESM = "let count = 0;\nexport const next = () => ++count;\n";
    const NAMES = ["counts one", "counts two", "counts three"];
    const each = (write: (name: string, n: number) => string) => NAMES.map((name, i) => write(name, i + 1)).join("\n");
    const PY_COUNTER = "_count = [0]\n\n\ndef next_id():\n    _count[0] += 1\n    return _count[0]\n";
    const pyTests = (write: (name: string, n: number) => string) => ["test_counts_one", "test_counts_two", "test_counts_three"].map((name, i) => write(name, i + 1)).join("\n");
    const projects: Array<{ label: string; framework: "jest" | "mocha" | "tape" | "uvu" | "ava" | "node-test" | "pytest"; packages: string[]; file: string; files: Record<string, string> }> = [
      { label: "calls-jest", framework: "jest", packages: ["jest"], file: "test/counter.test.js", files: { "package.json": JEST_PACKAGE, "src/counter.js": COUNTER_CJS, "test/counter.test.js": `const { next } = require("../src/counter");\n\ndescribe("next", () => {\n${each((name, n) => `  test("${name}", () => {\n    expect(next()).toBe(${n});\n  });`)}\n});\n` } },
      { label: "calls-mocha", framework: "mocha", packages: ["mocha"], file: "test/counter.spec.js", files: { "package.json": JSON.stringify({ name: "counter", scripts: { test: "mocha" } }), "src/counter.js": COUNTER_CJS, "test/counter.spec.js": `const assert = require("node:assert");\nconst { next } = require("../src/counter");\n\ndescribe("next", () => {\n${each((name, n) => `  it("${name}", () => {\n    assert.strictEqual(next(), ${n});\n  });`)}\n});\n` } },
      { label: "calls-tape", framework: "tape", packages: ["tape"], file: "test/counter.test.js", files: { "package.json": JSON.stringify({ name: "counter", scripts: { test: "tape test/*.test.js" } }), "src/counter.js": COUNTER_CJS, "test/counter.test.js": `const test = require("tape");\nconst { next } = require("../src/counter");\n\n${each((name, n) => `test("${name}", (t) => {\n  t.equal(next(), ${n});\n  t.end();\n});\n`)}` } },
      { label: "calls-uvu", framework: "uvu", packages: ["uvu"], file: "tests/counter.test.js", files: { "package.json": JSON.stringify({ name: "counter", scripts: { test: "uvu tests" } }), "src/counter.js": COUNTER_CJS, "tests/counter.test.js": `const { test } = require("uvu");\nconst assert = require("uvu/assert");\nconst { next } = require("../src/counter");\n\n${each((name, n) => `test("${name}", () => {\n  assert.is(next(), ${n});\n});\n`)}\ntest.run();\n` } },
      { label: "calls-ava", framework: "ava", packages: ["ava"], file: "test/counter.test.js", files: { "package.json": JSON.stringify({ name: "counter", type: "module", scripts: { test: "ava" } }), "src/counter.js": COUNTER_ESM, "test/counter.test.js": `import test from "ava";\nimport { next } from "../src/counter.js";\n\n${each((name, n) => `test("${name}", (t) => {\n  t.is(next(), ${n});\n});\n`)}` } },
      { label: "calls-node-test", framework: "node-test", packages: [], file: "test/counter.test.js", files: { "package.json": JSON.stringify({ name: "counter", type: "module", scripts: { test: "node --test" } }), "src/counter.js": COUNTER_ESM, "test/counter.test.js": `import { test } from "node:test";\nimport assert from "node:assert/strict";\nimport { next } from "../src/counter.js";\n\n${each((name, n) => `test("${name}", () => {\n  assert.equal(next(), ${n});\n});\n`)}` } },
      { label: "calls-pytest", framework: "pytest", packages: [], file: "tests/test_counter.py", files: { "setup.cfg": "[tool:pytest]\ntestpaths = tests\n", "counter/__init__.py": PY_COUNTER, "tests/__init__.py": "", "tests/test_counter.py": `from counter import next_id\n\n\nclass TestCounter:\n${pyTests((name, n) => `    def ${name}(self):\n        assert next_id() == ${n}\n`)}` } },
      // A TestCase's methods run in the order of their names: these are named to run in the order they count.
      { label: "calls-unittest", framework: "pytest", packages: [], file: "tests/test_counter.py", files: { "setup.cfg": "[tool:pytest]\ntestpaths = tests\n", "counter/__init__.py": PY_COUNTER, "tests/__init__.py": "", "tests/test_counter.py": `import unittest\n\nfrom counter import next_id\n\n\nclass CounterTest(unittest.TestCase):\n${["test_a_counts_one", "test_b_counts_two", "test_c_counts_three"].map((name, i) => `    def ${name}(self):\n        self.assertEqual(next_id(), ${i + 1})\n`).join("\n")}` } },
    ];
    for (const p of projects) {
      const source = p.files[p.file] as string;
      const shape = p.framework === "pytest" ? await pyShape(source) : jsShape(p.file, source, p.framework);
      expect([shape?.tail !== null, shape?.calls.length], p.label).toEqual([true, 1]);
    }
    const runs = await Promise.all(projects.map((p) => hiddenRun(p.label, p.packages, p.files, [p.file])));
    for (const cb of runs) {
      expectHonest(cb);
      expect(cb.tests.map((t) => t.status), context(cb)).toEqual(["passed", "passed", "passed"]);
    }
  });

  it.concurrent("pytest: classes that mark their methods (parametrized as a whole, patched by mock.patch), a plain one, and a TestCase whose setUpClass fails here", async () => {
    const test = `import os
import unittest
from unittest import mock

import pytest

from calc import add


@pytest.mark.parametrize("base", [0, 10])
class TestAdd:
    def test_adds_one(self, base):
        assert add(base, 1) == base + 1

    def test_adds_zero(self, base):
        assert add(base, 0) == base


@mock.patch("os.getcwd", return_value="/nowhere")
class AddCase(unittest.TestCase):
    def test_adds_in_place(self, getcwd):
        self.assertEqual(add(1, 1), 2)
        self.assertEqual(os.getcwd(), "/nowhere")


class TestPlain:
    def test_adds(self):
        assert add(2, 2) == 4


class DbCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if "DATABASE_URL" not in os.environ:
            raise RuntimeError("no database")

    def test_stores(self):
        self.assertEqual(add(1, 1), 2)
`;
    const files = { "setup.cfg": "[tool:pytest]\ntestpaths = tests\n", "calc/__init__.py": "def add(a, b):\n    return a + b\n", "tests/__init__.py": "", "tests/test_calc.py": test };
    const cb = await hiddenRun("pytest-marked-classes", [], files, ["tests/test_calc.py"]);
    expectHonest(cb);
    expect(ids(cb), context(cb)).toEqual([
      "tests/test_calc.py::AddCase::test_adds_in_place:passed",
      "tests/test_calc.py::DbCase::test_stores:errored",
      "tests/test_calc.py::TestAdd::test_adds_one[0]:passed",
      "tests/test_calc.py::TestAdd::test_adds_one[10]:passed",
      "tests/test_calc.py::TestAdd::test_adds_zero[0]:passed",
      "tests/test_calc.py::TestAdd::test_adds_zero[10]:passed",
      "tests/test_calc.py::TestPlain::test_adds:passed",
    ]);
  });
});

describe("ids and commands (no sandbox)", () => {
  interface VitestReporter {
    modePrefix(module: unknown, severalProjects: boolean): string[];
    default: new () => { onInit(vitest: unknown): void; onTestRunEnd(modules: unknown[]): void };
  }
  interface JestReporter {
    projectPrefix(displayName: unknown, withProjects: boolean): string[];
    default: new (globalConfig: unknown) => { onTestFileResult(test: unknown, result: unknown): void; onRunComplete(contexts: unknown, results: unknown): void };
  }
  const load = async <T>(name: string) => (await import(pathToFileURL(join(TOOLS, name)).href)) as T;

  /** Runs `write` with $ASSAY_JUNIT_PATH set to a scratch file; returns what was written there. */
  async function written(write: () => void): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), "assay-honest-modes-"));
    const saved = process.env.ASSAY_JUNIT_PATH;
    process.env.ASSAY_JUNIT_PATH = join(dir, "junit.xml");
    try {
      write();
      return await readFile(join(dir, "junit.xml"), "utf8");
    } finally {
      if (saved === undefined) delete process.env.ASSAY_JUNIT_PATH;
      else process.env.ASSAY_JUNIT_PATH = saved;
      await rm(dir, { recursive: true, force: true });
    }
  }
  const classnames = (xml: string) => [...xml.matchAll(/<testcase name="([^"]*)" classname="([^"]*)"/g)].map((m) => `${m[2]}::${m[1]}`.replaceAll("&gt;", ">"));

  it("vitest: [project] with several projects, then [typecheck], then the describe() path", async () => {
    const reporter = await load<VitestReporter>("vitest-reporter.mjs");
    const module = (project: string, typecheck: boolean) => {
      const suite = { type: "suite", name: "nested", parent: { type: "suite", name: "parser", parent: { type: "module" } } };
      const test = { name: "parses", parent: suite, result: () => ({ state: "passed" }), diagnostic: () => ({ duration: 1 }) };
      return { moduleId: join(process.cwd(), "test/p.spec.ts"), project: { name: project }, meta: () => (typecheck ? { typecheck: true } : {}), errors: () => [], children: { allTests: () => [test] } };
    };
    expect(reporter.modePrefix(module("web", true), true)).toEqual(["[web]", "[typecheck]"]);
    expect(reporter.modePrefix(module("web", false), false)).toEqual([]);
    expect(reporter.modePrefix({ project: { name: "" }, task: { meta: { typecheck: true } } }, true)).toEqual(["[typecheck]"]);

    // Decided from the projects vitest was configured with, whichever modules then ran.
    const several = new reporter.default();
    several.onInit({ projects: [{ name: "web" }, { name: "api" }] });
    expect(classnames(await written(() => several.onTestRunEnd([module("web", true), module("web", false)])))).toEqual(["[web] > [typecheck] > parser > nested::parses", "[web] > parser > nested::parses"]);
    const one = new reporter.default();
    one.onInit({ projects: [{ name: "web" }] });
    expect(classnames(await written(() => one.onTestRunEnd([module("web", true), module("web", false)])))).toEqual(["[typecheck] > parser > nested::parses", "parser > nested::parses"]);
  });

  it("jest: [displayName] (a string or {name, color}) from the project's config, when the config has projects", async () => {
    const reporter = await load<JestReporter>("jest-reporter.mjs");
    expect(reporter.projectPrefix("unit", true)).toEqual(["[unit]"]);
    expect(reporter.projectPrefix({ name: "ci", color: "blue" }, true)).toEqual(["[ci]"]);
    expect(reporter.projectPrefix(undefined, true)).toEqual([]);
    expect(reporter.projectPrefix("unit", false)).toEqual([]);

    const fileResult = (displayName: unknown) => ({
      testFilePath: join(process.cwd(), "test/slug.test.js"),
      displayName,
      testResults: [{ title: "trims", ancestorTitles: ["slug"], status: "passed", duration: 1, failureMessages: [] }],
    });
    const withProjects = new reporter.default({ projects: ["<rootDir>/a", "<rootDir>/b"] });
    // The project config jest's scheduler hands over wins over what the result (made in a worker) says.
    const ours = fileResult({ name: "forged", color: "red" });
    withProjects.onTestFileResult({ context: { config: { displayName: { name: "unit", color: "white" } } } }, ours);
    const xml = await written(() => withProjects.onRunComplete(new Set(), { testResults: [ours, fileResult(undefined)] }));
    expect(classnames(xml)).toEqual(["[unit] > slug::trims", "slug::trims"]);
    const single = new reporter.default({ projects: [] });
    expect(classnames(await written(() => single.onRunComplete(new Set(), { testResults: [fileResult("unit")] })))).toEqual(["slug::trims"]);
  });

  const paths: RunPaths = { node: "/runner/node", tools: "/runner/tools", junit: "/r/junit", lcov: "/r/lcov", coverageConfig: "/r/cov" };
  const options = (hidden: boolean): RunOptions => ({ repo: openRepo("/nonexistent", null), coverage: false, coverageDirs: [], files: [], typescript: false, srcLayout: false, hidden });

  it("jest: hidden runs drop what runs files in band and always use worker processes; other runs keep the command", async () => {
    const command = ["jest", "-i", "--detectOpenHandles", "--maxWorkers", "1", "-w=1", "--workerThreads", "--ci", "test/a.test.js"];
    // jest starts through the runner's launcher, with jest's arguments in its JSON.
    const launched = async (hidden: boolean) => JSON.parse((await jest.instrument(command, paths, options(hidden))).argv[2] ?? "{}") as { command: string[]; args: string[] };
    const hidden = (await launched(true)).args;
    expect(hidden).not.toEqual(expect.arrayContaining(["-i"]));
    expect(hidden.filter((a) => /^(-i|-w|--maxWorkers|--runInBand|--detectOpenHandles|--workerThreads|--workerIdleMemoryLimit)(=|$)/.test(a))).toEqual(["--workerIdleMemoryLimit=64GB", "--maxWorkers=2", "--detectOpenHandles=false", "--workerThreads=false"]);
    expect(hidden).toContain("test/a.test.js");
    expect((await launched(false)).args.slice(0, command.length - 1)).toEqual(command.slice(1));
  });

  it("vitest: hidden runs use the forks pool; node:test hidden runs drop isolation \"none\"", async () => {
    const hidden = (await vitest.instrument(["vitest", "run", "--pool", "threads", "--pool=vmThreads", "test/a.test.ts"], paths, options(true))).argv;
    expect(hidden.filter((a) => a.startsWith("--pool") || a === "threads")).toEqual(["--pool=forks"]);
    expect((await vitest.instrument(["vitest", "--pool=threads"], paths, options(false))).argv).toContain("--pool=threads");

    const node = ["node", "--test", "--experimental-test-isolation=none", "--experimental-test-isolation", "none", "--test-isolation=none", "test/"];
    expect((await nodeTest.instrument(node, paths, options(true))).argv.filter((a) => a.includes("isolation") || a === "none")).toEqual([]);
    expect((await nodeTest.instrument(node, paths, options(false))).argv).toContain("--experimental-test-isolation=none");
  });
});
