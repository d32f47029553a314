import { mkdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyInstallOutput, environmentLayout, installOutput, listOwnTree } from "../src/environment";
import { planTests, type ReportPaths } from "../src/frameworks";
import { parseTestReport } from "../src/reports";
import { packageHolding, splitChdir, workspacePackages } from "../src/workspaces";
import type { Job } from "../../protocol/jobs";
import { type Harness, jobId, startHarness, TEST_LIMITS } from "./support/harness";
import { tarGz } from "./support/tarball";
import { temporaryWorkspaces } from "./support/workspaces";

const PATHS: ReportPaths = { node: "/opt/node/bin/node", tools: "/opt/assay", junit: "/r/junit", lcov: "/r/lcov", coverageConfig: "/opt/assay/coveragerc" };
const AUTO: Job["test"] = { framework: "auto", command: null, coverage: false, files: null, canaries: false, harness_patch: null };
const { workspace } = temporaryWorkspaces("assay-workspaces-");

const json = (value: unknown) => JSON.stringify(value, null, 2);
const monorepo = (rootTest: string, extra: Record<string, string> = {}) => ({
  "package.json": json({ name: "mono", private: true, workspaces: ["packages/*"], scripts: { test: rootTest } }),
  "packages/a/package.json": json({ name: "a", version: "1.0.0", scripts: { test: "node --test" } }),
  "packages/b/package.json": json({ name: "b", version: "1.0.0", dependencies: { a: "1.0.0" }, scripts: { test: "node --conditions development test/index.js" } }),
  "packages/b/test/index.js": `require("./b.test.js");\n`,
  "packages/b/test/b.test.js": `const test = require("node:test");\ntest("b", () => {});\n`,
  ...extra,
});

describe("workspace packages", () => {
  it("are what `workspaces` (npm, yarn) or pnpm-workspace.yaml declare, less the excluded, each with a package.json", async () => {
    const files = {
      "packages/a/package.json": "{}",
      "packages/b/package.json": "{}",
      "packages/notes/README.md": "not a package",
      "packages/legacy/package.json": "{}",
      "tools/cli/package.json": "{}",
    };
    expect(await workspacePackages(await workspace(files), { workspaces: ["packages/*", "!packages/legacy"] })).toEqual(["packages/a", "packages/b"]);
    expect(await workspacePackages(await workspace(files), { workspaces: { packages: ["tools/*"], nohoist: ["**"] } })).toEqual(["tools/cli"]);
    const pnpm = await workspace({ ...files, "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n  # the CLI\n  - \"tools/*\"\n  - '!packages/legacy'\n" });
    expect(await workspacePackages(pnpm, { name: "root" })).toEqual(["packages/a", "packages/b", "tools/cli"]);
    expect(await workspacePackages(await workspace(files), { name: "single" })).toEqual([]);
  });

  it("the package holding the tests is the one holding every test file, the innermost", () => {
    const packages = ["packages/a", "packages/a/plugins/x", "packages/b"];
    expect(packageHolding(packages, ["packages/b/test/b.test.js", "packages/b/test/c.test.js"])).toBe("packages/b");
    expect(packageHolding(packages, ["packages/a/plugins/x/t.test.js"])).toBe("packages/a/plugins/x");
    expect(packageHolding(packages, ["packages/a/t.test.js", "packages/b/t.test.js"])).toBeNull();
    expect(packageHolding(packages, ["test/root.test.js"])).toBeNull();
  });

  it("a command names its folder with env -C, which must stay inside the workspace", () => {
    expect(splitChdir(["env", "-C", "packages/b", "node", "--test"])).toEqual({ dir: "packages/b", command: ["node", "--test"] });
    expect(splitChdir(["env", "--chdir=./packages/b/", "jest"])).toEqual({ dir: "packages/b", command: ["jest"] });
    expect(splitChdir(["jest", "-C", "x"])).toBeNull();
    expect(() => splitChdir(["env", "-C", "../elsewhere", "jest"])).toThrow(/'\.\.'/);
    expect(() => splitChdir(["env", "-C", "/etc", "jest"])).toThrow(/absolute/);
  });
});

describe("a monorepo's tests run from their package's folder", () => {
  it("runs the package's own script, plain `node … test/index.js` as node:test, from its folder", async () => {
    const ws = await workspace(monorepo("npm test --workspaces"));
    const plan = await planTests(ws, AUTO, PATHS, [], ["packages/b/test/b.test.js"]);
    expect(plan.framework).toBe("node-test");
    expect(plan.cwd).toBe("packages/b");
    expect(plan.command).toEqual(["env", "-C", "packages/b", "node", "--conditions", "development", "test/index.js"]);
    // Under --test, so the reporter's process loads no workspace code.
    expect(plan.argv.slice(0, 5)).toEqual(["env", "-C", "packages/b", "/opt/node/bin/node", "--test"]);
    expect(plan.argv.slice(-3)).toEqual(["--conditions", "development", "test/index.js"]);
  });

  it("the stored command runs the same way later, and a hidden run's root-relative files are named from the folder", async () => {
    const ws = await workspace(monorepo("npm test --workspaces"));
    const command = ["env", "-C", "packages/b", "node", "--conditions", "development", "test/index.js"];
    const later = await planTests(ws, { ...AUTO, framework: "node-test", command }, PATHS);
    expect(later.command).toEqual(command);
    const hidden = await planTests(ws, { ...AUTO, framework: "node-test", command, files: ["packages/b/test/b.test.js"], canaries: true }, PATHS);
    expect(hidden.argv.slice(-3)).toEqual(["--conditions", "development", "test/b.test.js"]);
    await expect(planTests(ws, { ...AUTO, framework: "node-test", command: ["env", "-C", "packages/none", "node", "--test"] }, PATHS)).rejects.toThrow(/not a directory of the repository/);
  });

  it("a root script that runs a test runner itself stays the command, as do tests outside one package", async () => {
    const rooted = await planTests(await workspace(monorepo("node --test")), AUTO, PATHS, [], ["packages/b/test/b.test.js"]);
    expect([rooted.cwd, rooted.command]).toEqual(["", ["node", "--test"]]);
    const spread = await workspace({ ...monorepo("lerna run test"), "packages/a/a.test.js": "require('node:test')('a', () => {});\n" });
    await expect(planTests(spread, AUTO, PATHS, [], ["packages/a/a.test.js", "packages/b/test/b.test.js"])).rejects.toThrow(/no test framework detected/);
  });

  it("plain `node script.js` is node:test only when the script or one beside it loads node:test", async () => {
    const ws = await workspace({ "package.json": json({ name: "x", scripts: { test: "node scripts/check.js" } }), "scripts/check.js": "console.log('ok');\n" });
    await expect(planTests(ws, AUTO, PATHS)).rejects.toThrow(/no test framework detected/);
  });

  it("ids from a package folder's run are relative to the repository root", () => {
    const xml = `<testsuites><testcase name="b" classname="" file="/workspace/packages/b/test/b.test.js"/><testcase name="c" classname="" file="test/c.test.js"/></testsuites>`;
    expect(parseTestReport("junit", xml, "/workspace", "packages/b").map((t) => t.file)).toEqual(["packages/b/test/b.test.js", "packages/b/test/c.test.js"]);
  });
});

describe("what an install leaves, kept and placed again", () => {
  it("keeps every node_modules and the root's .venv whole, and each topmost path the install created", async () => {
    const ws = await workspace({ "package.json": "{}", "packages/a/package.json": "{}", "packages/a/src/index.js": "" });
    const before = await listOwnTree(ws);
    await mkdir(join(ws, "node_modules/x"), { recursive: true });
    await mkdir(join(ws, "packages/a/node_modules/y"), { recursive: true });
    await mkdir(join(ws, "packages/a/gen/deep"), { recursive: true });
    await writeFile(join(ws, "packages/a/gen/deep/out.js"), "generated");
    await writeFile(join(ws, "packages/a/src/version.js"), "export const version = '1';");
    await symlink("src", join(ws, "packages/a/lib"));
    await mkdir(join(ws, ".venv/bin"), { recursive: true });
    await writeFile(join(ws, "packages/a/src/index.js"), "rewritten by a script");
    expect(await installOutput(ws, before)).toEqual([".venv", "node_modules", "packages/a/gen", "packages/a/lib", "packages/a/node_modules", "packages/a/src/version.js"]);
  });

  it("mounts the dependency directories and copies the rest where the job wrote nothing, links as links", async () => {
    const env = await workspace({
      "node_modules/x/index.js": "", "packages/a/node_modules/y/index.js": "", "packages/a/gen/out.js": "generated", "packages/a/src/version.js": "install's",
    });
    await symlink("gen", join(env, "packages/a/lib"));
    const layout = await environmentLayout(env);
    expect(layout.mounts).toEqual(["node_modules", "packages/a/node_modules"]);
    const ws = await workspace({ "packages/a/src/version.js": "candidate's" });
    await copyInstallOutput(env, ws, layout.copies);
    expect(await readFile(join(ws, "packages/a/gen/out.js"), "utf8")).toBe("generated");
    expect(await readFile(join(ws, "packages/a/src/version.js"), "utf8")).toBe("candidate's");
    expect(await readlink(join(ws, "packages/a/lib"))).toBe("gen");
  });
});

describe("the environment a monorepo's install leaves", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ sandboxUidBase: 67300 });
  });
  afterAll(() => h.close());

  const lockfile = json({
    name: "mono",
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { name: "mono", hasInstallScript: true, workspaces: ["packages/*"] },
      "node_modules/a": { resolved: "packages/a", link: true },
      "node_modules/b": { resolved: "packages/b", link: true },
      "packages/a": { version: "1.0.0" },
      "packages/b": { version: "1.0.0", dependencies: { a: "1.0.0" } },
    },
  });
  // The root postinstall writes into the packages' folders, as monorepos' generate steps do,
  // after what puppeteer's would do: download a browser unless told not to (no host but the
  // registries is reachable, so the install would fall back to no scripts at all).
  const generate = (extra: string) => `const fs = require("node:fs");
if (process.env.PUPPETEER_SKIP_DOWNLOAD !== "1") throw new Error("downloading Chrome from storage.googleapis.com");
fs.writeFileSync("packages/a/generated.js", "module.exports = 'generated';\\n");
fs.mkdirSync("packages/b/node_modules/helper", { recursive: true });
fs.writeFileSync("packages/b/node_modules/helper/index.js", "module.exports = 'helps';\\n");
${extra}`;
  const repo = (extra: string) =>
    tarGz(
      Object.entries({
        ...monorepo("npm test --workspaces", { "package-lock.json": lockfile, "scripts/generate.js": generate(extra) }),
        "package.json": json({ name: "mono", private: true, workspaces: ["packages/*"], scripts: { postinstall: "node scripts/generate.js", test: "npm test --workspaces" } }),
        "packages/a/index.js": `module.exports = { value: require("./generated.js") };\n`,
      }).map(([path, content]) => ({ path: `repo/${path}`, content })),
    );
  const testPatch = [
    "diff --git a/packages/b/test/b.test.js b/packages/b/test/b.test.js",
    "--- a/packages/b/test/b.test.js",
    "+++ b/packages/b/test/b.test.js",
    "@@ -1,2 +1,5 @@",
    ' const test = require("node:test");',
    '-test("b", () => {});',
    '+const assert = require("node:assert");',
    '+test("a sibling package, linked, with the file its postinstall wrote", () => assert.equal(require("a").value, "generated"));',
    '+test("the package\'s own node_modules", () => assert.equal(require("helper"), "helps"));',
    '+test("runs from the package folder", () => assert.equal(require("node:path").basename(process.cwd()), "b"));',
    "",
  ].join("\n");

  it("runs install scripts with downloads switched off, and keeps workspace links, nested node_modules and files written outside node_modules, for every test run", async () => {
    const prepId = jobId("prepare-mono");
    const snapshot = h.worker.blob(`${prepId}-repo.tar.gz`, repo(""));
    const prep = await h.run(h.prepareJob(prepId, {}, { snapshot, patches: [testPatch], limits: { ...TEST_LIMITS, wall_ms: 120_000, cpu_ms: 120_000 } }));
    expect(prep.reason, prep.log_tail).toBeNull();
    expect(prep.framework).toBe("node-test");
    expect(prep.command).toEqual(["env", "-C", "packages/b", "node", "--conditions", "development", "test/index.js"]);
    const env = h.worker.blob(`${prepId}-env.tar.gz`, h.worker.uploads.get(`${prepId}/env.tar.gz`) as Buffer);
    const cb = await h.run({ ...h.job(jobId("mono-run"), {}), snapshot, environment: env, patches: [testPatch], test: { framework: "node-test", command: prep.command } });
    expect(cb.status, cb.log_tail).toBe("SUCCEEDED");
    expect(cb.tests.map((t) => [t.file, t.status])).toEqual([
      ["packages/b/test/b.test.js", "passed"],
      ["packages/b/test/b.test.js", "passed"],
      ["packages/b/test/b.test.js", "passed"],
    ]);
  });

  it("refuses an install that leaves a link out of the workspace", async () => {
    const prepId = jobId("prepare-mono-out");
    const snapshot = h.worker.blob(`${prepId}-repo.tar.gz`, repo(`fs.symlinkSync("../../..", "packages/a/up");\n`));
    const prep = await h.run(h.prepareJob(prepId, {}, { snapshot, patches: [testPatch], limits: { ...TEST_LIMITS, wall_ms: 120_000, cpu_ms: 120_000 } }));
    expect(prep.status).toBe("ERROR");
    expect(prep.reason).toMatch(/the install left what no test run may use: archive symlink "packages\/a\/up" -> "\.\.\/\.\.\/\.\." points outside the workspace/);
  });
});
