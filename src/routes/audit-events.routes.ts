import { z } from "zod";
import { AUDIT_ACTIONS, AUDIT_TARGET_TYPES } from "../domain/audit";
import { auditEventListing } from "../flows/audit-events.flow";
import { jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { pageEnvelope, paginate, paginationQuery } from "../http/paging";
import { OrgIdParam } from "./params";
import type { RouteTable } from "./table";

const AuditEventSchema = z
  .object({
    event_id: z.string(),
    organization_id: z.string(),
    actor_id: z.string().describe("The staff member who acted"),
    actor_email: z.string(),
    action: z.enum(AUDIT_ACTIONS).describe("retake.granted: a candidate may make one more attempt on a task"),
    target_type: z.enum(AUDIT_TARGET_TYPES),
    target_id: z.string(),
    detail: z.record(z.string(), z.unknown()).describe("retake.granted: retake_id, candidate_id, candidate_email, reason"),
    created_at: z.string(),
  })
  .meta({ id: "AuditEvent" });

export class ListAuditEvents extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["organizations"],
    summary: "The organization's audit log (interviewer or higher in it)",
    description: "Staff actions that change what a candidate may do, such as retakes granted. Newest first; never changed or removed.",
    request: {
      params: OrgIdParam,
      query: paginationQuery({ defaultLimit: 20, maxLimit: 100 }).extend({
        action: z.enum(AUDIT_ACTIONS).optional().describe("Only events of this action"),
      }),
    },
    responses: { "200": jsonResponse("A page of audit events", pageEnvelope(AuditEventSchema)) },
  };

  async run({ env, caller }: SessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    await caller.requireMember(params.org_id, "interviewer");
    const events = auditEventListing(env, params.org_id, query.action);
    return paginate(query, events.count, async (limit, offset) =>
      (await events.page(limit, offset)).map(({ event, actorEmail }) => ({
        event_id: event.id,
        organization_id: event.organizationId,
        actor_id: event.actorId,
        actor_email: actorEmail,
        action: event.action,
        target_type: event.targetType,
        target_id: event.targetId,
        detail: event.detail,
        created_at: event.createdAt,
      })),
    );
  }
}

export const auditEventRoutes: RouteTable = [["GET", "/organizations/:org_id/audit-events", ListAuditEvents]];
