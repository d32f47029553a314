import { JS_HARNESS } from "../harness-files";
import { driverArgv, dropOptions } from "./args";
import { anyConfig, hasPackageKey } from "./repo";
import { anyGlobal, assertPair } from "./canary-style";
import type { FrameworkModule } from "./types";

const REPORTER_OPTIONS = ["--reporter", "-R", "--reporter-option", "--reporter-options", "-O"];
const OPTIONS = {
  valued: REPORTER_OPTIONS,
  // `--bail` stops at the first failure: every test must run to be measured.
  drop: [...REPORTER_OPTIONS, "--watch", "-w", "--bail", "-b"],
};
const CONFIGS = [".mocharc.js", ".mocharc.cjs", ".mocharc.mjs", ".mocharc.json", ".mocharc.jsonc", ".mocharc.yml", ".mocharc.yaml"];

/**
 * mocha, through the runner's reporter (tools/mocha-reporter.cjs), whose test cases carry
 * their file on every mocha. The launcher (tools/mocha-launcher.mjs) hands mocha its options
 * (the reporter, `--no-bail` over a config's `bail`) while the tests, which run in mocha's
 * process, see `process.argv` as the project's command gives it. Coverage is V8's, converted
 * by the driver once the tests have ended.
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
  canaries: {
    sameNameTests: true,
    context: null,
    appended: (s) => `\n;{\n  const test = ${anyGlobal(s)}.it ?? ${anyGlobal(s)}.test;\n${assertPair(s, "test", true)}}\n`,
  },
  async instrument(command, paths, options) {
    const [exe = "mocha", ...rest] = command;
    const reporter = `${paths.tools}/mocha-reporter.cjs`;
    const args = [...dropOptions(rest, OPTIONS), `--reporter=${reporter}`, "--no-bail"];
    const argv = [paths.node, `${paths.tools}/mocha-launcher.mjs`, JSON.stringify({ command: [exe, ...rest], args, reporter })];
    if (!options.coverage) return { argv, env: {} };
    return { argv: driverArgv(paths.node, paths.tools, { command: argv, files: null, capture: null, v8Coverage: true, lcovFrom: null, junit: paths.junit, lcov: paths.lcov }), env: {} };
  },
};
