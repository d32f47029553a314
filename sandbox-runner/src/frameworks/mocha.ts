import { JS_HARNESS } from "../harness-files";
import { driverArgv, dropOptions } from "./args";
import { anyConfig, hasPackageKey } from "./repo";
import type { FrameworkModule } from "./types";

const OPTIONS = {
  valued: ["--reporter", "-R", "--reporter-option", "--reporter-options", "-O"],
  drop: ["--reporter", "-R", "--reporter-option", "--reporter-options", "-O", "--watch", "-w"],
};
const CONFIGS = [".mocharc.js", ".mocharc.cjs", ".mocharc.mjs", ".mocharc.json", ".mocharc.jsonc", ".mocharc.yml", ".mocharc.yaml"];

/**
 * mocha, through its built-in xunit reporter, whose test cases carry their file. Coverage is
 * V8's, converted by the driver once the tests have ended.
 */
export const mocha: FrameworkModule = {
  name: "mocha",
  executables: ["mocha", "_mocha"],
  declared: async (repo) => hasPackageKey(repo, "mocha") || repo.depends("mocha") || (await anyConfig(repo, CONFIGS)),
  valuedOptions: [...OPTIONS.valued, "--require", "-r", "--config", "--grep", "-g", "--timeout", "-t", "--ui", "-u", "--extension", "--spec", "--ignore"],
  defaultCommand: ["mocha"],
  prefixLength: () => 1,
  defaultPatterns: [],
  perFile: false,
  report: "junit",
  harness: [...JS_HARNESS, "**/.mocharc*", "**/mocha.opts"],
  internals: ["mocha/lib", "Mocha.Runner", "Mocha.reporters", "EVENT_TEST_FAIL", "EVENT_TEST_PASS"],
  async instrument(command, paths, options) {
    const [exe = "mocha", ...rest] = command;
    const argv = [exe, ...dropOptions(rest, OPTIONS), "--reporter=xunit", `--reporter-option=output=${paths.junit}`];
    if (!options.coverage) return { argv, env: {} };
    return { argv: driverArgv(paths.node, paths.tools, { command: argv, files: null, capture: null, v8Coverage: true, lcovFrom: null, junit: paths.junit, lcov: paths.lcov }), env: {} };
  },
};
