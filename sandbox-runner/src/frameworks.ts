import { readdir } from "node:fs/promises";
import { join, posix } from "node:path";
import { z } from "zod";
import type { Framework, Job } from "./job-schema";
import type { CoverageDetail } from "./reports";
import { UnsafeInputError } from "./safe-path";
import { lstatNoLinks, readRegularFile } from "./workspace-fs";

const packageJsonSchema = z.looseObject({
  scripts: z.record(z.string(), z.string()).optional(),
  dependencies: z.record(z.string(), z.unknown()).optional(),
  devDependencies: z.record(z.string(), z.unknown()).optional(),
  optionalDependencies: z.record(z.string(), z.unknown()).optional(),
});
export type PackageJson = z.infer<typeof packageJsonSchema>;

const MANIFEST_MAX_BYTES = 1024 * 1024;
const NODE_TEST_FILE = /(^|[._-])test\.(c|m)?js$|^test[._-].*\.(c|m)?js$/;
const PY_TEST_FILE = /^test_.*\.py$|_test\.py$/;

export async function readManifest(workspace: string, name: string): Promise<string | null> {
  return (await readRegularFile(join(workspace, name), MANIFEST_MAX_BYTES))?.toString("utf8") ?? null;
}

export async function readPackageJson(workspace: string): Promise<PackageJson | null> {
  const text = await readManifest(workspace, "package.json");
  if (text === null) return null;
  try {
    const parsed = packageJsonSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The arguments after `node` when the test script is a plain `node --test …` invocation. */
function nodeTestScriptArgs(pkg: PackageJson | null): string[] | null {
  const script = pkg?.scripts?.test?.trim();
  if (!script) return null;
  const tokens = script.split(/\s+/);
  if (tokens[0] !== "node" || !tokens.includes("--test")) return null;
  if (tokens.some((t) => !/^[\w@./*=:,+-]+$/.test(t))) return ["--test"];
  return tokens.slice(1).filter((t) => !t.startsWith("--test-reporter"));
}

async function hasPytestConfig(workspace: string): Promise<boolean> {
  if ((await readManifest(workspace, "pytest.ini")) !== null) return true;
  if ((await readManifest(workspace, "conftest.py")) !== null) return true;
  if ((await readManifest(workspace, "pyproject.toml"))?.includes("[tool.pytest")) return true;
  if ((await readManifest(workspace, "setup.cfg"))?.includes("[tool:pytest]")) return true;
  return (await readManifest(workspace, "tox.ini"))?.includes("[pytest]") ?? false;
}

async function anyFile(workspace: string, dirs: string[], matches: (name: string) => boolean): Promise<boolean> {
  for (const dir of dirs) {
    const names = await readdir(join(workspace, dir)).catch(() => [] as string[]);
    if (names.some(matches)) return true;
  }
  return false;
}

const hasNodeTests = async (ws: string) =>
  (await anyFile(ws, ["", "src"], (n) => NODE_TEST_FILE.test(n))) ||
  (await anyFile(ws, ["test", "tests", "__tests__"], (n) => /\.(c|m)?js$/.test(n)));

const hasPythonTests = (ws: string) => anyFile(ws, ["", "test", "tests", "src"], (n) => PY_TEST_FILE.test(n));

async function detectFramework(workspace: string, pkg: PackageJson | null): Promise<Framework | null> {
  if (nodeTestScriptArgs(pkg)) return "node-test";
  if (await hasPytestConfig(workspace)) return "pytest";
  if (await hasNodeTests(workspace)) return "node-test";
  if (await hasPythonTests(workspace)) return "pytest";
  return null;
}

function frameworkOfCommand(command: string[]): Framework | null {
  const exe = (command[0] ?? "").split("/").pop() ?? "";
  if (exe === "node" && command.includes("--test")) return "node-test";
  if (exe === "pytest" || exe === "py.test") return "pytest";
  if (/^python[\d.]*$/.test(exe) && command[1] === "-m" && command[2] === "pytest") return "pytest";
  return null;
}

export interface TestPlan {
  framework: Framework;
  /** The command as the job or the repository states it. */
  command: string[];
  /** The command with report (and coverage) options added, as it is run. */
  argv: string[];
  /** Per-line coverage to report, for coverage jobs. */
  coverage: CoverageDetail;
}

/** Where the test command writes its reports and finds the runner's reporters, inside the sandbox. */
export interface ReportPaths {
  /** FIFOs of the report channel (report-channel.ts). */
  junit: string;
  lcov: string;
  /** coverage.py settings used instead of the repository's (which could omit files). */
  coverageConfig: string;
  /** node:test reporters that write the JUnit and lcov reports to the FIFOs (tools/). */
  nodeJunitReporter: string;
  nodeLcovReporter: string;
}

/** Chooses framework and command: the job's explicit settings win over what the repository suggests. */
export async function planTests(workspace: string, spec: Job["test"], reports: ReportPaths, coverageFiles: string[] = []): Promise<TestPlan> {
  const pkg = await readPackageJson(workspace);
  const framework =
    (spec.framework !== "auto" ? spec.framework : null) ??
    (spec.command ? frameworkOfCommand(spec.command) : null) ??
    (await detectFramework(workspace, pkg));
  if (!framework) {
    throw new UnsafeInputError(
      spec.command
        ? `cannot tell which framework ${JSON.stringify(spec.command)} runs; set test.framework`
        : "no test framework detected (looked for node:test and pytest layouts); set test.framework",
    );
  }
  const stated = spec.command ?? (framework === "node-test" ? ["node", ...(nodeTestScriptArgs(pkg) ?? ["--test"])] : ["python3", "-m", "pytest"]);
  const command = spec.files ? withFiles(framework, stated, spec.files) : stated;
  const detail = spec.coverage ? await coverageTargets(workspace, framework, coverageFiles) : { dirs: [], unloaded: new Map<string, number>() };
  return {
    framework,
    command,
    argv: instrument(framework, command, reports, spec.coverage, detail.dirs),
    coverage: { files: spec.coverage ? coverageFiles : [], unloaded: detail.unloaded },
  };
}

/**
 * The command with its file and directory arguments replaced by `files`: the framework's
 * prefix (`node`, `pytest`, `python -m pytest`) and its options are kept. Option values must
 * be given as `--name=value`; a separate value would be taken for a file and dropped.
 */
function withFiles(framework: Framework, command: string[], files: string[]): string[] {
  const prefix = framework === "pytest" && /^python[\d.]*$/.test((command[0] ?? "").split("/").pop() ?? "") ? 3 : 1;
  const options = command.slice(prefix).filter((arg) => arg.startsWith("-"));
  return [...command.slice(0, prefix), ...options, ...(framework === "pytest" ? ["--"] : []), ...files];
}

function instrument(framework: Framework, command: string[], reports: ReportPaths, coverage: boolean, coverageDirs: string[]): string[] {
  if (framework === "pytest") {
    const extra = [`--junitxml=${reports.junit}`, "-o", "junit_family=xunit1", "-p", "no:cacheprovider"];
    if (coverage) {
      extra.push("--cov=.", ...coverageDirs.map((dir) => `--cov=${dir}`), `--cov-config=${reports.coverageConfig}`, `--cov-report=lcov:${reports.lcov}`);
    }
    // Options go before a "--" that ends them, so they are never taken for test files.
    const end = command.indexOf("--");
    return end < 0 ? [...command, ...extra] : [...command.slice(0, end), ...extra, ...command.slice(end)];
  }
  const [exe, ...rest] = command;
  if ((exe ?? "").split("/").pop() !== "node") return command;
  // The runner's reporters write to their FIFOs themselves; "stdout" only gives them somewhere
  // to yield nothing to.
  const extra = [
    "--test-reporter=spec", "--test-reporter-destination=stdout",
    `--test-reporter=${reports.nodeJunitReporter}`, "--test-reporter-destination=stdout",
  ];
  if (coverage) extra.push("--experimental-test-coverage", `--test-reporter=${reports.nodeLcovReporter}`, "--test-reporter-destination=stdout");
  return [exe as string, ...extra, ...(coverage ? withoutCoverageFilters(rest) : rest)];
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

const NODE_SOURCE = /\.(c|m)?js$/;
const COUNTED_FILE_MAX_BYTES = 16 * 1024 * 1024;

/**
 * What the framework needs to report the job's coverage_files even when the tests never
 * load them. pytest-cov reports unimported files only from its source directories (and
 * only inside packages), so each requested file's directory becomes one. node reports only
 * files it loaded; the line count of the others (every line, as node counts) is read now,
 * before any candidate code has run in the workspace.
 */
async function coverageTargets(workspace: string, framework: Framework, files: string[]): Promise<{ dirs: string[]; unloaded: Map<string, number> }> {
  const dirs = new Set<string>();
  const unloaded = new Map<string, number>();
  for (const file of files) {
    if (framework === "pytest" && file.endsWith(".py")) {
      const dir = posix.dirname(file);
      if (dir !== "." && (await lstatNoLinks(workspace, dir))?.isDirectory()) dirs.add(dir);
    } else if (framework === "node-test" && NODE_SOURCE.test(file) && !file.split("/").includes("node_modules")) {
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
