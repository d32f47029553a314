import { createMessageBatch, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sleep } from "../../scripts/lib/wait";
import { database } from "../../src/db/client";
import { finishRunnerJob } from "../../src/db/runner-jobs.queries";
import { summarizeResult, type RunnerCallback } from "../../src/domain/runner-callback";
import { DISPATCH_ATTEMPTS, runnerJobKeys, type RunnerJobSpec } from "../../src/domain/runner-jobs";
import { DISPATCH_WINDOW_MS, RUN_SWEEP_MARGIN_MS } from "../../src/domain/runs";
import worker from "../../src/index";
import type { NotificationQueueMessage, RunnerQueueMessage } from "../../src/domain/queue-messages";
import { assign, attemptStub, b64, createAttempt, openIdeSession, patchChanges, signIn, startedAttemptOnReadyTask, submit, type TestUser } from "../support/worker/attempts";
import { call, errorBody } from "../support/worker/client";
import { eventually } from "../support/worker/client";
import { accepted, fakeRunner } from "../support/worker/fake-runner";
import { callPresigned } from "../support/worker/presigned";
import { callbackFor, postCallback } from "../support/worker/runner-callbacks";
import { insertReadyTask } from "../support/worker/tasks";
import { afterQueuedNotifications, notificationsOf, notified } from "../support/worker/notifications";

interface RunJson {
  id: string;
  attempt_id: string;
  status: string;
  changed_files: string[];
  timeout_seconds: number;
  started_at: string | null;
  finished_at: string | null;
  reason: string | null;
  exit_code: number | null;
  counts: Record<string, number> | null;
  timings: Record<string, number> | null;
  tests?: { name: string; status: string }[];
  artifact_urls?: { junit: string | null; logs: string | null } | null;
  artifact_urls_expire_at?: string | null;
}

type JobRow = { id: string; status: string; reason: string | null; dispatched_at: string | null };

// The sandbox runner is the one outside party faked here: it answers every job as `answer`
// says, and the tests play its uploads and callbacks. Queues, D1, R2 and the objects are real.
const dispatched = new Map<string, Record<string, unknown>>();
let answer: (job: Record<string, unknown>) => Response = accepted;
beforeAll(() => {
  fakeRunner((job) => {
    dispatched.set(String(job.job_id), job);
    return answer(job);
  });
});
afterAll(() => vi.restoreAllMocks());


const startedAttempt = startedAttemptOnReadyTask;

const postRun = (user: TestUser, attemptId: string, body: Record<string, unknown> = { changed_files: [] }) =>
  call(`/api/v1/attempts/${attemptId}/runs`, { method: "POST", token: user.token, body });

async function queuedRun(user: TestUser, attemptId: string, body?: Record<string, unknown>): Promise<RunJson> {
  const res = await postRun(user, attemptId, body);
  expect(res.status).toBe(202);
  return (await res.json()) as RunJson;
}

async function getRun(user: TestUser, attemptId: string, runId: string, query = ""): Promise<RunJson> {
  const res = await call(`/api/v1/attempts/${attemptId}/runs/${runId}${query}`, { token: user.token });
  expect(res.status).toBe(200);
  return (await res.json()) as RunJson;
}

// A run's job is owned by `{attempt_id}/{run_id}`; run ids are unique, so the run id alone finds it.
const jobOf = (runId: string) =>
  env.DB.prepare("SELECT id, status, reason, dispatched_at FROM runner_jobs WHERE owner_type = 'run' AND owner_id LIKE ?")
    .bind(`%/${runId}`)
    .first<JobRow>();

/** The run's job, once the (fake) runner has been handed it. */
async function dispatchedJob(runId: string): Promise<JobRow> {
  return eventually(async () => {
    const job = await jobOf(runId);
    return job?.status === "dispatched" ? job : undefined;
  });
}

async function runUntil(user: TestUser, attemptId: string, runId: string, done: (r: RunJson) => boolean): Promise<RunJson> {
  return eventually(async () => {
    const run = await getRun(user, attemptId, runId);
    return done(run) ? run : undefined;
  });
}

const finished = (r: RunJson) => !["queued", "RUNNING"].includes(r.status);

/** The run's row in its attempt's object, for what the API does not show. */
function objectRun(attemptId: string, runId: string) {
  return runInDurableObject(attemptStub(attemptId), async (_i, state) => ({
    row: state.storage.sql.exec<{ sweep_at: number | null; version: number; synced_version: number }>(
      "SELECT sweep_at, version, synced_version FROM runs WHERE id = ?",
      runId,
    ).one(),
    alarm: await state.storage.getAlarm(),
  }));
}

function setSweepAt(attemptId: string, runId: string, at: number) {
  return runInDurableObject(attemptStub(attemptId), (_i, state) => {
    state.storage.sql.exec("UPDATE runs SET sweep_at = ? WHERE id = ?", at, runId);
  });
}

/** One delivery of a dispatch message, as the Queues runtime makes its `attempts`th. */
async function deliverDispatch(jobId: string, attempts: number): Promise<void> {
  const batch = createMessageBatch<RunnerQueueMessage>("runner-jobs", [
    { id: `msg-${attempts}`, timestamp: new Date(), attempts, body: { type: "dispatch", job_id: jobId } },
  ]);
  await worker.queue(batch as MessageBatch, env);
}

const testResult = (name: string, status: "passed" | "failed") => ({
  name,
  classname: "slugify",
  file: null,
  status,
  duration_ms: 2,
  message: status === "failed" ? "expected 'a-b', got 'a'" : null,
});

describe("POST /attempts/{id}/runs", () => {
  it("202 queued; the job is the task's snapshot and environment, the named overlay entries, the tests, and no patches", async () => {
    const { candidate, task, attemptId } = await startedAttempt();
    await patchChanges(candidate, attemptId, {
      "src/slugify.js": { op: "upsert", content_b64: b64("export const slugify = () => '';\n") },
      "test/own.test.js": { op: "upsert", content_b64: b64("// mine\n") },
      "README.md": { op: "delete" },
      "notes.md": { op: "upsert", content_b64: b64("not in this run") },
    });
    const res = await postRun(candidate, attemptId, {
      changed_files: ["test/own.test.js", "src/slugify.js", "README.md", "src/slugify.js"],
      timeout_seconds: 30,
    });
    expect(res.status).toBe(202);
    const run = (await res.json()) as RunJson;
    expect(run).toMatchObject({
      id: expect.stringMatching(/^run_[0-9a-f]{32}$/),
      attempt_id: attemptId,
      status: "queued",
      changed_files: ["test/own.test.js", "src/slugify.js", "README.md"],
      timeout_seconds: 30,
      started_at: null,
      finished_at: null,
      counts: null,
    });
    expect(res.headers.get("location")).toBe(`/api/v1/attempts/${attemptId}/runs/${run.id}`);

    const job = await dispatchedJob(run.id);
    const spec = await (await env.BUCKET.get(runnerJobKeys(job.id).spec))!.json<RunnerJobSpec>();
    expect(spec).toEqual({
      kind: "test",
      owner: { owner_type: "run", owner_id: `${attemptId}/${run.id}` },
      schedule: { attempt_id: attemptId, org_id: task.organizationId },
      snapshot: { key: `tasks/${task.id}/snapshot.tar.gz`, sha256: task.snapshotSha256 },
      environment: null,
      files: [
        { path: "README.md", delete: true },
        { path: "src/slugify.js", content_b64: b64("export const slugify = () => '';\n") },
        { path: "test/own.test.js", content_b64: b64("// mine\n") },
      ],
      test: { framework: "node-test", command: ["node", "--test"] },
      runtime: { node: null, python: null },
      limits: { wall_ms: 30_000, cpu_ms: 60_000, memory_mb: 1024, processes: 256, output_bytes: 1048576, workspace_mb: 512 },
    });
    expect(dispatched.get(job.id)).toMatchObject({
      kind: "test",
      files: spec.files,
      patches: [],
      schedule: { priority: "interactive", attempt_id: attemptId, org_id: task.organizationId },
    });

    const running = await getRun(candidate, attemptId, run.id);
    expect(running).toMatchObject({ status: "RUNNING", started_at: job.dispatched_at, artifact_urls: null, tests: [] });
  });

  it("changed_files [] runs the snapshot as it is; an unknown path is a 422 at its index; a malformed one too", async () => {
    const { candidate, attemptId } = await startedAttempt();
    await patchChanges(candidate, attemptId, { "src/a.js": { op: "upsert", content_b64: b64("a") } });
    const bare = await queuedRun(candidate, attemptId, { changed_files: [] });
    expect(bare).toMatchObject({ changed_files: [], timeout_seconds: 120 });
    const job = await dispatchedJob(bare.id);
    expect(dispatched.get(job.id)).toMatchObject({ files: [], patches: [], limits: { wall_ms: 120_000 } });

    const unknown = await postRun(candidate, attemptId, { changed_files: ["src/a.js", "src/b.js"] });
    expect(unknown.status).toBe(422);
    expect((await errorBody(unknown)).detail).toEqual([
      { loc: ["body", "changed_files", 1], msg: expect.stringMatching(/src\/b\.js is not in the attempt's changes overlay/), type: "unknown_path" },
    ]);
    const malformed = await postRun(candidate, attemptId, { changed_files: ["../etc/passwd"], timeout_seconds: 301, extra: 1 });
    const locs = ((await errorBody(malformed)).detail as { loc: unknown[] }[]).map((d) => d.loc);
    expect(locs).toEqual(expect.arrayContaining([["body", "changed_files", 0], ["body", "timeout_seconds"], ["body", "extra"]]));
    expect((await postRun(candidate, attemptId, {})).status).toBe(422);
  });

  it("only while IN_PROGRESS: 409 before start and once submitted; a run in flight at submission still finishes", async () => {
    const orgId = `org-${crypto.randomUUID().slice(0, 8)}`;
    await signIn({ role: "interviewer", org_id: orgId });
    const candidate = await signIn();
    const task = await insertReadyTask(orgId);
    await assign(task.id, candidate);
    const attempt = await createAttempt(candidate, task.id);
    const early = await postRun(candidate, attempt.id);
    expect(early.status).toBe(409);
    expect((await errorBody(early)).detail).toMatch(/has not been started; start it before running tests/);

    await call(`/api/v1/attempts/${attempt.id}/start`, { method: "POST", token: candidate.token });
    const run = await queuedRun(candidate, attempt.id);
    const job = await dispatchedJob(run.id);
    expect((await submit(candidate.token, attempt.id)).status).toBe(202);
    const late = await postRun(candidate, attempt.id);
    expect(late.status).toBe(409);
    expect((await errorBody(late)).detail).toMatch(/Attempt .* is locked: it was submitted/);

    expect((await postCallback(JSON.stringify(callbackFor(job.id)))).status).toBe(200);
    const done = await runUntil(candidate, attempt.id, run.id, finished);
    expect(done).toMatchObject({ status: "SUCCEEDED", counts: { total: 2, passed: 1, failed: 1 } });
  });

  it("at most 3 runs in flight: concurrent requests get exactly 3 through, the rest a 429 saying so; a finished run frees a place", async () => {
    const { candidate, attemptId } = await startedAttempt();
    const responses = await Promise.all(Array.from({ length: 8 }, () => postRun(candidate, attemptId)));
    expect(responses.map((r) => r.status).sort()).toEqual([202, 202, 202, 429, 429, 429, 429, 429]);
    const refused = responses.find((r) => r.status === 429)!;
    expect(refused.headers.get("retry-after")).toBe("10");
    expect((await errorBody(refused)).detail).toMatch(/has 3 runs in flight \(queued or running\); at most 3/);

    const first = (await responses.find((r) => r.status === 202)!.json()) as RunJson;
    const job = await dispatchedJob(first.id);
    await postCallback(JSON.stringify(callbackFor(job.id)));
    await runUntil(candidate, attemptId, first.id, finished);
    expect((await postRun(candidate, attemptId)).status).toBe(202);
    expect((await postRun(candidate, attemptId)).status).toBe(429);
  });

  it("the candidate runs; staff read but may not run (403); IDE tokens are refused (401); others get a 404", async () => {
    const { candidate, interviewer, attemptId } = await startedAttempt();
    const run = await queuedRun(candidate, attemptId);

    const staffPost = await postRun(interviewer, attemptId);
    expect(staffPost.status).toBe(403);
    expect((await errorBody(staffPost)).detail).toMatch(/Only the candidate/);
    expect((await getRun(interviewer, attemptId, run.id)).id).toBe(run.id);
    expect((await call(`/api/v1/attempts/${attemptId}/runs`, { token: interviewer.token })).status).toBe(200);

    const ide = ((await (await openIdeSession(candidate, attemptId)).json()) as { session_token: string }).session_token;
    for (const res of [
      await call(`/api/v1/attempts/${attemptId}/runs`, { method: "POST", token: ide, body: { changed_files: [] } }),
      await call(`/api/v1/attempts/${attemptId}/runs/${run.id}`, { token: ide }),
    ]) {
      expect(res.status).toBe(401);
      expect((await errorBody(res)).detail).toMatch(/IDE session tokens are not accepted on this endpoint/);
    }

    const stranger = await signIn();
    expect((await postRun(stranger, attemptId)).status).toBe(404);
    expect((await call(`/api/v1/attempts/${attemptId}/runs/${run.id}`, { token: stranger.token })).status).toBe(404);
    const other = await startedAttempt();
    const elsewhere = await call(`/api/v1/attempts/${other.attemptId}/runs/${run.id}`, { token: other.candidate.token });
    expect(elsewhere.status).toBe(404);
    expect((await errorBody(elsewhere)).detail).toBe(`Run ${run.id} not found in attempt ${other.attemptId}`);
  });
});

describe("a finished run", () => {
  it("has its counts, per-test results and timings, and artifact URLs that download, expire, and refuse tampering", async () => {
    const { candidate, interviewer, attemptId } = await startedAttempt();
    const run = await queuedRun(candidate, attemptId);
    const job = await dispatchedJob(run.id);
    const uploads = dispatched.get(job.id)!.uploads as { junit: string; log: string };
    expect((await callPresigned(uploads.junit, { method: "PUT", body: "<testsuites><testsuite/></testsuites>" })).status).toBe(200);
    expect((await callPresigned(uploads.log, { method: "PUT", body: "# tests 2\n# fail 1\n" })).status).toBe(200);
    const result: RunnerCallback = callbackFor(job.id, { tests: [testResult("joins words", "passed"), testResult("cuts", "failed")] });
    const recorded = await postCallback(JSON.stringify(result));
    expect(await recorded.json()).toMatchObject({ recorded: true });

    const done = await runUntil(candidate, attemptId, run.id, finished);
    expect(done).toMatchObject({
      status: "SUCCEEDED",
      reason: null,
      exit_code: 1,
      counts: { total: 2, passed: 1, failed: 1, skipped: 0, errored: 0 },
      timings: { queued_ms: 3, setup_ms: 40, run_ms: 900, total_ms: 950 },
      tests: [
        { name: "joins words", status: "passed" },
        { name: "cuts", status: "failed", message: "expected 'a-b', got 'a'" },
      ],
    });
    expect(Date.parse(done.finished_at!)).toBeGreaterThanOrEqual(Date.parse(done.started_at!));
    expect(Date.parse(done.artifact_urls_expire_at!) - Date.now()).toBeGreaterThan(800_000);
    const junit = await callPresigned(done.artifact_urls!.junit!);
    expect(junit.status).toBe(200);
    expect(await junit.text()).toBe("<testsuites><testsuite/></testsuites>");
    expect(await (await callPresigned(done.artifact_urls!.logs!)).text()).toBe("# tests 2\n# fail 1\n");
    expect((await getRun(interviewer, attemptId, run.id)).artifact_urls?.junit).toMatch(/^https:\/\/assay\.test\/api\/v1\/storage\//);
    const res = await call(`/api/v1/attempts/${attemptId}/runs/${run.id}`, { token: candidate.token });
    expect(res.headers.get("cache-control")).toBe("no-store");

    const tampered = new URL(done.artifact_urls!.junit!);
    tampered.searchParams.set("sig", tampered.searchParams.get("sig")!.replace(/.$/, (c) => (c === "0" ? "1" : "0")));
    expect((await callPresigned(tampered.toString())).status).toBe(403);
    const otherKey = new URL(done.artifact_urls!.logs!);
    otherKey.searchParams.set("sig", new URL(done.artifact_urls!.junit!).searchParams.get("sig")!);
    expect((await callPresigned(otherKey.toString())).status).toBe(403);

    const brief = await getRun(candidate, attemptId, run.id, "?url_ttl_seconds=1");
    expect((await callPresigned(brief.artifact_urls!.junit!)).status).toBe(200);
    await sleep(Date.parse(brief.artifact_urls_expire_at!) - Date.now() + 1100);
    expect((await callPresigned(brief.artifact_urls!.junit!)).status).toBe(403);
    expect((await call(`/api/v1/attempts/${attemptId}/runs/${run.id}?url_ttl_seconds=3601`, { token: candidate.token })).status).toBe(422);
  });

  it("Prefer: wait answers once the run has ended, said in Preference-Applied; an ended run at once; without it, no wait", async () => {
    const { candidate, attemptId } = await startedAttempt();
    const run = await queuedRun(candidate, attemptId);
    const job = await dispatchedJob(run.id);
    const path = `/api/v1/attempts/${attemptId}/runs/${run.id}`;
    const plain = await call(path, { token: candidate.token });
    expect((await plain.json()) as RunJson).toMatchObject({ status: "RUNNING" });
    expect(plain.headers.get("preference-applied")).toBeNull();

    const waiting = call(path, { token: candidate.token, headers: { prefer: "respond-async, wait=20" } });
    // The GET is in the object's list of waiters before the result is reported.
    await eventually(() => runInDurableObject(attemptStub(attemptId), (object) => ((object as unknown as { runWaiters: Map<string, Set<unknown>> }).runWaiters.get(run.id)?.size === 1 ? true : undefined)));
    expect((await (await postCallback(JSON.stringify(callbackFor(job.id)))).json())).toMatchObject({ recorded: true });
    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(answered.headers.get("preference-applied")).toBe("wait=20");
    expect((await answered.json()) as RunJson).toMatchObject({ status: "SUCCEEDED", counts: { total: 2, passed: 1 } });
    await runInDurableObject(attemptStub(attemptId), (object) => {
      expect((object as unknown as { runWaiters: Map<string, unknown> }).runWaiters.size).toBe(0);
    });

    const ended = await call(path, { token: candidate.token, headers: { prefer: "wait=20" } });
    expect((await ended.json()) as RunJson).toMatchObject({ status: "SUCCEEDED" });
  });

  it("Prefer: wait on a run that does not end answers it as it stands after N seconds; another's run is still a 404", async () => {
    const { candidate, attemptId } = await startedAttempt();
    const run = await queuedRun(candidate, attemptId);
    await dispatchedJob(run.id);
    const res = await call(`/api/v1/attempts/${attemptId}/runs/${run.id}`, { token: candidate.token, headers: { prefer: "wait=1" } });
    expect(res.headers.get("preference-applied")).toBe("wait=1");
    expect((await res.json()) as RunJson).toMatchObject({ status: "RUNNING" });
    // A wait that ran out leaves nothing behind in the object: waiting is no way to make it hold memory.
    await runInDurableObject(attemptStub(attemptId), (object) => {
      expect((object as unknown as { runWaiters: Map<string, unknown> }).runWaiters.size).toBe(0);
    });
    const stranger = await signIn();
    expect((await call(`/api/v1/attempts/${attemptId}/runs/${run.id}`, { token: stranger.token, headers: { prefer: "wait=20" } })).status).toBe(404);
    expect((await call(`/api/v1/attempts/${attemptId}/runs/run_${"0".repeat(32)}`, { token: candidate.token, headers: { prefer: "wait=20" } })).status).toBe(404);
  });

  it("a repeated or late report changes nothing", async () => {
    const { candidate, attemptId } = await startedAttempt();
    const run = await queuedRun(candidate, attemptId);
    const job = await dispatchedJob(run.id);
    await postCallback(JSON.stringify(callbackFor(job.id)));
    const done = await runUntil(candidate, attemptId, run.id, finished);
    const again = await postCallback(JSON.stringify(callbackFor(job.id, { status: "FAILED", reason: "no report", tests: [] })));
    expect(await again.json()).toMatchObject({ recorded: false, status: "SUCCEEDED" });
    await attemptStub(attemptId).finishRun(run.id, job.id, { status: "ERROR", reason: "late", result: null });
    await afterQueuedNotifications(candidate.token);
    const after = await getRun(candidate, attemptId, run.id);
    expect(after).toEqual({ ...done, artifact_urls: after.artifact_urls, artifact_urls_expire_at: after.artifact_urls_expire_at });
    expect((await objectRun(attemptId, run.id)).row.version).toBe(2);
    // Its candidate heard of it once, with the status and the counts it has kept.
    const heard = await notified(candidate.token, "run.finished", { attempt_id: attemptId, run_id: run.id, status: "SUCCEEDED" });
    expect(heard.payload.counts).toEqual({ total: 2, passed: 1, failed: 1, skipped: 0, errored: 0 });
    expect((await notificationsOf(candidate.token)).items.filter((n) => n.payload.run_id === run.id)).toHaveLength(1);
  });

  it("TIMED_OUT, FAILED and ERROR keep the runner's reason; a run without a report has no tests and only the artifacts it made", async () => {
    const { candidate, attemptId } = await startedAttempt();
    const cases: [Partial<RunnerCallback>, string | null][] = [
      [{ status: "TIMED_OUT", reason: "wall-clock limit of 120000 ms reached; the process tree was killed", exit_code: null }, "logs"],
      [{ status: "FAILED", reason: "the test command produced no JUnit report (exit code 1)" }, "logs"],
      [{ status: "ERROR", reason: "snapshot download failed: HTTP 404", artifacts: { junit: false, log: false } }, null],
    ];
    for (const [outcome, artifact] of cases) {
      const run = await queuedRun(candidate, attemptId);
      const job = await dispatchedJob(run.id);
      await postCallback(
        JSON.stringify(callbackFor(job.id, { tests: [], counts: { total: 0, passed: 0, failed: 0, skipped: 0, errored: 0 }, artifacts: { junit: false, log: true }, ...outcome })),
      );
      const done = await runUntil(candidate, attemptId, run.id, finished);
      expect(done).toMatchObject({ status: outcome.status, reason: outcome.reason, tests: [] });
      expect(done.artifact_urls?.junit).toBeNull();
      expect(done.artifact_urls?.logs === null).toBe(artifact === null);
    }
  });

  it("GET .../runs lists the attempt's runs newest first, paginated, with their live status", async () => {
    const { candidate, interviewer, attemptId } = await startedAttempt();
    const a = await queuedRun(candidate, attemptId);
    const job = await dispatchedJob(a.id);
    await postCallback(JSON.stringify(callbackFor(job.id)));
    await runUntil(candidate, attemptId, a.id, finished);
    const b = await queuedRun(candidate, attemptId);
    await dispatchedJob(b.id);
    await sleep(5);
    const c = await queuedRun(candidate, attemptId);

    type Page = { items: RunJson[]; pagination: { total: number; pages: number; current: number; limit: number } };
    const page = (await (await call(`/api/v1/attempts/${attemptId}/runs?limit=2`, { token: interviewer.token })).json()) as Page;
    expect(page.pagination).toEqual({ total: 3, pages: 2, current: 1, limit: 2 });
    expect(page.items.map((r) => r.id)).toEqual([c.id, b.id]);
    expect(page.items[1]).toMatchObject({ status: "RUNNING" });
    expect(page.items[0]).not.toHaveProperty("tests");
    const last = (await (await call(`/api/v1/attempts/${attemptId}/runs?page=2&limit=2`, { token: candidate.token })).json()) as Page;
    expect(last.items).toMatchObject([{ id: a.id, status: "SUCCEEDED", counts: { total: 2 } }]);
    expect((await call(`/api/v1/attempts/${attemptId}/runs?limit=101`, { token: candidate.token })).status).toBe(422);
  });
});

describe("reliability", () => {
  it("an unreachable runner: dispatch is retried, then the run is ERROR with the reason", async () => {
    const { candidate, attemptId } = await startedAttempt();
    answer = () => Response.json({ detail: "runner is shutting down" }, { status: 503 });
    try {
      const run = await queuedRun(candidate, attemptId);
      const job = await eventually(() => jobOf(run.id).then((j) => j ?? undefined));
      expect((await getRun(candidate, attemptId, run.id)).status).toBe("queued");
      // Failures are counted on the job, whichever delivery meets them (the queue's own retries too).
      for (let i = 1; i <= 2 * DISPATCH_ATTEMPTS && (await jobOf(run.id))?.status === "queued"; i++) await deliverDispatch(job.id, i);
      const done = await runUntil(candidate, attemptId, run.id, finished);
      expect(done).toMatchObject({ status: "ERROR", counts: null, tests: [], artifact_urls: { junit: null, logs: null } });
      expect(done.reason).toMatch(/^the sandbox runner could not be reached: HTTP 503 .*\(6 attempts\)$/);
    } finally {
      answer = (job) => Response.json({ job_id: job.job_id, status: "accepted" }, { status: 202 });
    }
  });

  it("the alarm sweeps a run whose result never comes to ERROR, after its bound counted from the hand-over", async () => {
    const { candidate, attemptId } = await startedAttempt();
    const before = Date.now();
    const run = await queuedRun(candidate, attemptId, { changed_files: [], timeout_seconds: 30 });
    const job = await dispatchedJob(run.id);
    const state = await objectRun(attemptId, run.id);
    expect(state.row.sweep_at).toBeGreaterThanOrEqual(before + DISPATCH_WINDOW_MS + RUN_SWEEP_MARGIN_MS);
    expect(state.row.sweep_at).toBeLessThanOrEqual(Date.now() + DISPATCH_WINDOW_MS + RUN_SWEEP_MARGIN_MS);
    expect(state.alarm).toBe(state.row.sweep_at);

    // Due by the first estimate, but the runner took it just now: the sweep waits for the job's own bound.
    await setSweepAt(attemptId, run.id, Date.now() - 1000);
    expect(await runDurableObjectAlarm(attemptStub(attemptId))).toBe(true);
    const waiting = await objectRun(attemptId, run.id);
    expect(waiting.row.sweep_at).toBe(Date.parse(job.dispatched_at!) + 30_000 + RUN_SWEEP_MARGIN_MS);
    expect(waiting.alarm).toBe(waiting.row.sweep_at);
    expect((await getRun(candidate, attemptId, run.id)).status).toBe("RUNNING");

    const longAgo = new Date(Date.now() - 10 * 60_000).toISOString();
    await env.DB.prepare("UPDATE runner_jobs SET dispatched_at = ? WHERE id = ?").bind(longAgo, job.id).run();
    await setSweepAt(attemptId, run.id, Date.now() - 1000);
    expect(await runDurableObjectAlarm(attemptStub(attemptId))).toBe(true);
    const swept = await getRun(candidate, attemptId, run.id);
    expect(swept).toMatchObject({ status: "ERROR", tests: [], artifact_urls: { junit: null, logs: null } });
    expect(swept.reason).toBe("no result from the sandbox runner within 330 s of handing it the run (its time limit is 30 s); the runner may have stopped or lost it");
    expect(await jobOf(run.id)).toMatchObject({ status: "ERROR", reason: swept.reason });
    expect((await objectRun(attemptId, run.id)).row.sweep_at).toBeNull();
    const row = await env.DB.prepare("SELECT status, reason FROM runs WHERE id = ?").bind(run.id).first();
    expect(row).toEqual({ status: "ERROR", reason: swept.reason });

    const late = await postCallback(JSON.stringify(callbackFor(job.id)));
    expect(await late.json()).toMatchObject({ recorded: false, status: "ERROR" });
    await afterQueuedNotifications(candidate.token);
    expect((await getRun(candidate, attemptId, run.id)).status).toBe("ERROR");
    // The sweep's announcement takes two queues, so it may come after the test notification.
    const heard = await notified(candidate.token, "run.finished", { run_id: run.id, status: "ERROR" });
    expect(heard.payload.counts).toBeNull();
    expect((await notificationsOf(candidate.token)).items.filter((n) => n.payload.run_id === run.id).map((n) => n.payload.status)).toEqual(["ERROR"]);
  });

  it("a run whose job ended but whose completion message was lost is recorded by the sweep", async () => {
    const { candidate, attemptId } = await startedAttempt();
    const run = await queuedRun(candidate, attemptId);
    const job = await dispatchedJob(run.id);
    const result = callbackFor(job.id, { tests: [testResult("a", "passed")], counts: { total: 1, passed: 1, failed: 0, skipped: 0, errored: 0 } });
    await env.BUCKET.put(runnerJobKeys(job.id).result, JSON.stringify(result));
    expect(await finishRunnerJob(database(env.DB), job.id, { status: "SUCCEEDED", reason: null, result: summarizeResult(result) })).toBe(true);
    await setSweepAt(attemptId, run.id, Date.now() - 1000);
    expect(await runDurableObjectAlarm(attemptStub(attemptId))).toBe(true);
    expect(await getRun(candidate, attemptId, run.id)).toMatchObject({ status: "SUCCEEDED", counts: { total: 1, passed: 1 }, tests: [{ name: "a" }] });
    const heard = await notified(candidate.token, "run.finished", { attempt_id: attemptId, run_id: run.id, status: "SUCCEEDED" });
    expect(heard.payload.counts).toEqual({ total: 1, passed: 1, failed: 0, skipped: 0, errored: 0 });
  });

  it("a swept run's announcement that kept failing is made late from the notification dead letters", async () => {
    const { candidate, attemptId } = await startedAttempt();
    const run = { attempt_id: attemptId, candidate_id: candidate.id, run_id: `run_${crypto.randomUUID().replaceAll("-", "")}`, status: "ERROR" as const, counts: null };
    const batch = createMessageBatch<NotificationQueueMessage>("notification-events-dlq", [
      { id: "msg-1", timestamp: new Date(), attempts: 1, body: { type: "run_ended", run } },
    ]);
    await worker.queue(batch as MessageBatch, env);
    const heard = await notified(candidate.token, "run.finished", { attempt_id: attemptId, run_id: run.run_id, status: "ERROR" });
    expect(heard.payload.counts).toBeNull();
  });

  it("a run the object stored but never queued (it stopped half-way) is ERROR at its sweep", async () => {
    const { candidate, attemptId } = await startedAttempt();
    const now = new Date().toISOString();
    await runInDurableObject(attemptStub(attemptId), (_i, state) => {
      state.storage.sql.exec(
        `INSERT INTO runs (id, status, changed_files, timeout_seconds, created_at, updated_at, sweep_at, version, synced_version)
         VALUES ('run_halfway', 'queued', '[]', 120, ?, ?, ?, 1, 1)`,
        now,
        now,
        Date.now() - 1000,
      );
    });
    expect(await runDurableObjectAlarm(attemptStub(attemptId))).toBe(true);
    expect(await getRun(candidate, attemptId, "run_halfway")).toMatchObject({ status: "ERROR", reason: "the run was interrupted before it was queued" });
  });
});

describe("OpenAPI", () => {
  it("documents the run routes and their answers", async () => {
    const doc = (await (await call("/api/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; description?: string }>>;
    };
    const post = doc.paths["/api/v1/attempts/{attempt_id}/runs"]?.post;
    expect(Object.keys(post?.responses ?? {})).toEqual(expect.arrayContaining(["202", "401", "403", "404", "409", "422", "429"]));
    expect(post?.description).toMatch(/not with an IDE session token/);
    expect(doc.paths["/api/v1/attempts/{attempt_id}/runs"]?.get).toBeDefined();
    expect(Object.keys(doc.paths["/api/v1/attempts/{attempt_id}/runs/{run_id}"]?.get?.responses ?? {})).toEqual(
      expect.arrayContaining(["200", "404"]),
    );
  });
});
