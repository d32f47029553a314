import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Callback } from "../../protocol/callback";
import type { Job } from "../../protocol/jobs";
import { planTests, type ReportPaths } from "../src/frameworks";
import { parseJUnit } from "../src/reports";
import { type Harness, jobId, startHarness, TEST_LIMITS } from "./support/harness";
import { frameworkEnvironment } from "./support/node-modules";
import { temporaryWorkspaces } from "./support/workspaces";

// jest, vitest and node:test as real projects use them: a CLI's tests that read process.argv
// in band, early-stop flags in the command and the config, tests whose body runs subtests.

const PATHS: ReportPaths = { node: "/opt/node/bin/node", tools: "/opt/assay", junit: "/r/junit", lcov: "/r/lcov", coverageConfig: "/opt/assay/coveragerc" };
const AUTO: Job["test"] = { framework: "auto", command: null, coverage: false, files: null, canaries: false, harness_patch: null };
const { workspace } = temporaryWorkspaces("assay-jest-family-");
const plan = async (script: string) => planTests(await workspace({ "package.json": JSON.stringify({ name: "x", scripts: { test: script } }) }), AUTO, PATHS);
/** What tools/jest-launcher.mjs is given: the project's command, and the arguments jest runs with. */
const launched = (argv: string[]) => JSON.parse(argv[2] ?? "{}") as { command: string[]; args: string[] };

describe("early-stop flags", () => {
  it.each([
    ["jest --bail", ["jest", "--bail"]],
    ["jest -b test/a.test.js", ["jest", "-b", "test/a.test.js"]],
    ["jest --bail=3 --runInBand", ["jest", "--bail=3", "--runInBand"]],
  ])("jest: %s runs to the end, whatever the config's bail, and jest still sees the command as given", async (script, command) => {
    const p = await plan(script);
    expect(p.argv.slice(0, 2)).toEqual(["/opt/node/bin/node", "/opt/assay/jest-launcher.mjs"]);
    const { command: given, args } = launched(p.argv);
    expect(given).toEqual(command);
    expect(args.filter((a) => /^(--bail|-b)(=|$)/.test(a))).toEqual(["--bail=0"]);
    expect(args).toEqual(expect.arrayContaining(command.slice(1).filter((a) => !/^(--bail|-b)(=|$)/.test(a))));
  });

  it("jest: a wrapper that runs jest gets the runner's options on its command line", async () => {
    const p = await planTests(await workspace({ "package.json": "{}" }), { ...AUTO, framework: "jest", command: ["npx", "jest", "--bail"] }, PATHS);
    expect(p.argv.slice(0, 3)).toEqual(["npx", "jest", "--ci"]);
    expect(p.argv).toContain("--bail=0");
    expect(p.argv).not.toContain("--bail");
  });

  it.each([
    ["vitest run --bail 3 test/", ["vitest", "run", "test/", "--bail=0"]],
    ["vitest --bail=1", ["vitest", "run", "--bail=0"]],
  ])("vitest: %s runs to the end, whatever the config's bail", async (script, start) => {
    const p = await plan(script);
    expect(p.argv.slice(0, start.length)).toEqual(start);
    expect(p.argv.filter((a) => a.startsWith("--bail"))).toEqual(["--bail=0"]);
    expect(p.argv).not.toContain("3");
  });
});

describe("node's own JUnit reporter", () => {
  it("has its quotes, which it escapes twice, read as quotes, and every other character as written", async () => {
    const dir = await workspace({ "a.test.js": 'const test = require("node:test");\ntest(\'say "hi" & <b> `x` &amp;\', () => {});\n' });
    const { stdout } = await promisify(execFile)(process.execPath, ["--test", "--test-reporter=junit", "a.test.js"], { cwd: dir });
    expect(stdout).toContain("&amp;quot;hi&amp;quot;");
    expect(parseJUnit(stdout, dir).map((t) => t.name)).toEqual(['say "hi" & <b> `x` &amp;']);
  });
});

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ sandboxUidBase: 61100 });
});
afterAll(() => h.close());

const LIMITS = { ...TEST_LIMITS, wall_ms: 60_000, cpu_ms: 60_000, memory_mb: 2048, processes: 256 };
const ids = (cb: Callback) => cb.tests.map((t) => `${t.file ?? ""}::${t.classname ? `${t.classname}::` : ""}${t.name}:${t.status}`).sort();
/** A test file larger than the others: jest and vitest, with no timings yet, run the largest first. */
const padded = (source: string) => `${source}// ${"-".repeat(4000)}\n`;

async function run(label: string, files: Record<string, string>, packages: string[]): Promise<Callback> {
  const environment = packages.length > 0 ? h.worker.blob(`env-${packages.join("+")}.tar.gz`, await frameworkEnvironment(packages)) : null;
  return h.run(h.job(jobId(label), files, { environment, limits: LIMITS }));
}

describe.concurrent("in the sandbox", { timeout: 180_000 }, () => {
  // util.parseArgs is strict: an option the CLI does not know (--ci, --reporters) throws.
  it("jest in band: a CLI's test parses process.argv as the project's command gives it, and bail in the command and the config stops nothing", async () => {
    const cb = await run("jest-argv", {
      "package.json": JSON.stringify({ name: "cli", scripts: { test: "jest --runInBand --bail" }, jest: { bail: 1, testEnvironment: "node" }, devDependencies: { jest: "*" } }),
      "src/cli.js": 'const { parseArgs } = require("node:util");\nexports.parse = (argv) => ({ ...parseArgs({ args: argv.slice(2), options: { runInBand: { type: "boolean", short: "i" }, bail: { type: "boolean" } } }).values });\n',
      "test/a-fails.test.js": padded('test("fails first", () => expect(1).toBe(2));\n'),
      "test/cli.test.js": 'const { parse } = require("../src/cli");\ntest("reads the command line", () => {\n  expect(process.argv.slice(2)).toEqual(["--runInBand", "--bail"]);\n  expect(parse(process.argv)).toEqual({ runInBand: true, bail: true });\n});\ntest.skip("later", () => {});\n',
      "src/cli.test.js": 'const { parse } = require("./cli");\ndescribe("parse", () => {\n  describe("flags", () => {\n    test("short", () => expect(parse(["node", "cli", "-i"])).toEqual({ runInBand: true }));\n  });\n});\n',
    }, ["jest"]);
    expect(cb.status, cb.log_tail).toBe("SUCCEEDED");
    expect(ids(cb), cb.log_tail).toEqual([
      "src/cli.test.js::parse > flags::short:passed",
      "test/a-fails.test.js::fails first:failed",
      "test/cli.test.js::later:skipped",
      "test/cli.test.js::reads the command line:passed",
    ]);
  });

  it("vitest: --bail in the command and bail in the config stop nothing", async () => {
    const passing = (name: string) => `import { test } from "vitest";\ntest("${name}", () => {});\n`;
    const cb = await run("vitest-bail", {
      "package.json": JSON.stringify({ name: "v", type: "module", scripts: { test: "vitest run --bail 1" }, devDependencies: { vitest: "*" } }),
      "vitest.config.mjs": "export default { test: { bail: 1, fileParallelism: false } };\n",
      "test/a.test.js": padded('import { expect, test } from "vitest";\ntest("fails first", () => expect(1).toBe(2));\n'),
      "test/b.test.js": passing("b"),
      "test/c.test.js": passing("c"),
    }, ["vitest"]);
    expect(cb.status, cb.log_tail).toBe("SUCCEEDED");
    expect(ids(cb), cb.log_tail).toEqual(["test/a.test.js::fails first:failed", "test/b.test.js::b:passed", "test/c.test.js::c:passed"]);
  });

  it("node:test: a test whose body runs subtests is a suite, so a failing subtest is one failed test; names keep their quotes; a failing hook's tests are errored", async () => {
    const cb = await run("node-subtests", {
      "package.json": JSON.stringify({ name: "n", scripts: { test: "node --test" } }),
      "test/find.test.js": [
        'const test = require("node:test");',
        'const assert = require("node:assert");',
        'test("find", async (t) => {',
        '  await t.test("by \\"name\\"", () => {});',
        '  await t.test("by `id` & <tag>", () => assert.equal(1, 2));',
        "});",
        'test("own check after its subtests", async (t) => {',
        '  await t.test("inner", () => {});',
        '  assert.fail("its own");',
        "});",
        'test("plain", () => {});',
        'test.describe("with a failing hook", () => {',
        '  test.beforeEach(() => assert.fail("setup"));',
        '  test("never reaches its body", () => {});',
        "});",
        "",
      ].join("\n"),
    }, []);
    expect(cb.status, cb.log_tail).toBe("SUCCEEDED");
    expect(ids(cb)).toEqual([
      'test/find.test.js::find::by "name":passed',
      "test/find.test.js::find::by `id` & <tag>:failed",
      "test/find.test.js::own check after its subtests::inner:passed",
      "test/find.test.js::own check after its subtests:failed",
      "test/find.test.js::plain:passed",
      // Stopped by the hook before its body ran: an error, as pytest's fixtures give.
      "test/find.test.js::with a failing hook::never reaches its body:errored",
    ]);
  });
});
