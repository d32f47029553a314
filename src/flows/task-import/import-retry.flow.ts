import { database } from "../../db/client";
import { advanceTask, type TaskRow } from "../../db/tasks.queries";
import { mergeSettings, type TaskSettings } from "../../domain/task-settings";
import { taskKeys } from "../../domain/tasks";
import type { Env } from "../../env";
import { artifactStorage } from "../../services/storage/artifact-storage";
import { enqueuePrepare } from "./import-task.flow";
import { queueImport } from "./import-start.flow";

/** What a retry clears: everything the failed import or validation had found. */
const CLEARED = {
  failureReason: null,
  installFailure: null,
  testFramework: null,
  testCommand: null,
  environmentKey: null,
  environmentSha256: null,
  baseRunJobId: null,
  solutionRunJobId: null,
  failToPass: null,
  passToPass: null,
  validatingAt: null,
  readyAt: null,
} as const;

/**
 * Retries a FAILED task with its stated settings changed by `changes` (docs/tasks-from-prs.md,
 * "Retrying a failed task"). A task whose snapshot and patches were stored starts again at
 * preparing its environment, without reading the pull request again; one that failed before
 * starts the whole import again. Undefined when the task was no longer FAILED.
 */
export async function retryImport(env: Env, task: TaskRow, changes: Partial<TaskSettings>): Promise<TaskRow | undefined> {
  const db = database(env.DB);
  const settings = mergeSettings(task.settings, changes);
  const now = new Date().toISOString();
  const testPatch = task.snapshotSha256 ? await artifactStorage(env).get(taskKeys(task.id).testPatch) : null;
  if (!task.snapshotSha256 || !testPatch) {
    const restarted = await advanceTask(db, task.id, "FAILED", { ...CLEARED, status: "IMPORTING", settings, prepareJobId: null, preparingAt: null, updatedAt: now });
    if (restarted) await queueImport(env, task.id, "retry again");
    return restarted;
  }
  // Queued before the task moves on, as the import does: a task is never PREPARING without a job,
  // and the job of a retry that loses the race below is ignored (its id is not the task's).
  const job = await enqueuePrepare(env, { ...task, settings }, task.snapshotSha256, await testPatch.text());
  return advanceTask(db, task.id, "FAILED", { ...CLEARED, status: "PREPARING", settings, prepareJobId: job.id, preparingAt: now, updatedAt: now });
}
