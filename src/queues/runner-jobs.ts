import { database } from "../db/client";
import { findRunnerJob } from "../db/runner-jobs";
import { DISPATCH_ATTEMPTS, dispatchRetryDelaySeconds, isFinalStatus } from "../domain/runner-jobs";
import type { Env } from "../env";
import { callJobFinishedHandler } from "../flows/job-finished";
import { log } from "../lib/log";
import { dispatchRunnerJob, giveUpRunnerJob, requestNotification } from "../services/runner/jobs";
import { consumeEach, type MessageHandler } from "./consume";
import type { RunnerQueueMessage } from "./messages";

export const RUNNER_JOBS_QUEUE = "runner-jobs";
export const RUNNER_JOBS_DEAD_LETTERS = "runner-jobs-dlq";

async function dispatch(message: Message<RunnerQueueMessage>, env: Env): Promise<void> {
  const jobId = message.body.job_id;
  const job = await findRunnerJob(database(env.DB), jobId);
  if (!job) {
    log("warn", "runner job: dispatch of an unknown job", { job_id: jobId });
    return message.ack();
  }
  // Redelivery after the work was done: a dispatched job is the runner's, a final one is never re-sent.
  if (job.status !== "queued") {
    if (isFinalStatus(job.status) && !job.notifiedAt) await requestNotification(env, jobId);
    return message.ack();
  }
  const { verdict, detail } = await dispatchRunnerJob(env, job);
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
  if (message.attempts >= DISPATCH_ATTEMPTS) {
    log("error", "runner job: runner unreachable, giving up", fields);
    await giveUpRunnerJob(env, jobId, `the sandbox runner could not be reached: ${detail} (${message.attempts} attempts)`);
    return message.ack();
  }
  const delaySeconds = dispatchRetryDelaySeconds(message.attempts);
  log("warn", "runner job: runner unreachable, retrying", { ...fields, delay_s: delaySeconds });
  message.retry({ delaySeconds });
}

const common = {
  subject: "runner job",
  fields: (body: RunnerQueueMessage) => ({ type: body.type, job_id: body.job_id }),
  retryDelaySeconds: dispatchRetryDelaySeconds,
};

/** Consumer of the `runner-jobs` queue: dispatches jobs and calls their owners' job-finished handlers. */
export function consumeRunnerJobs(batch: MessageBatch<RunnerQueueMessage>, env: Env): Promise<void> {
  const handler: MessageHandler<RunnerQueueMessage> = {
    ...common,
    async handle(message) {
      if (message.body.type === "dispatch") return dispatch(message, env);
      await callJobFinishedHandler(env, message.body.job_id);
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
      const { type, job_id } = message.body;
      log("error", "runner job: dead letter", { type, job_id, attempts: message.attempts });
      if (type === "dispatch") {
        await giveUpRunnerJob(env, job_id, "the job could not be handed to the sandbox runner: dispatching it kept failing inside the service");
      }
      message.ack();
    },
  });
}
