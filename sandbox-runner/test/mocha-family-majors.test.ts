import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Callback } from "../../protocol/callback";
import { type Harness, jobId, startHarness, TEST_LIMITS } from "./support/harness";
import { registryEnvironment } from "./support/node-modules";

// The runner's mocha reporter and launcher, and ava's per-file TAP through the driver, with each
// major version real projects use (the repository's own mocha and ava, the newest, run in
// mocha-family.test.ts): each installed from the registry into a tiny project, its tests run
// through the runner as a prepared task's would.
let h: Harness;
let scratch: string;
beforeAll(async () => {
  h = await startHarness({ sandboxUidBase: 67400 });
  scratch = await mkdtemp(join(tmpdir(), "assay-mocha-majors-"));
});
afterAll(async () => {
  await h.close();
  await rm(scratch, { recursive: true, force: true });
});

const LIMITS = { ...TEST_LIMITS, wall_ms: 90_000, cpu_ms: 90_000, memory_mb: 2048, processes: 256 };
const ids = (cb: Callback) => cb.tests.map((t) => `${t.file ?? ""}::${t.classname ? `${t.classname}::` : ""}${t.name}:${t.status}`).sort();
const NAME = "keeps `ticks`, \"quotes\" & <angles>";

async function runMajor(spec: string, files: Record<string, string>): Promise<Callback> {
  const environment = h.worker.blob(`env-${spec}.tar.gz`, await registryEnvironment(spec, scratch));
  return h.run(h.job(jobId(spec.replace(/\W/g, "-")), files, { environment, limits: LIMITS }));
}

const MOCHA_ARGS = ["--bail", "--reporter", "spec", "test"];
const MOCHA_TESTS = {
  ".mocharc.json": JSON.stringify({ bail: true, reporter: "dot" }),
  "test/a.spec.js": [
    'const assert = require("assert");',
    'describe("argv", function () {',
    '  it("fails first", function () { assert.equal(1, 2); });',
    `  it("is the project's command", function () { assert.deepEqual(process.argv.slice(2), ${JSON.stringify(MOCHA_ARGS)}); });`,
    `  it(${JSON.stringify(NAME)}, function () {});`,
    "});",
    "",
  ].join("\n"),
  "test/b.spec.mjs": 'import assert from "assert";\ndescribe("esm", () => {\n  it("runs after a failure", () => assert.ok(true));\n});\n',
};

const AVA_TESTS = {
  "test/a.js": ['const test = require("ava");', 'test.serial("fails first", (t) => t.is(1, 2));', 'test.serial("runs after a failure", (t) => t.pass());', `test.serial(${JSON.stringify(NAME)}, (t) => t.pass());`, ""].join("\n"),
  "test/b.mjs": 'import test from "ava";\ntest("runs in an ES module", (t) => t.pass());\n',
};

// Seven installs and runs at once on a shared machine: the limit guards against a hang only.
describe.concurrent("mocha and ava majors in common use", { timeout: 300_000 }, () => {
  it.each([8, 9, 10, 11])("mocha %i: every test with its file, despite --bail in the command and the config; the project's argv", async (major) => {
    const cb = await runMajor(`mocha@${major}`, { ...MOCHA_TESTS, "package.json": JSON.stringify({ name: "m", scripts: { test: `mocha ${MOCHA_ARGS.join(" ")}` }, devDependencies: { mocha: `^${major}.0.0` } }) });
    expect(cb.framework).toBe("mocha");
    expect(ids(cb), cb.log_tail).toEqual([`test/a.spec.js::argv::${NAME}:passed`, "test/a.spec.js::argv::fails first:failed", "test/a.spec.js::argv::is the project's command:passed", "test/b.spec.mjs::esm::runs after a failure:passed"].sort());
  });

  it.each([4, 5, 6])("ava %i: every test with its file, despite --fail-fast in the command and the config", async (major) => {
    const cb = await runMajor(`ava@${major}`, { ...AVA_TESTS, "package.json": JSON.stringify({ name: "a", scripts: { test: "ava --fail-fast" }, ava: { failFast: true }, devDependencies: { ava: `^${major}.0.0` } }) });
    expect(cb.framework).toBe("ava");
    expect(ids(cb), cb.log_tail).toEqual([`test/a.js::${NAME}:passed`, "test/a.js::fails first:failed", "test/a.js::runs after a failure:passed", "test/b.mjs::runs in an ES module:passed"].sort());
  });
});
