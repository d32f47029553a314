import { database } from "../db/client";
import { attemptingCandidates, attemptStanding, insertRetake } from "../db/retakes.queries";
import type { TaskRow } from "../db/tasks.queries";
import { normalizeEmail } from "../domain/invitations";
import { accept, refuse, type Outcome } from "../domain/outcome";
import type { Env } from "../env";
import { newId } from "../lib/ids";

export interface RetakeRequest {
  /** The candidate by user id, or by e-mail address as given (compared case-insensitively). */
  candidate: { userId: string } | { email: string };
  reason: string;
  grantedBy: string;
}

export interface Retake {
  id: string;
  taskId: string;
  candidateId: string;
  candidateEmail: string;
  reason: string;
  grantedBy: string;
  createdAt: string;
  /** Attempts the candidate may make on the task now, this retake included. */
  attemptsAllowed: number;
  auditEventId: string;
}

/**
 * Grants a candidate who has submitted every attempt they were allowed on a READY,
 * unarchived task exactly one more, and records the grant and its reason in the
 * organization's audit log.
 */
export async function grantRetake(env: Env, task: TaskRow, request: RetakeRequest): Promise<Outcome<Retake>> {
  if (task.archivedAt !== null) return refuse("conflict", `Task ${task.id} is archived and takes no new attempts`);
  if (task.status !== "READY") return refuse("conflict", `Task ${task.id} is not ready for attempts (status ${task.status})`);
  const db = database(env.DB);
  const { candidate: who } = request;
  const found = await attemptingCandidates(db, task.id, "userId" in who ? who : { email: normalizeEmail(who.email) });
  const named = "userId" in who ? who.userId : who.email;
  // Unknown users and users without an attempt answer alike, so this does not tell who has an account.
  if (found.length === 0) return refuse("not_found", `${named} has no attempt on task ${task.id}`);
  if (found.length > 1) return refuse("conflict", `Several users with the address ${named} have attempts on task ${task.id}; give candidate_id`);
  const candidate = found[0]!;

  const now = new Date().toISOString();
  const retakeId = newId("rtk");
  const eventId = newId("aud");
  const stored = await insertRetake(
    db,
    { id: retakeId, taskId: task.id, userId: candidate.id, grantedBy: request.grantedBy, reason: request.reason, createdAt: now },
    {
      id: eventId,
      organizationId: task.organizationId,
      actorId: request.grantedBy,
      action: "retake.granted",
      targetType: "task",
      targetId: task.id,
      detail: { retake_id: retakeId, candidate_id: candidate.id, candidate_email: candidate.email, reason: request.reason },
      createdAt: now,
    },
  );
  const standing = await attemptStanding(db, task.id, candidate.id);
  if (!stored) {
    return refuse(
      "conflict",
      standing.open
        ? `${candidate.email} has attempt ${standing.open.id} open on task ${task.id}; a retake is granted after a submission`
        : `${candidate.email} may already make another attempt on task ${task.id} (${standing.made} of ${standing.allowed} made)`,
    );
  }
  return accept({
    id: retakeId,
    taskId: task.id,
    candidateId: candidate.id,
    candidateEmail: candidate.email,
    reason: request.reason,
    grantedBy: request.grantedBy,
    createdAt: now,
    attemptsAllowed: standing.allowed,
    auditEventId: eventId,
  });
}
