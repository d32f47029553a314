import { JS_HARNESS } from "../harness-files";
import { driverArgv, splitArgs } from "./args";
import { contextPair, importDefault } from "./canary-style";
import type { FrameworkModule } from "./types";

/**
 * tape, one test file per process through the driver: tape's TAP does not name files, so
 * the driver attributes each run's TAP to its file. Coverage is V8's.
 */
export const tape: FrameworkModule = {
  name: "tape",
  executables: ["tape"],
  declared: (repo) => Promise.resolve(repo.depends("tape")),
  valuedOptions: ["-r", "--require", "-i", "--ignore"],
  defaultCommand: ["tape"],
  prefixLength: () => 1,
  defaultPatterns: ["test.{js,cjs,mjs}", "test/**/*.{js,cjs,mjs}", "tests/**/*.{js,cjs,mjs}"],
  perFile: true,
  report: "per-file",
  harness: JS_HARNESS,
  internals: ["tape/lib"],
  canaries: {
    sameNameTests: true,
    context: { assertion: "equal", ends: true },
    appended: (s) => `\n${importDefault(s, `${s.alias}_test`, "tape")};{\n${contextPair(s, `${s.alias}_test`, "equal", true)}}\n`,
  },
  async instrument(command, paths, options) {
    const [exe = "tape", ...rest] = command;
    // Keeps -r/--require and -i/--ignore; the files are the driver's.
    const { options: kept } = splitArgs(rest, tape.valuedOptions);
    return { argv: driverArgv(paths.node, paths.tools, { command: [exe, ...kept], files: options.files, capture: "tap-assertions", v8Coverage: options.coverage, lcovFrom: null, junit: paths.junit, lcov: paths.lcov }), env: {} };
  },
};
