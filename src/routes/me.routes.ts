import { z } from "zod";
import { MEMBERSHIP_SOURCES, ROLES } from "../domain/roles";
import { membershipsOf } from "../flows/me.flow";
import { jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import type { RouteTable } from "./table";

const MembershipSchema = z.object({
  organization_id: z.string(),
  organization_name: z.string(),
  role: z.enum(ROLES).describe("The role recorded: the last session token's for the organization, or candidate for an invitation"),
  source: z
    .enum(MEMBERSHIP_SOURCES)
    .describe("token: recorded from a session token naming the organization; invitation: made by accepting an invitation"),
  effective_role: z
    .enum(ROLES)
    .nullable()
    .describe("The role this session has in the organization: the token's where it names the organization, else candidate by an invitation, else none"),
  plan: z.object({ id: z.string(), name: z.string(), candidate_limit: z.number().int().nullable() }),
  joined_at: z.string(),
});

export const MeSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    role: z.enum(ROLES),
    created_at: z.string(),
    memberships: z.array(MembershipSchema),
  })
  .meta({ id: "Me" });

export class GetMe extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["users"],
    summary: "The caller and their organization memberships",
    responses: { "200": jsonResponse("The caller", MeSchema) },
  };

  async run({ env, caller }: SessionContext) {
    const { user } = caller;
    const memberships = (await membershipsOf(env, user.id)).map((m) => ({
      ...m,
      effective_role: caller.roleIn(m.organization_id, m.source),
    }));
    return { id: user.id, email: user.email, role: caller.role, created_at: user.createdAt, memberships };
  }
}

export const meRoutes: RouteTable = [["GET", "/me", GetMe]];
