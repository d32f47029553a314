import { and, count, eq } from "drizzle-orm";
import { z } from "zod";
import { database } from "../db/client";
import { memberships, organizations, plans, users } from "../db/schema";
import { MEMBERSHIP_SOURCES, ROLES } from "../domain/roles";
import type { Env } from "../env";
import { jsonContent, jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { HttpError } from "../http/errors";
import { pageEnvelope, paginate, paginationQuery } from "../http/pagination";
import type { RouteTable } from "./table";

export const OrgIdParam = z.object({
  org_id: z.string().min(1).max(128).regex(/^[A-Za-z0-9._-]+$/, "letters, digits, '.', '_' and '-' only"),
});

export const PlanSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    candidate_limit: z.number().int().nullable().describe("Candidates the organization may invite; null is unlimited"),
    upgrade_url: z.string().nullable(),
  })
  .meta({ id: "Plan" });

const OrganizationSchema = z
  .object({ id: z.string(), name: z.string(), plan: PlanSchema, created_at: z.string() })
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

async function loadOrganization(env: Env, orgId: string) {
  const row = await database(env.DB)
    .select({ org: organizations, plan: plans })
    .from(organizations)
    .innerJoin(plans, eq(plans.id, organizations.planId))
    .where(eq(organizations.id, orgId))
    .get();
  if (!row) throw HttpError.notFound(`Organization ${orgId} not found`);
  const { org, plan } = row;
  return {
    id: org.id,
    name: org.name,
    created_at: org.createdAt,
    plan: { id: plan.id, name: plan.name, candidate_limit: plan.candidateLimit, upgrade_url: plan.upgradeUrl },
  };
}

export class GetOrganization extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["organizations"],
    summary: "An organization the caller belongs to, with its plan and limits",
    request: { params: OrgIdParam },
    responses: { "200": jsonResponse("The organization", OrganizationSchema) },
  };

  async run({ env, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    await caller.requireMember(params.org_id);
    return loadOrganization(env, params.org_id);
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
    await database(ctx.env.DB).update(organizations).set({ name: body.name }).where(eq(organizations.id, params.org_id));
    return loadOrganization(ctx.env, params.org_id);
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
    const db = database(env.DB);
    const where = and(
      eq(memberships.organizationId, params.org_id),
      query.role ? eq(memberships.role, query.role) : undefined,
    );
    return paginate(
      query,
      async () => (await db.select({ n: count() }).from(memberships).where(where).get())?.n ?? 0,
      async (limit, offset) => {
        const rows = await db
          .select({ m: memberships, u: users })
          .from(memberships)
          .innerJoin(users, eq(users.id, memberships.userId))
          .where(where)
          .orderBy(memberships.createdAt, memberships.userId)
          .limit(limit)
          .offset(offset)
          .all();
        return rows.map(({ m, u }) => ({ user_id: u.id, email: u.email, role: m.role, source: m.source, joined_at: m.createdAt }));
      },
    );
  }
}

export const organizationRoutes: RouteTable = [
  ["GET", "/organizations/:org_id", GetOrganization],
  ["PATCH", "/organizations/:org_id", PatchOrganization],
  ["GET", "/organizations/:org_id/members", ListMembers],
];
