import { driverArgv, dropOptions } from "./args";
import { anyConfig, configNames, hasPackageKey } from "./repo";
import type { FrameworkModule } from "./types";

const COVERAGE_DIR = "/tmp/assay-jest-coverage";
const OPTIONS = {
  valued: ["--reporters", "--outputFile", "--coverageReporters", "--coverageDirectory", "--coverageProvider", "--testResultsProcessor"],
  drop: ["--reporters", "--json", "--outputFile", "--watch", "--watchAll", "--coverage*", "--collectCoverage", "--testResultsProcessor", "--silent"],
};

/**
 * jest. It has no JUnit output of its own: tools/jest-reporter.mjs, a jest reporter, writes
 * one with each test's file. Tests (TypeScript too) go through the repository's own
 * transform configuration. Coverage is jest's V8 provider (the code jest runs is its
 * transform's output, which NODE_V8_COVERAGE would attribute to the wrong lines).
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
  async instrument(command, paths, options) {
    const [exe = "jest", ...rest] = command;
    const argv = [exe, ...dropOptions(rest, OPTIONS), "--ci", "--no-watchman", "--reporters=default", `--reporters=${paths.tools}/jest-reporter.mjs`];
    if (!options.coverage) return { argv, env: {} };
    argv.push("--coverage", "--coverageProvider=v8", "--coverageReporters=lcovonly", `--coverageDirectory=${COVERAGE_DIR}`, "--coveragePathIgnorePatterns=/node_modules/");
    return {
      argv: driverArgv(paths.node, paths.tools, { command: argv, files: null, capture: null, v8Coverage: false, lcovFrom: `${COVERAGE_DIR}/lcov.info`, junit: paths.junit, lcov: paths.lcov }),
      env: {},
    };
  },
};
