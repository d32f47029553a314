import type { Env } from "../env";
import { consumeEmail, consumeEmailDeadLetters, EMAIL_DEAD_LETTERS, EMAIL_QUEUE } from "./email.consumer";
import { consumeNotificationDeadLetters, consumeNotifications, NOTIFICATION_DEAD_LETTERS, NOTIFICATION_QUEUE } from "./notifications.consumer";
import { consumeRunnerJobDeadLetters, consumeRunnerJobs, RUNNER_JOBS_DEAD_LETTERS, RUNNER_JOBS_QUEUE } from "./runner-jobs.consumer";
import { consumeScoring, consumeScoringDeadLetters, SCORING_DEAD_LETTERS, SCORING_QUEUE } from "./scoring.consumer";
import { consumeSimilarity, consumeSimilarityDeadLetters, SIMILARITY_DEAD_LETTERS, SIMILARITY_QUEUE } from "./similarity.consumer";
import { consumeTaskImportDeadLetters, consumeTaskImports, TASK_IMPORT_DEAD_LETTERS, TASK_IMPORT_QUEUE } from "./task-import.consumer";
import { consumeTelemetry, consumeTelemetryDeadLetters, TELEMETRY_DEAD_LETTERS, TELEMETRY_QUEUE } from "./telemetry.consumer";

// Each consumer types its own queue's messages (domain/queue-messages.ts); the batch is theirs by name.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Consumer = (batch: MessageBatch<any>, env: Env) => Promise<void>;

/** One consumer per queue in wrangler.toml. */
const consumers: Record<string, Consumer> = {
  [RUNNER_JOBS_QUEUE]: consumeRunnerJobs,
  [RUNNER_JOBS_DEAD_LETTERS]: consumeRunnerJobDeadLetters,
  [SCORING_QUEUE]: consumeScoring,
  [SCORING_DEAD_LETTERS]: consumeScoringDeadLetters,
  [SIMILARITY_QUEUE]: consumeSimilarity,
  [SIMILARITY_DEAD_LETTERS]: consumeSimilarityDeadLetters,
  [TASK_IMPORT_QUEUE]: consumeTaskImports,
  [TASK_IMPORT_DEAD_LETTERS]: consumeTaskImportDeadLetters,
  [EMAIL_QUEUE]: consumeEmail,
  [EMAIL_DEAD_LETTERS]: consumeEmailDeadLetters,
  [TELEMETRY_QUEUE]: consumeTelemetry,
  [TELEMETRY_DEAD_LETTERS]: consumeTelemetryDeadLetters,
  [NOTIFICATION_QUEUE]: consumeNotifications,
  [NOTIFICATION_DEAD_LETTERS]: consumeNotificationDeadLetters,
};

/** The Worker's queue entry. */
export async function handleQueue(batch: MessageBatch, env: Env): Promise<void> {
  const consume = Object.hasOwn(consumers, batch.queue) ? consumers[batch.queue] : undefined;
  if (!consume) throw new Error(`no consumer for queue ${batch.queue}`);
  return consume(batch, env);
}
