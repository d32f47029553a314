import { database } from "../../db/client";
import { failTask, insertTask, type TaskRow } from "../../db/tasks.queries";
import type { PullRequestRef } from "../../domain/pr-url";
import type { TaskSettings } from "../../domain/task-settings";
import { placeholderTitle, type TaskVisibility } from "../../domain/tasks";
import type { Env } from "../../env";
import { newId } from "../../lib/ids";

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

export interface PullRequestImport {
  pull: PullRequestRef;
  /** A draft's issue (docs/task-builder.md): with one, the task is a draft, unpublished until POST /tasks. */
  issue?: PullRequestRef;
  organizationId: string;
  visibility: TaskVisibility;
  tags: string[];
  timeLimitMinutes: number | null;
  aiAssistance: boolean;
  createdBy: string;
  /** What the import states instead of detection; null: all detected. */
  settings?: TaskSettings | null;
}

/** Stores a task (or draft) in IMPORTING for a pull request and queues its import. */
export async function startImport(env: Env, req: PullRequestImport): Promise<TaskRow> {
  const { host, apiBase, owner, repo, number, htmlUrl } = req.pull;
  const now = new Date().toISOString();
  const task = await insertTask(database(env.DB), {
    id: newId("tsk"),
    origin: req.issue ? "draft" : "pull_request",
    organizationId: req.organizationId,
    visibility: req.visibility,
    tags: req.tags,
    title: placeholderTitle({ sourceOwner: owner, sourceRepo: repo, prNumber: number, issueNumber: req.issue?.number ?? null }),
    status: "IMPORTING",
    sourceHost: host,
    sourceApiBase: apiBase,
    sourceOwner: owner,
    sourceRepo: repo,
    prNumber: number,
    prUrl: htmlUrl,
    issueNumber: req.issue?.number ?? null,
    issueUrl: req.issue?.htmlUrl ?? null,
    timeLimitMinutes: req.timeLimitMinutes,
    aiAssistance: req.aiAssistance,
    settings: req.settings ?? null,
    createdBy: req.createdBy,
    createdAt: now,
    updatedAt: now,
    publishedAt: req.issue ? null : now,
  });
  await queueImport(env, task.id, req.issue ? "validate the draft again" : "import the pull request again");
  return task;
}
