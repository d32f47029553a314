import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { Framework, Job } from "./job-schema";
import { UnsafeInputError } from "./safe-path";
import { readRegularFile } from "./workspace-fs";

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

export async function detectFramework(workspace: string): Promise<Framework | null> {
  const pkg = await readPackageJson(workspace);
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
}

export interface ReportPaths {
  junit: string;
  lcov: string;
}

/** Chooses framework and command: the job's explicit settings win over what the repository suggests. */
export async function planTests(workspace: string, spec: Job["test"], reports: ReportPaths): Promise<TestPlan> {
  const framework =
    (spec.framework !== "auto" ? spec.framework : null) ??
    (spec.command ? frameworkOfCommand(spec.command) : null) ??
    (await detectFramework(workspace));
  if (!framework) {
    throw new UnsafeInputError(
      spec.command
        ? `cannot tell which framework ${JSON.stringify(spec.command)} runs; set test.framework`
        : "no test framework detected (looked for node:test and pytest layouts); set test.framework",
    );
  }
  const command = spec.command ?? (framework === "node-test" ? ["node", ...(nodeTestScriptArgs(await readPackageJson(workspace)) ?? ["--test"])] : ["python3", "-m", "pytest"]);
  return { framework, command, argv: instrument(framework, command, reports, spec.coverage) };
}

function instrument(framework: Framework, command: string[], reports: ReportPaths, coverage: boolean): string[] {
  if (framework === "pytest") {
    const extra = [`--junitxml=${reports.junit}`, "-o", "junit_family=xunit1", "-p", "no:cacheprovider"];
    if (coverage) extra.push("--cov=.", `--cov-report=lcov:${reports.lcov}`);
    return [...command, ...extra];
  }
  const [exe, ...rest] = command;
  if ((exe ?? "").split("/").pop() !== "node") return command;
  const extra = [
    "--test-reporter=spec", "--test-reporter-destination=stdout",
    "--test-reporter=junit", `--test-reporter-destination=${reports.junit}`,
  ];
  if (coverage) extra.push("--experimental-test-coverage", "--test-reporter=lcov", `--test-reporter-destination=${reports.lcov}`);
  return [exe as string, ...extra, ...rest];
}
