import type { User } from "../db/accounts.queries";
import { database } from "../db/client";
import {
  countMembers,
  findOrganization,
  memberFilter,
  memberPage,
  renameOrganization as storeName,
  type MembershipRow,
  type OrganizationRow,
  type PlanRow,
} from "../db/organizations.queries";
import { accept, refuse, type Outcome } from "../domain/outcome";
import type { Listing } from "../domain/pagination";
import type { Role } from "../domain/roles";
import type { Env } from "../env";

/** An organization with the plan in force. */
export interface OrganizationWithPlan {
  org: OrganizationRow;
  plan: PlanRow;
}

export async function organization(env: Env, orgId: string): Promise<Outcome<OrganizationWithPlan>> {
  const found = await findOrganization(database(env.DB), orgId);
  return found ? accept(found) : refuse("not_found", `Organization ${orgId} not found`);
}

export async function renameOrganization(env: Env, orgId: string, name: string): Promise<Outcome<OrganizationWithPlan>> {
  await storeName(database(env.DB), orgId, name);
  return organization(env, orgId);
}

/** An organization's members in the order they joined, each with their user; only those of `role` when given. */
export function memberListing(env: Env, orgId: string, role: Role | undefined): Listing<{ membership: MembershipRow; user: User }> {
  const db = database(env.DB);
  const where = memberFilter(orgId, role);
  return {
    count: () => countMembers(db, where),
    page: (limit, offset) => memberPage(db, where, limit, offset),
  };
}
