import { database } from "../../db/client";
import { failTask } from "../../db/tasks";
import type { Env } from "../../env";

/**
 * Hands a task in IMPORTING to the import queue. When the queue refuses it, the task ends
 * FAILED with `retry` as the advice instead of waiting for a message that never comes, and
 * the error goes on to the caller.
 */
export async function queueImport(env: Env, taskId: string, retry: string): Promise<void> {
  try {
    await env.TASK_IMPORT.send({ task_id: taskId });
  } catch (e) {
    await failTask(database(env.DB), taskId, `The import could not be queued; ${retry}.`);
    throw e;
  }
}
