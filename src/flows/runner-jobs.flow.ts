import { database } from "../db/client";
import {
  claimForDispatch,
  endLeases,
  findRunnerJob,
  finishRunnerJob,
  insertRunnerJob,
  jobHolders,
  markDispatched,
  markNotified,
  releaseClaim,
  renewLeases,
  requeueExpired,
  type RunnerJobRow,
} from "../db/runner-jobs.queries";
import type { RunnerQueueMessage } from "../domain/queue-messages";
import { summarizeResult, type FinishedRunnerJob, type RunnerCallback } from "../domain/runner-callback";
import {
  afterUnreachable,
  DISPATCH_CLAIM_SECONDS,
  FIRST_OFFER_BACKSTOP_SECONDS,
  fullRetryDelaySeconds,
  heartbeatIntervalMs,
  isFinalStatus,
  isoAfter,
  leaseSeconds,
  lostJobIds,
  MAX_REQUEUES,
  newRunnerJobId,
  OWNER_TOLD_BACKSTOP_SECONDS,
  RUNNER_JOB_PRIORITIES,
  runnerJobKeys,
  runnerJobPayload,
  runnerJobPriority,
  splitRequeued,
  type RunnerJobPriority,
  type RunnerJobSpec,
  type RunnerJobStatus,
} from "../domain/runner-jobs";
import type { Env } from "../env";
import { ExpiringCache } from "../lib/expiring-cache";
import { log } from "../lib/log";
import { postRunnerJob, type DispatchResult } from "../services/runner/runner-client";
import { artifactStorage } from "../services/storage/artifact-storage";

// The runner-job lifecycle (docs/runner-protocol.md, "Who owns a job"): the only module that
// changes a job. queued → dispatched (leased to the runner that took it) → final, with
// requeues when a lease runs out and the Worker's give-up as ERROR; then its owner's
// job-finished handler (flows/job-finished.flow.ts) is called at least once through the
// `runner-jobs` queue. The queue consumer, the cron sweep, the runner's requests and the
// AttemptDO's run sweep all act on jobs through it.

const RUNNER_CALLBACK_PATH = "/api/v1/internal/runner/callback";
const RUNNER_LEASES_PATH = "/api/v1/internal/runner/leases";
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

type DispatchMessage = Extract<RunnerQueueMessage, { type: "dispatch" }>;

/**
 * Creates a runner job and queues its dispatch; once the job has a final status its owner's
 * job-finished handler (flows/job-finished.flow.ts) is called. `id` is given by an owner that
 * stores it before the job exists. With `offerNow` the caller makes the first offer itself,
 * by `offerRunnerJob` (in its request's waitUntil, or awaited), and the queue message comes
 * FIRST_OFFER_BACKSTOP_SECONDS later, for a job that offer did not place.
 */
export async function enqueueRunnerJob(
  env: Env,
  spec: RunnerJobSpec,
  id: string = newRunnerJobId(),
  options: { offerNow?: boolean } = {},
): Promise<{ id: string }> {
  const db = database(env.DB);
  await artifactStorage(env).put(runnerJobKeys(id).spec, JSON.stringify(spec), JSON_TYPE);
  await insertRunnerJob(db, id, spec.kind, spec.owner);
  try {
    await env.RUNNER_JOBS.send({ type: "dispatch", job_id: id }, options.offerNow ? { delaySeconds: FIRST_OFFER_BACKSTOP_SECONDS } : {});
  } catch (e) {
    await finishRunnerJob(db, id, { status: "ERROR", reason: `the job could not be queued: ${String(e)}`, result: null });
    throw e;
  }
  return { id };
}

/**
 * The first offer of a job queued with `offerNow`, one hop sooner than its queue message. It
 * never throws and never sends a message of its own: a job it does not place (fleet full,
 * runner unreachable, an error) is the delayed message's, as every later offer is.
 */
export async function offerRunnerJob(env: Env, jobId: string): Promise<void> {
  try {
    const job = await findRunnerJob(database(env.DB), jobId);
    if (!job || job.status !== "queued" || fleetFull.get(runnerJobPriority(job.ownerType), Date.now())) return;
    await offerOnce(env, job, 0);
  } catch (e) {
    log("warn", "runner job: the first offer failed; its queue message offers it", { job_id: jobId, error: String(e) });
  }
}

/** A job as it stands; undefined when there is no such job. */
export function runnerJob(env: Env, jobId: string): Promise<RunnerJobRow | undefined> {
  return findRunnerJob(database(env.DB), jobId);
}

/** A finished job's full result as the runner reported it; null when the Worker gave the job up. */
export async function readRunnerResult(env: Env, jobId: string): Promise<RunnerCallback | null> {
  const object = await artifactStorage(env).get(runnerJobKeys(jobId).result);
  return object ? object.json<RunnerCallback>() : null;
}

/**
 * Job priorities the fleet turned away in this isolate, until its Retry-After: further jobs
 * of that priority are offered later without building a body and asking again, so a long
 * backlog costs the consumer a queue message per offer, not a round trip to the runners.
 * Another priority still asks: a runner keeps a place for scoring and validation jobs.
 */
const fleetFull = new ExpiringCache<RunnerJobPriority, true>(RUNNER_JOB_PRIORITIES.length);

/**
 * One delivery of a job's `dispatch` message: offers the job to the runners once, unless it
 * has left the queue. Returns the delay after which the message is to be delivered again, or
 * null when it is done with. Throwing lets go of the job first, so the message's retry can
 * offer it.
 */
export async function dispatchRunnerJob(env: Env, message: DispatchMessage, delivery: number): Promise<{ retryDelaySeconds: number } | null> {
  const jobId = message.job_id;
  const job = await findRunnerJob(database(env.DB), jobId);
  if (!job) {
    log("warn", "runner job: dispatch of an unknown job", { job_id: jobId });
    return null;
  }
  // Redelivery after the work was done: a dispatched job is its runner's (the lease sweep
  // requeues it if that runner is lost), a final one is never re-sent.
  if (job.status !== "queued") {
    if (isFinalStatus(job.status) && !job.notifiedAt) await requestNotification(env, jobId);
    return null;
  }
  if (fleetFull.get(runnerJobPriority(job.ownerType), Date.now())) return offerLater(env, message, 1);
  const next = await offerOnce(env, job, delivery);
  if ("fullFor" in next) return offerLater(env, message, next.fullFor);
  return next.retryDelaySeconds === undefined ? null : { retryDelaySeconds: next.retryDelaySeconds };
}

/**
 * Claims a queued job and offers it to the runners once: what is left for its message to do.
 * A job another offer holds is looked at again once that claim has run out (that offer may not
 * place it, and it may have no message of its own: a first offer's).
 */
async function offerOnce(env: Env, job: RunnerJobRow, delivery: number): Promise<{ fullFor: number } | { retryDelaySeconds?: number }> {
  const db = database(env.DB);
  const jobId = job.id;
  if (!(await claimForDispatch(db, jobId, Date.now(), DISPATCH_CLAIM_SECONDS))) {
    log("info", "runner job: another delivery is offering it", { job_id: jobId });
    return { retryDelaySeconds: DISPATCH_CLAIM_SECONDS };
  }
  let result: DispatchResult;
  try {
    result = await postRunnerJob(env, await dispatchBody(env, job));
    // A job the runner has seen before is answered 200 and not run again, so a repeated offer
    // is safe. The job is the answering runner's until its lease runs out.
    if (result.verdict === "accepted") {
      await markDispatched(db, jobId, result.runnerId, isoAfter(Date.now(), leaseSeconds(env.RUNNER_LEASE_SECONDS)));
    }
  } catch (e) {
    await releaseClaim(db, jobId, false);
    throw e;
  }
  const { verdict, detail, retryAfterSeconds } = result;
  const fields = { job_id: jobId, attempt: delivery, detail };
  if (verdict === "accepted") {
    log("info", "runner job: dispatched", fields);
    return {};
  }
  if (verdict === "refused") {
    log("error", "runner job: refused by the runner", fields);
    await giveUpRunnerJob(env, jobId, `the sandbox runner refused the job: ${detail}`);
    return {};
  }
  if (verdict === "full") {
    await releaseClaim(db, jobId, false);
    const retryAfter = retryAfterSeconds ?? 1;
    fleetFull.set(runnerJobPriority(job.ownerType), true, Date.now() + retryAfter * 1000);
    log("info", "runner job: the runners are full, offering it again later", fields);
    return { fullFor: retryAfter };
  }
  const failures = await releaseClaim(db, jobId, true);
  const next = afterUnreachable(failures, detail);
  if ("giveUp" in next) {
    log("error", "runner job: runner unreachable, giving up", fields);
    await giveUpRunnerJob(env, jobId, next.giveUp);
    return {};
  }
  log("warn", "runner job: runner unreachable, retrying", { ...fields, failures, delay_s: next.retryDelaySeconds });
  return next;
}

/** The runner's `POST /jobs` body for one offer of a claimed job, with freshly signed URLs. */
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
 * Not a failure: the queue holds the job until a runner has room, as a new message, so no
 * number of "full" answers uses up the message's own retries.
 */
async function offerLater(env: Env, message: DispatchMessage, retryAfterSeconds: number): Promise<null> {
  const fullAnswers = (message.full_answers ?? 0) + 1;
  const delaySeconds = fullRetryDelaySeconds(retryAfterSeconds, fullAnswers - 1, Math.random());
  await env.RUNNER_JOBS.send({ type: "dispatch", job_id: message.job_id, full_answers: fullAnswers }, { delaySeconds });
  return null;
}

/** A `dispatch` message the queue gave up on: its job ends ERROR, and its owner is told. */
export function giveUpUndispatched(env: Env, jobId: string): Promise<void> {
  return giveUpRunnerJob(env, jobId, "the job could not be handed to the sandbox runner: dispatching it kept failing inside the service");
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
  return { renewed, lost: lostJobIds(runnerId, unrenewed, await jobHolders(db, unrenewed)) };
}

/**
 * Sends every job whose lease ran out back through the queue, to be offered to the runners
 * again; one that has lost its runner MAX_REQUEUES times ends ERROR instead. Heartbeats and
 * the cron sweep (scheduled.ts) call it.
 */
export async function requeueLostJobs(env: Env, nowMs: number): Promise<void> {
  const requeued = await requeueExpired(database(env.DB), nowMs, REQUEUE_BATCH);
  if (requeued.length === 0) return;
  const { again, givenUp } = splitRequeued(requeued);
  for (const id of givenUp) {
    await giveUpRunnerJob(env, id, `the job lost its sandbox runner ${MAX_REQUEUES + 1} times (the runner stopped, or handed it back, before it finished)`);
  }
  if (again.length === 0) return;
  log("warn", "runner jobs: leases ran out, requeued", { job_ids: again });
  try {
    await env.RUNNER_JOBS.sendBatch(again.map((id) => ({ body: { type: "dispatch" as const, job_id: id } })));
  } catch (e) {
    // A queued job without a message would wait forever: end it, as a job that could not be queued at first.
    for (const id of again) await giveUpRunnerJob(env, id, `the job lost its sandbox runner and could not be queued again: ${String(e)}`);
  }
}

/** Queues the call of the owner's job-finished handler; the consumer makes it at least once. */
async function requestNotification(env: Env, jobId: string, delaySeconds = 0): Promise<void> {
  await env.RUNNER_JOBS.send({ type: "notify", job_id: jobId }, { delaySeconds });
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
 * already final) changes nothing; `recorded` says whether this one was stored, and then the
 * caller calls the owner's handler (callJobFinishedHandler) itself: its queue message follows
 * OWNER_TOLD_BACKSTOP_SECONDS later, for a call that did not run to the end.
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
    await requestNotification(env, job.id, OWNER_TOLD_BACKSTOP_SECONDS);
    return { status: result.status, recorded: true };
  }
  const now = await findRunnerJob(db, job.id);
  return { status: now?.status ?? result.status, recorded: false };
}

/** A final job whose owner has not yet been told, as its job-finished handler takes it; null otherwise. */
export async function finishedJobToHandOver(env: Env, jobId: string): Promise<FinishedRunnerJob | null> {
  const job = await findRunnerJob(database(env.DB), jobId);
  if (!job || !isFinalStatus(job.status) || job.notifiedAt) return null;
  return {
    id: job.id,
    kind: job.kind,
    owner: { owner_type: job.ownerType, owner_id: job.ownerId },
    status: job.status,
    reason: job.reason,
    // The row holds only the result that won it; a late callback that lost to the Worker's give-up may still have written R2.
    result: job.result,
    keys: runnerJobKeys(jobId),
  };
}

/** Records that the owner's job-finished handler ran to the end, so it is not called again. */
export async function markOwnerTold(env: Env, jobId: string): Promise<void> {
  await markNotified(database(env.DB), jobId);
}
