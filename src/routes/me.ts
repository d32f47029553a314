import { z } from "zod";
import { membershipsOf } from "../db/accounts";
import { database } from "../db/client";
import { ROLES } from "../domain/roles";
import { jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import type { RouteTable } from "./table";

const MembershipSchema = z.object({
  organization_id: z.string(),
  organization_name: z.string(),
  role: z.enum(ROLES),
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
    const memberships = await membershipsOf(database(env.DB), user.id);
    return { id: user.id, email: user.email, role: user.role, created_at: user.createdAt, memberships };
  }
}

export const meRoutes: RouteTable = [["GET", "/me", GetMe]];
