import { z } from "zod";
import { database } from "../db/client";
import { attemptingCandidates, attemptStanding, insertRetake } from "../db/retakes";
import { normalizeEmail } from "../domain/invitations";
import { jsonContent, jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema, HttpError, json } from "../http/errors";
import { visibleTask } from "../http/visibility";
import { newId } from "../lib/ids";
import { TaskIdParam } from "./params";
import type { RouteTable } from "./table";

const RetakeSchema = z
  .object({
    retake_id: z.string(),
    task_id: z.string(),
    candidate_id: z.string(),
    candidate_email: z.string(),
    reason: z.string(),
    granted_by: z.string().describe("User id of the staff member who granted it"),
    created_at: z.string(),
    attempts_allowed: z.number().int().describe("Attempts the candidate may make on the task now, this retake included"),
    audit_event_id: z.string().describe("The audit event that records the grant (GET /organizations/{org_id}/audit-events)"),
  })
  .meta({ id: "Retake" });

const RetakeBody = z
  .strictObject({
    candidate_id: z.string().min(1).max(64).optional().describe("The candidate's user id, as their attempts show it"),
    email: z.email().max(320).optional().describe("Or the candidate's e-mail address, compared case-insensitively"),
    reason: z.string().trim().min(1).max(1000).describe("Why the candidate may try again; kept in the audit log"),
  })
  .superRefine((body, ctx) => {
    if ((body.candidate_id === undefined) === (body.email === undefined)) {
      ctx.addIssue({ code: "custom", path: ["candidate_id"], message: "give exactly one of candidate_id and email" });
    }
  });

export class GrantRetake extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["attempts"],
    summary: "Allow a candidate one more attempt on a task (interviewer or higher in its organization)",
    description:
      "A candidate makes one attempt per task; this grants exactly one more, once the candidate has submitted every " +
      "attempt they were allowed. The grant and its reason are recorded in the organization's audit log. Of two " +
      "concurrent grants one is stored; the other is a 409.",
    request: { params: TaskIdParam, body: jsonContent(RetakeBody) },
    responses: {
      "201": jsonResponse("The retake", RetakeSchema),
      "404": jsonResponse("No such task, one the caller may not see, or no attempt by that candidate on it", ErrorSchema),
      "409": jsonResponse(
        "The candidate has an attempt open, may already make another, or the task is archived or not READY",
        ErrorSchema,
      ),
    },
  };

  async run({ env, caller }: SessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    const db = database(env.DB);
    const { task } = await visibleTask(db, caller, params.task_id);
    await caller.requireMember(task.organizationId, "interviewer");
    if (task.archivedAt !== null) throw HttpError.conflict(`Task ${task.id} is archived and takes no new attempts`);
    if (task.status !== "READY") throw HttpError.conflict(`Task ${task.id} is not ready for attempts (status ${task.status})`);

    // The body schema lets exactly one of the two through.
    const who = body.candidate_id !== undefined ? { userId: body.candidate_id } : { email: normalizeEmail(body.email!) };
    const found = await attemptingCandidates(db, task.id, who);
    const named = body.candidate_id ?? body.email;
    // Unknown users and users without an attempt answer alike, so this does not tell who has an account.
    if (found.length === 0) throw HttpError.notFound(`${named} has no attempt on task ${task.id}`);
    if (found.length > 1) throw HttpError.conflict(`Several users with the address ${named} have attempts on task ${task.id}; give candidate_id`);
    const candidate = found[0]!;

    const now = new Date().toISOString();
    const retakeId = newId("rtk");
    const eventId = newId("aud");
    const stored = await insertRetake(
      db,
      { id: retakeId, taskId: task.id, userId: candidate.id, grantedBy: caller.user.id, reason: body.reason, createdAt: now },
      {
        id: eventId,
        organizationId: task.organizationId,
        actorId: caller.user.id,
        action: "retake.granted",
        targetType: "task",
        targetId: task.id,
        detail: { retake_id: retakeId, candidate_id: candidate.id, candidate_email: candidate.email, reason: body.reason },
        createdAt: now,
      },
    );
    const standing = await attemptStanding(db, task.id, candidate.id);
    if (!stored) {
      throw HttpError.conflict(
        standing.open
          ? `${candidate.email} has attempt ${standing.open.id} open on task ${task.id}; a retake is granted after a submission`
          : `${candidate.email} may already make another attempt on task ${task.id} (${standing.made} of ${standing.allowed} made)`,
      );
    }
    return json(
      {
        retake_id: retakeId,
        task_id: task.id,
        candidate_id: candidate.id,
        candidate_email: candidate.email,
        reason: body.reason,
        granted_by: caller.user.id,
        created_at: now,
        attempts_allowed: standing.allowed,
        audit_event_id: eventId,
      },
      201,
    );
  }
}

export const retakeRoutes: RouteTable = [["POST", "/tasks/:task_id/retakes", GrantRetake]];
