import { findVisibleAttempt, type AttemptRow } from "../db/attempts.queries";
import type { Database } from "../db/client";
import { findExecution, type ExecutionRow } from "../db/executions.queries";
import type { WatcherRole } from "../domain/executions";
import { isStaffIn, type Viewer } from "../domain/roles";
import { findVisibleTask, type TaskRow } from "../db/tasks.queries";
import { findDraft } from "../db/task-drafts.queries";
import type { Caller } from "./auth";
import { HttpError } from "./errors";

/** An attempt the caller may see, and as whom; 404 otherwise, so an attempt's existence does not leak. */
export async function visibleAttempt(db: Database, caller: Caller, attemptId: string) {
  return visibleAttemptTo(db, caller.viewer, attemptId);
}

/** As visibleAttempt, for a viewer without a session: a socket's browser ticket names only who minted it. */
export async function visibleAttemptTo(db: Database, viewer: Viewer, attemptId: string) {
  const found = await findVisibleAttempt(db, viewer, attemptId);
  if (!found) throw HttpError.notFound(`Attempt ${attemptId} not found`);
  return found;
}

/** An attempt the signed-in caller may act on as its candidate: 404 when they cannot see it, 403 for staff. */
export async function ownAttempt(db: Database, caller: Caller, attemptId: string): Promise<AttemptRow> {
  const { attempt, audience } = await visibleAttempt(db, caller, attemptId);
  if (audience !== "candidate") {
    throw HttpError.forbidden(`Only the candidate of attempt ${attemptId} may do this; you may only read it`);
  }
  return attempt;
}

/** A task the caller may see, and as whom; 404 otherwise, so a task's existence does not leak. */
export async function visibleTask(db: Database, caller: Caller, taskId: string) {
  const found = await findVisibleTask(db, caller.viewer, taskId);
  if (!found) throw HttpError.notFound(`Task ${taskId} not found`);
  return found;
}

/** A task draft of an organization where the caller is staff; 404 otherwise, so drafts do not leak. */
export async function visibleDraft(db: Database, caller: Caller, draftId: string): Promise<TaskRow> {
  const draft = await findDraft(db, draftId);
  if (!draft || !isStaffIn(caller.viewer, draft.organizationId)) throw HttpError.notFound(`Draft ${draftId} not found`);
  return draft;
}

/**
 * A live execution and the caller's part in it: its owner, or staff of the organization of
 * its attempt (who may only watch). 404 for anyone else, as for no such execution, so ids
 * cannot be probed; before any socket is opened (docs/api.md, "Live code execution").
 */
export async function visibleExecution(db: Database, viewer: Viewer, executionId: string): Promise<{ execution: ExecutionRow; role: WatcherRole }> {
  const execution = await findExecution(db, executionId);
  if (!execution) throw HttpError.notFound(`Execution ${executionId} not found`);
  if (execution.userId === viewer.userId) return { execution, role: "owner" };
  const attempt = execution.attemptId ? await findVisibleAttempt(db, viewer, execution.attemptId) : undefined;
  if (attempt?.audience === "staff") return { execution, role: "staff" };
  throw HttpError.notFound(`Execution ${executionId} not found`);
}
