import { database } from "../../db/client";
import {
  endLeases,
  findRunnerJob,
  finishRunnerJob,
  insertRunnerJob,
  jobHolders,
  markDispatched,
  renewLeases,
  requeueExpired,
  type RunnerJobRow,
} from "../../db/runner-jobs.queries";
import { summarizeResult, type RunnerCallback } from "../../domain/runner-callback";
import {
  heartbeatIntervalMs,
  isFinalStatus,
  isoAfter,
  leaseSeconds,
  MAX_REQUEUES,
  newRunnerJobId,
  runnerJobKeys,
  runnerJobPayload,
  type RunnerJobSpec,
  type RunnerJobStatus,
} from "../../domain/runner-jobs";
import type { Env } from "../../env";
import { log } from "../../lib/log";
import { artifactStorage } from "../storage/artifact-storage";
import { postRunnerJob, type DispatchResult } from "./runner-client";

export const RUNNER_CALLBACK_PATH = "/api/v1/internal/runner/callback";
export const RUNNER_LEASES_PATH = "/api/v1/internal/runner/leases";
/** Expired leases requeued per sweep; a sweep runs on every heartbeat, so a larger loss takes a few. */
const REQUEUE_BATCH = 50;

// A job can wait in the runner's pool, then run for up to an hour, before it uploads.
const URL_TTL_SECONDS = 6 * 3600;
const UPLOAD_MAX_BYTES = {
  junit: 64 * 1024 * 1024,
  // The runner keeps at most 16 MiB of output plus a line saying how much it dropped.
  log: 17 * 1024 * 1024,
  // R2's single-PUT maximum.
  environment: 5 * 1024 ** 3,
};

const JSON_TYPE = { contentType: "application/json" };

/**
 * Creates a runner job and queues its dispatch; once the job has a final status its owner's
 * job-finished handler (flows/job-finished.flow.ts) is called. `id` is given by an owner that
 * stores it before the job exists.
 */
export async function enqueueRunnerJob(env: Env, spec: RunnerJobSpec, id: string = newRunnerJobId()): Promise<{ id: string }> {
  const db = database(env.DB);
  await artifactStorage(env).put(runnerJobKeys(id).spec, JSON.stringify(spec), JSON_TYPE);
  await insertRunnerJob(db, id, spec.kind, spec.owner);
  try {
    await env.RUNNER_JOBS.send({ type: "dispatch", job_id: id });
  } catch (e) {
    await finishRunnerJob(db, id, { status: "ERROR", reason: `the job could not be queued: ${String(e)}`, result: null });
    throw e;
  }
  return { id };
}

async function dispatchBody(env: Env, job: RunnerJobRow): Promise<string> {
  const storage = artifactStorage(env);
  const keys = runnerJobKeys(job.id);
  const specObject = await storage.get(keys.spec);
  if (!specObject) throw new Error(`runner job ${job.id} has no spec at ${keys.spec}`);
  const spec = await specObject.json<RunnerJobSpec>();
  const get = async (key: string) => (await storage.presignGet(key, URL_TTL_SECONDS)).url;
  const put = async (key: string, maxBytes: number) => (await storage.presignPut(key, URL_TTL_SECONDS, { maxBytes })).url;
  const payload = runnerJobPayload(job.id, spec, {
    snapshot: await get(spec.snapshot.key),
    environment: spec.environment ? await get(spec.environment.key) : null,
    junit: await put(keys.junit, UPLOAD_MAX_BYTES.junit),
    log: await put(keys.log, UPLOAD_MAX_BYTES.log),
    environmentUpload: spec.kind === "prepare" ? await put(keys.environment, UPLOAD_MAX_BYTES.environment) : null,
    callback: new URL(RUNNER_CALLBACK_PATH, env.APP_BASE_URL).toString(),
    lease: { url: new URL(RUNNER_LEASES_PATH, env.APP_BASE_URL).toString(), interval_ms: heartbeatIntervalMs(leaseSeconds(env.RUNNER_LEASE_SECONDS)) },
  });
  return JSON.stringify(payload);
}

/**
 * One offer of a claimed job to the runners, with freshly signed URLs. A job the runner has
 * seen before is answered 200 and not run again, so a repeated offer is safe. An accepted
 * job is the answering runner's until its lease runs out.
 */
export async function dispatchRunnerJob(env: Env, job: RunnerJobRow): Promise<DispatchResult> {
  const body = await dispatchBody(env, job);
  const result = await postRunnerJob(env, body);
  if (result.verdict === "accepted") {
    await markDispatched(database(env.DB), job.id, result.runnerId, isoAfter(Date.now(), leaseSeconds(env.RUNNER_LEASE_SECONDS)));
  }
  return result;
}

/**
 * A runner's heartbeat: renews the leases of the jobs it still holds, ends those of the jobs it
 * hands back, and requeues every job whose lease has run out (its runner stopped or lost it).
 * Returns the held jobs that are no longer the runner's, which it may stop working on.
 */
export async function renewRunnerLeases(env: Env, runnerId: string, held: string[], released: string[]): Promise<{ renewed: string[]; lost: string[] }> {
  const db = database(env.DB);
  const nowMs = Date.now();
  const renewed = await renewLeases(db, runnerId, held, isoAfter(nowMs, leaseSeconds(env.RUNNER_LEASE_SECONDS)));
  await endLeases(db, runnerId, released, nowMs);
  await requeueLostJobs(env, nowMs);
  const kept = new Set(renewed);
  const unrenewed = held.filter((id) => !kept.has(id));
  // A queued job is not lost to it: it may be on its way to this runner (its answer not yet
  // recorded), or requeued, when the runner's result is still welcome.
  const known = new Map((await jobHolders(db, unrenewed)).map((j) => [j.id, j]));
  const lost = unrenewed.filter((id) => {
    const job = known.get(id);
    return !job || isFinalStatus(job.status) || (job.status === "dispatched" && job.runnerId !== runnerId);
  });
  return { renewed, lost };
}

/**
 * Sends every job whose lease ran out back through the queue, to be offered to the runners
 * again; one that has lost its runner MAX_REQUEUES times ends ERROR instead.
 */
export async function requeueLostJobs(env: Env, nowMs: number): Promise<void> {
  const requeued = await requeueExpired(database(env.DB), nowMs, REQUEUE_BATCH);
  if (requeued.length === 0) return;
  const again = requeued.filter((j) => j.requeues <= MAX_REQUEUES);
  for (const job of requeued.filter((j) => j.requeues > MAX_REQUEUES)) {
    await giveUpRunnerJob(env, job.id, `the job lost its sandbox runner ${MAX_REQUEUES + 1} times (the runner stopped, or handed it back, before it finished)`);
  }
  if (again.length === 0) return;
  log("warn", "runner jobs: leases ran out, requeued", { job_ids: again.map((j) => j.id) });
  try {
    await env.RUNNER_JOBS.sendBatch(again.map((j) => ({ body: { type: "dispatch" as const, job_id: j.id } })));
  } catch (e) {
    // A queued job without a message would wait forever: end it, as a job that could not be queued at first.
    for (const job of again) await giveUpRunnerJob(env, job.id, `the job lost its sandbox runner and could not be queued again: ${String(e)}`);
  }
}

/** Queues the call of the owner's job-finished handler; the consumer makes it at least once. */
export async function requestNotification(env: Env, jobId: string): Promise<void> {
  await env.RUNNER_JOBS.send({ type: "notify", job_id: jobId });
}

/** A finished job's full result as the runner reported it; null when the Worker gave the job up. */
export async function readRunnerResult(env: Env, jobId: string): Promise<RunnerCallback | null> {
  const object = await artifactStorage(env).get(runnerJobKeys(jobId).result);
  return object ? object.json<RunnerCallback>() : null;
}

/** Ends a job as ERROR from the Worker's side, unless a result got there first. */
export async function giveUpRunnerJob(env: Env, jobId: string, reason: string): Promise<void> {
  if (await finishRunnerJob(database(env.DB), jobId, { status: "ERROR", reason, result: null })) {
    await requestNotification(env, jobId);
  }
}

/** Why a runner's result was not taken: no such job, or a job of another kind. */
export type RecordRefusal = { refused: "unknown_job" | "kind_mismatch"; detail: string };

/**
 * Stores a runner's result on its job exactly once. A repeated or late result (the job is
 * already final) changes nothing; `recorded` says whether this one was stored.
 */
export async function recordRunnerResult(
  env: Env,
  result: RunnerCallback,
): Promise<{ status: RunnerJobStatus; recorded: boolean } | RecordRefusal> {
  const db = database(env.DB);
  const job = await findRunnerJob(db, result.job_id);
  if (!job) return { refused: "unknown_job", detail: `No runner job ${result.job_id}` };
  if (job.kind !== result.kind) {
    return { refused: "kind_mismatch", detail: `Runner job ${job.id} is a ${job.kind} job, not ${result.kind}` };
  }
  if (isFinalStatus(job.status)) {
    // Heals a call of the owner's handler whose queueing failed after the status was stored.
    if (!job.notifiedAt) await requestNotification(env, job.id);
    return { status: job.status, recorded: false };
  }
  // The full result goes to R2 before the row claims it; a repeat rewrites the same bytes.
  await artifactStorage(env).put(runnerJobKeys(job.id).result, JSON.stringify(result), JSON_TYPE);
  const outcome = { status: result.status, reason: result.reason, result: summarizeResult(result) };
  if (await finishRunnerJob(db, job.id, outcome)) {
    await requestNotification(env, job.id);
    return { status: result.status, recorded: true };
  }
  const now = await findRunnerJob(db, job.id);
  return { status: now?.status ?? result.status, recorded: false };
}
