import { readdir } from "node:fs/promises";
import { join, matchesGlob, posix } from "node:path";
import { checkRelativePath } from "../../protocol/paths";
import { readManifest, type PackageJson } from "./frameworks/repo";
import { UnsafeInputError } from "./safe-path";
import { lstatNoLinks } from "./workspace-fs";

/**
 * Monorepos (docs/runner-protocol.md, "Workspaces"): the packages a repository declares, the
 * one that holds a pull request's tests, and how a command names the package folder it runs
 * from. That folder travels inside the command as GNU env's `-C DIR` (`env -C packages/b node
 * test/index.js`), so the task's stored command runs the same way in every later job, and the
 * test process's own argv is untouched (env replaces itself with the command).
 */

/** Bounds the walk for package folders: `packages/*` and `packages/*\/*` are as deep as real layouts go. */
const MAX_PACKAGE_DEPTH = 3;
const MAX_PACKAGES = 1000;

/** The package folders `workspaces` (npm, yarn) or pnpm-workspace.yaml declare, workspace-relative and sorted. */
export async function workspacePackages(workspace: string, pkg: PackageJson | null): Promise<string[]> {
  const patterns = [...declaredPatterns(pkg), ...pnpmPatterns((await readManifest(workspace, "pnpm-workspace.yaml")) ?? "")];
  const included = patterns.filter((p) => !p.startsWith("!")).map(normalizePattern);
  const excluded = patterns.filter((p) => p.startsWith("!")).map((p) => normalizePattern(p.slice(1)));
  if (included.length === 0) return [];
  const found: string[] = [];
  const pending: Array<{ dir: string; depth: number }> = [{ dir: "", depth: 0 }];
  while (pending.length > 0 && found.length < MAX_PACKAGES) {
    const { dir, depth } = pending.shift() as { dir: string; depth: number };
    if (dir !== "" && included.some((p) => matchesGlob(dir, p)) && !excluded.some((p) => matchesGlob(dir, p)) && (await lstatNoLinks(workspace, `${dir}/package.json`))?.isFile()) {
      found.push(dir);
    }
    if (depth >= MAX_PACKAGE_DEPTH) continue;
    // Package folders are the repository's own: a linked directory is never listed through.
    const entries = await readdir(join(workspace, dir), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (entry.isDirectory() && entry.name !== "node_modules" && !entry.name.startsWith(".")) pending.push({ dir: dir ? `${dir}/${entry.name}` : entry.name, depth: depth + 1 });
    }
  }
  return found.sort();
}

function declaredPatterns(pkg: PackageJson | null): string[] {
  const field = pkg?.workspaces;
  const list = Array.isArray(field) ? field : typeof field === "object" && field !== null && Array.isArray((field as { packages?: unknown }).packages) ? (field as { packages: unknown[] }).packages : [];
  return list.filter((p): p is string => typeof p === "string");
}

/** The `packages:` list of pnpm-workspace.yaml: plain `- 'glob'` items are all it holds in practice. */
function pnpmPatterns(yaml: string): string[] {
  const block = /^packages:\s*\n((?:[ \t]+-.*\n?|[ \t]*#.*\n?|[ \t]*\n)*)/m.exec(yaml)?.[1] ?? "";
  return [...block.matchAll(/^[ \t]+-[ \t]*["']?([^"'#\n]+?)["']?[ \t]*(?:#.*)?$/gm)].map((m) => (m[1] as string).trim());
}

function normalizePattern(pattern: string): string {
  return posix.normalize(pattern).replace(/^\.\//, "").replace(/\/+$/, "");
}

/** The one package folder holding every test file, or null when they are outside the packages or span several. */
export function packageHolding(packages: string[], files: string[]): string | null {
  const holders = new Set<string | null>();
  for (const file of files) {
    const holder = packages.filter((p) => file.startsWith(`${p}/`)).sort((a, b) => b.length - a.length)[0] ?? null;
    holders.add(holder);
  }
  const [only] = holders;
  return holders.size === 1 && only !== undefined ? only : null;
}

/** A command that runs from a package folder: `env -C DIR …` or `env --chdir=DIR …`. */
export interface Chdir {
  dir: string;
  command: string[];
}

/** The package folder a command names and the command after it, or null when it names none. */
export function splitChdir(command: string[]): Chdir | null {
  if ((command[0] ?? "").split("/").pop() !== "env") return null;
  const [flag, value] = [command[1] ?? "", command[2]];
  const dir = flag === "-C" || flag === "--chdir" ? value : flag.startsWith("--chdir=") ? flag.slice("--chdir=".length) : null;
  if (dir === null || dir === undefined) return null;
  const rest = command.slice(flag.includes("=") ? 2 : 3);
  if (rest.length === 0) throw new UnsafeInputError(`${JSON.stringify(command)} names no command after the folder`);
  const verdict = checkRelativePath(dir);
  if (!verdict.ok) throw new UnsafeInputError(`the test command's folder is refused: ${verdict.reason}`);
  return { dir: verdict.path, command: rest };
}

export const withChdir = (dir: string, command: string[]): string[] => (dir ? ["env", "-C", dir, ...command] : command);

/** A package folder the run may start in: a directory of the repository's own tree, reached through no link. */
export async function requirePackageDir(workspace: string, dir: string): Promise<void> {
  if (!(await lstatNoLinks(workspace, dir))?.isDirectory()) throw new UnsafeInputError(`the test command's folder ${JSON.stringify(dir)} is not a directory of the repository`);
}
