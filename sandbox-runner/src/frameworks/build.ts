import { z } from "zod";
import type { RunPaths } from "./types";
import { scriptReference, scriptSegments } from "./script";

/**
 * The build a test script takes before its tests (docs/runner-protocol.md, "Builds"):
 * `npm run build && node --test`, `tsc -p . && jest`, a `pretest` of `npm run build`. The
 * tests then import the build's output, which no snapshot or environment holds (it is
 * gitignored, and only dependencies are cached), so every test job runs the build first, in
 * the same sandbox run as its tests and after the candidate's files are written.
 */

/** One build step: a script of the repository's package.json, or a build tool from its dependencies. */
export type BuildStep =
  /** `npm run <script>`, run by the runner's own npm. */
  | { name: string; script: string; env: Record<string, string> }
  /** A known build tool's command as the script writes it (`tsc -p .`), found on the test's PATH like the test runner. */
  | { name: string; argv: string[]; env: Record<string, string> };

/** Scripts named as builds: `build`, `build:esm`, `compile`, `bundle`, … */
const BUILD_SCRIPT = /^(build|compile|transpile|bundle)([:._-].*)?$/;
/** Executables that only build (compile, transpile, bundle) the package. */
const BUILD_TOOLS = new Set(["tsc", "tspc", "babel", "rollup", "esbuild", "webpack", "tsup", "swc", "unbuild", "microbundle", "pkgroll", "tshy"]);
/** Tools whose `build` subcommand builds: `vite build`, `ncc build src/index.ts`. */
const BUILD_SUBCOMMAND_TOOLS = new Set(["vite", "parcel", "ncc"]);
/** Options that make a build tool check or watch rather than build: it would emit nothing, or never end. */
const NOT_A_BUILD = new Set(["--noEmit", "--noEmit=true", "--watch", "-w", "--watchAll", "--help", "-h", "--version", "-v"]);
const MAX_DEPTH = 4;

/**
 * The build steps of `scripts[name]` before its test runner (`isRunner`), `pre<name>`'s first,
 * as npm runs them. A step referring to another script (`npm run build`, `yarn compile`)
 * runs that script when it is named as a build or itself builds; a script that leads to the
 * runner is followed into. Everything else before the runner (lint, type checks, clean-ups)
 * is not run: it decides nothing about the tests' outcomes.
 */
export function buildSteps(scripts: Record<string, string>, isRunner: (argv: string[]) => boolean, name = "test", depth = 0): BuildStep[] {
  if (depth > MAX_DEPTH) return [];
  const steps = scripts[`pre${name}`] === undefined ? [] : builds(scripts, `pre${name}`, depth);
  for (const segment of scriptSegments(scripts[name] ?? "")) {
    const referenced = scriptReference(segment.argv, scripts);
    if (referenced !== null) {
      if (referenced === name) continue;
      if (leadsTo(scripts, referenced, isRunner, depth + 1)) return [...steps, ...buildSteps(scripts, isRunner, referenced, depth + 1)];
      // `npm run build --if-present` without a build script builds nothing.
      if (Object.hasOwn(scripts, referenced) && isBuildScript(scripts, referenced, depth + 1)) steps.push({ name: `npm run ${referenced}`, script: referenced, env: segment.env });
      continue;
    }
    if (isRunner(segment.argv)) break;
    if (isBuildTool(segment.argv)) steps.push({ name: segment.argv.join(" "), argv: segment.argv, env: segment.env });
  }
  return steps;
}

/**
 * The builds every run takes: the test script's; else those of `prepare`, which the install
 * ran at the base commit. Its output is then in the environment the install left, built from
 * the base's sources: without building again, the candidate's changes would never reach tests
 * that import the build.
 */
export function runBuildSteps(scripts: Record<string, string>, isRunner: (argv: string[]) => boolean): BuildStep[] {
  const forTests = buildSteps(scripts, isRunner);
  return forTests.length > 0 ? forTests : builds(scripts, "prepare", 0);
}

/** The build steps of a script that runs no tests (`pretest`, `prepare`): every one of its builds. */
function builds(scripts: Record<string, string>, name: string, depth: number): BuildStep[] {
  return buildSteps(scripts, () => false, name, depth + 1);
}

function leadsTo(scripts: Record<string, string>, name: string, isRunner: (argv: string[]) => boolean, depth: number): boolean {
  if (depth > MAX_DEPTH) return false;
  return scriptSegments(scripts[name] ?? "").some((s) => {
    const referenced = scriptReference(s.argv, scripts);
    return referenced === null ? isRunner(s.argv) : referenced !== name && leadsTo(scripts, referenced, isRunner, depth + 1);
  });
}

/** A script named as a build, or one that runs a build tool (directly or through a script it runs). */
function isBuildScript(scripts: Record<string, string>, name: string, depth: number): boolean {
  if (BUILD_SCRIPT.test(name)) return true;
  if (depth > MAX_DEPTH) return false;
  return scriptSegments(scripts[name] ?? "").some((s) => {
    const referenced = scriptReference(s.argv, scripts);
    return referenced === null ? isBuildTool(s.argv) : referenced !== name && isBuildScript(scripts, referenced, depth + 1);
  });
}

function isBuildTool(argv: string[]): boolean {
  const exe = (argv[0] ?? "").split("/").pop() ?? "";
  if (argv.some((a) => NOT_A_BUILD.has(a))) return false;
  if (BUILD_TOOLS.has(exe)) return true;
  if (BUILD_SUBCOMMAND_TOOLS.has(exe)) return argv[1] === "build";
  // `node scripts/build.mjs`: the repository's own build script.
  return exe === "node" && argv.length === 2 && /(^|\/)(build|compile|bundle)[\w.-]*\.(c|m)?js$/.test(argv[1] as string);
}

/**
 * The command that runs the build, then the tests (tools/build-first.mjs): the build's
 * output goes to the run's log, and a failed step stops the run before any test, with a
 * record on the JUnit channel that `buildFailure` reads.
 */
export function buildFirstArgv(paths: RunPaths, steps: BuildStep[], command: string[]): string[] {
  if (steps.length === 0) return command;
  return [paths.node, `${paths.tools}/build-first.mjs`, JSON.stringify({ steps, junit: paths.junit }), ...command];
}

/** How much of a failed step's output the record carries: the end of it, where compilers put the summary. */
export const BUILD_OUTPUT_TAIL_CHARS = 2000;

const failureSchema = z.strictObject({
  build_failed: z.strictObject({
    step: z.string().max(1000),
    exit_code: z.number().int().nullable(),
    signal: z.string().max(32).nullable(),
    error: z.string().max(1000).nullable(),
    output_tail: z.string().max(BUILD_OUTPUT_TAIL_CHARS * 4),
  }),
});
export type BuildFailure = z.infer<typeof failureSchema>["build_failed"];

/** The record a failed build step left on the JUnit channel, or null when the channel holds anything else (a report). */
export function buildFailure(report: string): BuildFailure | null {
  if (!report.trimStart().startsWith('{"build_failed"')) return null;
  try {
    return failureSchema.safeParse(JSON.parse(report)).data?.build_failed ?? null;
  } catch {
    return null;
  }
}

/** The reason of a run whose build failed: the step, how it ended, and the end of its output. */
export function describeBuildFailure(failure: BuildFailure): string {
  const how = failure.error ?? (failure.exit_code === null ? `it was ended by ${failure.signal ?? "a signal"}` : `exit code ${failure.exit_code}`);
  const output = failure.output_tail.trim();
  return `the build step \`${failure.step}\` failed (${how}), so no test ran${output ? `; the end of its output:\n${output}` : ""}`;
}
