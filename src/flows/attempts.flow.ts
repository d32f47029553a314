import { attemptPage, attemptRecord, countAttempts, listableAttempts, type AttemptFilter, type AttemptRow } from "../db/attempts.queries";
import { database } from "../db/client";
import { attemptStanding } from "../db/retakes.queries";
import type { TaskRow } from "../db/tasks.queries";
import { newAttemptId, type AttemptAudience, type AttemptRecord } from "../domain/attempts";
import { accept, refuse, type Outcome } from "../domain/outcome";
import type { Listing } from "../domain/pagination";
import type { Viewer } from "../domain/roles";
import type { TaskAudience } from "../domain/tasks";
import { attemptObject } from "../durable/attempt/attempt-object";
import type { AttemptActor } from "../durable/attempt/attempt-types";
import type { Env } from "../env";
import { scoringState, type ScoringState } from "./scores.flow";

export type { AttemptActor } from "../durable/attempt/attempt-types";

/**
 * Creates an attempt on a task the caller may see (docs/api.md, "Attempts"): a READY task that
 * is not archived. The attempt's object and D1 decide together whether the candidate may make
 * another; a refusal says why, naming the open attempt or the attempts made.
 */
export async function createAttempt(env: Env, task: TaskRow, audience: TaskAudience, candidateId: string): Promise<Outcome<AttemptRecord>> {
  if (task.archivedAt !== null) return refuse("conflict", `Task ${task.id} is archived and takes no new attempts`);
  if (task.status !== "READY") return refuse("conflict", `Task ${task.id} is not ready for attempts yet (status ${task.status})`);
  const id = newAttemptId();
  const init = { id, task_id: task.id, organization_id: task.organizationId, candidate_id: candidateId, time_limit_minutes: task.timeLimitMinutes };
  const created = await attemptObject(env, id).create(init, audience === "candidate");
  if (created) return accept(created);
  const standing = await attemptStanding(database(env.DB), task.id, candidateId);
  if (standing.open || standing.made < standing.allowed) {
    return refuse(
      "conflict",
      `You already have an open attempt on task ${task.id}` +
        (standing.open ? `: ${standing.open.id} (${standing.open.status}); submit it before starting another` : "; submit it before starting another"),
    );
  }
  return refuse(
    "conflict",
    `You have made ${standing.made === 1 ? "your attempt" : `all ${standing.made} of your attempts`} on task ${task.id}; ` +
      "a candidate submits one attempt per task, and another needs a retake granted by the organization's staff",
  );
}

/** The attempts the viewer may see, newest first, as D1 mirrors them. */
export function attemptListing(env: Env, viewer: Viewer, filter: AttemptFilter): Listing<AttemptRecord> {
  const db = database(env.DB);
  const where = listableAttempts(viewer, filter);
  return { count: () => countAttempts(db, where), page: async (limit, offset) => (await attemptPage(db, where, limit, offset)).map(attemptRecord) };
}

/** An attempt as its object holds it (never behind the D1 row), with how its scoring stands for the audience. */
export async function attemptView(
  env: Env,
  row: AttemptRow,
  audience: Exclude<AttemptAudience, "none">,
): Promise<AttemptRecord & { scoring: ScoringState }> {
  const [record, scoring] = await Promise.all([attemptObject(env, row.id).record(), scoringState(env, row.id, audience)]);
  return { ...(record ?? attemptRecord(row)), scoring };
}

/** NOT_STARTED → IN_PROGRESS, by its candidate or an IDE session of the attempt. */
export function startAttempt(env: Env, attemptId: string, actor: AttemptActor): Promise<Outcome<AttemptRecord>> {
  return attemptObject(env, attemptId).start(actor);
}
