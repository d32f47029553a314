import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Callback } from "../../protocol/callback";
import { NODE_MODULES_SCRATCH } from "../src/sandbox";
import { type Harness, jobId, startHarness, TEST_LIMITS } from "./support/harness";

// The runner's jest and vitest reporters (and jest's launcher) with each major version real
// projects use: each is installed from the registry into a tiny project, at the version pinned
// here (the latest of its major when written), and its tests run through the runner as a
// prepared task's would. The repository's own jest and vitest, the newest, run in
// jest-family.test.ts.

const run = promisify(execFile);
let h: Harness;
let scratch: string;
beforeAll(async () => {
  h = await startHarness({ sandboxUidBase: 61300 });
  scratch = await mkdtemp(join(tmpdir(), "assay-majors-"));
});
afterAll(async () => {
  await h.close();
  await rm(scratch, { recursive: true, force: true });
});

const LIMITS = { ...TEST_LIMITS, wall_ms: 90_000, cpu_ms: 90_000, memory_mb: 2048, processes: 256 };
const ids = (cb: Callback) => cb.tests.map((t) => `${t.file ?? ""}::${t.classname ? `${t.classname}::` : ""}${t.name}:${t.status}`).sort();
/** Larger than the other files: with no timings yet, jest and vitest run it first, so an early stop would cut the rest. */
const padded = (source: string) => `${source}// ${"-".repeat(4000)}\n`;

/**
 * `spec` installed from the registry by npm, as an environment archive (node_modules, with the
 * scratch directories prepare jobs leave). Kept in the temporary directory between runs, as
 * the other tests' environments are; a missing one is built again, by another test process
 * at the same time too (the rename settles it).
 */
async function environment(spec: string): Promise<Buffer> {
  const name = spec.replace(/[^\w.-]/g, "_");
  const archive = join(tmpdir(), `assay-test-major-${name}-${NODE_MODULES_SCRATCH.join("+").replace(/\W/g, "")}.tar.gz`);
  if (existsSync(archive)) return readFile(archive);
  const dir = join(scratch, name);
  await mkdir(dir);
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "majors", version: "1.0.0", private: true }));
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--save-dev", spec], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
  for (const scratchDir of NODE_MODULES_SCRATCH) await mkdir(join(dir, "node_modules", scratchDir), { recursive: true });
  const staging = join(dir, "env.tar.gz");
  await run("tar", ["-c", "-I", "gzip -1", "-f", staging, "-C", dir, "node_modules"]);
  await rename(staging, archive);
  return readFile(archive);
}

async function runMajor(spec: string, files: Record<string, string>): Promise<Callback> {
  const env = h.worker.blob(`env-${spec}.tar.gz`, await environment(spec));
  return h.run(h.job(jobId(spec.replace(/\W/g, "-")), files, { environment: env, limits: LIMITS }));
}

// Plain CommonJS: no transform (babel-jest's would be most of each run's time).
const JEST_TESTS = {
  "src/add.js": "exports.add = (a, b) => a + b;\n",
  "test/a.test.js": padded('const { add } = require("../src/add");\ndescribe("add", () => {\n  test("fails first", () => expect(add(1, 1)).toBe(3));\n});\ntest.skip("later", () => {});\n'),
  "test/argv.test.js": 'test("sees the project\'s command", () => expect(process.argv.slice(2)).toEqual(["--runInBand", "--bail"]));\n',
  "src/add.test.js": 'const { add } = require("./add");\ndescribe("add", () => {\n  describe("numbers", () => {\n    test("sums", () => expect(add(1, 2)).toBe(3));\n  });\n});\n',
};

const VITEST_TESTS = {
  "src/add.js": "export const add = (a, b) => a + b;\n",
  "vitest.config.mjs": "export default { test: { bail: 1, fileParallelism: false } };\n",
  "test/a.test.js": padded('import { describe, expect, test } from "vitest";\nimport { add } from "../src/add.js";\ndescribe("add", () => {\n  test("fails first", () => expect(add(1, 1)).toBe(3));\n});\ntest.skip("later", () => {});\n'),
  "test/broken.test.js": 'import "./missing.js";\n',
  "src/add.test.js": 'import { describe, expect, test } from "vitest";\nimport { add } from "./add.js";\ndescribe("add", () => {\n  describe("numbers", () => {\n    test("sums", () => expect(add(1, 2)).toBe(3));\n  });\n});\n',
};

// Seven installs and runs at once on a shared machine: the limit guards against a hang only.
describe.concurrent("every major in common use reports each test with its file", { timeout: 300_000 }, () => {
  it.each(["27.5.1", "28.1.3", "29.7.0"])("jest %s, in band, with bail in the command and the config", async (version) => {
    const cb = await runMajor(`jest@${version}`, {
      ...JEST_TESTS,
      "package.json": JSON.stringify({ name: "m", scripts: { test: "jest --runInBand --bail" }, jest: { bail: 1, testEnvironment: "node", transform: {} }, devDependencies: { jest: version } }),
    });
    expect(cb.framework).toBe("jest");
    expect(ids(cb), cb.log_tail).toEqual([
      "src/add.test.js::add > numbers::sums:passed",
      "test/a.test.js::add::fails first:failed",
      "test/a.test.js::later:skipped",
      "test/argv.test.js::sees the project's command:passed",
    ]);
  });

  it.each(["1.6.1", "2.1.9", "3.2.7", "4.1.12"])("vitest %s, with bail in the command and the config", async (version) => {
    const cb = await runMajor(`vitest@${version}`, {
      ...VITEST_TESTS,
      "package.json": JSON.stringify({ name: "m", type: "module", scripts: { test: "vitest run --bail 1" }, devDependencies: { vitest: version } }),
    });
    expect(cb.framework).toBe("vitest");
    expect(ids(cb), cb.log_tail).toEqual([
      "src/add.test.js::add > numbers::sums:passed",
      "test/a.test.js::add::fails first:failed",
      "test/a.test.js::later:skipped",
      "test/broken.test.js::(file):errored",
    ]);
  });
});
