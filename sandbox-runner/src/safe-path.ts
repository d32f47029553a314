import { posix } from "node:path";

/**
 * Normalizes a path that comes from a job or an archive into a workspace-relative POSIX
 * path, or explains why it is refused. Refused: empty, NUL, backslash (ambiguous between
 * platforms), absolute, any `..` segment, and anything that normalizes to the root itself.
 */
export function checkRelativePath(raw: string): { ok: true; path: string } | { ok: false; reason: string } {
  if (raw.length === 0) return { ok: false, reason: "empty path" };
  if (raw.length > 4096) return { ok: false, reason: "path too long" };
  if (raw.includes("\0")) return { ok: false, reason: "path contains NUL" };
  if (raw.includes("\\")) return { ok: false, reason: `path contains a backslash: ${JSON.stringify(raw)}` };
  if (raw.startsWith("/")) return { ok: false, reason: `absolute path: ${JSON.stringify(raw)}` };
  if (raw.split("/").includes("..")) return { ok: false, reason: `path contains '..': ${JSON.stringify(raw)}` };
  const normalized = posix.normalize(raw).replace(/\/+$/, "");
  if (normalized === "." || normalized === "") return { ok: false, reason: `path names the workspace root: ${JSON.stringify(raw)}` };
  return { ok: true, path: normalized };
}

export function requireRelativePath(raw: string, what: string): string {
  const verdict = checkRelativePath(raw);
  if (!verdict.ok) throw new UnsafeInputError(`${what}: ${verdict.reason}`);
  return verdict.path;
}

/** Raised for any input the runner refuses to act on; its message becomes the job's reason. */
export class UnsafeInputError extends Error {
  override name = "UnsafeInputError";
}
