import { and, count, eq, type SQL } from "drizzle-orm";
import type { Role } from "../domain/roles";
import type { User } from "./accounts.queries";
import type { Database } from "./client";
import { memberships, organizations, plans, users } from "./schema";

export type OrganizationRow = typeof organizations.$inferSelect;
export type PlanRow = typeof plans.$inferSelect;
export type MembershipRow = typeof memberships.$inferSelect;

export async function findOrganization(db: Database, orgId: string): Promise<{ org: OrganizationRow; plan: PlanRow } | undefined> {
  return db
    .select({ org: organizations, plan: plans })
    .from(organizations)
    .innerJoin(plans, eq(plans.id, organizations.planId))
    .where(eq(organizations.id, orgId))
    .get();
}

export async function renameOrganization(db: Database, orgId: string, name: string): Promise<void> {
  await db.update(organizations).set({ name }).where(eq(organizations.id, orgId));
}

export function memberFilter(organizationId: string, role: Role | undefined): SQL | undefined {
  return and(eq(memberships.organizationId, organizationId), role ? eq(memberships.role, role) : undefined);
}

export async function countMembers(db: Database, where: SQL | undefined): Promise<number> {
  return (await db.select({ n: count() }).from(memberships).where(where).get())?.n ?? 0;
}

/** A page of members, in the order they joined, each with their user. */
export async function memberPage(
  db: Database,
  where: SQL | undefined,
  limit: number,
  offset: number,
): Promise<{ membership: MembershipRow; user: User }[]> {
  return db
    .select({ membership: memberships, user: users })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(where)
    .orderBy(memberships.createdAt, memberships.userId)
    .limit(limit)
    .offset(offset)
    .all();
}
