import { database } from "../db/client";
import { claimForDispatch, findRunnerJob, releaseClaim } from "../db/runner-jobs.queries";
import {
  DISPATCH_ATTEMPTS,
  DISPATCH_CLAIM_SECONDS,
  dispatchRetryDelaySeconds,
  fullRetryDelaySeconds,
  isFinalStatus,
  RUNNER_JOB_PRIORITIES,
  runnerJobPriority,
  type RunnerJobPriority,
} from "../domain/runner-jobs";
import { ExpiringCache } from "../lib/expiring-cache";
import type { Env } from "../env";
import { callJobFinishedHandler } from "../flows/job-finished.flow";
import { runEnded } from "../flows/runs/run-finished.flow";
import { log } from "../lib/log";
import { dispatchRunnerJob, giveUpRunnerJob, requestNotification } from "../services/runner/job-dispatch";
import { consumeEach, type MessageHandler } from "./consume";
import type { RunnerQueueMessage } from "../domain/queue-messages";

export const RUNNER_JOBS_QUEUE = "runner-jobs";
export const RUNNER_JOBS_DEAD_LETTERS = "runner-jobs-dlq";

async function dispatch(message: Message<Extract<RunnerQueueMessage, { type: "dispatch" }>>, env: Env): Promise<void> {
  const jobId = message.body.job_id;
  const db = database(env.DB);
  const job = await findRunnerJob(db, jobId);
  if (!job) {
    log("warn", "runner job: dispatch of an unknown job", { job_id: jobId });
    return message.ack();
  }
  // Redelivery after the work was done: a dispatched job is its runner's (the lease sweep
  // requeues it if that runner is lost), a final one is never re-sent.
  if (job.status !== "queued") {
    if (isFinalStatus(job.status) && !job.notifiedAt) await requestNotification(env, jobId);
    return message.ack();
  }
  const priority = runnerJobPriority(job.ownerType);
  if (fleetFull.get(priority, Date.now())) return offerLater(env, message, 1);
  if (!(await claimForDispatch(db, jobId, Date.now(), DISPATCH_CLAIM_SECONDS))) {
    log("info", "runner job: another delivery is offering it", { job_id: jobId });
    return message.ack();
  }
  let result: Awaited<ReturnType<typeof dispatchRunnerJob>>;
  try {
    result = await dispatchRunnerJob(env, job);
  } catch (e) {
    // The message is retried (consume.ts); its next delivery must find the job free to offer.
    await releaseClaim(db, jobId, false);
    throw e;
  }
  const { verdict, detail, retryAfterSeconds } = result;
  const fields = { job_id: jobId, attempt: message.attempts, detail };
  if (verdict === "accepted") {
    log("info", "runner job: dispatched", fields);
    return message.ack();
  }
  if (verdict === "refused") {
    log("error", "runner job: refused by the runner", fields);
    await giveUpRunnerJob(env, jobId, `the sandbox runner refused the job: ${detail}`);
    return message.ack();
  }
  if (verdict === "full") {
    await releaseClaim(db, jobId, false);
    const retryAfter = retryAfterSeconds ?? 1;
    fleetFull.set(priority, true, Date.now() + retryAfter * 1000);
    log("info", "runner job: the runners are full, offering it again later", fields);
    return offerLater(env, message, retryAfter);
  }
  const failures = await releaseClaim(db, jobId, true);
  if (failures >= DISPATCH_ATTEMPTS) {
    log("error", "runner job: runner unreachable, giving up", fields);
    await giveUpRunnerJob(env, jobId, `the sandbox runner could not be reached: ${detail} (${failures} attempts)`);
    return message.ack();
  }
  const delaySeconds = dispatchRetryDelaySeconds(failures);
  log("warn", "runner job: runner unreachable, retrying", { ...fields, failures, delay_s: delaySeconds });
  message.retry({ delaySeconds });
}

/**
 * Job priorities the fleet turned away in this isolate, until its Retry-After: further jobs
 * of that priority are offered later without building a body and asking again, so a long
 * backlog costs the consumer a queue message per offer, not a round trip to the runners.
 * Another priority still asks: a runner keeps a place for scoring and validation jobs.
 */
const fleetFull = new ExpiringCache<RunnerJobPriority, true>(RUNNER_JOB_PRIORITIES.length);

/**
 * Not a failure: the queue holds the job until a runner has room, as a new message, so no
 * number of "full" answers uses up the message's own retries.
 */
async function offerLater(env: Env, message: Message<Extract<RunnerQueueMessage, { type: "dispatch" }>>, retryAfterSeconds: number): Promise<void> {
  const fullAnswers = (message.body.full_answers ?? 0) + 1;
  const delaySeconds = fullRetryDelaySeconds(retryAfterSeconds, fullAnswers - 1, Math.random());
  await env.RUNNER_JOBS.send({ type: "dispatch", job_id: message.body.job_id, full_answers: fullAnswers }, { delaySeconds });
  message.ack();
}

const common = {
  subject: "runner job",
  fields: (body: RunnerQueueMessage) => (body.type === "run_ended" ? { type: body.type, run_id: body.run.run_id } : { type: body.type, job_id: body.job_id }),
  retryDelaySeconds: dispatchRetryDelaySeconds,
};

/**
 * Consumer of the `runner-jobs` queue: dispatches jobs, calls their owners' job-finished
 * handlers, and announces the runs that attempts' sweeps ended.
 */
export function consumeRunnerJobs(batch: MessageBatch<RunnerQueueMessage>, env: Env): Promise<void> {
  const handler: MessageHandler<RunnerQueueMessage> = {
    ...common,
    async handle(message) {
      const body = message.body;
      if (body.type === "dispatch") return dispatch(message as Message<Extract<RunnerQueueMessage, { type: "dispatch" }>>, env);
      if (body.type === "run_ended") await runEnded(env, body.run);
      else await callJobFinishedHandler(env, body.job_id);
      message.ack();
    },
  };
  return consumeEach(batch, handler);
}

/**
 * Consumer of `runner-jobs-dlq`: messages whose handling kept failing. A job that could not
 * be dispatched ends as ERROR (and its owner is told); a handler that kept failing is logged.
 */
export function consumeRunnerJobDeadLetters(batch: MessageBatch<RunnerQueueMessage>, env: Env): Promise<void> {
  return consumeEach(batch, {
    ...common,
    async handle(message) {
      const body = message.body;
      log("error", "runner job: dead letter", { ...common.fields(body), attempts: message.attempts });
      if (body.type === "dispatch") {
        await giveUpRunnerJob(env, body.job_id, "the job could not be handed to the sandbox runner: dispatching it kept failing inside the service");
      }
      message.ack();
    },
  });
}
