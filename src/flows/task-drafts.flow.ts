import { database } from "../db/client";
import { countDrafts, draftPage, findDraft, listableDrafts, restartDraft } from "../db/task-drafts.queries";
import type { TaskRow } from "../db/tasks.queries";
import { accept, invalid, refuse, type Outcome } from "../domain/outcome";
import type { Listing } from "../domain/pagination";
import type { Viewer } from "../domain/roles";
import { draftStatusFilter, pairRefusal, revalidateRefusal, type DraftStatus } from "../domain/task-drafts";
import type { PullRequestRef } from "../domain/pr-url";
import type { Env } from "../env";
import { applyTaskEdit, type TaskFieldsEdit } from "./tasks.flow";
import { queueImport, startImport, type PullRequestImport } from "./task-import/import-start.flow";

export interface DraftRequest extends PullRequestImport {
  issue: PullRequestRef;
}

/** Makes a draft from an issue and the pull request that solves it, both of one repository, and starts validating it. */
export async function createDraft(env: Env, request: DraftRequest): Promise<Outcome<TaskRow>> {
  const mismatch = pairRefusal(request.issue, request.pull);
  if (mismatch) return invalid([{ loc: ["body", "issue_url"], msg: mismatch, type: "value_error.repository_mismatch" }]);
  return accept(await startImport(env, request));
}

/** Drafts of the organizations whose staff the viewer is, newest first. */
export function draftListing(env: Env, viewer: Viewer, filter: { organizationId?: string; status?: DraftStatus }): Listing<TaskRow> {
  const db = database(env.DB);
  const where = listableDrafts(viewer, {
    organizationId: filter.organizationId,
    ...(filter.status && draftStatusFilter(filter.status)),
  });
  return {
    count: () => countDrafts(db, where),
    page: (limit, offset) => draftPage(db, where, limit, offset),
  };
}

/** Edits a draft until it is published; after that, its task is what staff edit. */
export async function editDraft(env: Env, draft: TaskRow, edit: TaskFieldsEdit): Promise<Outcome<TaskRow>> {
  if (draft.publishedAt !== null) {
    return refuse("conflict", `Draft ${draft.id} is published; edit task ${draft.id} with PATCH /api/v1/tasks/${draft.id} instead`);
  }
  const updated = await applyTaskEdit(env, draft.id, edit);
  return updated ? accept(updated) : refuse("not_found", `Draft ${draft.id} not found`);
}

/** Reads the issue and the pull request again and repeats validation, for a VALIDATED or FAILED draft not published. */
export async function revalidateDraft(env: Env, draft: TaskRow): Promise<Outcome<TaskRow>> {
  const refusal = revalidateRefusal(draft.id, draft);
  if (refusal) return refuse("conflict", refusal);
  const db = database(env.DB);
  const restarted = await restartDraft(db, draft.id, new Date().toISOString());
  if (!restarted) {
    // Lost to a concurrent validate or publish: the state it left is the answer.
    const now = await findDraft(db, draft.id);
    return refuse("conflict", (now && revalidateRefusal(draft.id, now)) ?? `Draft ${draft.id} changed; try again`);
  }
  await queueImport(env, restarted.id, "validate the draft again");
  return accept(restarted);
}
