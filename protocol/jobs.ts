import { z } from "zod";
import { checkRelativePath } from "./paths";

/**
 * `POST /jobs` (Worker → runner, docs/runner-protocol.md): the job body the Worker builds and
 * the runner takes in. Strict objects: a field the runner does not know is refused, never ignored.
 */

export const JOB_KINDS = ["prepare", "test"] as const;
/** A finished job's status, as the runner reports it. */
export const JOB_STATUSES = ["SUCCEEDED", "FAILED", "TIMED_OUT", "ERROR"] as const;
/** The test frameworks the runner knows (docs/runner-protocol.md, "Test frameworks"); unittest suites run under pytest. */
export const TEST_FRAMEWORKS = ["node-test", "jest", "vitest", "mocha", "ava", "tape", "uvu", "pytest"] as const;
/** The order in which the runner's pool serves waiting work. */
export const JOB_PRIORITIES = ["scoring", "validation", "interactive"] as const;

/** A job's or an execution's id: it names files and directories on the runner. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
export const idSchema = (field: string) => z.string().regex(ID_PATTERN, `${field}: letters, digits, '_' and '-' only`);

export const sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, "expected lowercase hex sha256");
const httpUrl = z.url({ protocol: /^https?$/ });

/** A snapshot or environment archive, downloaded and verified by its digest. */
export const artifactSchema = z.strictObject({ url: httpUrl, sha256: sha256Schema });

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
/** A workspace's own files, written over its snapshot in order. */
export const workspaceFilesSchema = z.array(z.union([fileUpsert, fileDelete])).max(10_000).default([]);

export const limitsSchema = z.strictObject({
  wall_ms: z.number().int().min(100).max(3_600_000).default(120_000),
  cpu_ms: z.number().int().min(100).max(3_600_000).default(120_000),
  memory_mb: z.number().int().min(64).max(65_536).default(1024),
  processes: z.number().int().min(8).max(4096).default(256),
  output_bytes: z.number().int().min(1024).max(16 * 1024 * 1024).default(1024 * 1024),
  workspace_mb: z.number().int().min(1).max(65_536).default(512),
});

export const frameworkSchema = z.enum(["auto", ...TEST_FRAMEWORKS]);

/** Whom the work is done for, so the runner can cap the pool slots one attempt or organization holds. */
export const scheduleSchema = z
  .strictObject({
    priority: z.enum(JOB_PRIORITIES),
    attempt_id: z.string().min(1).max(128).nullable().default(null),
    org_id: z.string().min(1).max(128).nullable().default(null),
  })
  .default({ priority: "interactive", attempt_id: null, org_id: null });

const argv = z.array(z.string().min(1).max(4096).refine((s) => !s.includes("\0"), "NUL in argument")).min(1).max(256);

export const jobSchema = z
  .strictObject({
    job_id: idSchema("job_id"),
    kind: z.enum(JOB_KINDS),
    snapshot: artifactSchema,
    environment: artifactSchema.nullable().default(null),
    files: workspaceFilesSchema,
    patches: z.array(z.string().max(32 * 1024 * 1024)).max(100).default([]),
    test: z
      .strictObject({
        framework: frameworkSchema.default("auto"),
        command: argv.nullable().default(null),
        coverage: z.boolean().default(false),
        /** Run exactly these test files (the command's own file arguments are dropped). */
        files: uniquePaths(MAX_TEST_FILES).nullable().default(null),
        /** Place canary tests in `files` and check them; scoring's hidden-test run. */
        canaries: z.boolean().default(false),
        /**
         * With `canaries`: the task's solution patch. Its changes to test-harness files are
         * applied, so the harness is the one validation ran the solution with; nothing else of it is.
         */
        harness_patch: z.string().max(32 * 1024 * 1024).nullable().default(null),
      })
      .default({ framework: "auto", command: null, coverage: false, files: null, canaries: false, harness_patch: null }),
    /** A prepare job's install as the import states it; null: planned from the repository. */
    install: z.strictObject({ command: argv.nullable().default(null) }).default({ command: null }),
    /** Versions the import states; null: what the repository asks for (engines, .nvmrc), else the runner's default. */
    runtime: z
      .strictObject({
        node: z.string().regex(/^\d+(\.\d+){0,2}$/, "a Node version such as 22 or 20.11").nullable().default(null),
        python: z.string().regex(/^3\.\d+$/, "a Python version such as 3.11").nullable().default(null),
        /** Why the Worker stated `node`: it fell back from a version the tests could not start on (the install log's first line says so). */
        node_reason: z.string().max(2000).nullable().default(null),
      })
      .default({ node: null, python: null, node_reason: null }),
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

/** A job as the runner holds it, defaults filled in. */
export type Job = z.infer<typeof jobSchema>;
/** A job body as the Worker may send it: fields with defaults may be left out. */
export type JobBody = z.input<typeof jobSchema>;
export type Limits = z.infer<typeof limitsSchema>;
export type Artifact = z.infer<typeof artifactSchema>;
export type Framework = (typeof TEST_FRAMEWORKS)[number];
export type JobStatus = (typeof JOB_STATUSES)[number];
export type JobPriority = (typeof JOB_PRIORITIES)[number];
