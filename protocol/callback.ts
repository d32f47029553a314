import { z } from "zod";
import { ID_PATTERN, JOB_KINDS, JOB_STATUSES, sha256Schema, TEST_FRAMEWORKS } from "./jobs";

/**
 * The runner's report of a finished job, POSTed to the job's `callback_url`
 * (docs/runner-protocol.md, "Callback"). Objects are not strict, unlike the job body: a field
 * a newer runner adds must not turn a result into a 422 that the runner treats as final and
 * never resends. Fields an older runner never sent are optional.
 */

const count = z.number().int().min(0);
const lineNumbers = z.array(z.number().int().min(1));

const testResultSchema = z.object({
  name: z.string(),
  classname: z.string(),
  file: z.string().nullable(),
  status: z.enum(["passed", "failed", "skipped", "errored"]),
  duration_ms: count,
  message: z.string().nullable(),
});

const countsSchema = z.object({ total: count, passed: count, failed: count, skipped: count, errored: count });

const coverageFileSchema = z.object({
  file: z.string(),
  lines_total: count,
  lines_covered: count,
  /** Only for the job's `coverage_files`: instrumented lines that ran, ascending. */
  lines_hit: lineNumbers.optional(),
  /** Only for the job's `coverage_files`: instrumented lines that never ran, ascending. */
  lines_missed: lineNumbers.optional(),
  /** Set when the per-line lists were left out to keep the callback small. */
  lines_truncated: z.boolean().optional(),
});

const coverageSchema = z.object({
  format: z.literal("lcov"),
  lines_total: count,
  lines_covered: count,
  percent: z.number().min(0).max(100),
  files: z.array(coverageFileSchema),
});

const lintFindingSchema = z.object({
  file: z.string(),
  line: count,
  column: count,
  rule: z.string(),
  message: z.string(),
  severity: z.enum(["error", "warning"]),
});

const lintReportSchema = z.object({
  /** The linters the files needed, joined with "+": "eslint", "pyflakes", "eslint+pyflakes" or "none". */
  tool: z.string(),
  files_checked: count,
  findings: z.array(lintFindingSchema),
  truncated: z.boolean(),
  /** Why a linter could not run (its findings are then missing), or null. */
  error: z.string().nullable().optional(),
});

/** What a prepare job's install did: every step that ran, fallbacks included, and the failure they did not make good. */
const installReportSchema = z.object({
  steps: z.array(z.object({ name: z.string(), exit_code: z.number().int().nullable(), ok: z.boolean(), duration_ms: count, hint: z.string().nullable() })),
  failure: z.string().nullable(),
  /** The Node and Python the environment was made with, and why that Node. */
  node: z.string(),
  node_note: z.string(),
  /** The Node versions the repository admits, in the order to try them when the tests cannot start on one (docs/runner-protocol.md, "Node versions"). */
  node_candidates: z.array(z.string()).default([]),
  python: z.string().nullable(),
});

/** What the canaries of a `test.canaries` run showed. */
const integritySchema = z.object({
  /** The files canaries were placed in. */
  checked_files: z.array(z.string()),
  /** Files whose canaries were not both reported as expected: their results do not count. */
  unverified_files: z.array(z.string()),
  /** A canary came out in a way no honest run produces; `reason` says which and where. */
  tampered: z.boolean(),
  reason: z.string().nullable(),
  /**
   * Overlay files the hidden-test run kept at the task's version because they decide how
   * tests are found, loaded, transformed, set up or reported (the framework's harness).
   */
  pinned_files: z.array(z.string()).default([]),
});

export const callbackSchema = z
  .object({
    job_id: z.string().regex(ID_PATTERN),
    kind: z.enum(JOB_KINDS),
    status: z.enum(JOB_STATUSES),
    reason: z.string().nullable(),
    exit_code: z.number().int().nullable(),
    timings: z.object({ queued_ms: count, setup_ms: count, run_ms: count, total_ms: count }),
    counts: countsSchema,
    tests: z.array(testResultSchema),
    log_tail: z.string(),
    log_truncated: z.boolean(),
    framework: z.enum(TEST_FRAMEWORKS).nullable(),
    command: z.array(z.string()).nullable(),
    environment: z.object({ sha256: sha256Schema, size: count }).nullable(),
    artifacts: z.object({ junit: z.boolean(), log: z.boolean() }),
    coverage: coverageSchema.nullable().optional(),
    lint: lintReportSchema.nullable().optional(),
    /** A prepare job's install: its steps and the failure the fallbacks did not make good. */
    install: installReportSchema.nullable().optional(),
    /** What the canaries of a `test.canaries` run showed; absent for other runs. */
    integrity: integritySchema.nullable().optional(),
  })
  .meta({ id: "RunnerCallback" });

export type Callback = z.infer<typeof callbackSchema>;
export type TestResult = z.infer<typeof testResultSchema>;
export type TestStatus = TestResult["status"];
export type Counts = z.infer<typeof countsSchema>;
export type CoverageFile = z.infer<typeof coverageFileSchema>;
export type CoverageSummary = z.infer<typeof coverageSchema>;
export type LintFinding = z.infer<typeof lintFindingSchema>;
export type LintReport = z.infer<typeof lintReportSchema>;
export type InstallReport = z.infer<typeof installReportSchema>;
export type Integrity = z.infer<typeof integritySchema>;
