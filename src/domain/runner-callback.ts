import type { Callback, LintReport } from "../../protocol/callback";
import type { FinalRunnerJobStatus, RunnerJobKind, RunnerJobOwner, runnerJobKeys } from "./runner-jobs";

/** The runner's report of a finished job (protocol/callback.ts), by the name the Worker's code knows it. */
export type RunnerCallback = Callback;

/**
 * The part of a result kept in D1 beside the job: everything but the per-test, per-file and
 * per-finding lists and the log (the full result is in R2). Lint findings are counted instead.
 */
export type RunnerResultSummary = Omit<RunnerCallback, "tests" | "log_tail" | "coverage" | "lint"> & {
  coverage: Omit<NonNullable<RunnerCallback["coverage"]>, "files"> | null;
  lint?: (Omit<LintReport, "findings"> & { errors: number; warnings: number }) | null;
};

export function summarizeResult({ tests: _tests, log_tail: _log, coverage, lint, ...rest }: RunnerCallback): RunnerResultSummary {
  const summary: RunnerResultSummary = { ...rest, coverage: null };
  if (coverage) {
    const { format, lines_total, lines_covered, percent } = coverage;
    summary.coverage = { format, lines_total, lines_covered, percent };
  }
  if (lint !== undefined) summary.lint = lint && summarizeLint(lint);
  return summary;
}

function summarizeLint({ findings, ...rest }: LintReport): NonNullable<RunnerResultSummary["lint"]> {
  const errors = findings.filter((f) => f.severity === "error").length;
  return { ...rest, errors, warnings: findings.length - errors };
}

/** A job with its final status, as its owner's job-finished handler gets it. */
export interface FinishedRunnerJob {
  id: string;
  kind: RunnerJobKind;
  owner: RunnerJobOwner;
  status: FinalRunnerJobStatus;
  reason: string | null;
  /**
   * The summary stored on the job's row; null when the Worker gave the job up (runner
   * unreachable or refusing it). The full result, with its per-test list, is read on demand.
   */
  result: RunnerResultSummary | null;
  /**
   * Object keys of the job's uploads; each exists only when the result says so
   * (`artifacts.junit`, `artifacts.log`, `environment` for prepare jobs).
   */
  keys: ReturnType<typeof runnerJobKeys>;
}
