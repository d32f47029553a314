import { MAX_REPORTED_FILES } from "../../protocol/jobs";
import type { OverlayFile } from "./runner-jobs";
import { classifyPath } from "./patch-rules";
import { testFileOf } from "./test-outcomes";

/** An overlay entry as frozen at submission, with its content. */
export interface FrozenFile {
  path: string;
  op: "upsert" | "delete";
  content: Uint8Array | null;
}

/** Files the linters and the coverage tools read. */
const CODE = /\.(js|mjs|cjs|jsx|ts|mts|cts|tsx|py)$/i;

/**
 * Paths that decide how tests are found, loaded or reported rather than what the code does:
 * test runner configuration, Python's start-up hooks, modules named like the test framework,
 * installed packages. The hidden-test run keeps the task's version of each.
 */
const TEST_HARNESS = [
  /(^|\/)(package\.json|package-lock\.json|npm-shrinkwrap\.json|\.npmrc|pytest\.ini|tox\.ini|setup\.cfg|pyproject\.toml|conftest\.py)$/,
  /(^|\/)(sitecustomize|usercustomize|pytest|py|_pytest|pluggy|iniconfig|unittest|coverage)\.py$/,
  /\.pth$/,
  /(^|\/)(node_modules|\.venv|_pytest|pytest|pluggy|iniconfig|unittest|coverage)\//,
];

export function isTestHarnessPath(path: string): boolean {
  return TEST_HARNESS.some((pattern) => pattern.test(path));
}

/** The files the hidden-test run executes: every file a FAIL_TO_PASS or PASS_TO_PASS test is in. */
export function hiddenTestFiles(failToPass: string[], passToPass: string[]): string[] {
  return [...new Set([...failToPass, ...passToPass].map(testFileOf))].sort();
}

/** A test file the runner can place canaries in; ids of tasks validated before ids carried their file have none. */
export const RUNNABLE_TEST_FILE = /\.[cm]?[jt]sx?$|\.py$/;

export interface ScoringJobFiles {
  /**
   * The overlay for the hidden-test run: the candidate's source files only. Every test file
   * (the hidden ones, the repository's, the candidate's own) and every test-harness file stays
   * at the task's version, so nothing but the code under test is the candidate's.
   */
  hidden: OverlayFile[];
  /** Overlay paths left out of the hidden-test run (evidence for staff). */
  excludedFromHidden: string[];
  /** The overlay as the candidate's own runs see it. */
  workspace: OverlayFile[];
  /** Changed source files whose line coverage is measured. */
  coverageFiles: string[];
  /** Changed code files the linters read. */
  lintFiles: string[];
  /** Hidden test files the candidate changed; their changes do not count (evidence). */
  ignoredTestEdits: string[];
}

function toOverlayFile(file: FrozenFile, base64: (bytes: Uint8Array) => string): OverlayFile {
  return file.op === "delete" || !file.content ? { path: file.path, delete: true } : { path: file.path, content_b64: base64(file.content) };
}

/** `hiddenTests`: the task's test files and the files its scored tests are in. */
export function scoringJobFiles(files: FrozenFile[], hiddenTests: Set<string>, base64: (bytes: Uint8Array) => string): ScoringJobFiles {
  const workspace = files.map((f) => toOverlayFile(f, base64));
  const upserted = files.filter((f) => f.op === "upsert" && CODE.test(f.path));
  const candidateOnly = (path: string) => classifyPath(path) === "source" && !hiddenTests.has(path) && !isTestHarnessPath(path);
  return {
    hidden: workspace.filter((f) => candidateOnly(f.path)),
    excludedFromHidden: files.filter((f) => !candidateOnly(f.path)).map((f) => f.path),
    workspace,
    coverageFiles: upserted.filter((f) => classifyPath(f.path) === "source").map((f) => f.path).slice(0, MAX_REPORTED_FILES),
    lintFiles: upserted.map((f) => f.path).slice(0, MAX_REPORTED_FILES),
    ignoredTestEdits: files.filter((f) => hiddenTests.has(f.path)).map((f) => f.path),
  };
}

/**
 * A candidate's submit starts scoring in its own request, after the answer; the scoring queue's
 * message comes this much later, and finds the report begun (or begins it, when that start did
 * not get there). A submit by the deadline has no request: its message is sent at once.
 */
export const SCORING_START_BACKSTOP_SECONDS = 10;

/** The two runs of a scoring round; each job's owner id names its step (stepOwnerId). */
export const SCORING_STEPS = ["hidden", "workspace"] as const;
export type ScoringStep = (typeof SCORING_STEPS)[number];

/** Runner failures that say nothing about the candidate's code are retried this many times in all. */
export const SCORING_TRIES = 3;
