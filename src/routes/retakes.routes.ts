import { z } from "zod";
import { grantRetake } from "../flows/retakes.flow";
import { jsonContent, jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema, json } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { visibleTask } from "../http/visibility";
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

  async run({ env, db, caller }: SessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    const { task } = await visibleTask(db, caller, params.task_id);
    await caller.requireMember(task.organizationId, "interviewer");
    const retake = unwrap(
      await grantRetake(env, task, {
        // The body schema lets exactly one of the two through.
        candidate: body.candidate_id !== undefined ? { userId: body.candidate_id } : { email: body.email! },
        reason: body.reason,
        grantedBy: caller.user.id,
      }),
    );
    return json(
      {
        retake_id: retake.id,
        task_id: retake.taskId,
        candidate_id: retake.candidateId,
        candidate_email: retake.candidateEmail,
        reason: retake.reason,
        granted_by: retake.grantedBy,
        created_at: retake.createdAt,
        attempts_allowed: retake.attemptsAllowed,
        audit_event_id: retake.auditEventId,
      },
      201,
    );
  }
}

export const retakeRoutes: RouteTable = [["POST", "/tasks/:task_id/retakes", GrantRetake]];
