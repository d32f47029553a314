import { z } from "zod";
import { FINAL_RUNNER_JOB_STATUSES, RUNNER_JOB_KINDS, TEST_FRAMEWORKS, type FinalRunnerJobStatus, type RunnerJobKind, type RunnerJobOwner, type runnerJobKeys } from "./runner-jobs";

const count = z.number().int().min(0);
const sha256 = z.string().regex(/^[0-9a-f]{64}$/, "expected lowercase hex sha256");

const lineNumbers = z.array(z.number().int().min(1));

const CoverageFileSchema = z.object({
  file: z.string(),
  lines_total: count,
  lines_covered: count,
  // Only for the files a job named in `coverage_files`; older runners never send them.
  lines_hit: lineNumbers.optional(),
  lines_missed: lineNumbers.optional(),
  lines_truncated: z.boolean().optional(),
});

const LintReportSchema = z.object({
  tool: z.string(),
  files_checked: count,
  findings: z.array(
    z.object({
      file: z.string(),
      line: count,
      column: count,
      rule: z.string(),
      message: z.string(),
      severity: z.enum(["error", "warning"]),
    }),
  ),
  truncated: z.boolean(),
  error: z.string().nullable().optional(),
});

const TestResultSchema = z.object({
  name: z.string(),
  classname: z.string(),
  file: z.string().nullable(),
  status: z.enum(["passed", "failed", "skipped", "errored"]),
  duration_ms: count,
  message: z.string().nullable(),
});

/**
 * The runner's report of a finished job (docs/runner-protocol.md, "Callback"). Objects are
 * not strict, unlike the public API's bodies: a field a newer runner adds must not turn a
 * result into a 422 that the runner treats as final and never resends.
 */
export const RunnerCallbackSchema = z
  .object({
    job_id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/),
    kind: z.enum(RUNNER_JOB_KINDS),
    status: z.enum(FINAL_RUNNER_JOB_STATUSES),
    reason: z.string().nullable(),
    exit_code: z.number().int().nullable(),
    timings: z.object({ queued_ms: count, setup_ms: count, run_ms: count, total_ms: count }),
    counts: z.object({ total: count, passed: count, failed: count, skipped: count, errored: count }),
    tests: z.array(TestResultSchema),
    log_tail: z.string(),
    log_truncated: z.boolean(),
    framework: z.enum(TEST_FRAMEWORKS).nullable(),
    command: z.array(z.string()).nullable(),
    environment: z.object({ sha256, size: count }).nullable(),
    artifacts: z.object({ junit: z.boolean(), log: z.boolean() }),
    coverage: z
      .object({
        format: z.literal("lcov"),
        lines_total: count,
        lines_covered: count,
        percent: z.number().min(0).max(100),
        files: z.array(CoverageFileSchema),
      })
      .nullable()
      .optional(),
    lint: LintReportSchema.nullable().optional(),
    /** A prepare job's install: its steps and the failure the fallbacks did not make good. */
    install: z
      .object({
        steps: z.array(z.object({ name: z.string(), exit_code: z.number().int().nullable(), ok: z.boolean(), duration_ms: count, hint: z.string().nullable() })),
        failure: z.string().nullable(),
        node: z.string(),
        node_note: z.string(),
        python: z.string().nullable(),
      })
      .nullable()
      .optional(),
    /** What the canaries of a `test.canaries` run showed; absent for other runs. */
    integrity: z
      .object({
        checked_files: z.array(z.string()),
        unverified_files: z.array(z.string()),
        tampered: z.boolean(),
        reason: z.string().nullable(),
      })
      .nullable()
      .optional(),
  })
  .meta({ id: "RunnerCallback" });

export type RunnerCallback = z.infer<typeof RunnerCallbackSchema>;

type LintReport = NonNullable<RunnerCallback["lint"]>;

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
