import { database } from "../db/client";
import { findRunnerJob } from "../db/runner-jobs";
import { DISPATCH_ATTEMPTS, dispatchRetryDelaySeconds, isFinalStatus } from "../domain/runner-jobs";
import type { Env } from "../env";
import { dispatchRunnerJob, giveUpRunnerJob, notifyOwner, requestNotification } from "../services/runner/jobs";
import { log } from "../services/log";

export const RUNNER_JOBS_QUEUE = "runner-jobs";
export const RUNNER_JOBS_DEAD_LETTERS = "runner-jobs-dlq";

/** `dispatch`: hand the job to the runner. `notify`: run the owner's completion handler. */
export type RunnerQueueMessage = { type: "dispatch"; job_id: string } | { type: "notify"; job_id: string };


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

/**
 * Consumer of the `runner-jobs` queue. Delivery is at least once, so every step checks the
 * job's stored state first. An unexpected error retries the message with the same backoff;
 * once the queue's `max_retries` are spent it goes to the dead-letter queue.
 */
export async function consumeRunnerJobs(batch: MessageBatch<RunnerQueueMessage>, env: Env): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      try {
        if (message.body.type === "dispatch") await dispatch(message, env);
        else {
          await notifyOwner(env, message.body.job_id);
          message.ack();
        }
      } catch (e) {
        log("error", "runner job: message failed", {
          type: message.body.type,
          job_id: message.body.job_id,
          attempt: message.attempts,
          error: e instanceof Error ? e.message : String(e),
        });
        message.retry({ delaySeconds: dispatchRetryDelaySeconds(message.attempts) });
      }
    }),
  );
}

/**
 * Consumer of `runner-jobs-dlq`: messages whose handling kept failing. A job that could not
 * be dispatched ends as ERROR (and its owner is told); a handler that kept failing is logged.
 */
export async function consumeRunnerJobDeadLetters(batch: MessageBatch<RunnerQueueMessage>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const { type, job_id } = message.body;
    log("error", "runner job: dead letter", { type, job_id, attempts: message.attempts });
    if (type === "dispatch") {
      await giveUpRunnerJob(env, job_id, "the job could not be handed to the sandbox runner: dispatching it kept failing inside the service");
    }
    message.ack();
  }
}
