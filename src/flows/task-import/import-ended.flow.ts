import { database } from "../../db/client";
import { failTask, type TaskRow } from "../../db/tasks.queries";
import { notificationsFor } from "../../domain/notifications";
import { FALLBACK_TITLE, taskStatement } from "../../domain/statement";
import type { Env } from "../../env";
import { notify } from "../notify.flow";

/**
 * Tells whoever imported the task, or made the draft, that its import or validation ended
 * (docs/api.md, "Notifications"). A draft is validated again after changes, so its key
 * carries the time the validation ended.
 */
export function importEnded(env: Env, task: TaskRow): Promise<void> {
  if (task.status !== "READY" && task.status !== "FAILED") return Promise.resolve();
  // The staff's name for it (GET /tasks/{task_id} `title`), else the statement's.
  const title = task.title || (taskStatement(task)?.title ?? FALLBACK_TITLE);
  if (task.origin === "draft") {
    const status = task.status === "READY" ? "VALIDATED" : "FAILED";
    return notify(env, notificationsFor([task.createdBy], "task_draft.validation_finished", { draft_id: task.id, status, task_title: title }, `${task.id}:${task.updatedAt}`));
  }
  return notify(env, notificationsFor([task.createdBy], "task.import_finished", { task_id: task.id, status: task.status, task_title: title }, task.id));
}

/** Ends an unfinished import FAILED with `reason`, and tells its importer; a finished one is left alone. */
export async function failImport(env: Env, taskId: string, reason: string): Promise<void> {
  const failed = await failTask(database(env.DB), taskId, reason);
  if (failed) await importEnded(env, failed);
}
