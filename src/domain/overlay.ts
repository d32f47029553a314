import { FILE_PATH_MAX_BYTES, filePathProblem, type FilePathProblem } from "../../protocol/assessment-rules";
import type { Refusal } from "./outcome";

/**
 * The changes overlay of an attempt: file changes keyed by path, over the task's snapshot.
 * An entry either replaces a file's content (`upsert`) or removes the file (`delete`).
 *
 * The limits keep one file within a Durable Object SQLite row (2 MB at most) and a whole
 * overlay small enough to go to the runner in one job spec.
 */
export const OVERLAY_LIMITS = {
  /** Decoded bytes of one file. */
  fileBytes: 1024 * 1024,
  /** Entries (changed and deleted files). */
  files: 200,
  /** Decoded bytes of all files together. */
  totalBytes: 10 * 1024 * 1024,
  /** UTF-8 bytes of a path. */
  pathBytes: FILE_PATH_MAX_BYTES,
} as const;

/** A whole overlay in one PATCH, base64 (4/3) and JSON around it. */
export const CHANGES_MAX_BODY_BYTES = 16 * 1024 * 1024;

export type OverlayOp = "upsert" | "delete";

export interface OverlayEntry {
  path: string;
  op: OverlayOp;
  /** Bytes of the content; 0 for a deletion. */
  size: number;
  /** Lowercase hex SHA-256 of the content; null for a deletion. */
  sha256: string | null;
  updated_at: string;
}

/** The API's words for each problem of a path (the web app has its own for the same rule). */
const PATH_PROBLEM_WORDS: Record<FilePathProblem, string> = {
  empty: "a path is not empty",
  too_long: `a path is at most ${FILE_PATH_MAX_BYTES} bytes`,
  control_character: "a path has no NUL or other control characters",
  backslash: "a path separates directories with '/', not '\\'",
  absolute: "a path is relative to the repository root, without a leading '/'",
  empty_segment: "a path has no empty segments ('//' or a trailing '/')",
  dot_dot_segment: "a path has no '..' segments",
  dot_segment: "a path has no '.' segments",
  git_directory: "a path is not inside a .git directory",
};

/**
 * Why `path` cannot name a file of the repository, or undefined: the rule of
 * protocol/assessment-rules.ts (`filePathProblem`: relative, normal form, no control characters
 * or backslashes, at most 1024 bytes, not inside a `.git` directory), in the API's words.
 */
export function overlayPathProblem(path: string): string | undefined {
  const problem = filePathProblem(path);
  return problem && PATH_PROBLEM_WORDS[problem];
}

/** One entry of a PATCH, sized before it is applied. */
export interface IncomingChange {
  path: string;
  op: OverlayOp;
  size: number;
}

/**
 * The overlay's size after applying `incoming` over `current` (path → size), or the limit it
 * would break. Applying is all or nothing, so this is decided before anything is written.
 */
export function planOverlay(
  current: ReadonlyMap<string, number>,
  incoming: readonly IncomingChange[],
): { ok: true; files: number; totalBytes: number } | { ok: false; refusal: Refusal } {
  const next = new Map(current);
  for (const change of incoming) {
    if (change.size > OVERLAY_LIMITS.fileBytes) {
      return tooLarge(`${change.path} is ${change.size} bytes; a file is at most ${OVERLAY_LIMITS.fileBytes} bytes`);
    }
    next.set(change.path, change.op === "upsert" ? change.size : 0);
  }
  if (next.size > OVERLAY_LIMITS.files) {
    return tooLarge(`the overlay would hold ${next.size} files; it holds at most ${OVERLAY_LIMITS.files} (changed and deleted)`);
  }
  let totalBytes = 0;
  for (const size of next.values()) totalBytes += size;
  if (totalBytes > OVERLAY_LIMITS.totalBytes) {
    return tooLarge(`the overlay would hold ${totalBytes} bytes; it holds at most ${OVERLAY_LIMITS.totalBytes}`);
  }
  return { ok: true, files: next.size, totalBytes };
}

function tooLarge(detail: string): { ok: false; refusal: Refusal } {
  return { ok: false, refusal: { kind: "too_large", detail: `Changes not saved: ${detail}` } };
}

/**
 * The text the overlay digest is taken over: one line per entry, sorted by path, so the same
 * overlay always gives the same digest.
 */
export function overlayManifest(entries: readonly Pick<OverlayEntry, "path" | "op" | "sha256">[]): string {
  return [...entries]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((e) => `${e.op} ${e.sha256 ?? "-"} ${JSON.stringify(e.path)}\n`)
    .join("");
}

/** Padded standard base64 (RFC 4648) of a file's bytes, as the API and the runner take contents. */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  // fromCharCode takes its bytes as arguments; chunks keep them under the engine's limit.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
