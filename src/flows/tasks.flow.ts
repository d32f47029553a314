import { database } from "../db/client";
import { archiveTask as markArchived, countTasks, editTask, listableTasks, taskPage, type TaskEdit, type TaskFilter, type TaskReading, type TaskRow } from "../db/tasks.queries";
import { findDraft, publishDraft } from "../db/task-drafts.queries";
import type { Listing } from "../domain/pagination";
import { accept, refuse, type Outcome } from "../domain/outcome";
import { parseIssueUrl, parsePullRequestUrl, type ParseResult, type PullRequestRef } from "../domain/pr-url";
import type { Viewer } from "../domain/roles";
import { publishRefusal } from "../domain/task-drafts";
import { retryRefusal, type TaskAudience, type TaskVisibility } from "../domain/tasks";
import type { TaskSettings } from "../domain/task-settings";
import type { Env } from "../env";
import { enterpriseHosts } from "../services/repohost/hosts";
import { retryImport } from "./task-import/import-retry.flow";

export type { TaskReading, TaskRow } from "../db/tasks.queries";

/** A pull request URL read against the hosts this service imports from (github.com and the configured Enterprise ones). */
export function readPullRequestUrl(env: Env, url: string): ParseResult<PullRequestRef> {
  return parsePullRequestUrl(url, enterpriseHosts(env));
}

/** An issue URL read against the hosts this service imports from. */
export function readIssueUrl(env: Env, url: string): ParseResult<PullRequestRef> {
  return parseIssueUrl(url, enterpriseHosts(env));
}

/** Tasks the viewer may list, each with how the viewer sees it, its organization's name and the viewer's assignment. */
export function taskListing(env: Env, viewer: Viewer, filter: TaskFilter): Listing<{ task: TaskRow; audience: TaskAudience } & TaskReading> {
  const db = database(env.DB);
  const where = listableTasks(viewer, filter);
  return {
    count: () => countTasks(db, viewer, where),
    page: (limit, offset) => taskPage(db, viewer, where, limit, offset),
  };
}

/** What staff may change on a task or a draft; an absent field stays as it is. */
export interface TaskFieldsEdit {
  /** Each part given replaces the default statement; null returns both parts to the default. */
  statement?: { title?: string; body?: string } | null;
  title?: string;
  description?: string;
  tags?: string[];
  timeLimitMinutes?: number | null;
  visibility?: TaskVisibility;
  aiAssistance?: boolean;
  liveSessions?: boolean;
}

function storedEdit(edit: TaskFieldsEdit): TaskEdit {
  const { statement } = edit;
  return {
    ...(statement === null && { statementTitle: null, statementBody: null }),
    ...(statement?.title !== undefined && { statementTitle: statement.title }),
    ...(statement?.body !== undefined && { statementBody: statement.body }),
    ...(edit.title !== undefined && { title: edit.title }),
    ...(edit.description !== undefined && { description: edit.description }),
    ...(edit.tags !== undefined && { tags: edit.tags }),
    ...(edit.timeLimitMinutes !== undefined && { timeLimitMinutes: edit.timeLimitMinutes }),
    ...(edit.visibility !== undefined && { visibility: edit.visibility }),
    ...(edit.aiAssistance !== undefined && { aiAssistance: edit.aiAssistance }),
    ...(edit.liveSessions !== undefined && { liveSessions: edit.liveSessions }),
  };
}

/** Applies staff's edit to a task or a draft (one row either way); undefined when the row is gone. */
export function applyTaskEdit(env: Env, taskId: string, edit: TaskFieldsEdit): Promise<TaskRow | undefined> {
  return editTask(database(env.DB), taskId, storedEdit(edit));
}

export async function editTaskFields(env: Env, taskId: string, edit: TaskFieldsEdit): Promise<Outcome<TaskRow>> {
  const updated = await applyTaskEdit(env, taskId, edit);
  return updated ? accept(updated) : refuse("not_found", `Task ${taskId} not found`);
}

/** Archives a task; archiving it again changes nothing. */
export async function archiveTask(env: Env, taskId: string): Promise<Outcome<TaskRow>> {
  const archived = await markArchived(database(env.DB), taskId);
  return archived ? accept(archived) : refuse("not_found", `Task ${taskId} not found`);
}

/** Makes a VALIDATED draft a task under the draft's id; refused, with the reason, for any other draft. */
export async function publishTaskDraft(env: Env, draft: TaskRow): Promise<Outcome<TaskRow>> {
  const refusal = publishRefusal(draft.id, draft);
  if (refusal) return refuse("conflict", refusal);
  const db = database(env.DB);
  const task = await publishDraft(db, draft.id, new Date().toISOString());
  if (task) return accept(task);
  // A concurrent publish or re-validation got there first; say what it left.
  const now = await findDraft(db, draft.id);
  return refuse("conflict", (now && publishRefusal(draft.id, now)) ?? `Draft ${draft.id} changed while publishing; try again`);
}

/** Starts a FAILED task's import again with its settings changed; refused for a task in any other status. */
export async function retryTask(env: Env, task: TaskRow, changes: Partial<TaskSettings>): Promise<Outcome<TaskRow>> {
  const refusal = retryRefusal(task);
  if (refusal) return refuse("conflict", refusal);
  const retried = await retryImport(env, task, changes);
  return retried ? accept(retried) : refuse("conflict", `Task ${task.id} changed while retrying; read it again`);
}
