/**
 * The submission's diff as a reviewer reads it (docs/api.md, "The reviewer's view"): each file
 * the frozen overlay changed, its task's version and its submitted version as text, and whether
 * the hidden-test run kept it at the task's version (so that its change does not count). Pure:
 * the flow reads the bytes, this decides what is shown.
 */
import { scoringJobFiles } from "./scoring-jobs";

export const REVIEW_DIFF_LIMITS = {
  /** Bytes of one side of one file shown as text; a larger file is listed without its text. */
  fileBytes: 256 * 1024,
  /** Bytes of text in one answer; files past it are listed without their text. */
  totalBytes: 4 * 1024 * 1024,
} as const;

export type DiffFileStatus = "added" | "modified" | "deleted" | "unchanged";

/**
 * `text`: both sides are given (null for the side that does not exist); `binary`: a side is not
 * UTF-8 text; `too_large`: a side is over `fileBytes`; `omitted`: the answer reached `totalBytes`;
 * `base_unavailable`: the task's version could not be read.
 */
export type DiffFileContent = "text" | "binary" | "too_large" | "omitted" | "base_unavailable";

export interface ReviewDiffFile {
  path: string;
  status: DiffFileStatus;
  content: DiffFileContent;
  /** The task's version (its snapshot at the base commit); null when added, or not shown. */
  base: string | null;
  /** The submitted version; null when deleted, or not shown. */
  submitted: string | null;
  base_bytes: number | null;
  submitted_bytes: number | null;
  /** The hidden-test run used the task's version of this file: the change does not count. */
  kept_at_task_version: boolean;
}

/** One changed file as the flow read it: `base` undefined when its task's version could not be read. */
export interface ReviewDiffInput {
  path: string;
  op: "upsert" | "delete";
  /** The snapshot's bytes; null when the snapshot has no such file. */
  base: Uint8Array | null | undefined;
  /** The overlay's bytes; null for a deletion. */
  submitted: Uint8Array | null;
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The bytes as text, or null when they are not UTF-8 text (invalid, or with NUL bytes). */
export function textOf(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

function statusOf(input: ReviewDiffInput): DiffFileStatus {
  if (input.op === "delete") return "deleted";
  if (!input.base) return input.base === null ? "added" : "modified";
  return input.submitted && sameBytes(input.base, input.submitted) ? "unchanged" : "modified";
}

/**
 * Overlay paths the hidden-test run keeps at the task's version. A finished report says which
 * it kept (the Worker's cut and the runner's harness); before one, the Worker's own rules say
 * (test files, the task's hidden test files, package manifests and test configuration).
 */
export function keptAtTaskVersion(paths: readonly string[], hiddenTests: ReadonlySet<string>, reported: readonly string[] | null): Set<string> {
  const cut = scoringJobFiles(
    paths.map((path) => ({ path, op: "upsert" as const, content: null })),
    new Set(hiddenTests),
    () => "",
  ).excludedFromHidden;
  return new Set([...cut, ...(reported ?? [])].filter((p) => paths.includes(p)));
}

/** The files of the diff, sorted by path, with their text within REVIEW_DIFF_LIMITS. */
export function reviewDiffFiles(inputs: readonly ReviewDiffInput[], kept: ReadonlySet<string>, limits = REVIEW_DIFF_LIMITS): ReviewDiffFile[] {
  let budget = limits.totalBytes;
  const sorted = [...inputs].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return sorted.map((input) => {
    const file: ReviewDiffFile = {
      path: input.path,
      status: statusOf(input),
      content: "text",
      base: null,
      submitted: null,
      base_bytes: input.base ? input.base.length : null,
      submitted_bytes: input.submitted ? input.submitted.length : null,
      kept_at_task_version: kept.has(input.path),
    };
    if (input.base === undefined) return { ...file, content: "base_unavailable" };
    const sides = [input.base, input.submitted].filter((s): s is Uint8Array => s !== null);
    if (sides.some((s) => s.length > limits.fileBytes)) return { ...file, content: "too_large" };
    const texts = sides.map(textOf);
    if (texts.some((t) => t === null)) return { ...file, content: "binary" };
    const bytes = sides.reduce((n, s) => n + s.length, 0);
    if (bytes > budget) {
      budget = 0;
      return { ...file, content: "omitted" };
    }
    budget -= bytes;
    return {
      ...file,
      base: input.base === null ? null : textOf(input.base),
      submitted: input.submitted === null ? null : textOf(input.submitted),
    };
  });
}
