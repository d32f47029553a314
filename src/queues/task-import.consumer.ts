import { database } from "../db/client";
import { findTask } from "../db/tasks.queries";
import { IMPORT_ATTEMPTS, importRetryDelaySeconds } from "../domain/tasks";
import type { Env } from "../env";
import { RepoHostError } from "../services/repohost/repohost-errors";
import { failImport } from "../flows/task-import/import-ended.flow";
import { importTask, repoHostFailureReason, TaskImportFailure } from "../flows/task-import/import-task.flow";
import { log } from "../lib/log";
import { consumeEach } from "./consume";
import type { TaskImportMessage } from "../domain/queue-messages";

export const TASK_IMPORT_QUEUE = "task-import";
export const TASK_IMPORT_DEAD_LETTERS = "task-import-dlq";



function retryDelay(env: Env, attempts: number, retryAfterSeconds?: number): number {
  return importRetryDelaySeconds(attempts, retryAfterSeconds, Number(env.TASK_IMPORT_RETRY_BASE_SECONDS ?? 5));
}

async function handle(message: Message<TaskImportMessage>, env: Env): Promise<void> {
  const taskId = message.body.task_id;
  const db = database(env.DB);
  try {
    await importTask(env, taskId);
    message.ack();
  } catch (e) {
    const task = await findTask(db, taskId);
    if (!task) return message.ack();
    if (e instanceof TaskImportFailure) {
      await failImport(env, taskId, e.message);
      return message.ack();
    }
    if (e instanceof RepoHostError && !e.retryable) {
      await failImport(env, taskId, repoHostFailureReason(e, task));
      return message.ack();
    }
    const detail = e instanceof Error ? e.message : String(e);
    if (message.attempts >= IMPORT_ATTEMPTS) {
      log("error", "task import: giving up", { task_id: taskId, attempt: message.attempts, error: detail });
      const what = e instanceof RepoHostError ? `the repo host kept failing (${detail})` : `an internal error (${detail})`;
      await failImport(env, taskId, `The import failed after ${message.attempts} attempts because of ${what}; import the pull request again later.`);
      return message.ack();
    }
    const delaySeconds = retryDelay(env, message.attempts, e instanceof RepoHostError ? e.retryAfterSeconds : undefined);
    log("warn", "task import: retrying", { task_id: taskId, attempt: message.attempts, delay_s: delaySeconds, error: detail });
    message.retry({ delaySeconds });
  }
}

const common = {
  subject: "task import",
  fields: (body: TaskImportMessage) => ({ task_id: body.task_id }),
};

/** Consumer of `task-import`: one import step per message, retried with backoff through the queue. */
export function consumeTaskImports(batch: MessageBatch<TaskImportMessage>, env: Env): Promise<void> {
  return consumeEach(batch, { ...common, retryDelaySeconds: (attempts) => retryDelay(env, attempts), handle: (m) => handle(m, env) });
}

/** Messages that failed past the queue's retries: the task ends FAILED instead of IMPORTING forever. */
export function consumeTaskImportDeadLetters(batch: MessageBatch<TaskImportMessage>, env: Env): Promise<void> {
  return consumeEach(batch, {
    ...common,
    retryDelaySeconds: (attempts) => retryDelay(env, attempts),
    async handle(message) {
      await failImport(env, message.body.task_id, "The import could not be completed; import the pull request again.");
      message.ack();
    },
  });
}
