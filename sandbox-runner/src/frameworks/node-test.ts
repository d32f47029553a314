import { JS_HARNESS } from "../harness-files";
import { anyGlobal, assertPair } from "./canary-style";
import type { FrameworkModule } from "./types";

/** Test files node --test finds when TypeScript files are among them (its defaults are JavaScript only before Node 23). */
const TYPESCRIPT_PATTERNS = ["**/*.test.{js,cjs,mjs,ts,cts,mts}", "**/*-test.{js,cjs,mjs,ts,cts,mts}", "**/*_test.{js,cjs,mjs,ts,cts,mts}", "**/test-*.{js,cjs,mjs,ts,cts,mts}", "**/test.{js,cjs,mjs,ts,cts,mts}", "**/test/**/*.{js,cjs,mjs,ts,cts,mts}"];

/**
 * node:test. Reports through the runner's node:test reporters (tools/junit-reporter.mjs,
 * lcov-reporter.mjs), which run in the test runner's parent process. TypeScript runs by
 * Node's type stripping, on by default in the runner's Node 22.
 */
export const nodeTest: FrameworkModule = {
  name: "node-test",
  executables: [],
  // Declared only through a `node --test` script (script.ts) or, failing everything else, test files.
  declared: () => Promise.resolve(false),
  valuedOptions: ["--import", "--require", "-r", "--test-name-pattern", "--test-concurrency", "--test-timeout", "--env-file", "--conditions", "-C", "--loader", "--experimental-loader"],
  defaultCommand: ["node", "--test"],
  prefixLength: () => 1,
  defaultPatterns: [],
  perFile: false,
  report: "junit",
  harness: JS_HARNESS,
  internals: ["node:test/reporters", "internal/test_runner", "syncBuiltinESMExports", "--expose-internals"],
  canaries: {
    sameNameTests: true,
    context: { assertion: null, ends: false },
    appended: (s) => `\n;{\n  const { test } = ${anyGlobal(s)}.process.getBuiltinModule("node:test");\n${assertPair(s, "test", false)}}\n`,
  },
  async instrument(command, paths, options) {
    // A stated command that is not node itself (a wrapper script) is run as it is.
    if ((command[0] ?? "").split("/").pop() !== "node") return { argv: command, env: {} };
    const rest = command.slice(1);
    const extra = [
      // The runner's reporters write to their FIFOs themselves; "stdout" only gives them
      // somewhere to yield nothing to.
      "--test-reporter=spec", "--test-reporter-destination=stdout",
      `--test-reporter=${paths.tools}/junit-reporter.mjs`, "--test-reporter-destination=stdout",
    ];
    if (options.coverage) extra.push("--experimental-test-coverage", `--test-reporter=${paths.tools}/lcov-reporter.mjs`, "--test-reporter-destination=stdout");
    const args = withoutInProcessIsolation(options.coverage ? withoutCoverageFilters(rest) : rest, options.hidden);
    const named = args.some((a) => !a.startsWith("-"));
    // A plain `node test/index.js` entry runs under --test: the file then runs in a child
    // process and the reporters in a parent that loads no workspace code, as for `node --test`.
    const entry = named && !args.includes("--test") && !args.some((a) => /^(-e|--eval|-p|--print)(=|$)/.test(a));
    const test = entry ? ["--test"] : [];
    return { argv: [paths.node, ...test, ...extra, ...args, ...(options.typescript && !named ? TYPESCRIPT_PATTERNS : [])], env: {} };
  },
};

/**
 * In hidden runs, drops test isolation "none", which runs the test files in the test runner's
 * own process, the one whose reporters make the report: each file then runs in a child
 * process (node's default). Node 22 spells it --experimental-test-isolation (later ones
 * --test-isolation too); it is not allowed in NODE_OPTIONS.
 */
function withoutInProcessIsolation(args: string[], hidden: boolean): string[] {
  if (!hidden) return args;
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const name = arg.split("=", 1)[0] as string;
    if (name !== "--test-isolation" && name !== "--experimental-test-isolation") kept.push(arg);
    else if (!arg.includes("=")) i++;
  }
  return kept;
}

/**
 * Drops node's --test-coverage-include/-exclude (and thresholds), which a repository's test
 * script could use to leave the candidate's files out of the measurement.
 */
function withoutCoverageFilters(args: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith("--test-coverage-")) kept.push(arg);
    else if (!arg.includes("=")) i++;
  }
  return kept;
}
