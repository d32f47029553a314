/**
 * Normalizes a path that comes from a job or an archive into a workspace-relative POSIX
 * path, or explains why it is refused. Refused: empty, NUL, backslash (ambiguous between
 * platforms), absolute, any `..` segment, and anything that normalizes to the root itself.
 * With `..` refused, normalizing is dropping empty and `.` segments, so no path module is needed.
 */
export function checkRelativePath(raw: string): { ok: true; path: string } | { ok: false; reason: string } {
  if (raw.length === 0) return { ok: false, reason: "empty path" };
  if (raw.length > 4096) return { ok: false, reason: "path too long" };
  if (raw.includes("\0")) return { ok: false, reason: "path contains NUL" };
  if (raw.includes("\\")) return { ok: false, reason: `path contains a backslash: ${JSON.stringify(raw)}` };
  if (raw.startsWith("/")) return { ok: false, reason: `absolute path: ${JSON.stringify(raw)}` };
  const segments = raw.split("/");
  if (segments.includes("..")) return { ok: false, reason: `path contains '..': ${JSON.stringify(raw)}` };
  const normalized = segments.filter((s) => s !== "" && s !== ".").join("/");
  if (normalized === "") return { ok: false, reason: `path names the workspace root: ${JSON.stringify(raw)}` };
  return { ok: true, path: normalized };
}
