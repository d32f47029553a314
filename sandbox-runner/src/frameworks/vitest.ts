import { JS_HARNESS } from "../harness-files";
import { driverArgv, dropOptions } from "./args";
import { anyConfig, configNames } from "./repo";
import type { FrameworkModule, Repo } from "./types";

const COVERAGE_DIR = "/tmp/assay-vitest-coverage";
const OPTIONS = {
  valued: ["--reporter", "--outputFile", "--pool", "--bail"],
  drop: ["--reporter", "--reporters", "--outputFile*", "--watch", "-w", "--ui", "--coverage*", "--silent", "--bail"],
};
/** Always run to the end: vitest's early stop (`--bail N`, config `test.bail`) leaves the tests after it unreported. */
const NO_BAIL = "--bail=0";
const CONFIG_EXTENSIONS = ["js", "cjs", "mjs", "ts", "cts", "mts"];
/**
 * vitest's `threads` and `vmThreads` pools run test files in worker threads of its main
 * process, where the reporter makes the report: one process, one memory. Hidden runs use
 * `forks` (vitest's default pool: a child process per worker), which the command line sets
 * for every project whatever the config says; typecheck files still go to the type checker.
 */
const POOL = { valued: ["--pool"], drop: ["--pool"] };

/** A vite config is vitest's when it has a `test` section. */
async function viteConfigWithTests(repo: Repo): Promise<boolean> {
  for (const name of configNames("vite.config", CONFIG_EXTENSIONS)) {
    if (/\btest\s*:/.test((await repo.read(name)) ?? "")) return true;
  }
  return false;
}

/**
 * vitest, through the runner's reporter (tools/vitest-reporter.mjs), which writes JUnit with
 * each test's file, in vitest's main process. TypeScript runs natively. Coverage needs the
 * repository's @vitest/coverage-v8 (vitest's V8 provider maps its transformed code back to
 * the sources); without it the run has no coverage.
 */
export const vitest: FrameworkModule = {
  name: "vitest",
  executables: ["vitest"],
  declared: async (repo) => repo.depends("vitest") || (await anyConfig(repo, configNames("vitest.config", CONFIG_EXTENSIONS))) || (await viteConfigWithTests(repo)),
  valuedOptions: [...OPTIONS.valued, "--config", "-c", "--project", "--testNamePattern", "-t", "--root", "-r", "--dir", "--environment"],
  defaultCommand: ["vitest", "run"],
  prefixLength: (command) => (["run", "watch", "dev"].includes(command[1] ?? "") ? 2 : 1),
  defaultPatterns: [],
  perFile: false,
  report: "junit",
  harness: [...JS_HARNESS, "**/vitest.config*", "**/vite.config*", "**/vitest.workspace*", "**/vitest.projects*", "**/vitest.setup*", "**/vitest-setup*", "**/vitest.global-setup*", "**/setupTests.*", "**/setup-tests.*", "**/__mocks__/**"],
  internals: ["vitest/node", "vitest/runners", "vitest/suite", "@vitest/runner", "@vitest/expect", "__vitest_", "getCurrentTest", "expect.getState", "onTestFinished"],
  canaries: {
    sameNameTests: true,
    context: null,
    appended: (s) =>
      `\nimport { test as ${s.alias}_test, expect as ${s.alias}_expect } from "vitest";\n;{\n  ${s.alias}_test(${s.fail}, () => ${s.alias}_expect(${s.v}).toBe(${s.v + 1}));\n  ${s.alias}_test(${s.pass}, () => ${s.alias}_expect(${s.w}).toBe(${s.w}));\n}\n`,
  },
  async instrument(command, paths, options) {
    const [exe = "vitest", ...rest] = command;
    const args = dropOptions(["run", "watch", "dev"].includes(rest[0] ?? "") ? rest.slice(1) : rest, OPTIONS);
    const pool = options.hidden ? [...dropOptions(args, POOL), "--pool=forks"] : args;
    const argv = [exe, "run", ...pool, NO_BAIL, "--reporter=default", `--reporter=${paths.tools}/vitest-reporter.mjs`];
    if (!options.coverage || !options.repo.depends("@vitest/coverage-v8")) return { argv, env: {} };
    argv.push("--coverage.enabled=true", "--coverage.provider=v8", "--coverage.reporter=lcovonly", `--coverage.reportsDirectory=${COVERAGE_DIR}`, "--coverage.exclude=**/node_modules/**");
    return {
      argv: driverArgv(paths.node, paths.tools, { command: argv, files: null, capture: null, v8Coverage: false, lcovFrom: `${COVERAGE_DIR}/lcov.info`, junit: paths.junit, lcov: paths.lcov }),
      env: {},
    };
  },
};
