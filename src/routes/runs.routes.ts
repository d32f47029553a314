import { z } from "zod";
import { preferredWaitSeconds, RUN_LIMITS, RUN_STATUSES, RUN_WAIT_MAX_SECONDS, runStatus, type RunRecord } from "../domain/runs";
import { createRun } from "../flows/runs/run-create.flow";
import { awaitRunEnd, runDetail, runListing, type RunJobState } from "../flows/runs/run-read.flow";
import { jsonContent, jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema, json } from "../http/errors";
import { pageEnvelope, paginate, paginationQuery } from "../http/paging";
import { unwrap } from "../http/unwrap";
import { ownAttempt, visibleAttempt } from "../http/visibility";
import { AttemptIdParam, RepoPath, UrlTtl } from "./params";
import type { RouteTable } from "./table";

const count = z.number().int();

export const RunSchema = z
  .object({
    id: z.string(),
    attempt_id: z.string(),
    status: z
      .enum(RUN_STATUSES)
      .describe(
        "queued (waiting for the sandbox runner) → RUNNING → SUCCEEDED (the tests ran and reported, passing or not: " +
          "see counts), FAILED (no usable report: the command broke, or a CPU, memory or disk limit), TIMED_OUT, " +
          "or ERROR (the service or the runner could not run it; reason says why)",
      ),
    changed_files: z.array(z.string()).describe("The overlay entries the run includes"),
    timeout_seconds: count.describe("Wall-clock limit of the test command"),
    created_at: z.string(),
    updated_at: z.string(),
    started_at: z.string().nullable().describe("When the sandbox runner took the run"),
    finished_at: z.string().nullable(),
    reason: z.string().nullable().describe("Why the run is FAILED, TIMED_OUT or ERROR"),
    exit_code: count.nullable(),
    framework: z.string().nullable().describe("node-test, jest, vitest, mocha, ava, tape, uvu or pytest"),
    counts: z
      .object({ total: count, passed: count, failed: count, skipped: count, errored: count })
      .nullable()
      .describe("Tests by result, once finished"),
    timings: z
      .object({ queued_ms: count, setup_ms: count, run_ms: count, total_ms: count })
      .nullable()
      .describe("In the runner: waiting for a sandbox, preparing the workspace, running the tests, all of it"),
    log_truncated: z.boolean().nullable().describe("True when the log was cut at 1 MiB"),
  })
  .meta({ id: "Run" });

const TestResultSchema = z
  .object({
    name: z.string(),
    classname: z.string().describe("The describe path (node:test) or the module and class (pytest)"),
    file: z.string().nullable(),
    status: z.enum(["passed", "failed", "skipped", "errored"]),
    duration_ms: count,
    message: z.string().nullable(),
  })
  .meta({ id: "RunTestResult" });

const RunDetailSchema = RunSchema.extend({
  tests: z.array(TestResultSchema).describe("Per-test results once finished; empty before, and for a run without a report"),
  artifact_urls: z
    .object({
      junit: z.string().nullable().describe("Presigned download of the JUnit XML; null when the run produced none"),
      logs: z.string().nullable().describe("Presigned download of the combined stdout and stderr; null when there is none"),
    })
    .nullable()
    .describe("Once finished: fresh presigned, time-limited URLs on every GET; download them promptly"),
  artifact_urls_expire_at: z.string().nullable().describe("When the artifact URLs stop working"),
}).meta({ id: "RunDetail" });

const RunIdParam = AttemptIdParam.extend({
  run_id: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, "not a run id"),
});

const notFound = jsonResponse("No such attempt or run, or one the caller may not see", ErrorSchema);

function runView(record: RunRecord, job: RunJobState | null): z.infer<typeof RunSchema> {
  const { result } = record;
  return {
    id: record.id,
    attempt_id: record.attempt_id,
    status: runStatus(record.status, job?.status ?? null),
    changed_files: record.changed_files,
    timeout_seconds: record.timeout_seconds,
    created_at: record.created_at,
    updated_at: record.updated_at,
    started_at: job?.dispatchedAt ?? null,
    finished_at: record.finished_at,
    reason: record.reason,
    exit_code: result?.exit_code ?? null,
    framework: result?.framework ?? null,
    counts: result?.counts ?? null,
    timings: result?.timings ?? null,
    log_truncated: result?.log_truncated ?? null,
  };
}

const { timeoutSeconds } = RUN_LIMITS;

export class CreateRun extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["runs"],
    summary: "Queue a test run of the attempt's work",
    description:
      "By the attempt's candidate (not with an IDE session token), while it is IN_PROGRESS. The run is the task's " +
      "base snapshot and environment plus the overlay entries named in `changed_files` (saved first with PATCH " +
      ".../changes; an unknown path is a 422, repeats count once); `[]` runs the snapshot as it is. The repository's " +
      "tests and the candidate's own run; the task's hidden tests never do. Answers 202 at once with the run " +
      `\`queued\`; read GET .../runs/{run_id} with \`Prefer: wait=N\` until it has ended (or poll it with backoff). ` +
      `At most ${RUN_LIMITS.inFlight} runs per attempt may be ` +
      "queued or running: another is a 429 with Retry-After.",
    request: {
      params: AttemptIdParam,
      body: jsonContent(
        z.strictObject({
          changed_files: z
            .array(RepoPath)
            .max(RUN_LIMITS.changedFiles)
            .describe("Overlay paths to include (upserts and deletions); [] for none, i.e. the task's snapshot as it is"),
          timeout_seconds: z
            .number()
            .int()
            .min(timeoutSeconds.min)
            .max(timeoutSeconds.max)
            .default(timeoutSeconds.default)
            .describe(`Wall-clock limit of the tests, ${timeoutSeconds.min}–${timeoutSeconds.max} s (default ${timeoutSeconds.default})`),
        }),
      ),
    },
    responses: {
      "202": jsonResponse("Accepted: the run, queued", RunSchema),
      "404": notFound,
      "409": jsonResponse("The attempt is not started, or is locked (submitted)", ErrorSchema),
      "429": jsonResponse("Too many runs in flight for the attempt (or a rate limit); retry after Retry-After seconds", ErrorSchema),
    },
  };

  async run({ env, exec, db, caller }: SessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    const attempt = await ownAttempt(db, caller, params.attempt_id);
    const record = unwrap(await createRun(env, exec, attempt, { changed_files: body.changed_files, timeout_seconds: body.timeout_seconds }));
    return json(runView(record, null), 202, { Location: `/api/v1/attempts/${attempt.id}/runs/${record.id}` });
  }
}

export class GetRun extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["runs"],
    summary: "One run: status, counts, per-test results, timings, artifact URLs",
    description:
      "For the attempt's candidate and its organization's staff. Poll until the status is final: with " +
      `\`Prefer: wait=N\` (RFC 7240; N up to ${RUN_WAIT_MAX_SECONDS} s) the answer waits until the run has ended or N ` +
      "seconds have passed, whichever is first, and says `Preference-Applied: wait=N`; without it, poll with backoff. " +
      "Once finished, `artifact_urls` has presigned URLs of the JUnit XML and the log, minted on every GET and " +
      "valid until `artifact_urls_expire_at`.",
    request: {
      params: RunIdParam,
      query: z.object({
        url_ttl_seconds: UrlTtl,
      }),
      headers: z.object({
        prefer: z
          .string()
          .optional()
          .describe(`\`wait=N\`: answer once the run has ended, or after N seconds (at most ${RUN_WAIT_MAX_SECONDS}); other preferences are ignored`),
      }),
    },
    responses: { "200": jsonResponse("The run", RunDetailSchema), "404": notFound },
  };

  async run({ request, env, db, caller }: SessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    const { attempt } = await visibleAttempt(db, caller, params.attempt_id);
    // Read from the request: the header is documented above, and an unknown preference is ignored (RFC 7240), never a 422.
    const wait = preferredWaitSeconds(request.headers.get("prefer"));
    if (wait !== null) await awaitRunEnd(env, attempt.id, params.run_id, wait);
    const { record, job, results } = unwrap(await runDetail(env, attempt.id, params.run_id, query.url_ttl_seconds));
    let detail: z.infer<typeof RunDetailSchema> = { ...runView(record, job), tests: [], artifact_urls: null, artifact_urls_expire_at: null };
    if (record.status !== "queued") {
      detail = { ...detail, artifact_urls: { junit: null, logs: null } };
      if (results) {
        const { tests, artifacts } = results;
        detail = { ...detail, tests, artifact_urls: artifacts.urls, artifact_urls_expire_at: artifacts.expires_at };
      }
    }
    // The artifact URLs are credentials for as long as they live.
    return json(detail, 200, { "Cache-Control": "no-store", ...(wait !== null && { "Preference-Applied": `wait=${wait}`, Vary: "Prefer" }) });
  }
}

export class ListRuns extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["runs"],
    summary: "The attempt's runs, newest first",
    description:
      "For the attempt's candidate and its organization's staff. Each run without its per-test results and " +
      "artifact URLs: GET the run for those.",
    request: { params: AttemptIdParam, query: paginationQuery({ defaultLimit: 20, maxLimit: 100 }) },
    responses: { "200": jsonResponse("A page of runs", pageEnvelope(RunSchema)), "404": notFound },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    const { attempt } = await visibleAttempt(db, caller, params.attempt_id);
    const runs = runListing(env, attempt.id);
    return paginate(query, runs.count, async (limit, offset) => (await runs.page(limit, offset)).map((r) => runView(r.record, r.job)));
  }
}

export const runRoutes: RouteTable = [
  ["POST", "/attempts/:attempt_id/runs", CreateRun],
  ["GET", "/attempts/:attempt_id/runs", ListRuns],
  ["GET", "/attempts/:attempt_id/runs/:run_id", GetRun],
];
