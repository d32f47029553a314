import { z } from "zod";
import { PRIORITIES } from "./pool";
import { checkRelativePath } from "./safe-path";

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, "expected lowercase hex sha256");
const httpUrl = z.url({ protocol: /^https?$/ });

/** A job's or an execution's id: it names files and directories on the runner. */
export const idSchema = (field: string) => z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, `${field}: letters, digits, '_' and '-' only`);
/** A snapshot or environment archive, downloaded and verified by its digest (cache.ts). */
export const artifactSchema = z.strictObject({ url: httpUrl, sha256 });

/** Most files a job may name in `coverage_files` or `lint.files`. */
export const MAX_REPORTED_FILES = 200;
/** Most files a job may name in `test.files`. */
const MAX_TEST_FILES = 2000;

export const relativePath = z.string().superRefine((value, ctx) => {
  const verdict = checkRelativePath(value);
  if (!verdict.ok) ctx.addIssue({ code: "custom", message: verdict.reason });
});

/** A workspace file the job names for reporting; normalized so it matches report paths. */
const reportedPath = z.string().transform((value, ctx) => {
  const verdict = checkRelativePath(value);
  if (verdict.ok) return verdict.path;
  ctx.addIssue({ code: "custom", message: verdict.reason });
  return z.NEVER;
});
const uniquePaths = (max: number) =>
  z
    .array(reportedPath)
    .max(max)
    .transform((paths) => [...new Set(paths)]);
const reportedPaths = uniquePaths(MAX_REPORTED_FILES);

export const fileUpsert = z.strictObject({
  path: relativePath,
  content_b64: z.base64().max(64 * 1024 * 1024),
  delete: z.literal(false).optional(),
});
export const fileDelete = z.strictObject({ path: relativePath, delete: z.literal(true) });

export const limitsSchema = z.strictObject({
  wall_ms: z.number().int().min(100).max(3_600_000).default(120_000),
  cpu_ms: z.number().int().min(100).max(3_600_000).default(120_000),
  memory_mb: z.number().int().min(64).max(65_536).default(1024),
  processes: z.number().int().min(8).max(4096).default(256),
  output_bytes: z.number().int().min(1024).max(16 * 1024 * 1024).default(1024 * 1024),
  workspace_mb: z.number().int().min(1).max(65_536).default(512),
});

export const frameworkSchema = z.enum(["auto", "node-test", "jest", "vitest", "mocha", "ava", "tape", "uvu", "pytest"]);

export const scheduleSchema = z
  .strictObject({
    priority: z.enum(PRIORITIES),
    attempt_id: z.string().min(1).max(128).nullable().default(null),
    org_id: z.string().min(1).max(128).nullable().default(null),
  })
  .default({ priority: "interactive", attempt_id: null, org_id: null });

export const jobSchema = z
  .strictObject({
    job_id: idSchema("job_id"),
    kind: z.enum(["prepare", "test"]),
    snapshot: artifactSchema,
    environment: artifactSchema.nullable().default(null),
    files: z.array(z.union([fileUpsert, fileDelete])).max(10_000).default([]),
    patches: z.array(z.string().max(32 * 1024 * 1024)).max(100).default([]),
    test: z
      .strictObject({
        framework: frameworkSchema.default("auto"),
        command: z.array(z.string().min(1).max(4096).refine((s) => !s.includes("\0"), "NUL in argument")).min(1).max(256).nullable().default(null),
        coverage: z.boolean().default(false),
        /** Run exactly these test files (the command's own file arguments are dropped). */
        files: uniquePaths(MAX_TEST_FILES).nullable().default(null),
        /** Place canary tests in `files` and check them (canaries.ts); scoring's hidden-test run. */
        canaries: z.boolean().default(false),
      })
      .default({ framework: "auto", command: null, coverage: false, files: null, canaries: false }),
    /** A prepare job's install as the import states it; null: planned from the repository (install.ts). */
    install: z
      .strictObject({ command: z.array(z.string().min(1).max(4096).refine((s) => !s.includes("\0"), "NUL in argument")).min(1).max(256).nullable().default(null) })
      .default({ command: null }),
    /** Versions the import states; null: what the repository asks for (engines, .nvmrc), else the runner's default. */
    runtime: z
      .strictObject({
        node: z.string().regex(/^\d+(\.\d+){0,2}$/, "a Node version such as 22 or 20.11").nullable().default(null),
        python: z.string().regex(/^3\.\d+$/, "a Python version such as 3.11").nullable().default(null),
      })
      .default({ node: null, python: null }),
    coverage_files: reportedPaths.default([]),
    lint: z.strictObject({ files: reportedPaths }).nullable().default(null),
    limits: limitsSchema.default(limitsSchema.parse({})),
    schedule: scheduleSchema,
    uploads: z.strictObject({ junit: httpUrl, log: httpUrl, environment: httpUrl.optional() }),
    callback_url: httpUrl,
    /**
     * Where the runner renews its hold on the job, and how often (docs/runner-protocol.md,
     * "Leases"). Without it the job is never handed back: a shutdown reports it ERROR.
     */
    lease: z.strictObject({ url: httpUrl, interval_ms: z.number().int().min(200).max(600_000) }).nullable().default(null),
  })
  .superRefine((job, ctx) => {
    if (job.test.canaries && !job.test.files?.length) {
      ctx.addIssue({ code: "custom", path: ["test", "canaries"], message: "canaries need test.files: the files to place them in" });
    }
    if (job.kind === "prepare" && !job.uploads.environment) {
      ctx.addIssue({ code: "custom", path: ["uploads", "environment"], message: "prepare jobs need an environment upload URL" });
    }
  });

export type Job = z.infer<typeof jobSchema>;
export type Limits = z.infer<typeof limitsSchema>;
export type Artifact = z.infer<typeof artifactSchema>;
export type Framework = Exclude<z.infer<typeof frameworkSchema>, "auto">;

export type JobStatus = "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "ERROR";
export type TestStatus = "passed" | "failed" | "skipped" | "errored";

export interface TestResult {
  name: string;
  classname: string;
  file: string | null;
  status: TestStatus;
  duration_ms: number;
  message: string | null;
}

export interface Counts {
  total: number;
  passed: number;
  failed: number;
  skipped: number;
  errored: number;
}

export interface CoverageFile {
  file: string;
  lines_total: number;
  lines_covered: number;
  /** Only for the job's `coverage_files`: instrumented lines that ran, ascending. */
  lines_hit?: number[];
  /** Only for the job's `coverage_files`: instrumented lines that never ran, ascending. */
  lines_missed?: number[];
  /** Set when the per-line lists were left out to keep the callback small. */
  lines_truncated?: boolean;
}

export interface CoverageSummary {
  format: "lcov";
  lines_total: number;
  lines_covered: number;
  percent: number;
  files: CoverageFile[];
}

export interface LintFinding {
  file: string;
  line: number;
  column: number;
  rule: string;
  message: string;
  severity: "error" | "warning";
}

export interface LintReport {
  /** The linters the files needed, joined with "+": "eslint", "pyflakes", "eslint+pyflakes" or "none". */
  tool: string;
  files_checked: number;
  findings: LintFinding[];
  truncated: boolean;
  /** Why a linter could not run (its findings are then missing), or null. */
  error: string | null;
}

/** What the canaries of a `test.canaries` run showed (canaries.ts). */
export interface Integrity {
  /** The files canaries were placed in. */
  checked_files: string[];
  /** Files whose canaries were not both reported as expected: their results do not count. */
  unverified_files: string[];
  /** A canary came out in a way no honest run produces; `reason` says which and where. */
  tampered: boolean;
  reason: string | null;
}

/** What a prepare job's install did (install.ts); null for test jobs. */
export interface InstallReport {
  /** Every step that ran, fallbacks included, in order. */
  steps: Array<{ name: string; exit_code: number | null; ok: boolean; duration_ms: number; hint: string | null }>;
  /** The first failure that the fallbacks did not make good, in words a user can act on; null when all went well. */
  failure: string | null;
  /** The Node and Python the environment was made with, and why that Node. */
  node: string;
  node_note: string;
  python: string | null;
}

export interface Callback {
  job_id: string;
  kind: Job["kind"];
  status: JobStatus;
  reason: string | null;
  exit_code: number | null;
  timings: { queued_ms: number; setup_ms: number; run_ms: number; total_ms: number };
  counts: Counts;
  tests: TestResult[];
  log_tail: string;
  log_truncated: boolean;
  framework: Framework | null;
  command: string[] | null;
  environment: { sha256: string; size: number } | null;
  artifacts: { junit: boolean; log: boolean };
  coverage?: CoverageSummary | null;
  lint?: LintReport | null;
  integrity?: Integrity | null;
  install?: InstallReport | null;
}
