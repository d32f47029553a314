import { existsSync, readFileSync } from "node:fs";
import { chmod, copyFile, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { runTool } from "./run-tool";

/** Files the sandbox finds in its tools directory, from sandbox-runner/src/tools. */
const TOOL_FILES = ["eslint-report.mjs", "pyflakes-report.py", "coveragerc", "egress-bridge.mjs", "junit-reporter.mjs", "lcov-reporter.mjs"];
const SOURCE_DIR = join(dirname(fileURLToPath(import.meta.url)), "tools");
/** What eslint-report.mjs imports; their dependencies are found and copied along. */
const LINT_PACKAGES = ["eslint", "@eslint/js", "typescript-eslint", "typescript"];
const STAMP = ".assay-stamp";

/** The node_modules directory the runner's own ESLint resolves from, or null. */
export function defaultLintModules(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "node_modules", "eslint", "package.json"))) return join(dir, "node_modules");
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * Fills `dir` (bound read-only into every sandbox) with the lint wrappers, the coverage
 * config and a copy of ESLint's packages. A copy, because the packages may sit in a checkout
 * the sandbox users cannot enter. Returns why ESLint is unavailable, or null.
 */
export async function prepareTools(dir: string, lintModules: string | null): Promise<string | null> {
  await mkdir(dir, { recursive: true });
  await chmod(dir, 0o755);
  for (const name of TOOL_FILES) {
    await copyFile(join(SOURCE_DIR, name), join(dir, name));
    await chmod(join(dir, name), 0o644);
  }
  if (!lintModules) return "no ESLint installation found (set RUNNER_LINT_MODULES)";
  try {
    await copyPackages(lintModules, join(dir, "node_modules"));
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

async function copyPackages(lintModules: string, target: string): Promise<void> {
  const packages = packageClosure(resolve(lintModules), LINT_PACKAGES);
  const stamp = JSON.stringify(packages.map((p) => `${p}@${versionOf(join(lintModules, p))}`));
  if ((await readFile(join(target, STAMP), "utf8").catch(() => null)) === stamp) return;
  const staging = `${target}.tmp`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging);
  // Hard links make this nearly free on the same file system; across file systems, or where
  // protected_hardlinks refuses them, it is a real copy.
  await runTool("cp", ["-R", "--link", "--parents", "--", ...packages, staging], lintModules).catch(async () => {
    await rm(staging, { recursive: true, force: true });
    await mkdir(staging);
    await runTool("cp", ["-R", "--parents", "--", ...packages, staging], lintModules);
  });
  await writeFile(join(staging, STAMP), stamp);
  await rm(target, { recursive: true, force: true });
  await rename(staging, target);
}

/**
 * The packages `roots` need, as paths relative to `modules`, found the way Node resolves
 * them (nested node_modules first, then upwards, never above `modules`). Nested packages
 * come with their parent's directory, so only top-level ones are listed.
 */
function packageClosure(modules: string, roots: string[]): string[] {
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

function versionOf(dir: string): string {
  return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version?: string }).version ?? "?";
}
