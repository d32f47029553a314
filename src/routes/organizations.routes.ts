import { z } from "zod";
import { BILLING_STATUSES } from "../domain/billing";
import { MEMBERSHIP_SOURCES, ROLES } from "../domain/roles";
import { memberListing, organization, renameOrganization, type OrganizationWithPlan } from "../flows/organizations.flow";
import { jsonContent, jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { unwrap } from "../http/unwrap";
import { pageEnvelope, paginate, paginationQuery } from "../http/paging";
import { OrgIdParam } from "./params";
import type { RouteTable } from "./table";

export const PlanSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    candidate_limit: z.number().int().nullable().describe("Candidates the organization may invite; null is unlimited"),
    upgrade_url: z.string().nullable(),
  })
  .meta({ id: "Plan" });

const OrganizationBillingSchema = z
  .object({
    status: z
      .enum(BILLING_STATUSES)
      .nullable()
      .describe("The subscription's status, as the payment provider reports it; null: never billed (docs/billing.md)"),
    subscribed_plan_id: z
      .string()
      .nullable()
      .describe("The subscription's plan; `plan` is the one in force, the free plan while the subscription is unpaid or ended"),
    updated_at: z.string().nullable().describe("When the last billing event was applied to the organization"),
    last_event_id: z.string().nullable().describe("The payment provider's event applied last"),
  })
  .meta({ id: "OrganizationBilling" });

const OrganizationSchema = z
  .object({ id: z.string(), name: z.string(), plan: PlanSchema, billing: OrganizationBillingSchema, created_at: z.string() })
  .meta({ id: "Organization" });

const MemberSchema = z
  .object({
    user_id: z.string(),
    email: z.string(),
    role: z.enum(ROLES).describe("The role recorded: the member's last session token's for the organization, or candidate for an invitation"),
    source: z
      .enum(MEMBERSHIP_SOURCES)
      .describe("token: recorded from a session token; its role counts only while the member's token names the organization. invitation: an accepted invitation"),
    joined_at: z.string(),
  })
  .meta({ id: "Member" });

function organizationView({ org, plan }: OrganizationWithPlan): z.infer<typeof OrganizationSchema> {
  return {
    id: org.id,
    name: org.name,
    created_at: org.createdAt,
    plan: { id: plan.id, name: plan.name, candidate_limit: plan.candidateLimit, upgrade_url: plan.upgradeUrl },
    billing: {
      status: org.billingStatus,
      subscribed_plan_id: org.billingPlanId,
      updated_at: org.billingUpdatedAt,
      last_event_id: org.billingEventId,
    },
  };
}

export class GetOrganization extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["organizations"],
    summary: "An organization the caller belongs to, with its plan, limits and billing status",
    request: { params: OrgIdParam },
    responses: { "200": jsonResponse("The organization", OrganizationSchema) },
  };

  async run({ env, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    await caller.requireMember(params.org_id);
    return organizationView(unwrap(await organization(env, params.org_id)));
  }
}

export class PatchOrganization extends SessionEndpoint {
  protected readonly role = "orgadmin";
  schema = {
    tags: ["organizations"],
    summary: "Rename an organization (orgadmin or higher in it)",
    request: {
      params: OrgIdParam,
      body: jsonContent(z.strictObject({ name: z.string().trim().min(1).max(200) })),
    },
    responses: { "200": jsonResponse("The organization", OrganizationSchema) },
  };

  async run(ctx: SessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    await ctx.caller.requireMember(params.org_id, "orgadmin");
    return organizationView(unwrap(await renameOrganization(ctx.env, params.org_id, body.name)));
  }
}

export class ListMembers extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["organizations"],
    summary: "Members of an organization (interviewer or higher in it)",
    request: {
      params: OrgIdParam,
      query: paginationQuery({ defaultLimit: 20, maxLimit: 100 }).extend({
        role: z.enum(ROLES).optional().describe("Only members with this role"),
      }),
    },
    responses: { "200": jsonResponse("A page of members", pageEnvelope(MemberSchema)) },
  };

  async run({ env, caller }: SessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    await caller.requireMember(params.org_id, "interviewer");
    const members = memberListing(env, params.org_id, query.role);
    return paginate(query, members.count, async (limit, offset) =>
      (await members.page(limit, offset)).map(({ membership, user }) => ({
        user_id: user.id,
        email: user.email,
        role: membership.role,
        source: membership.source,
        joined_at: membership.createdAt,
      })),
    );
  }
}

export const organizationRoutes: RouteTable = [
  ["GET", "/organizations/:org_id", GetOrganization],
  ["PATCH", "/organizations/:org_id", PatchOrganization],
  ["GET", "/organizations/:org_id/members", ListMembers],
];
