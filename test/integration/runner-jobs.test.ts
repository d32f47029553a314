import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { database } from "../../src/db/client";
import { findRunnerJob, finishRunnerJob, markDispatched } from "../../src/db/runner-jobs.queries";
import { summarizeResult } from "../../src/domain/runner-callback";
import { DISPATCH_ATTEMPTS, DISPATCH_CLAIM_SECONDS, MAX_REQUEUES, runnerJobKeys, stepOwnerId } from "../../src/domain/runner-jobs";
import { runnerJobs } from "../../src/db/schema";
import { eq } from "drizzle-orm";
import worker from "../../src/index";
import type { RunnerQueueMessage } from "../../src/domain/queue-messages";
import { enqueueRunnerJob } from "../../src/flows/runner-jobs.flow";
import { artifactStorage } from "../../src/services/storage/artifact-storage";
import { signIn } from "../support/worker/attempts";
import { call, eventually } from "../support/worker/client";
import { callPresigned } from "../support/worker/presigned";
import { insertReadyTask } from "../support/worker/tasks";
import {
  accepted,
  callbackFor,
  createJob,
  fakeRunner,
  notifiedJob,
  postCallback,
  runnerHeaders,
} from "../support/worker/runner";

const db = () => database(env.DB);
const row = async (id: string) => (await findRunnerJob(db(), id))!;

let restore: (() => void) | undefined;
afterEach(() => restore?.());
function runner(answer: Parameters<typeof fakeRunner>[0]) {
  const fake = fakeRunner(answer, { strict: true });
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
    const [{ path, body: job, signed }] = fake.calls as [(typeof fake.calls)[number]];
    expect(path).toBe("/jobs");
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

    const told = await eventually(() => notifiedJob(id));
    expect(told).toMatchObject({ id, kind: "prepare", ownerType: owner.owner_type, ownerId: owner.owner_id, status: "SUCCEEDED", result: summarizeResult(result) });
    expect(await (await artifactStorage(env).get(runnerJobKeys(id).environment))?.text()).toBe("env tarball");
    expect(await (await artifactStorage(env).get(runnerJobKeys(id).junit))?.text()).toBe("<testsuites/>");
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
    const told = await eventually(() => notifiedJob(id));
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
    await eventually(() => notifiedJob(id));
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
    await markDispatched(db(), dispatched.id, "rnr_test", "2999-01-01T00:00:00.000Z");
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
    // A validation run's handler fails while its task is still PREPARING (the run's callback beat that update).
    await signIn();
    const task = await insertReadyTask(`org-${crypto.randomUUID().slice(0, 8)}`, { status: "PREPARING" });
    const setStatus = (status: string) => env.DB.prepare("UPDATE tasks SET status = ? WHERE id = ?").bind(status, task.id).run();
    const { id } = await createJob({ owner: { owner_type: "task_validation", owner_id: stepOwnerId(task.id, "base") } });
    await finishRunnerJob(db(), id, { status: "ERROR", reason: "test", result: null });
    const first = await deliver("runner-jobs", { type: "notify", job_id: id }, 1);
    expect(first.retryMessages).toEqual([{ msgId: "msg-1" }]);
    expect(first.retryDelay).toBe(5);
    expect(await notifiedJob(id)).toBeUndefined();
    await setStatus("FAILED");
    expect((await deliver("runner-jobs", { type: "notify", job_id: id }, 2)).explicitAcks).toEqual(["msg-2"]);
    expect(await notifiedJob(id)).toBeDefined();
    // Were the handler run again, it would fail again and the message be retried.
    await setStatus("PREPARING");
    expect((await deliver("runner-jobs", { type: "notify", job_id: id }, 3)).explicitAcks).toEqual(["msg-3"]);
  });

  it("dead letters: a job whose dispatch kept failing ends as ERROR and its owner is told", async () => {
    const { id } = await createJob();
    await env.BUCKET.delete(runnerJobKeys(id).spec);
    const broken = await deliver("runner-jobs", { type: "dispatch", job_id: id }, 1);
    expect(broken.retryMessages).toHaveLength(1);

    const dead = await deliver("runner-jobs-dlq", { type: "dispatch", job_id: id }, 1);
    expect(dead.explicitAcks).toEqual(["msg-1"]);
    expect((await row(id)).reason).toMatch(/could not be handed to the sandbox runner/);
    await eventually(() => notifiedJob(id));
  });
});

const lease = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();

async function heartbeat(body: Record<string, unknown>) {
  const text = JSON.stringify(body);
  return call("/api/v1/internal/runner/leases", { method: "POST", rawBody: text, headers: { "content-type": "application/json", ...(await runnerHeaders(text)) } });
}

describe("a fleet of runners: backpressure, claims and leases", () => {
  it("a full runner is not a failure: the job is offered again after Retry-After, as a new message, and taken", async () => {
    let offers = 0;
    const fake = runner((job) =>
      ++offers === 1
        ? Response.json({ detail: "runner is full", reason: "full" }, { status: 503, headers: { "Retry-After": "1" } })
        : Response.json({ job_id: job.job_id, status: "accepted", runner_id: "rnr_b" }, { status: 202 }),
    );
    // Scoring and validation here: a full answer makes this isolate hold back further jobs of
    // the same priority for a moment, which the other tests' candidate runs must not meet.
    const { id } = await createJob({ owner: { owner_type: "scoring", owner_id: `att_${crypto.randomUUID()}/hidden` } });
    const first = await deliver("runner-jobs", { type: "dispatch", job_id: id }, 1);
    expect(first.explicitAcks).toEqual(["msg-1"]);
    expect(first.retryMessages).toEqual([]);
    expect(await row(id)).toMatchObject({ status: "queued", dispatchFailures: 0, leaseExpiresAt: null });
    await eventually(async () => ((await row(id)).status === "dispatched" ? true : undefined));
    expect(fake.calls).toHaveLength(2);
    expect(await row(id)).toMatchObject({ runnerId: "rnr_b", attempts: 2, dispatchFailures: 0 });
    expect(Date.parse((await row(id)).leaseExpiresAt!)).toBeGreaterThan(Date.now());
  });

  it("while the fleet is full, further jobs of that priority wait longer each time without asking again; none uses up its attempts", async () => {
    const fake = runner(() => Response.json({ detail: "runner is full" }, { status: 503, headers: { "Retry-After": "2" } }));
    const send = vi.spyOn(env.RUNNER_JOBS, "send").mockResolvedValue(undefined as never);
    vi.spyOn(Math, "random").mockReturnValue(0.5);
    try {
      const { id } = await createJob({ owner: { owner_type: "task_validation", owner_id: `tsk_${crypto.randomUUID()}/prepare` } });
      for (const full_answers of [0, 3, 20]) {
        expect((await deliver("runner-jobs", { type: "dispatch", job_id: id, full_answers }, DISPATCH_ATTEMPTS + 1)).explicitAcks).toHaveLength(1);
      }
      expect(send.mock.calls.map(([body, options]) => [body, options])).toEqual([
        [{ type: "dispatch", job_id: id, full_answers: 1 }, { delaySeconds: 2 }],
        [{ type: "dispatch", job_id: id, full_answers: 4 }, { delaySeconds: 8 }],
        [{ type: "dispatch", job_id: id, full_answers: 21 }, { delaySeconds: 8 }],
      ]);
      expect(fake.calls).toHaveLength(1);
      expect(await row(id)).toMatchObject({ status: "queued", dispatchFailures: 0, attempts: 1, leaseExpiresAt: null });
    } finally {
      vi.restoreAllMocks();
    }
  });

  it("two deliveries of one job at once: only one offers it; the other looks again once the claim has run out", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const fake = runner(async (job) => {
      await gate;
      return Response.json({ job_id: job.job_id, status: "accepted", runner_id: "rnr_a" }, { status: 202 });
    });
    const { id } = await createJob();
    const first = deliver("runner-jobs", { type: "dispatch", job_id: id }, 1);
    await eventually(() => (fake.calls.length === 1 ? true : undefined));
    // The offer holding the job may not place it (and a first offer has no message of its own).
    const second = await deliver("runner-jobs", { type: "dispatch", job_id: id }, 1);
    expect(second.retryMessages).toEqual([{ msgId: "msg-1" }]);
    expect(second.retryDelay).toBe(DISPATCH_CLAIM_SECONDS);
    release();
    await first;
    expect(fake.calls).toHaveLength(1);
    expect(await row(id)).toMatchObject({ status: "dispatched", runnerId: "rnr_a", attempts: 1 });
    expect((await deliver("runner-jobs", { type: "dispatch", job_id: id }, 2)).explicitAcks).toEqual(["msg-2"]);
    expect(fake.calls).toHaveLength(1);
  });

  it("a delivery that throws lets go of the job, so the retry can offer it", async () => {
    const fake = runner(accepted);
    const { id, spec } = await createJob();
    await env.BUCKET.delete(runnerJobKeys(id).spec);
    expect((await deliver("runner-jobs", { type: "dispatch", job_id: id }, 1)).retryMessages).toHaveLength(1);
    expect((await row(id)).leaseExpiresAt).toBeNull();
    await env.BUCKET.put(runnerJobKeys(id).spec, JSON.stringify(spec));
    expect((await deliver("runner-jobs", { type: "dispatch", job_id: id }, 2)).explicitAcks).toEqual(["msg-2"]);
    expect(fake.calls).toHaveLength(1);
  });

  it("heartbeats: unsigned is 401 and a malformed body 422; nothing changes", async () => {
    const { id } = await createJob();
    await markDispatched(db(), id, "rnr_a", lease(5));
    const unsigned = await call("/api/v1/internal/runner/leases", { method: "POST", body: { runner_id: "rnr_a", held: [id] } });
    expect(unsigned.status).toBe(401);
    const bad = await heartbeat({ runner_id: "rnr_a", held: ["has spaces"] });
    expect(bad.status).toBe(422);
    expect((await bad.json()) as unknown).toMatchObject({ detail: [{ loc: ["body", "held", 0] }] });
    expect(await row(id)).toMatchObject({ status: "dispatched", runnerId: "rnr_a" });
  });

  it("a heartbeat renews its own runner's jobs; one held elsewhere or finished is lost to it", async () => {
    runner(accepted);
    const mine = await createJob();
    const elsewhere = await createJob();
    const finished = await createJob();
    await markDispatched(db(), mine.id, "rnr_a", lease(5));
    await markDispatched(db(), elsewhere.id, "rnr_b", lease(5));
    await finishRunnerJob(db(), finished.id, { status: "SUCCEEDED", reason: null, result: null });
    const res = await heartbeat({ runner_id: "rnr_a", held: [mine.id, elsewhere.id, finished.id] });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ renewed: [mine.id], lost: [elsewhere.id, finished.id] });
    expect(Date.parse((await row(mine.id)).leaseExpiresAt!)).toBeGreaterThan(Date.now() + 20_000);
    expect(Date.parse((await row(elsewhere.id)).leaseExpiresAt!)).toBeLessThan(Date.now() + 6_000);
  });

  it("a job whose runner stopped renewing is requeued by any heartbeat and taken by another runner", async () => {
    const fake = runner((job) => Response.json({ job_id: job.job_id, status: "accepted", runner_id: "rnr_b" }, { status: 202 }));
    const { id } = await createJob();
    await markDispatched(db(), id, "rnr_dead", lease(-1));
    expect((await heartbeat({ runner_id: "rnr_b", held: [] })).status).toBe(200);
    await eventually(async () => ((await row(id)).runnerId === "rnr_b" ? true : undefined));
    expect(await row(id)).toMatchObject({ status: "dispatched", requeues: 1 });
    expect(fake.calls.map((c) => c.body.job_id)).toEqual([id]);
  });

  it("a job handed back by a draining runner is offered again at once", async () => {
    const fake = runner((job) => Response.json({ job_id: job.job_id, status: "accepted", runner_id: "rnr_b" }, { status: 202 }));
    const { id } = await createJob();
    await markDispatched(db(), id, "rnr_a", lease(30));
    expect(await (await heartbeat({ runner_id: "rnr_other", held: [], released: [id] })).json()).toEqual({ renewed: [], lost: [] });
    expect((await row(id)).runnerId).toBe("rnr_a");
    await heartbeat({ runner_id: "rnr_a", held: [], released: [id] });
    await eventually(async () => ((await row(id)).runnerId === "rnr_b" ? true : undefined));
    expect(fake.calls).toHaveLength(1);
  });

  it("a job that keeps losing its runner ends ERROR and its owner is told", async () => {
    const { id } = await createJob();
    await db().update(runnerJobs).set({ requeues: MAX_REQUEUES }).where(eq(runnerJobs.id, id));
    await markDispatched(db(), id, "rnr_a", lease(-1));
    await heartbeat({ runner_id: "rnr_b", held: [] });
    expect(await row(id)).toMatchObject({ status: "ERROR", reason: expect.stringMatching(/lost its sandbox runner 4 times/) });
    await eventually(() => notifiedJob(id));
  });

  it("the cron sweep requeues lost jobs when no runner sends heartbeats", async () => {
    const fake = runner((job) => Response.json({ job_id: job.job_id, status: "accepted", runner_id: "rnr_c" }, { status: 202 }));
    const { id } = await createJob();
    await markDispatched(db(), id, "rnr_dead", lease(-1));
    await worker.scheduled({ cron: "* * * * *", scheduledTime: Date.now(), noRetry: () => undefined } as ScheduledController, env);
    await eventually(async () => ((await row(id)).runnerId === "rnr_c" ? true : undefined));
    expect(fake.calls).toHaveLength(1);
  });
});
