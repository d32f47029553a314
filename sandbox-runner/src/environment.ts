import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";
import { ensureWorkspaceDirectory, writeWorkspaceFile, writeWorkspaceLink } from "./workspace-fs";

/**
 * What a prepare job keeps of an install, and how a test job gets it back (docs/runner-protocol.md,
 * "Environments"). An install leaves more than the top-level node_modules: workspace packages'
 * own node_modules (with the links between packages), a virtualenv, and files its scripts wrote
 * beside the sources (a monorepo's postinstall writing into each package). The environment holds
 * every dependency directory and every path the install created; nothing that was in the
 * workspace before it (the repository's files, the test patch) and nothing made after it.
 */

/** Bounds the walks: a workspace's tree is the repository's. */
const MAX_LISTED = 200_000;

/** Dependency directories (node_modules at any depth, the root's .venv): kept whole, mounted read-only in test jobs. */
const isDependencyDir = (rel: string, name: string) => name === "node_modules" || (name === ".venv" && rel === ".venv");

/** Every path in the workspace outside dependency directories, before the install ran. */
export async function listOwnTree(workspace: string): Promise<Set<string>> {
  const seen = new Set<string>();
  await walk(workspace, (rel, name, kind) => {
    if (kind === "dir" && isDependencyDir(rel, name)) return false;
    seen.add(rel);
    return true;
  });
  return seen;
}

/**
 * The workspace-relative entries of the environment after the install: each dependency directory
 * (not those nested inside another), and each topmost path the install created outside them.
 */
export async function installOutput(workspace: string, before: Set<string>): Promise<string[]> {
  const entries: string[] = [];
  await walk(workspace, (rel, name, kind) => {
    if (kind === "dir" && isDependencyDir(rel, name)) {
      entries.push(rel);
      return false;
    }
    if (before.has(rel)) return true;
    entries.push(rel);
    return false;
  });
  return entries.sort();
}

/** An environment's dependency directories, to mount, and its other entries, to copy into the workspace. */
export interface EnvironmentLayout {
  mounts: string[];
  copies: string[];
}

export async function environmentLayout(dir: string): Promise<EnvironmentLayout> {
  const layout: EnvironmentLayout = { mounts: [], copies: [] };
  await walk(dir, (rel, name, kind) => {
    if (kind === "dir" && isDependencyDir(rel, name)) {
      layout.mounts.push(rel);
      return false;
    }
    layout.copies.push(rel);
    return true;
  });
  layout.mounts.sort();
  return layout;
}

/**
 * Copies an environment's own directories, files and links into the workspace where the job's
 * files and patches put nothing: a file the install made and a candidate also wrote is the
 * candidate's. Never through a link the workspace has (workspace-fs.ts); the environment's own
 * links were checked to stay inside the workspace when its archive was read.
 */
export async function copyInstallOutput(from: string, workspace: string, copies: string[]): Promise<void> {
  for (const rel of copies) {
    const source = join(from, rel);
    const stat = await lstat(source);
    if (stat.isDirectory()) await ensureWorkspaceDirectory(workspace, rel);
    else if (await lstat(join(workspace, rel)).then(() => true, () => false)) continue;
    else if (stat.isSymbolicLink()) await writeWorkspaceLink(workspace, rel, await readlink(source));
    else await writeWorkspaceFile(workspace, rel, await readFile(source), stat.mode & 0o755);
  }
}

/** An empty directory at each mount point, for bwrap to mount over (never through a link). */
export async function mountPoints(workspace: string, mounts: string[]): Promise<void> {
  for (const rel of mounts) await ensureWorkspaceDirectory(workspace, rel);
}

type Kind = "dir" | "file" | "link";

/** Breadth-first, links never followed; `visit` says whether to go into a directory. */
async function walk(root: string, visit: (rel: string, name: string, kind: Kind) => boolean): Promise<void> {
  const pending = [""];
  let listed = 0;
  while (pending.length > 0 && listed < MAX_LISTED) {
    const dir = pending.shift() as string;
    const entries = await readdir(join(root, dir), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      listed++;
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      const kind: Kind = entry.isDirectory() ? "dir" : entry.isSymbolicLink() ? "link" : "file";
      if (visit(rel, entry.name, kind) && kind === "dir") pending.push(rel);
    }
  }
}
