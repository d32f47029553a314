import { constants, type Stats } from "node:fs";
import { lstat, mkdir, open, readdir, readlink, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { join, posix } from "node:path";
import { requireRelativePath, UnsafeInputError } from "./safe-path";

/**
 * Reads a regular file without following a symlink at its last component and only if it
 * is at most `maxBytes`; returns null otherwise. Used for every file the sandboxed code
 * could have replaced (reports, manifests), so a planted link cannot make the runner read
 * a host file.
 */
export async function readRegularFile(path: string, maxBytes: number): Promise<Buffer | null> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size > maxBytes) return null;
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/**
 * lstat of `rel` inside `root`, or null when it is missing or it or any parent is a symlink:
 * files the runner reads for reports are taken only from the workspace's own tree.
 */
export async function lstatNoLinks(root: string, rel: string): Promise<Stats | null> {
  let current = root;
  let stat: Stats | null = null;
  for (const part of rel.split("/")) {
    current = join(current, part);
    stat = await lstat(current).catch(() => null);
    if (!stat || stat.isSymbolicLink()) return null;
  }
  return stat;
}

/** Creates the parent directories of `rel` inside `root`, refusing to pass through a symlink. */
async function safeParent(root: string, rel: string): Promise<void> {
  const parts = rel.split("/").slice(0, -1);
  let current = root;
  for (const part of parts) {
    current = join(current, part);
    const stat = await lstat(current).catch(() => null);
    if (stat === null) await mkdir(current);
    else if (stat.isSymbolicLink()) throw new UnsafeInputError(`refusing to write through the symlink ${JSON.stringify(posix.join(...parts))}`);
    else if (!stat.isDirectory()) throw new UnsafeInputError(`${JSON.stringify(rel)}: a parent is not a directory`);
  }
}

export async function writeWorkspaceFile(root: string, rawPath: string, content: Buffer, mode = 0o644): Promise<void> {
  const target = await replaceablePath(root, rawPath);
  await writeFile(target, content, { flag: "wx", mode });
}

/** A symlink at `rel` inside `root`, in place of a file or link there (never written through). */
export async function writeWorkspaceLink(root: string, rawPath: string, linkTarget: string): Promise<void> {
  await symlink(linkTarget, await replaceablePath(root, rawPath));
}

async function replaceablePath(root: string, rawPath: string): Promise<string> {
  const rel = requireRelativePath(rawPath, "overlay path");
  await safeParent(root, rel);
  const target = join(root, rel);
  const stat = await lstat(target).catch(() => null);
  if (stat?.isDirectory()) throw new UnsafeInputError(`overlay path ${JSON.stringify(rel)} is a directory`);
  // An existing symlink is replaced, never written through.
  if (stat) await unlink(target);
  return target;
}

/**
 * An empty directory at `rel` inside `root`, whatever sandboxed code left there: a file or a
 * link of that name is removed (never followed), and no parent may be a link.
 */
export async function ensureWorkspaceDirectory(root: string, rel: string): Promise<void> {
  await safeParent(root, rel);
  const target = join(root, rel);
  const stat = await lstat(target).catch(() => null);
  if (stat?.isDirectory()) return;
  if (stat) await unlink(target);
  await mkdir(target, { mode: 0o755 });
}

export async function deleteWorkspacePath(root: string, rawPath: string): Promise<void> {
  const rel = requireRelativePath(rawPath, "overlay path");
  await safeParent(root, rel);
  await rm(join(root, rel), { recursive: true, force: true });
}

/**
 * Resolves the symlink at `rel` against the real tree the way the kernel would and says
 * whether it stays inside `root`. Used after patches, which can create links.
 */
export async function linkStaysInside(root: string, rel: string): Promise<boolean> {
  let budget = 40;
  const walk = async (from: string[], target: string): Promise<string[] | null> => {
    if (target.startsWith("/")) return null;
    const stack = [...from];
    for (const part of target.split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") {
        if (stack.length === 0) return null;
        stack.pop();
        continue;
      }
      stack.push(part);
      const stat = await lstat(join(root, ...stack)).catch(() => null);
      if (!stat?.isSymbolicLink()) continue;
      if (--budget < 0) return null;
      const next = await readlink(join(root, ...stack));
      stack.pop();
      const resolved = await walk(stack, next);
      if (resolved === null) return null;
      stack.splice(0, stack.length, ...resolved);
    }
    return stack;
  };
  const parts = rel.split("/");
  const stat = await lstat(join(root, rel)).catch(() => null);
  if (!stat?.isSymbolicLink()) return true;
  return (await walk(parts.slice(0, -1), await readlink(join(root, rel)))) !== null;
}

/** Apparent size of a tree without following links; stops counting once past `cap`. */
export async function diskUsage(root: string, cap = Number.POSITIVE_INFINITY): Promise<number> {
  let total = 0;
  const pending = [root];
  while (pending.length > 0 && total <= cap) {
    const dir = pending.pop() as string;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) pending.push(path);
      else total += (await lstat(path).catch(() => null))?.size ?? 0;
    }
  }
  return total;
}
