import { describe, expect, it } from "vitest";
import { frameworkModule, planTests, type ReportPaths } from "../src/frameworks";
import { scriptCommands } from "../src/frameworks/script";
import { type Job, TEST_FRAMEWORKS } from "../../protocol/jobs";
import { parseJUnit, parseLcov, parsePerFile, parseTap, ReportError, toJUnit } from "../src/reports";
import { temporaryWorkspaces } from "./support/workspaces";

const PATHS: ReportPaths = { node: "/opt/node/bin/node", tools: "/opt/assay", junit: "/r/junit", lcov: "/r/lcov", coverageConfig: "/opt/assay/coveragerc" };
const AUTO: Job["test"] = { framework: "auto", command: null, coverage: false, files: null, canaries: false, harness_patch: null };

const { workspace } = temporaryWorkspaces("assay-fw-");

const pkg = (fields: Record<string, unknown>) => JSON.stringify({ name: "x", ...fields });
const plan = async (files: Record<string, string>, test: Partial<Job["test"]> = {}) => planTests(await workspace(files), { ...AUTO, ...test }, PATHS);
/** The driver's settings, for frameworks run through tools/run-tests.mjs. */
const driver = (argv: string[]) => JSON.parse(argv[2] ?? "{}") as { command: string[]; files: string[] | null; capture: string | null; v8Coverage: boolean; lcovFrom: string | null };

describe("the registry", () => {
  it("has a module for every framework the protocol names, under its own name", () => {
    expect(TEST_FRAMEWORKS.map((f) => frameworkModule(f).name)).toEqual([...TEST_FRAMEWORKS]);
  });
});

describe("detection from what the repository declares", () => {
  it.each([
    [{ "package.json": pkg({ scripts: { test: "jest" } }) }, "jest", ["jest"]],
    [{ "package.json": pkg({ scripts: { test: "npm run build && jest --ci" } }) }, "jest", ["jest", "--ci"]],
    [{ "package.json": pkg({ scripts: { test: "cross-env NODE_ENV=test jest --runInBand" } }) }, "jest", ["jest", "--runInBand"]],
    [{ "package.json": pkg({ scripts: { test: "vitest run" } }) }, "vitest", ["vitest", "run"]],
    [{ "package.json": pkg({ scripts: { test: "vitest" } }) }, "vitest", ["vitest"]],
    [{ "package.json": pkg({ scripts: { test: "mocha 'test/**/*.spec.js'" } }) }, "mocha", ["mocha", "test/**/*.spec.js"]],
    [{ "package.json": pkg({ scripts: { test: "ava" } }), "test/a.test.js": "" }, "ava", ["ava"]],
    [{ "package.json": pkg({ scripts: { test: "tape test/*.js | tap-spec" } }), "test/a.js": "" }, "tape", ["tape"]],
    [{ "package.json": pkg({ scripts: { test: "uvu tests" } }), "tests/a.js": "" }, "uvu", ["uvu"]],
    [{ "package.json": pkg({ scripts: { test: "node --test test/" } }) }, "node-test", ["node", "--test", "test/"]],
    [{ "package.json": pkg({ scripts: { test: "npm run test:unit", "test:unit": "nyc --reporter lcov mocha" } }) }, "mocha", ["mocha"]],
    [{ "package.json": pkg({ devDependencies: { jest: "^29" } }) }, "jest", ["jest"]],
    [{ "package.json": pkg({ jest: { testEnvironment: "node" } }) }, "jest", ["jest"]],
    [{ "package.json": pkg({}), "jest.config.ts": "export default {}" }, "jest", ["jest"]],
    [{ "package.json": pkg({}), "vitest.config.mts": "export default {}" }, "vitest", ["vitest", "run"]],
    [{ "package.json": pkg({}), "vite.config.ts": "export default { test: { globals: true } }" }, "vitest", ["vitest", "run"]],
    [{ "package.json": pkg({}), ".mocharc.yml": "spec: test" }, "mocha", ["mocha"]],
    [{ "package.json": pkg({ ava: { files: ["test/**"] } }) }, "ava", ["ava"]],
    [{ "package.json": pkg({ devDependencies: { tape: "^5" } }) }, "tape", ["tape"]],
    [{ "package.json": pkg({ devDependencies: { uvu: "^0.5" } }) }, "uvu", ["uvu"]],
    [{ "pyproject.toml": "[tool.pytest.ini_options]\n" }, "pytest", ["python3", "-m", "pytest"]],
    [{ "tox.ini": "[pytest]\n" }, "pytest", ["python3", "-m", "pytest"]],
    [{ "tests.py": "import unittest\n" }, "pytest", ["python3", "-m", "pytest"]],
  ])("%j -> %s %j", async (files, framework, command) => {
    const p = await plan(files as Record<string, string>);
    expect(p.framework).toBe(framework);
    expect(p.command).toEqual(command);
  });

  it("a vite config without a test section is not vitest", async () => {
    await expect(plan({ "package.json": pkg({}), "vite.config.ts": "export default { plugins: [] }" })).rejects.toThrow(/no test framework detected/);
  });

  it("says what to do when nothing is declared", async () => {
    await expect(plan({ "package.json": pkg({ scripts: { build: "tsc" } }) })).rejects.toThrow(
      /^no test framework detected: package.json has no test script and no known test runner in devDependencies.*; state the framework or test command on import$/,
    );
    await expect(plan({ "package.json": pkg({ scripts: { test: "echo no tests && exit 1" } }) })).rejects.toThrow(/test script \("echo no tests && exit 1"\) runs no known test runner/);
  });

  it("keeps a script's variables for the test process and skips segments that need a shell", () => {
    expect(scriptCommands({ test: "cross-env TZ=UTC FOO=1 jest" })).toEqual([{ argv: ["jest"], env: { TZ: "UTC", FOO: "1" } }]);
    expect(scriptCommands({ test: "$(which jest) && mocha" })).toEqual([{ argv: ["mocha"], env: {} }]);
    expect(scriptCommands({ test: "npm test" })).toEqual([]);
  });
});

describe("commands as run", () => {
  it("jest: the runner's reporter, job files by path, V8 coverage through jest", async () => {
    const p = await plan({ "package.json": pkg({ scripts: { test: "jest --reporters=jest-silent --watch" } }) }, { files: ["a.test.js"], coverage: true });
    expect(p.command).toEqual(["jest", "--reporters=jest-silent", "--watch", "--runTestsByPath", "a.test.js"]);
    const spec = driver(p.argv);
    expect(spec.command.slice(0, 2)).toEqual(["/opt/node/bin/node", "/opt/assay/jest-launcher.mjs"]);
    const launched = JSON.parse(spec.command[2] ?? "{}") as { command: string[]; args: string[] };
    expect(launched.command).toEqual(p.command);
    expect(launched.args).toEqual(expect.arrayContaining(["--reporters=/opt/assay/jest-reporter.mjs", "--coverageProvider=v8"]));
    expect(launched.args).not.toContain("--watch");
    expect(spec.lcovFrom).toMatch(/lcov\.info$/);
  });

  it("vitest: the runner's reporter instead of the repository's", async () => {
    const p = await plan({ "package.json": pkg({ scripts: { test: "vitest --reporter=dot" } }) });
    expect(p.argv).toEqual(["vitest", "run", "--bail=0", "--reporter=default", "--reporter=/opt/assay/vitest-reporter.mjs"]);
  });

  it("mocha: the runner's reporter through its launcher, V8 coverage through the driver", async () => {
    const p = await plan({ "package.json": pkg({ scripts: { test: "mocha -R spec test" } }) }, { coverage: true });
    const spec = driver(p.argv);
    expect(spec.command.slice(0, 2)).toEqual(["/opt/node/bin/node", "/opt/assay/mocha-launcher.mjs"]);
    expect(JSON.parse(spec.command[2] ?? "{}")).toMatchObject({ command: ["mocha", "-R", "spec", "test"], args: ["test", "--reporter=/opt/assay/mocha-reporter.cjs", "--no-bail"] });
    expect(spec.v8Coverage).toBe(true);
  });

  it("tape, ava, uvu: one file per process, files from the script's globs or the framework's defaults", async () => {
    const tape = await plan({ "package.json": pkg({ scripts: { test: "tape -r ./setup.js test/*.js" } }), "test/b.js": "", "test/a.js": "", "test/fixtures/x.json": "", "other.js": "" });
    expect(driver(tape.argv)).toMatchObject({ command: ["tape", "-r", "./setup.js"], files: ["test/a.js", "test/b.js"], capture: "tap-assertions" });
    const ava = await plan({ "package.json": pkg({ devDependencies: { ava: "7" } }), "test/one.js": "", "src/lib.js": "", "src/lib.test.js": "" });
    expect(driver(ava.argv)).toMatchObject({ command: ["ava", "--tap", "--no-fail-fast"], files: ["src/lib.test.js", "test/one.js"], capture: "tap-tests" });
    const uvu = await plan({ "package.json": pkg({ scripts: { test: "uvu -r tsm tests" } }), "tests/a.ts": "", "tests/_helper.ts": "", "src/x.ts": "" });
    expect(driver(uvu.argv)).toMatchObject({ command: ["/opt/node/bin/node", "--import=/opt/assay/uvu-hook.mjs", "--require", "tsm"], files: ["tests/a.ts"], capture: "uvu" });
  });

  it("node:test: TypeScript test files are found when the script names none", async () => {
    const p = await plan({ "package.json": pkg({ scripts: { test: "node --test" } }), "src/a.test.ts": "" });
    expect(p.argv.slice(-6)).toContain("**/*.test.{js,cjs,mjs,ts,cts,mts}");
    const js = await plan({ "package.json": pkg({ scripts: { test: "node --test" } }), "src/a.test.js": "" });
    expect(js.argv.join(" ")).not.toContain("*.test.{");
  });

  it("pytest: the runner's options in PYTEST_ADDOPTS, collection errors do not stop the run, root unittest layouts, src layouts importable", async () => {
    const p = await plan({ "pytest.ini": "[pytest]\n", "src/pkg/__init__.py": "" });
    expect(p.argv).toEqual(["python3", "-m", "pytest"]);
    expect(p.env).toEqual({
      PYTEST_ADDOPTS: "-p assay_pytest -o junit_family=xunit1 -p no:cacheprovider -p no:randomly --continue-on-collection-errors -o 'python_files=test*.py *_test.py'",
      PYTHONPATH: "src:/opt/assay",
    });
    const own = await planTests(await workspace({ "pytest.ini": "[pytest]\npython_files = check_*.py\n", "it's/a.py": "" }), { ...AUTO, coverage: true }, PATHS, ["it's/a.py"]);
    expect(own.env).toEqual({
      PYTEST_ADDOPTS: `-p assay_pytest -o junit_family=xunit1 -p no:cacheprovider -p no:randomly --continue-on-collection-errors --cov=. '--cov=it'"'"'s' --cov-config=/opt/assay/coveragerc --cov-report=lcov:/r/lcov`,
      PYTHONPATH: "/opt/assay",
    });
  });
});

describe("reports", () => {
  it("mocha xunit: the test case's file", () => {
    const xml = `<testsuite name="Mocha Tests" tests="1"><testcase classname="math" name="adds" file="/workspace/test/a.spec.js" time="0.001"/></testsuite>`;
    expect(parseJUnit(xml, "/workspace")).toMatchObject([{ name: "adds", classname: "math", file: "test/a.spec.js", status: "passed" }]);
  });

  it("TAP from ava: one test point per test", () => {
    const tap = "TAP version 13\nok 1 - adds\nnot ok 2 - fails\n  ---\n  name: AssertionError\n  message: Difference\n  ...\nok 3 - later # SKIP\n\n1..3\n# tests 2\n# pass 1\n# fail 1\n";
    expect(parseTap(tap, "test/a.js", "tests").map((t) => [t.name, t.status, t.file])).toEqual([
      ["adds", "passed", "test/a.js"],
      ["fails", "failed", "test/a.js"],
      ["later", "skipped", "test/a.js"],
    ]);
  });

  it("TAP from tape: tests are the comments, their assertions decide", () => {
    const tap = "TAP version 13\n# adds\nok 1 should be equal\nok 2 should be truthy\n# fails\nok 3 should be equal\nnot ok 4 should be equal\n  ---\n    operator: equal\n  ...\n\n1..4\n# tests 4\n# pass  3\n# fail  1\n";
    expect(parseTap(tap, "test/a.js", "assertions").map((t) => [t.name, t.status])).toEqual([
      ["adds", "passed"],
      ["fails", "failed"],
    ]);
  });

  it("TAP with a forged line is refused, not believed", () => {
    const forgedId = "TAP version 13\n# hidden\nnot ok 1 should be equal\nok 1 should be equal\n1..1\n";
    expect(() => parseTap(forgedId, "t.js", "assertions")).toThrow(ReportError);
    const extra = "TAP version 13\n# a\nok 1 should be equal\nok 2 should be equal\n1..1\n";
    expect(() => parseTap(extra, "t.js", "assertions")).toThrow(ReportError);
  });

  it("the driver's per-file JSON: every result has its file; a file without results is errored", () => {
    const json = JSON.stringify({
      files: [
        { file: "test/a.js", exit_code: 1, signal: null, error: null, records: [{ suite: "", name: "adds", ok: true, message: null, duration_ms: 1 }, { suite: "math", name: "fails", ok: false, message: "nope", duration_ms: 2 }] },
        { file: "test/b.js", exit_code: 1, signal: null, error: null, records: [] },
      ],
    });
    expect(parsePerFile(json)).toEqual([
      { name: "adds", classname: "", file: "test/a.js", status: "passed", duration_ms: 1, message: null },
      { name: "fails", classname: "math", file: "test/a.js", status: "failed", duration_ms: 2, message: "nope" },
      { name: "(file)", classname: "", file: "test/b.js", status: "errored", duration_ms: 0, message: "the file reported no tests (exit code 1)" },
    ]);
    expect(() => parsePerFile(`${json}{"files":[]}`)).toThrow(ReportError);
    // Uploaded as JUnit, which reads back the same.
    expect(parseJUnit(toJUnit(parsePerFile(json)), "/workspace")).toEqual(parsePerFile(json));
  });

  it("lcov counts come from the DA lines: LH > LF cannot make a percentage above 100", () => {
    const lcov = "SF:/workspace/a.py\nDA:1,1\nDA:2,0\nDA:3,4\nLF:3\nLH:5\nend_of_record\nSF:/workspace/b.py\nDA:1,1\nLF:1\nLH:1\nend_of_record\n";
    const summary = parseLcov(lcov, "/workspace");
    expect(summary.files).toEqual([
      { file: "a.py", lines_total: 3, lines_covered: 2 },
      { file: "b.py", lines_total: 1, lines_covered: 1 },
    ]);
    expect(summary.percent).toBe(75);
  });
});
