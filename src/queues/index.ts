import type { ScoringMessage } from "../domain/attempts";
import type { Env } from "../env";
import { consumeEmail, consumeEmailDeadLetters, EMAIL_DEAD_LETTERS, EMAIL_QUEUE, type EmailQueueMessage } from "./email";
import {
  consumeRunnerJobDeadLetters,
  consumeRunnerJobs,
  RUNNER_JOBS_DEAD_LETTERS,
  RUNNER_JOBS_QUEUE,
  type RunnerQueueMessage,
} from "./runner-jobs";
import { consumeScoring, consumeScoringDeadLetters, SCORING_DEAD_LETTERS, SCORING_QUEUE } from "./scoring";
import {
  consumeTaskImportDeadLetters,
  consumeTaskImports,
  TASK_IMPORT_DEAD_LETTERS,
  TASK_IMPORT_QUEUE,
  type TaskImportMessage,
} from "./task-import";
import { onRunnerJobFinished } from "../services/runner/completion";
import { onRunJobFinished } from "../services/runs/completion";
import { onScoringJobFinished } from "../services/scoring/complete";
import { onTaskValidationJobFinished } from "../services/tasks/validation";

// Owners of runner jobs and the handlers told when their jobs end.
onRunnerJobFinished("task_validation", onTaskValidationJobFinished);
onRunnerJobFinished("run", onRunJobFinished);
onRunnerJobFinished("scoring", onScoringJobFinished);

/** The Worker's queue entry: one consumer per queue in wrangler.toml. */
export async function handleQueue(batch: MessageBatch, env: Env): Promise<void> {
  switch (batch.queue) {
    case RUNNER_JOBS_QUEUE:
      return consumeRunnerJobs(batch as MessageBatch<RunnerQueueMessage>, env);
    case RUNNER_JOBS_DEAD_LETTERS:
      return consumeRunnerJobDeadLetters(batch as MessageBatch<RunnerQueueMessage>, env);
    case SCORING_QUEUE:
      return consumeScoring(batch as MessageBatch<ScoringMessage>, env);
    case SCORING_DEAD_LETTERS:
      return consumeScoringDeadLetters(batch as MessageBatch<ScoringMessage>, env);
    case TASK_IMPORT_QUEUE:
      return consumeTaskImports(batch as MessageBatch<TaskImportMessage>, env);
    case TASK_IMPORT_DEAD_LETTERS:
      return consumeTaskImportDeadLetters(batch as MessageBatch<TaskImportMessage>, env);
    case EMAIL_QUEUE:
      return consumeEmail(batch as MessageBatch<EmailQueueMessage>, env);
    case EMAIL_DEAD_LETTERS:
      return consumeEmailDeadLetters(batch as MessageBatch<EmailQueueMessage>, env);
    default:
      throw new Error(`no consumer for queue ${batch.queue}`);
  }
}
