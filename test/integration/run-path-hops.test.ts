import { createExecutionContext, createMessageBatch, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { database } from "../../src/db/client";
import { findRunnerJob } from "../../src/db/runner-jobs.queries";
import { FIRST_OFFER_BACKSTOP_SECONDS, OWNER_TOLD_BACKSTOP_SECONDS, stepOwnerId } from "../../src/domain/runner-jobs";
import { SCORING_START_BACKSTOP_SECONDS } from "../../src/domain/scoring-jobs";
import { taskKeys } from "../../src/domain/tasks";
import type { RunnerQueueMessage, ScoringMessage } from "../../src/domain/queue-messages";
import worker from "../../src/index";
import { b64, patchChanges, startedAttemptOnReadyTask, type TestUser } from "../support/worker/attempts";
import { call, freshIp } from "../support/worker/client";
import { accepted, fakeRunner } from "../support/worker/fake-runner";
import { createJob } from "../support/worker/runner";
import { callbackFor, runnerHeaders } from "../support/worker/runner-callbacks";
import { insertReadyTask } from "../support/worker/tasks";

// The hops between a run's POST and its result, and between a submit and its report, that need
// no queue are made by the request before them, after its answer (docs/runner-protocol.md, "No
// queue hop on a candidate's wait"); each keeps its queue message, sent later. These tests give
// each request an execution context of their own and wait for its waitUntil work, and no
// further: what they find done then was done by the request, not by a queue delivery.

const db = () => database(env.DB);
const job = async (id: string) => (await findRunnerJob(db(), id))!;

afterEach(() => vi.restoreAllMocks());

/** One request to the Worker, and everything it left to waitUntil, done. */
async function request(path: string, init: { method: string; token?: string; body: string; headers?: Record<string, string> }): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("cf-connecting-ip", freshIp());
  headers.set("content-type", "application/json");
  if (init.token) headers.set("authorization", `Bearer ${init.token}`);
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(`https://assay.test${path}`, { method: init.method, headers, body: init.body }), env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/** Messages sent to a queue binding from now on, still sent for real. */
function sentTo<T>(queue: Queue<T>) {
  const send = vi.spyOn(queue, "send");
  return () => send.mock.calls.map(([body, options]) => ({ body, delaySeconds: options?.delaySeconds ?? 0 }));
}

async function deliver<T>(queue: string, body: T) {
  const batch = createMessageBatch<T>(queue, [{ id: "msg-1", timestamp: new Date(), attempts: 1, body }]);
  const ctx = createExecutionContext();
  await worker.queue(batch as MessageBatch, env);
  return getQueueResult(batch, ctx);
}

async function startedAttempt(): Promise<{ candidate: TestUser; attemptId: string; taskId: string }> {
  const { candidate, attemptId, task } = await startedAttemptOnReadyTask();
  return { candidate, attemptId, taskId: task.id };
}

const runJobOf = (runId: string) =>
  env.DB.prepare("SELECT id FROM runner_jobs WHERE owner_type = 'run' AND owner_id LIKE ?").bind(`%/${runId}`).first<{ id: string }>();

async function postRun(candidate: TestUser, attemptId: string): Promise<{ runId: string; jobId: string }> {
  const res = await request(`/api/v1/attempts/${attemptId}/runs`, { method: "POST", token: candidate.token, body: JSON.stringify({ changed_files: [] }) });
  expect(res.status).toBe(202);
  const runId = ((await res.json()) as { id: string }).id;
  return { runId, jobId: (await runJobOf(runId))!.id };
}

async function callback(jobId: string): Promise<Response> {
  const body = JSON.stringify(callbackFor(jobId, { counts: { total: 1, passed: 1, failed: 0, skipped: 0, errored: 0 }, tests: [] }));
  return request("/api/v1/internal/runner/callback", { method: "POST", body, headers: await runnerHeaders(body) });
}

describe("a run: no queue hop between its POST and its result", () => {
  it("the POST offers the job to the runners itself; its dispatch message, sent 2 s later, finds it taken and is dropped", async () => {
    const runner = fakeRunner(accepted);
    const sent = sentTo(env.RUNNER_JOBS);
    const { candidate, attemptId } = await startedAttempt();
    const { jobId } = await postRun(candidate, attemptId);

    expect(runner.calls.map((c) => c.body.job_id)).toEqual([jobId]);
    expect(await job(jobId)).toMatchObject({ status: "dispatched", attempts: 1 });
    expect(sent()).toEqual([{ body: { type: "dispatch", job_id: jobId }, delaySeconds: FIRST_OFFER_BACKSTOP_SECONDS }]);
    expect((await deliver<RunnerQueueMessage>("runner-jobs", { type: "dispatch", job_id: jobId })).explicitAcks).toEqual(["msg-1"]);
    expect(runner.calls).toHaveLength(1);
  });

  it("a full fleet: the POST's offer leaves the job queued and sends no message of its own; the delayed one offers it again", async () => {
    let offers = 0;
    const runner = fakeRunner((body) =>
      ++offers === 1 ? Response.json({ detail: "runner is full" }, { status: 503, headers: { "Retry-After": "1" } }) : accepted(body),
    );
    const sent = sentTo(env.RUNNER_JOBS);
    const { candidate, attemptId } = await startedAttempt();
    const { jobId } = await postRun(candidate, attemptId);

    expect(runner.calls).toHaveLength(1);
    expect(await job(jobId)).toMatchObject({ status: "queued", leaseExpiresAt: null, dispatchFailures: 0 });
    expect(sent()).toEqual([{ body: { type: "dispatch", job_id: jobId }, delaySeconds: FIRST_OFFER_BACKSTOP_SECONDS }]);
    // The isolate holds candidate runs back for the Retry-After (1 s); the message comes after it.
    const later = Date.now() + FIRST_OFFER_BACKSTOP_SECONDS * 1000;
    vi.spyOn(Date, "now").mockReturnValue(later);
    expect((await deliver<RunnerQueueMessage>("runner-jobs", { type: "dispatch", job_id: jobId })).explicitAcks).toEqual(["msg-1"]);
    expect(runner.calls).toHaveLength(2);
    expect((await job(jobId)).status).toBe("dispatched");
  });

  it("the runner's callback tells the run's attempt itself; its notify message, sent 10 s later, finds the owner told", async () => {
    fakeRunner(accepted);
    const { candidate, attemptId } = await startedAttempt();
    const { runId, jobId } = await postRun(candidate, attemptId);
    const sent = sentTo(env.RUNNER_JOBS);

    expect((await callback(jobId)).status).toBe(200);
    expect((await job(jobId)).notifiedAt).not.toBeNull();
    const run = (await (await call(`/api/v1/attempts/${attemptId}/runs/${runId}`, { token: candidate.token })).json()) as { status: string; counts: unknown };
    expect(run).toMatchObject({ status: "SUCCEEDED", counts: { total: 1, passed: 1 } });
    expect(sent()).toEqual([{ body: { type: "notify", job_id: jobId }, delaySeconds: OWNER_TOLD_BACKSTOP_SECONDS }]);
    expect((await deliver<RunnerQueueMessage>("runner-jobs", { type: "notify", job_id: jobId })).explicitAcks).toEqual(["msg-1"]);
  });

  it("an owner's handler that fails beside the callback is left to the notify message, which tells the owner", async () => {
    // A validation run's handler fails while its task is still PREPARING (the run's callback beat that update).
    const task = await insertReadyTask(`org-${crypto.randomUUID().slice(0, 8)}`, { status: "PREPARING" });
    const { id: jobId } = await createJob({ owner: { owner_type: "task_validation", owner_id: stepOwnerId(task.id, "base") } });

    expect((await callback(jobId)).status).toBe(200);
    expect(await job(jobId)).toMatchObject({ status: "SUCCEEDED", notifiedAt: null });
    await env.DB.prepare("UPDATE tasks SET status = 'FAILED' WHERE id = ?").bind(task.id).run();
    expect((await deliver<RunnerQueueMessage>("runner-jobs", { type: "notify", job_id: jobId })).explicitAcks).toEqual(["msg-1"]);
    expect((await job(jobId)).notifiedAt).not.toBeNull();
  });
});

describe("a submit: no queue hop before its scoring runs are with the runners", () => {
  async function scorableAttempt() {
    const setup = await startedAttempt();
    await env.DB.prepare(
      `UPDATE tasks SET test_framework = 'node-test', test_command = '["node","--test"]', test_files = '["test/x.test.js"]',
         fail_to_pass = '["test/x.test.js::new"]', pass_to_pass = '[]' WHERE id = ?`,
    )
      .bind(setup.taskId)
      .run();
    await env.BUCKET.put(taskKeys(setup.taskId).testPatch, "diff --git a/test/x.test.js b/test/x.test.js\n");
    expect((await patchChanges(setup.candidate, setup.attemptId, { "src/x.js": { op: "upsert", content_b64: b64("x\n") } })).status).toBe(200);
    return setup;
  }

  const scoreOf = (attemptId: string) =>
    env.DB.prepare("SELECT id, status, hidden_job_id, workspace_job_id FROM scores WHERE attempt_id = ?")
      .bind(attemptId)
      .all<{ id: string; status: string; hidden_job_id: string | null; workspace_job_id: string | null }>();

  it("the submit starts scoring and offers both runs itself; the scoring message, sent 10 s later, finds the report begun", async () => {
    const runner = fakeRunner(accepted);
    const { candidate, attemptId } = await scorableAttempt();
    const scoring = sentTo(env.SCORING);
    const similarity = sentTo(env.SIMILARITY);

    const res = await request(`/api/v1/attempts/${attemptId}/submit`, { method: "POST", token: candidate.token, body: "{}" });
    expect(res.status).toBe(202);
    const [score, ...others] = (await scoreOf(attemptId)).results;
    expect(others).toEqual([]);
    expect(score).toMatchObject({ status: "scoring", hidden_job_id: expect.any(String), workspace_job_id: expect.any(String) });
    expect(runner.calls.map((c) => c.body.job_id).sort()).toEqual([score!.hidden_job_id, score!.workspace_job_id].sort());
    expect((await job(score!.hidden_job_id!)).status).toBe("dispatched");
    expect((await job(score!.workspace_job_id!)).status).toBe("dispatched");
    expect(scoring()).toEqual([{ body: { attempt_id: attemptId }, delaySeconds: SCORING_START_BACKSTOP_SECONDS }]);
    expect(similarity()).toHaveLength(1);

    expect((await deliver<ScoringMessage>("scoring", { attempt_id: attemptId })).explicitAcks).toEqual(["msg-1"]);
    expect((await scoreOf(attemptId)).results).toHaveLength(1);
    expect(similarity()).toHaveLength(1);
    expect(runner.calls).toHaveLength(2);
  });
});
