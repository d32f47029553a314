import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { database } from "../../src/db/client";
import { findRunnerJob, finishRunnerJob, markDispatched } from "../../src/db/runner-jobs";
import { summarizeResult } from "../../src/domain/runner-callback";
import { DISPATCH_ATTEMPTS, runnerJobKeys } from "../../src/domain/runner-jobs";
import worker from "../../src/index";
import type { RunnerQueueMessage } from "../../src/queues/messages";
import { enqueueRunnerJob } from "../../src/services/runner/jobs";
import { artifactStorage } from "../../src/services/storage/storage";
import { eventually } from "../support/worker/client";
import { callPresigned } from "../support/worker/presigned";
import {
  accepted,
  callbackFor,
  createJob,
  failOnce,
  fakeRunner,
  notified,
  postCallback,
} from "../support/worker/runner";

const db = () => database(env.DB);
const row = async (id: string) => (await findRunnerJob(db(), id))!;

let restore: (() => void) | undefined;
afterEach(() => restore?.());
function runner(answer: Parameters<typeof fakeRunner>[0]) {
  const fake = fakeRunner(answer);
  restore = fake.restore;
  return fake;
}

/**
 * One delivery of one message to the Worker's queue handler, as the Queues runtime makes it.
 * `retryDelay` is the delay the handler asked for (getQueueResult does not report it).
 */
async function deliver(queue: string, body: RunnerQueueMessage, attempts: number) {
  const batch = createMessageBatch<RunnerQueueMessage>(queue, [{ id: `msg-${attempts}`, timestamp: new Date(), attempts, body }]);
  const retry = vi.spyOn(batch.messages[0]!, "retry");
  const ctx = createExecutionContext();
  await worker.queue(batch as MessageBatch, env);
  const result = await getQueueResult(batch, ctx);
  return { ...result, retryDelay: retry.mock.calls[0]?.[0]?.delaySeconds };
}

describe("enqueueRunnerJob through the real queue", () => {
  it("dispatches a signed job with presigned URLs; the runner's uploads and callback complete it", async () => {
    const fake = runner(accepted);
    const snapshot = await artifactStorage(env).put(`test-snapshots/${crypto.randomUUID()}.tar.gz`, "tarball bytes");
    const owner = { owner_type: "task_validation" as const, owner_id: `task_${crypto.randomUUID()}` };
    const { id } = await enqueueRunnerJob(env, {
      kind: "prepare",
      owner,
      schedule: { attempt_id: null, org_id: "org-runner-jobs" },
      snapshot: { key: snapshot.key, sha256: snapshot.sha256 },
      files: [{ path: "src/a.js", content_b64: btoa("x") }],
      limits: { wall_ms: 60_000 },
    });
    expect((await row(id)).status).toBe("queued");

    await eventually(async () => ((await row(id)).status === "dispatched" ? true : undefined));
    expect(fake.calls).toHaveLength(1);
    const [{ body: job, signed }] = fake.calls as [(typeof fake.calls)[number]];
    expect(signed).toBe(true);
    expect(job).toMatchObject({
      job_id: id,
      kind: "prepare",
      snapshot: { url: expect.stringMatching(/^https:\/\/assay\.test\/api\/v1\/storage\//), sha256: snapshot.sha256 },
      environment: null,
      files: [{ path: "src/a.js", content_b64: btoa("x") }],
      patches: [],
      limits: { wall_ms: 60_000 },
      schedule: { priority: "validation", attempt_id: null, org_id: "org-runner-jobs" },
      callback_url: "https://assay.test/api/v1/internal/runner/callback",
    });
    expect((await row(id)).attempts).toBe(1);

    const uploads = job.uploads as { junit: string; log: string; environment: string };
    const download = await callPresigned((job.snapshot as { url: string }).url);
    expect(new TextDecoder().decode(await download.arrayBuffer())).toBe("tarball bytes");
    for (const [url, content] of [[uploads.junit, "<testsuites/>"], [uploads.log, "log"], [uploads.environment, "env tarball"]] as const) {
      expect((await callPresigned(url, { method: "PUT", body: content })).status).toBe(200);
    }
    const result = callbackFor(id, { kind: "prepare", environment: { sha256: "b".repeat(64), size: 11 }, tests: [] });
    expect((await postCallback(JSON.stringify(result))).status).toBe(200);

    const [told] = await eventually(() => notified.get(id));
    expect(told).toMatchObject({ id, kind: "prepare", owner, status: "SUCCEEDED", result: summarizeResult(result) });
    expect(await (await artifactStorage(env).get(told!.keys.environment))?.text()).toBe("env tarball");
    expect(await (await artifactStorage(env).get(told!.keys.junit))?.text()).toBe("<testsuites/>");
  });
});

describe("the runner-jobs consumer", () => {
  it("runner down: each delivery retries with a growing delay; the last ends the job as ERROR and tells the owner", async () => {
    const fake = runner(() => {
      throw new TypeError("Network connection lost.");
    });
    const { id } = await createJob();
    const delays: (number | undefined)[] = [];
    for (let attempt = 1; attempt < DISPATCH_ATTEMPTS; attempt++) {
      const result = await deliver("runner-jobs", { type: "dispatch", job_id: id }, attempt);
      expect(result.explicitAcks).toEqual([]);
      delays.push(result.retryDelay);
      expect((await row(id)).status).toBe("queued");
    }
    expect(delays).toEqual([5, 10, 20, 40, 80]);

    const last = await deliver("runner-jobs", { type: "dispatch", job_id: id }, DISPATCH_ATTEMPTS);
    expect(last.explicitAcks).toEqual([`msg-${DISPATCH_ATTEMPTS}`]);
    expect(last.retryMessages).toEqual([]);
    expect(fake.calls).toHaveLength(DISPATCH_ATTEMPTS);
    expect(await row(id)).toMatchObject({
      status: "ERROR",
      attempts: DISPATCH_ATTEMPTS,
      reason: `the sandbox runner could not be reached: Network connection lost. (${DISPATCH_ATTEMPTS} attempts)`,
      result: null,
    });
    const [told] = await eventually(() => notified.get(id));
    expect(told).toMatchObject({ status: "ERROR", result: null, reason: expect.stringMatching(/could not be reached/) });
  });

  it("a runner answering 5xx (503 while shutting down) is retried like an unreachable one", async () => {
    runner(() => Response.json({ detail: "runner is shutting down" }, { status: 503 }));
    const { id } = await createJob();
    const result = await deliver("runner-jobs", { type: "dispatch", job_id: id }, 1);
    expect(result.retryMessages).toEqual([{ msgId: "msg-1" }]);
    expect(result.retryDelay).toBe(5);
    expect((await row(id)).status).toBe("queued");
  });

  it("a runner refusing the job (422) ends it as ERROR at once, with the runner's words", async () => {
    runner(() => Response.json({ detail: [{ loc: ["body", "files", 0, "path"], msg: "absolute path", type: "custom" }] }, { status: 422 }));
    const { id } = await createJob();
    const result = await deliver("runner-jobs", { type: "dispatch", job_id: id }, 1);
    expect(result.explicitAcks).toEqual(["msg-1"]);
    expect((await row(id)).reason).toMatch(/^the sandbox runner refused the job: HTTP 422 .*absolute path/);
    await eventually(() => notified.get(id));
  });

  it("a job id the runner has seen (200) counts as dispatched", async () => {
    runner((job) => Response.json({ job_id: job.job_id, status: "running" }));
    const { id } = await createJob();
    expect((await deliver("runner-jobs", { type: "dispatch", job_id: id }, 2)).explicitAcks).toEqual(["msg-2"]);
    expect((await row(id)).status).toBe("dispatched");
  });

  it("a redelivered message never re-sends a dispatched or finished job", async () => {
    const fake = runner(accepted);
    const dispatched = await createJob();
    await markDispatched(db(), dispatched.id);
    const finished = await createJob();
    await finishRunnerJob(db(), finished.id, { status: "FAILED", reason: "no report", result: null });
    for (const { id } of [dispatched, finished]) {
      expect((await deliver("runner-jobs", { type: "dispatch", job_id: id }, 3)).explicitAcks).toEqual(["msg-3"]);
    }
    expect(fake.calls).toHaveLength(0);
    expect((await row(dispatched.id)).status).toBe("dispatched");
    expect((await row(finished.id)).status).toBe("FAILED");
  });

  it("a callback that arrives before the consumer marks the job dispatched is not undone", async () => {
    runner(async (job) => {
      await postCallback(JSON.stringify(callbackFor(String(job.job_id))));
      return accepted(job);
    });
    const { id } = await createJob();
    await deliver("runner-jobs", { type: "dispatch", job_id: id }, 1);
    expect((await row(id)).status).toBe("SUCCEEDED");
  });

  it("a failing completion handler is retried until it succeeds, then not run again", async () => {
    const { id, spec } = await createJob();
    await finishRunnerJob(db(), id, { status: "ERROR", reason: "test", result: null });
    failOnce.add(spec.owner.owner_id);
    const first = await deliver("runner-jobs", { type: "notify", job_id: id }, 1);
    expect(first.retryMessages).toEqual([{ msgId: "msg-1" }]);
    expect(first.retryDelay).toBe(5);
    expect(notified.get(id)).toBeUndefined();
    expect((await deliver("runner-jobs", { type: "notify", job_id: id }, 2)).explicitAcks).toEqual(["msg-2"]);
    expect((await deliver("runner-jobs", { type: "notify", job_id: id }, 3)).explicitAcks).toEqual(["msg-3"]);
    expect(notified.get(id)).toHaveLength(1);
  });

  it("dead letters: a job whose dispatch kept failing ends as ERROR and its owner is told", async () => {
    const { id } = await createJob();
    await env.BUCKET.delete(runnerJobKeys(id).spec);
    const broken = await deliver("runner-jobs", { type: "dispatch", job_id: id }, 1);
    expect(broken.retryMessages).toHaveLength(1);

    const dead = await deliver("runner-jobs-dlq", { type: "dispatch", job_id: id }, 1);
    expect(dead.explicitAcks).toEqual(["msg-1"]);
    expect((await row(id)).reason).toMatch(/could not be handed to the sandbox runner/);
    await eventually(() => notified.get(id));
  });
});
