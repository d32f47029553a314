import { JS_HARNESS } from "../harness-files";
import { driverArgv, dropOptions, splitArgs } from "./args";
import { anyConfig, configNames, hasPackageKey } from "./repo";
import { contextPair, importDefault } from "./canary-style";
import type { FrameworkModule } from "./types";

const OPTIONS = {
  valued: ["--config", "--match", "-m", "--timeout", "-T", "--concurrency", "-c", "--node-arguments"],
  // `--fail-fast` stops a file at its first failure: every test must run to be measured.
  drop: ["--tap", "-t", "--watch", "-w", "--verbose", "-v", "--fail-fast"],
};

/**
 * ava, one test file per process through the driver (tools/run-tests.mjs): ava's TAP output
 * does not name the file a test is in, so the driver attributes each run's TAP to its file.
 * Works with ava 4 to 7. Coverage is V8's; child processes rather than worker threads carry
 * NODE_V8_COVERAGE.
 */
export const ava: FrameworkModule = {
  name: "ava",
  executables: ["ava"],
  declared: async (repo) => hasPackageKey(repo, "ava") || repo.depends("ava") || (await anyConfig(repo, configNames("ava.config", ["js", "cjs", "mjs"]))),
  valuedOptions: OPTIONS.valued,
  defaultCommand: ["ava"],
  prefixLength: () => 1,
  // ava's own defaults (helpers and fixtures excepted, as ava does).
  defaultPatterns: ["test.{js,cjs,mjs}", "src/test.{js,cjs,mjs}", "source/test.{js,cjs,mjs}", "**/test-*.{js,cjs,mjs}", "**/*.spec.{js,cjs,mjs}", "**/*.test.{js,cjs,mjs}", "**/test/**/*.{js,cjs,mjs}", "**/tests/**/*.{js,cjs,mjs}", "**/__tests__/**/*.{js,cjs,mjs}"],
  perFile: true,
  report: "per-file",
  harness: [...JS_HARNESS, "**/ava.config.*"],
  internals: ["ava/lib", "ava/entrypoints"],
  canaries: {
    sameNameTests: false,
    context: { assertion: "is", ends: false },
    appended: (s) => `\n${importDefault(s, `${s.alias}_test`, "ava")};{\n${contextPair(s, `${s.alias}_test`, "is", false)}}\n`,
  },
  async instrument(command, paths, options) {
    const [exe = "ava", ...rest] = command;
    // Options with their values (`--match "a b"`); the files are the driver's.
    const { options: kept } = splitArgs(dropOptions(rest, OPTIONS), OPTIONS.valued);
    // `--no-fail-fast` over a config's `failFast: true`.
    const argv = [exe, ...kept, "--tap", "--no-fail-fast", ...(options.coverage ? ["--no-worker-threads"] : [])];
    return { argv: driverArgv(paths.node, paths.tools, { command: argv, files: options.files, capture: "tap-tests", v8Coverage: options.coverage, lcovFrom: null, junit: paths.junit, lcov: paths.lcov }), env: {} };
  },
};
