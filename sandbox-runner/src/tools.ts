import { existsSync, readFileSync } from "node:fs";
import { chmod, copyFile, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { runTool } from "./run-tool";

/** Files the sandbox finds in its tools directory, from sandbox-runner/src/tools. */
const TOOL_FILES = [
  "eslint-report.mjs", "pyflakes-report.py", "assay_pytest.py", "coveragerc", "egress-bridge.mjs", "junit-reporter.mjs", "lcov-reporter.mjs",
  "run-tests.mjs", "build-first.mjs", "jest-reporter.mjs", "jest-launcher.mjs", "vitest-reporter.mjs", "uvu-hook.mjs", "junit-xml.mjs",
  "mocha-launcher.mjs", "mocha-reporter.cjs", "locate-bin.mjs",
];
const SOURCE_DIR = join(dirname(fileURLToPath(import.meta.url)), "tools");
/** What eslint-report.mjs imports; their dependencies are found and copied along. */
const LINT_PACKAGES = ["eslint", "@eslint/js", "typescript-eslint", "typescript"];
/** What run-tests.mjs imports to turn V8 coverage into lcov. */
const COVERAGE_PACKAGES = ["v8-to-istanbul", "istanbul-lib-coverage"];
const STAMP = ".assay-stamp";

/** The node_modules directory the runner's own ESLint resolves from, or null. */
export function defaultLintModules(): string | null {
  return modulesWith("eslint");
}

/** The nearest node_modules above the runner's source that holds `name`, or null. */
function modulesWith(name: string): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "node_modules", name, "package.json"))) return join(dir, "node_modules");
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * Fills `dir` (bound read-only into every sandbox) with the lint wrappers, the test driver
 * and reporters, the coverage config, and a copy of ESLint's packages and of the coverage
 * converter's (the runner's own dependencies). A copy, because the packages may sit in a
 * checkout the sandbox users cannot enter. Returns why ESLint is unavailable, or null.
 */
export async function prepareTools(dir: string, lintModules: string | null): Promise<string | null> {
  await mkdir(dir, { recursive: true });
  await chmod(dir, 0o755);
  for (const name of TOOL_FILES) {
    await copyFile(join(SOURCE_DIR, name), join(dir, name));
    await chmod(join(dir, name), 0o644);
  }
  const sources: PackageSource[] = [];
  const coverageModules = modulesWith(COVERAGE_PACKAGES[0] as string);
  if (coverageModules) sources.push({ modules: resolve(coverageModules), packages: packageClosure(resolve(coverageModules), COVERAGE_PACKAGES) });
  let lintProblem: string | null = "no ESLint installation found (set RUNNER_LINT_MODULES)";
  if (lintModules) {
    try {
      sources.push({ modules: resolve(lintModules), packages: packageClosure(resolve(lintModules), LINT_PACKAGES) });
      lintProblem = null;
    } catch (err) {
      lintProblem = err instanceof Error ? err.message : String(err);
    }
  }
  try {
    await copyPackages(sources, join(dir, "node_modules"));
    return lintProblem;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** Packages (relative to `modules`) to copy from one node_modules directory. */
interface PackageSource {
  modules: string;
  packages: string[];
}

async function copyPackages(sources: PackageSource[], target: string): Promise<void> {
  const stamp = JSON.stringify(sources.map((s) => s.packages.map((p) => `${p}@${versionOf(join(s.modules, p))}`)));
  if ((await readFile(join(target, STAMP), "utf8").catch(() => null)) === stamp) return;
  const staging = `${target}.tmp`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging);
  for (const { modules, packages } of sources) {
    // Hard links make this nearly free on the same file system; across file systems, or where
    // protected_hardlinks refuses them, it is a real copy.
    await runTool("cp", ["-R", "--link", "--parents", "--", ...packages, staging], modules).catch(() =>
      runTool("cp", ["-R", "--parents", "--remove-destination", "--", ...packages, staging], modules),
    );
  }
  await writeFile(join(staging, STAMP), stamp);
  await rm(target, { recursive: true, force: true });
  await rename(staging, target);
}

/**
 * The packages `roots` need, as paths relative to `modules`, found the way Node resolves
 * them (nested node_modules first, then upwards, never above `modules`). Nested packages
 * come with their parent's directory, so only top-level ones are listed.
 */
export function packageClosure(modules: string, roots: string[]): string[] {
  const seen = new Set<string>();
  const pending = roots.map((name) => {
    const dir = join(modules, name);
    if (!existsSync(join(dir, "package.json"))) throw new Error(`${name} is not installed in ${modules}`);
    return dir;
  });
  while (pending.length > 0) {
    const dir = pending.pop() as string;
    if (seen.has(dir)) continue;
    seen.add(dir);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;
    for (const name of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies })) {
      const found = findPackage(modules, dir, name);
      if (found) pending.push(found);
    }
  }
  return [...seen].map((dir) => relative(modules, dir)).filter((rel) => !rel.split(sep).includes("node_modules"));
}

function findPackage(modules: string, from: string, name: string): string | null {
  const top = dirname(modules);
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (basename(dir) !== "node_modules" && existsSync(join(candidate, "package.json"))) return candidate;
    if (dir === top || dir === dirname(dir)) return null;
  }
}

export function versionOf(dir: string): string {
  return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version?: string }).version ?? "?";
}
