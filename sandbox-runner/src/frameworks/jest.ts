import { JS_HARNESS } from "../harness-files";
import { driverArgv, dropOptions } from "./args";
import { anyConfig, configNames, hasPackageKey } from "./repo";
import { anyGlobal, assertPair } from "./canary-style";
import type { FrameworkModule } from "./types";

const COVERAGE_DIR = "/tmp/assay-jest-coverage";
const OPTIONS = {
  valued: ["--reporters", "--outputFile", "--coverageReporters", "--coverageDirectory", "--coverageProvider", "--testResultsProcessor"],
  drop: ["--reporters", "--json", "--outputFile", "--watch", "--watchAll", "--coverage*", "--collectCoverage", "--testResultsProcessor", "--silent", "--bail", "-b"],
};
/**
 * Always run to the end: jest's early stop (`--bail`, `-b`, `--bail=N`, config `bail`) would
 * leave the tests after the first failing file unreported. jest's `--bail` takes no separate
 * value (`--bail 3` makes 3 a test path pattern).
 */
const NO_BAIL = "--bail=0";
/**
 * What would run test files in jest's main process, where the reporter writes the report:
 * jest runs them "in band" there with --runInBand, --detectOpenHandles, one worker, or one
 * test file (@jest/core, testSchedulerHelper `shouldRunInBand`), and `workerThreads` makes
 * its workers threads of that process.
 */
const IN_BAND = {
  valued: ["--maxWorkers", "-w", "--workerIdleMemoryLimit"],
  drop: ["--runInBand", "-i", "--detectOpenHandles", "--maxWorkers", "-w", "--workerIdleMemoryLimit", "--workerThreads", "--no-workerThreads"],
};
/**
 * In hidden runs, always workers, which are child processes: a workerIdleMemoryLimit makes
 * `shouldRunInBand` false whatever the number of files or workers (the limit is far above any
 * the sandbox allows, so no worker is ever restarted for it); the options false here override
 * a config file's.
 */
const OUT_OF_BAND = ["--workerIdleMemoryLimit=64GB", "--maxWorkers=2", "--detectOpenHandles=false", "--workerThreads=false"];

/**
 * jest. It has no JUnit output of its own: tools/jest-reporter.mjs, a jest reporter, writes
 * one with each test's file. jest starts through tools/jest-launcher.mjs, which hands the
 * runner's options to jest-cli and leaves `process.argv` the project's command, which a test
 * run in band sees. Tests (TypeScript too) go through the repository's own transform
 * configuration. Coverage is jest's V8 provider (the code jest runs is its
 * transform's output, which NODE_V8_COVERAGE would attribute to the wrong lines).
 * The reporter runs in jest's main process; in hidden runs the test files never do.
 */
export const jest: FrameworkModule = {
  name: "jest",
  executables: ["jest"],
  declared: async (repo) => hasPackageKey(repo, "jest") || repo.depends("jest") || (await anyConfig(repo, configNames("jest.config"))),
  valuedOptions: [...OPTIONS.valued, "--config", "-c", "--testNamePattern", "-t", "--selectProjects", "--maxWorkers", "-w", "--testTimeout"],
  defaultCommand: ["jest"],
  prefixLength: () => 1,
  fileArguments: (files) => ["--runTestsByPath", ...files],
  defaultPatterns: [],
  perFile: false,
  report: "junit",
  harness: [...JS_HARNESS, "**/jest.config*", "**/jest.*.config*", "**/jest.setup*", "**/jest-setup*", "**/jest.preset*", "**/jest-preset*", "**/setupTests.*", "**/setup-tests.*", "**/__mocks__/**"],
  internals: ["jest-circus", "jest-runner", "jest-jasmine2", "@jest/reporters", "@jest/test-result", "@jest/core", "@jest/expect", "expect.getState"],
  canaries: {
    sameNameTests: true,
    context: null,
    appended: (s) => `\n;{\n  const test = ${anyGlobal(s)}.test;\n${assertPair(s, "test", true)}}\n`,
  },
  async instrument(command, paths, options) {
    const [exe = "jest", ...rest] = command;
    const kept = dropOptions(rest, OPTIONS);
    const args = [...(options.hidden ? [...dropOptions(kept, IN_BAND), ...OUT_OF_BAND] : kept), "--ci", "--no-watchman", NO_BAIL, "--reporters=default", `--reporters=${paths.tools}/jest-reporter.mjs`];
    if (options.coverage) args.push("--coverage", "--coverageProvider=v8", "--coverageReporters=lcovonly", `--coverageDirectory=${COVERAGE_DIR}`, "--coveragePathIgnorePatterns=/node_modules/");
    // A wrapper that runs jest (`npx jest`) gets the options on its command line, as jest's own does.
    const argv = isJest(exe) ? [paths.node, `${paths.tools}/jest-launcher.mjs`, JSON.stringify({ command: [exe, ...rest], args })] : [exe, ...args];
    if (!options.coverage) return { argv, env: {} };
    return {
      argv: driverArgv(paths.node, paths.tools, { command: argv, files: null, capture: null, v8Coverage: false, lcovFrom: `${COVERAGE_DIR}/lcov.info`, junit: paths.junit, lcov: paths.lcov }),
      env: {},
    };
  },
};

/** Whether the command starts with jest's own executable (`jest`, `node_modules/.bin/jest`). */
const isJest = (exe: string) => jest.executables.includes(exe.split("/").pop() ?? "");
