import type { OverlayFile } from "./runner-jobs";
import { classifyPath } from "./patch-rules";

/** An overlay entry as frozen at submission, with its content. */
export interface FrozenFile {
  path: string;
  op: "upsert" | "delete";
  content: Uint8Array | null;
}

/** Files the linters and the coverage tools read. */
const CODE = /\.(js|mjs|cjs|jsx|ts|mts|cts|tsx|py)$/i;
/** The runner takes at most this many paths in coverage_files and lint.files. */
const MAX_REPORTED_FILES = 200;

export interface ScoringJobFiles {
  /** The overlay for the hidden-test run: without the task's test files, so they stay at the task's version. */
  hidden: OverlayFile[];
  /** The overlay as the candidate's own runs see it. */
  workspace: OverlayFile[];
  /** Changed source files whose line coverage is measured. */
  coverageFiles: string[];
  /** Changed code files the linters read. */
  lintFiles: string[];
  /** Task test files the candidate changed; their changes do not count (evidence). */
  ignoredTestEdits: string[];
}

function toOverlayFile(file: FrozenFile, base64: (bytes: Uint8Array) => string): OverlayFile {
  return file.op === "delete" || !file.content ? { path: file.path, delete: true } : { path: file.path, content_b64: base64(file.content) };
}

export function scoringJobFiles(files: FrozenFile[], taskTestFiles: string[], base64: (bytes: Uint8Array) => string): ScoringJobFiles {
  const hiddenTests = new Set(taskTestFiles);
  const workspace = files.map((f) => toOverlayFile(f, base64));
  const upserted = files.filter((f) => f.op === "upsert" && CODE.test(f.path));
  return {
    hidden: workspace.filter((f) => !hiddenTests.has(f.path)),
    workspace,
    coverageFiles: upserted.filter((f) => classifyPath(f.path) === "source").map((f) => f.path).slice(0, MAX_REPORTED_FILES),
    lintFiles: upserted.map((f) => f.path).slice(0, MAX_REPORTED_FILES),
    ignoredTestEdits: files.filter((f) => hiddenTests.has(f.path)).map((f) => f.path),
  };
}

/** The two runs of a scoring round; each job's owner id names its step (stepOwnerId). */
export const SCORING_STEPS = ["hidden", "workspace"] as const;
export type ScoringStep = (typeof SCORING_STEPS)[number];

/** Runner failures that say nothing about the candidate's code are retried this many times in all. */
export const SCORING_TRIES = 3;
