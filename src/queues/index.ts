import type { Env } from "../env";
import {
  consumeRunnerJobDeadLetters,
  consumeRunnerJobs,
  RUNNER_JOBS_DEAD_LETTERS,
  RUNNER_JOBS_QUEUE,
  type RunnerQueueMessage,
} from "./runner-jobs";

/** The Worker's queue entry: one consumer per queue in wrangler.toml. */
export async function handleQueue(batch: MessageBatch, env: Env): Promise<void> {
  switch (batch.queue) {
    case RUNNER_JOBS_QUEUE:
      return consumeRunnerJobs(batch as MessageBatch<RunnerQueueMessage>, env);
    case RUNNER_JOBS_DEAD_LETTERS:
      return consumeRunnerJobDeadLetters(batch as MessageBatch<RunnerQueueMessage>, env);
    default:
      throw new Error(`no consumer for queue ${batch.queue}`);
  }
}
