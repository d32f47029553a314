import { readdir } from "node:fs/promises";
import { join, matchesGlob, posix } from "node:path";
import { ava } from "./frameworks/ava";
import { jest } from "./frameworks/jest";
import { mocha } from "./frameworks/mocha";
import { nodeTest } from "./frameworks/node-test";
import { pytest } from "./frameworks/pytest";
import { splitArgs } from "./frameworks/args";
import { type BuildStep, buildFirstArgv, runBuildSteps } from "./frameworks/build";
import { openRepo, type PackageJson, readPackageJson } from "./frameworks/repo";
import { frameworkOfArgv, scriptCommands } from "./frameworks/script";
import { tape } from "./frameworks/tape";
import type { FrameworkModule, ReportFormat, Repo, RunPaths } from "./frameworks/types";
import { uvu } from "./frameworks/uvu";
import { vitest } from "./frameworks/vitest";
import type { Framework, Job } from "../../protocol/jobs";
import type { CoverageDetail } from "./reports";
import { UnsafeInputError } from "./safe-path";
import { lstatNoLinks, readRegularFile } from "./workspace-fs";
import { packageHolding, requirePackageDir, splitChdir, withChdir, workspacePackages } from "./workspaces";
import { checkRelativePath } from "../../protocol/paths";

export { type PackageJson, readManifest, readPackageJson } from "./frameworks/repo";


/**
 * Every framework the protocol names (protocol/jobs.ts, TEST_FRAMEWORKS), each by its module:
 * a framework is added by its module and its line here, and the compiler asks for both.
 */
const REGISTRY: Readonly<Record<Framework, FrameworkModule>> = {
  "node-test": nodeTest, jest, vitest, mocha, ava, tape, uvu, pytest,
};
/** In the order detection asks them when nothing names a runner: config files and dependencies. */
const DECLARED_ORDER: FrameworkModule[] = [vitest, jest, mocha, ava, tape, uvu, pytest];
const MODULES = new Map<Framework, FrameworkModule>(Object.values(REGISTRY).map((m) => [m.name, m]));

/** A framework's module. */
export const frameworkModule = (name: Framework): FrameworkModule => REGISTRY[name];
const EXECUTABLES = new Map<string, Framework>([...MODULES.values()].flatMap((m) => m.executables.map((e) => [e, m.name] as const)));

/**
 * Every framework's harness, whichever framework the run turns out to use: what a candidate
 * adds for another framework (a jest config in a vitest project) is kept out as well.
 */
export const HARNESS_GLOBS: readonly string[] = [...new Set(Object.values(REGISTRY).flatMap((m) => m.harness))];
/** Every framework's internals and the runner's own: a candidate may reach into another framework than the task's. */
export const INTERNALS: readonly string[] = [...new Set(Object.values(REGISTRY).flatMap((m) => m.internals))];

const NODE_TEST_FILE = /(^|[._-])test\.(c|m)?[jt]s$|^test[._-].*\.(c|m)?[jt]s$/;
const PY_TEST_FILE = /^test.*\.py$|_test\.py$/;
const TS_TEST_FILE = /\.(c|m)?tsx?$/;
/** Bounds the walk for test files: a workspace's tree is the repository's. */
const MAX_LISTED_FILES = 50_000;
const SKIPPED_DIRS = new Set(["node_modules", ".git", ".venv", "venv", "__pycache__", "dist", "coverage"]);
const SCRIPT_FILE = /\.(c|m)?[jt]sx?$/;

export interface TestPlan {
  framework: Framework;
  /** The command as the job or the repository states it. */
  command: string[];
  /** The command with report (and coverage) options added, as it is run (after the build, when there is one). */
  argv: string[];
  /** What the test script builds before its tests (frameworks/build.ts), run before them in every run. */
  build: BuildStep[];
  /** The package folder the command runs from (workspace-relative, `env -C`), or "" for the root. */
  cwd: string;
  /**
   * Variables for the test process (pytest's PYTEST_ADDOPTS and PYTHONPATH, a test script's `X=1`).
   * The runner's own sandbox variables win over these.
   */
  env: Record<string, string>;
  /** How the report on the JUnit channel is read (reports.ts, `parseTestReport`). */
  report: ReportFormat;
  /** Per-line coverage to report, for coverage jobs. */
  coverage: CoverageDetail;
}

/** Where the test command writes its reports and finds the runner's reporters, inside the sandbox. */
export type ReportPaths = RunPaths;

interface Detected {
  framework: Framework;
  command: string[] | null;
  env: Record<string, string>;
}

/**
 * Chooses framework and command: the job's explicit settings win over what the repository
 * declares. In a monorepo whose root test script runs no known runner, the package holding
 * every one of `testFiles` (root-relative) is tested with its own script from its folder.
 */
export async function planTests(
  workspace: string, spec: Job["test"], paths: ReportPaths, coverageFiles: string[] = [], testFiles: string[] = [],
): Promise<TestPlan> {
  const rootPkg = await readPackageJson(workspace);
  const chdir = spec.command ? splitChdir(spec.command) : null;
  const cwd = chdir?.dir ?? (spec.command ? "" : await packageToTest(workspace, rootPkg, testFiles));
  if (cwd) await requirePackageDir(workspace, cwd);
  const dir = cwd ? join(workspace, cwd) : workspace;
  const repo = openRepo(dir, cwd ? await readPackageJson(dir) : rootPkg);
  const given = chdir?.command ?? spec.command;
  const stated = given ? frameworkOfArgv(given, EXECUTABLES) : null;
  const declared = await detect(repo);
  const framework = spec.framework !== "auto" ? spec.framework : (stated ?? declared?.framework ?? null);
  if (!framework) throw new UnsafeInputError(given ? `cannot tell which framework ${JSON.stringify(given)} runs; set test.framework` : noFrameworkReason(repo.pkg));
  const module = MODULES.get(framework) as FrameworkModule;
  // A test script for another framework than the job's says nothing about this one's command.
  const scripted = !given && declared?.framework === framework ? declared : null;
  const base = given ?? scripted?.command ?? module.defaultCommand;
  const prefix = module.prefixLength(base);
  // The job's files are root-relative; a command run from a package folder names them from there.
  const jobFiles = spec.files && cwd ? spec.files.map((f) => posix.relative(cwd, f)) : spec.files;
  const { command, files } = await selectFiles(dir, module, base, prefix, jobFiles);
  const detail = spec.coverage ? await coverageTargets(workspace, module.name, coverageFiles) : { dirs: [], unloaded: new Map<string, number>() };
  const invocation = await module.instrument(command, paths, {
    repo,
    coverage: spec.coverage,
    coverageDirs: detail.dirs,
    files: files ?? [],
    typescript: module.name === "node-test" && (await listFiles(dir)).some((f) => TS_TEST_FILE.test(f) && NODE_TEST_FILE.test(posix.basename(f))),
    srcLayout: module.name === "pytest" && (await hasSrcPackages(dir)),
    hidden: spec.canaries === true,
  });
  const build = runBuildSteps(repo.pkg?.scripts ?? {}, (argv) => frameworkOfArgv(argv, EXECUTABLES) !== null);
  return {
    framework: module.name,
    command: withChdir(cwd, command),
    argv: withChdir(cwd, buildFirstArgv(paths, build, invocation.argv)),
    build,
    cwd,
    env: { ...scripted?.env, ...invocation.env },
    report: module.report,
    coverage: { files: spec.coverage ? coverageFiles : [], unloaded: detail.unloaded },
  };
}

/**
 * The workspace package to test from its own folder, or "" for the root: only when the root's
 * test script runs no known runner itself (`npm test --workspaces`, `lerna run test`), since a
 * root runner (jest projects, a vitest workspace) already covers every package.
 */
async function packageToTest(workspace: string, pkg: PackageJson | null, testFiles: string[]): Promise<string> {
  if (testFiles.length === 0) return "";
  const packages = await workspacePackages(workspace, pkg);
  if (packages.length === 0 || (await scriptedRunner(openRepo(workspace, pkg))) !== null) return "";
  return packageHolding(packages, testFiles) ?? "";
}

function noFrameworkReason(pkg: Awaited<ReturnType<typeof readPackageJson>>): string {
  const script = pkg?.scripts?.test;
  const what = script
    ? `package.json's test script (${JSON.stringify(script.slice(0, 200))}) runs no known test runner and no known test runner is in its devDependencies`
    : "package.json has no test script and no known test runner in devDependencies, and there is no pytest configuration or Python test file";
  return `no test framework detected: ${what}; state the framework or test command on import`;
}

/** What the repository declares: its test script first, then config files and dependencies, then test files. */
async function detect(repo: Repo): Promise<Detected | null> {
  const scripted = await scriptedRunner(repo);
  if (scripted) return scripted;
  for (const module of DECLARED_ORDER) if (await module.declared(repo)) return { framework: module.name, command: null, env: {} };
  if (await anyFile(repo.workspace, ["", "src"], (n) => NODE_TEST_FILE.test(n))) return { framework: "node-test", command: null, env: {} };
  if (await anyFile(repo.workspace, ["test", "tests", "__tests__"], (n) => /\.(c|m)?js$/.test(n))) return { framework: "node-test", command: null, env: {} };
  if (await anyFile(repo.workspace, ["", "test", "tests", "src"], (n) => PY_TEST_FILE.test(n))) return { framework: "pytest", command: null, env: {} };
  return null;
}

/** The first runner the test script invokes: a known runner's executable, or plain `node` on a node:test entry file. */
async function scriptedRunner(repo: Repo): Promise<Detected | null> {
  for (const found of scriptCommands(repo.pkg?.scripts ?? {})) {
    const framework = frameworkOfArgv(found.argv, EXECUTABLES);
    if (framework) return { framework, command: framework === "node-test" ? nodeScriptCommand(found.argv) : found.argv, env: found.env };
    if (await runsNodeTestEntry(repo.workspace, found.argv)) return { framework: "node-test", command: found.argv, env: found.env };
  }
  return null;
}

const NODE_TEST_IMPORT = /["']node:test["']/;
const ENTRY_MAX_BYTES = 1024 * 1024;

/**
 * `node [options] test/index.js`: a plain script run by node is a node:test run when the file,
 * or a script beside it that it loads, imports node:test. Node's test runner reports such a
 * run through `--test-reporter` like `node --test` does (node-test.ts runs it under `--test`).
 */
async function runsNodeTestEntry(dir: string, argv: string[]): Promise<boolean> {
  if ((argv[0] ?? "") !== "node") return false;
  const entry = splitArgs(argv.slice(1), nodeTest.valuedOptions).positional[0];
  const verdict = entry === undefined ? null : checkRelativePath(entry);
  if (!verdict?.ok || !SCRIPT_FILE.test(verdict.path) || !(await lstatNoLinks(dir, verdict.path))?.isFile()) return false;
  const folder = posix.dirname(verdict.path);
  const names = folder === "." || (await lstatNoLinks(dir, folder))?.isDirectory() ? await readdir(join(dir, folder)).catch(() => [] as string[]) : [];
  const candidates = [posix.basename(verdict.path), ...names.filter((n) => SCRIPT_FILE.test(n) && n !== posix.basename(verdict.path)).slice(0, 50)];
  for (const name of candidates) {
    const text = await readRegularFile(join(dir, folder, name), ENTRY_MAX_BYTES);
    if (text && NODE_TEST_IMPORT.test(text.toString("utf8"))) return true;
  }
  return false;
}

/** A `node --test …` script as it is run: odd arguments make it plain `node --test`. */
function nodeScriptCommand(argv: string[]): string[] {
  if (argv.some((t) => !/^[\w@./*=:,+{}-]+$/.test(t))) return ["node", "--test"];
  return ["node", ...argv.slice(1).filter((t) => !t.startsWith("--test-reporter"))];
}

async function anyFile(workspace: string, dirs: string[], matches: (name: string) => boolean): Promise<boolean> {
  for (const dir of dirs) {
    // A linked directory is not the repository's own: never listed through.
    if (dir !== "" && !(await lstatNoLinks(workspace, dir))?.isDirectory()) continue;
    const names = await readdir(join(workspace, dir)).catch(() => [] as string[]);
    if (names.some(matches)) return true;
  }
  return false;
}

/** `src/<pkg>/` with Python files in it: a src layout. */
async function hasSrcPackages(workspace: string): Promise<boolean> {
  if (!(await lstatNoLinks(workspace, "src"))?.isDirectory()) return false;
  const entries = await readdir(join(workspace, "src"), { withFileTypes: true });
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const inner = await readdir(join(workspace, "src", entry.name)).catch(() => [] as string[]);
    if (inner.some((n) => n.endsWith(".py"))) return true;
  }
  return false;
}

/**
 * The command to run and, for frameworks run one file per process, its files. Job files
 * replace the command's file arguments; otherwise a per-file framework's files come from the
 * command's globs, directories and files, or the framework's defaults. Patterns are matched
 * against the workspace's own tree (links are never followed).
 */
async function selectFiles(
  workspace: string, module: FrameworkModule, command: string[], prefix: number, jobFiles: string[] | null,
): Promise<{ command: string[]; files: string[] | null }> {
  const head = command.slice(0, prefix);
  const args = command.slice(prefix);
  const { options, positional } = splitArgs(args, module.valuedOptions);
  if (jobFiles) {
    if (module.perFile) return { command: [...head, ...options], files: jobFiles };
    return { command: [...head, ...options, ...(module.fileArguments?.(jobFiles) ?? jobFiles)], files: null };
  }
  if (!module.perFile) return { command, files: null };
  const all = await listFiles(workspace);
  const selected = new Set<string>();
  for (const arg of positional.length > 0 ? positional : module.defaultPatterns) {
    const pattern = posix.normalize(arg).replace(/^\.\//, "").replace(/\/$/, "");
    for (const file of all) {
      const inDir = file.startsWith(`${pattern}/`) && SCRIPT_FILE.test(file) && !posix.basename(file).startsWith("_");
      if (file === pattern || inDir || matchesGlob(file, pattern)) selected.add(file);
    }
  }
  return { command: [...head, ...options], files: [...selected].sort() };
}

/** Workspace-relative regular files, without dependency and build directories; links are not followed. */
async function listFiles(workspace: string): Promise<string[]> {
  const files: string[] = [];
  const pending = [""];
  while (pending.length > 0 && files.length < MAX_LISTED_FILES) {
    const dir = pending.pop() as string;
    const entries = await readdir(join(workspace, dir), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name) && !entry.name.startsWith(".")) pending.push(rel);
      else if (entry.isFile()) files.push(rel);
    }
  }
  return files;
}

const COUNTED_FILE_MAX_BYTES = 16 * 1024 * 1024;

/**
 * What the framework needs to report the job's coverage_files even when the tests never
 * load them. pytest-cov reports unimported files only from its source directories (and
 * only inside packages), so each requested file's directory becomes one. The JavaScript
 * frameworks report only files they loaded; the line count of the others (every line, as
 * node counts) is read now, before any candidate code has run in the workspace.
 */
async function coverageTargets(workspace: string, framework: Framework, files: string[]): Promise<{ dirs: string[]; unloaded: Map<string, number> }> {
  const dirs = new Set<string>();
  const unloaded = new Map<string, number>();
  for (const file of files) {
    if (framework === "pytest") {
      const dir = posix.dirname(file);
      if (file.endsWith(".py") && dir !== "." && (await lstatNoLinks(workspace, dir))?.isDirectory()) dirs.add(dir);
    } else if (SCRIPT_FILE.test(file) && !file.split("/").includes("node_modules")) {
      if (!(await lstatNoLinks(workspace, file))?.isFile()) continue;
      const content = await readRegularFile(join(workspace, file), COUNTED_FILE_MAX_BYTES);
      if (content) unloaded.set(file, lineCount(content));
    }
  }
  return { dirs: [...dirs], unloaded };
}

function lineCount(content: Buffer): number {
  let lines = 0;
  for (const byte of content) if (byte === 0x0a) lines++;
  return content.length > 0 && content[content.length - 1] !== 0x0a ? lines + 1 : lines;
}
