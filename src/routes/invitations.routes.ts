import { z } from "zod";
import {
  DEFAULT_EXPIRY_HOURS,
  DELIVERY_STATUSES,
  INVITATION_STATUSES,
  invitationStatus,
  MAX_EXPIRY_HOURS,
  normalizeEmail,
} from "../domain/invitations";
import { ROLES } from "../domain/roles";
import {
  acceptInvitation,
  invitation,
  invitationListing,
  inviteCandidate,
  resendInvitation,
  revokeInvitation,
  type InvitationDetails,
} from "../flows/invitations.flow";
import { jsonContent, jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema, HttpError, json } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { pageEnvelope, paginate, paginationQuery } from "../http/paging";
import { visibleTask } from "../http/visibility";
import { OrgIdParam } from "./params";
import type { RouteTable } from "./table";

const Id = z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, "letters, digits, '_' and '-' only");
const InviteIdParam = z.object({ invite_id: Id });

export const InvitationSchema = z
  .object({
    invite_id: z.string(),
    organization_id: z.string(),
    task_id: z.string(),
    task_title: z.string(),
    email: z.string(),
    status: z.enum(INVITATION_STATUSES).describe("unused → used, or expired (a resend reopens it), or revoked"),
    expires_at: z.string(),
    created_at: z.string(),
    issued_at: z.string().describe("When the current link was issued: at creation, then at each resend"),
    invited_by: z.string().describe("User id of the inviter"),
    used_at: z.string().nullable(),
    used_by: z.string().nullable().describe("User id of the candidate who accepted"),
    revoked_at: z.string().nullable(),
    superseded_by: z.string().nullable().describe("The invitation that replaced this expired one"),
    delivery_status: z.enum(DELIVERY_STATUSES).describe("The current link's e-mail: queued (also while retrying), sent, failed"),
    delivery_attempts: z.number().int().describe("Sends of the current link's e-mail so far"),
    delivery_error: z.string().nullable().describe("Why the last send failed"),
    delivered_at: z.string().nullable(),
  })
  .meta({ id: "Invitation" });

const AcceptedInvitationSchema = z
  .object({
    invite_id: z.string(),
    organization_id: z.string(),
    organization_name: z.string(),
    task_id: z.string(),
    task_title: z.string(),
    status: z.literal("used"),
    used_at: z.string(),
    role: z
      .enum(ROLES)
      .describe("The caller's role in the organization now: candidate, or what the session token says there"),
  })
  .meta({ id: "AcceptedInvitation" });

export function invitationView(inv: InvitationDetails, now: Date): z.infer<typeof InvitationSchema> {
  return {
    invite_id: inv.id,
    organization_id: inv.organizationId,
    task_id: inv.taskId,
    task_title: inv.taskTitle,
    email: inv.email,
    status: invitationStatus(inv, now),
    expires_at: inv.expiresAt,
    created_at: inv.createdAt,
    issued_at: inv.issuedAt,
    invited_by: inv.invitedBy,
    used_at: inv.usedAt,
    used_by: inv.usedBy,
    revoked_at: inv.revokedAt,
    superseded_by: inv.supersededBy,
    delivery_status: inv.deliveryStatus,
    delivery_attempts: inv.deliveryAttempts,
    delivery_error: inv.deliveryError,
    delivered_at: inv.deliveredAt,
  };
}

const errors = {
  "403": jsonResponse("Role too low, not a member of the organization, or the plan's candidate limit is reached", ErrorSchema),
  "404": jsonResponse("No such invitation", ErrorSchema),
  "409": jsonResponse("The invitation's state does not allow this", ErrorSchema),
};

/** An invitation for a change by its organization's staff (interviewer or higher there). */
async function invitationForStaff({ env, caller }: SessionContext, id: string): Promise<InvitationDetails> {
  const inv = unwrap(await invitation(env, id));
  await caller.requireMember(inv.organizationId, "interviewer");
  return inv;
}

export class CreateInvitation extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["invitations"],
    summary: "Invite a candidate by e-mail to a task (interviewer or higher in the task's organization)",
    description:
      "Creates an invitation with a single-use link and queues its e-mail; the e-mail is sent asynchronously " +
      "(`delivery_status`), so a mail outage never fails this request. The link is only in the e-mail. " +
      "403 when the organization's plan candidate limit is reached (docs/limits.md says how it counts; never " +
      "retried, never 429); 409 when the candidate already has an open invitation to the task, or the task is not " +
      "READY or is archived; 404 for a task the caller cannot see. An expired unused invitation of the same " +
      "candidate and task is superseded by the new one.",
    request: {
      body: jsonContent(
        z.strictObject({
          email: z.email().max(320).describe("The candidate's e-mail address"),
          task_id: Id,
          expires_in_hours: z
            .number()
            .int()
            .min(1)
            .max(MAX_EXPIRY_HOURS)
            .default(DEFAULT_EXPIRY_HOURS)
            .describe(`Hours the link stays valid (default ${DEFAULT_EXPIRY_HOURS}, at most ${MAX_EXPIRY_HOURS})`),
        }),
      ),
    },
    responses: {
      "201": jsonResponse("The invitation; its e-mail is queued", InvitationSchema),
      ...errors,
      "404": jsonResponse("No such task, or not visible", ErrorSchema),
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { body } = await this.getValidatedData<typeof this.schema>();
    const { task } = await visibleTask(db, caller, body.task_id);
    await caller.requireMember(task.organizationId, "interviewer");
    const inv = unwrap(await inviteCandidate(env, task, { email: body.email, expiresInHours: body.expires_in_hours, invitedBy: caller.user.id }));
    return json(invitationView(inv, new Date()), 201, { Location: `/api/v1/invites/${inv.id}` });
  }
}

export class ListInvitations extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["invitations"],
    summary: "An organization's invitations with their status (interviewer or higher in it)",
    description:
      "Newest first. `organization_id` defaults to the session's organization. `email` matches the whole address, " +
      "case-insensitively.",
    request: {
      query: paginationQuery({ defaultLimit: 20, maxLimit: 100 }).extend({
        organization_id: OrgIdParam.shape.org_id.optional().describe("Default: the session's organization"),
        status: z.enum(INVITATION_STATUSES).optional(),
        task_id: Id.optional(),
        email: z.string().trim().min(1).max(320).optional(),
      }),
    },
    responses: { "200": jsonResponse("A page of invitations", pageEnvelope(InvitationSchema)) },
  };

  async run({ env, caller }: SessionContext) {
    const { query } = await this.getValidatedData<typeof this.schema>();
    const organizationId = query.organization_id ?? caller.orgId;
    if (!organizationId) {
      throw HttpError.invalid([
        { loc: ["query", "organization_id"], msg: "required when the session names no organization", type: "missing" },
      ]);
    }
    await caller.requireMember(organizationId, "interviewer");
    const now = new Date();
    const invitations = invitationListing(
      env,
      {
        organizationId,
        status: query.status,
        taskId: query.task_id,
        emailNormalized: query.email === undefined ? undefined : normalizeEmail(query.email),
      },
      now,
    );
    return paginate(query, invitations.count, async (limit, offset) =>
      (await invitations.page(limit, offset)).map((inv) => invitationView(inv, now)),
    );
  }
}

export class GetInvitation extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["invitations"],
    summary: "One invitation, with its status and delivery state (interviewer or higher in its organization)",
    request: { params: InviteIdParam },
    responses: { "200": jsonResponse("The invitation", InvitationSchema), "404": errors["404"] },
  };

  async run(ctx: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    return invitationView(await invitationForStaff(ctx, params.invite_id), new Date());
  }
}

export class ResendInvitation extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["invitations"],
    summary: "Issue a new link and expiry and send the e-mail again (the remedy for expiry)",
    description:
      "For an unused invitation, expired or not. The old link stops working at once; the new one is valid as long " +
      "as the invitation's original validity. 409 for a used, revoked or superseded invitation; 403 when reopening " +
      "an expired invitation would exceed the plan's candidate limit.",
    request: { params: InviteIdParam },
    responses: { "200": jsonResponse("The invitation; its new e-mail is queued", InvitationSchema), ...errors },
  };

  async run(ctx: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const inv = await invitationForStaff(ctx, params.invite_id);
    return invitationView(unwrap(await resendInvitation(ctx.env, inv)), new Date());
  }
}

export class RevokeInvitation extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["invitations"],
    summary: "Revoke an unused invitation; its link stops working",
    description: "Revoking a revoked invitation changes nothing. 409 for a used invitation.",
    request: { params: InviteIdParam },
    responses: { "200": jsonResponse("The revoked invitation", InvitationSchema), ...errors },
  };

  async run(ctx: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const inv = await invitationForStaff(ctx, params.invite_id);
    return invitationView(unwrap(await revokeInvitation(ctx.env, inv, ctx.caller.user.id)), new Date());
  }
}

export class AcceptInvitation extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["invitations"],
    summary: "Accept an invitation: join its organization as a candidate, with the task assigned",
    description:
      "The web app's page at the e-mail's link (`{APP_BASE_URL}/invites/accept?token=...`) posts the token here for " +
      "the signed-in user, whose verified e-mail must be the invited address (case-insensitive); a token without " +
      "`email_verified` is unverified unless its identity provider is configured to vouch for it. Membership and " +
      "assignment are made in one atomic step. 404 unknown token (a resend replaces the old one); 409 already used; " +
      "410 expired (ask for a resend) or revoked. Auth-related for rate limits.",
    request: {
      body: jsonContent(z.strictObject({ token: z.string().trim().min(1).max(256).describe("The token of the e-mail's link") })),
    },
    responses: {
      "200": jsonResponse("Accepted", AcceptedInvitationSchema),
      "403": jsonResponse("The signed-in e-mail is not the invited one, or not verified", ErrorSchema),
      "404": jsonResponse("Unknown token", ErrorSchema),
      "409": jsonResponse("Already used", ErrorSchema),
      "410": jsonResponse("Expired or revoked", ErrorSchema),
    },
  };

  async run({ env, exec, caller }: SessionContext) {
    const { body } = await this.getValidatedData<typeof this.schema>();
    const accepted = unwrap(
      await acceptInvitation(env, exec, body.token, { userId: caller.user.id, email: caller.user.email, emailVerified: caller.emailVerified }),
    );
    return {
      invite_id: accepted.id,
      organization_id: accepted.organizationId,
      organization_name: accepted.organizationName,
      task_id: accepted.taskId,
      task_title: accepted.taskTitle,
      status: "used" as const,
      used_at: accepted.usedAt,
      role: caller.roleIn(accepted.organizationId, "invitation") ?? "candidate",
    };
  }
}

export const invitationRoutes: RouteTable = [
  ["POST", "/invites/candidate", CreateInvitation],
  ["POST", "/invites/accept", AcceptInvitation],
  ["GET", "/invites", ListInvitations],
  ["GET", "/invites/:invite_id", GetInvitation],
  ["POST", "/invites/:invite_id/resend", ResendInvitation],
  ["DELETE", "/invites/:invite_id", RevokeInvitation],
];
