import { dispatchRetryDelaySeconds } from "../domain/runner-jobs";
import type { RunnerQueueMessage } from "../domain/queue-messages";
import type { Env } from "../env";
import { callJobFinishedHandler } from "../flows/job-finished.flow";
import { dispatchRunnerJob, giveUpUndispatched } from "../flows/runner-jobs.flow";
import { log } from "../lib/log";
import { consumeEach } from "./consume";

export const RUNNER_JOBS_QUEUE = "runner-jobs";
export const RUNNER_JOBS_DEAD_LETTERS = "runner-jobs-dlq";

const common = {
  subject: "runner job",
  fields: (body: RunnerQueueMessage) => ({ type: body.type, job_id: body.job_id }),
  retryDelaySeconds: dispatchRetryDelaySeconds,
};

/**
 * Consumer of the `runner-jobs` queue: hands each message to the runner-job lifecycle
 * (flows/runner-jobs.flow.ts), which dispatches jobs, and to the owners' job-finished handlers.
 */
export function consumeRunnerJobs(batch: MessageBatch<RunnerQueueMessage>, env: Env): Promise<void> {
  return consumeEach(batch, {
    ...common,
    async handle(message) {
      const body = message.body;
      if (body.type === "notify") {
        await callJobFinishedHandler(env, body.job_id);
        return message.ack();
      }
      const redelivery = await dispatchRunnerJob(env, body, message.attempts);
      if (redelivery) message.retry({ delaySeconds: redelivery.retryDelaySeconds });
      else message.ack();
    },
  });
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
      if (body.type === "dispatch") await giveUpUndispatched(env, body.job_id);
      message.ack();
    },
  });
}
