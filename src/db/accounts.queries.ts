import { and, eq, inArray, or, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { hasRole, ROLES, staffOrganizations, type MembershipSource, type Role, type Viewer } from "../domain/roles";
import type { SessionClaims } from "../domain/identity";
import { ExpiringCache } from "../lib/expiring-cache";
import { newId } from "../lib/ids";
import { preparedQuery, type Database } from "./client";
import { memberships, organizations, plans, users } from "./schema";

export type User = typeof users.$inferSelect;

export const DEFAULT_PLAN_ID = "free";

/**
 * Finds or creates the caller's user record and records the membership the token claims.
 * The common case (nothing changed) is no query when this isolate synced the same claims in
 * the last minute, else one read. Writes are upserts keyed by the unique
 * subject, so concurrent first requests converge on one row. A membership made by accepting
 * an invitation is the service's own and no token changes it.
 */
export async function syncUserFromClaims(db: Database, claims: SessionClaims): Promise<User> {
  const key = JSON.stringify([claims.email, claims.role, claims.org_id ?? null]);
  const now = Date.now();
  const known = synced.get(claims.sub, now);
  if (known?.key === key) return known.user;
  const user = await syncFromDatabase(db, claims);
  synced.set(claims.sub, { key, user }, now + SYNC_MEMO_MS);
  return user;
}

/**
 * Per subject, the claims this isolate last found in D1 as they are (or wrote there), with the
 * user they belong to. Only this sync writes a user's email, role and organization and a token
 * membership, from the same claims, so while the claims stay the same the row does too. One
 * entry per subject: a user who goes back to an earlier token (A, then B, then A) is written
 * again, as the row now holds B. The memo is short anyway, so a row changed by hand or by
 * another isolate is read again within a minute.
 */
const SYNC_MEMO_MS = 60_000;
const synced = new ExpiringCache<string, { key: string; user: User }>(5000);

async function syncFromDatabase(db: Database, claims: SessionClaims): Promise<User> {
  const found = await db
    .select({ user: users, membership: { role: memberships.role, source: memberships.source } })
    .from(users)
    .leftJoin(
      memberships,
      and(eq(memberships.userId, users.id), claims.org_id ? eq(memberships.organizationId, claims.org_id) : sql`0`),
    )
    .where(eq(users.subject, claims.sub))
    .get();

  const orgId = claims.org_id ?? null;
  const userCurrent = found && found.user.email === claims.email && found.user.role === claims.role && found.user.orgId === orgId;
  const membership = found?.membership;
  const membershipCurrent = !claims.org_id || membership?.source === "invitation" || membership?.role === claims.role;
  if (found && userCurrent && membershipCurrent) return found.user;

  const now = new Date().toISOString();
  const user = await db
    .insert(users)
    .values({ id: newId("usr"), subject: claims.sub, email: claims.email, role: claims.role, orgId, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: users.subject, set: { email: claims.email, role: claims.role, orgId, updatedAt: now } })
    .returning()
    .get();

  if (claims.org_id) {
    await db.batch([
      db
        .insert(organizations)
        .values({ id: claims.org_id, name: claims.org_id, planId: DEFAULT_PLAN_ID })
        .onConflictDoNothing(),
      db
        .insert(memberships)
        .values({ userId: user.id, organizationId: claims.org_id, role: claims.role, source: "token" })
        .onConflictDoUpdate({
          target: [memberships.userId, memberships.organizationId],
          set: { role: claims.role },
          setWhere: eq(memberships.source, "token"),
        }),
    ]);
  }
  return user;
}

export interface MembershipView {
  organization_id: string;
  organization_name: string;
  role: Role;
  source: MembershipSource;
  plan: { id: string; name: string; candidate_limit: number | null };
  joined_at: string;
}

const membershipsQuery = preparedQuery((db) =>
  db
    .select({ m: memberships, org: organizations, plan: plans })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .innerJoin(plans, eq(plans.id, organizations.planId))
    .where(eq(memberships.userId, sql.placeholder("userId")))
    .orderBy(organizations.id)
    .prepare(),
);

export async function membershipsOf(db: Database, userId: string): Promise<MembershipView[]> {
  const rows = await membershipsQuery(db).all({ userId });
  return rows.map(({ m, org, plan }) => ({
    organization_id: org.id,
    organization_name: org.name,
    role: m.role,
    source: m.source,
    plan: { id: plan.id, name: plan.name, candidate_limit: plan.candidateLimit },
    joined_at: m.createdAt,
  }));
}

const membershipQuery = preparedQuery((db) =>
  db
    .select({ role: memberships.role, source: memberships.source })
    .from(memberships)
    .where(and(eq(memberships.userId, sql.placeholder("userId")), eq(memberships.organizationId, sql.placeholder("organizationId"))))
    .prepare(),
);

export async function findMembership(
  db: Database,
  userId: string,
  organizationId: string,
): Promise<{ role: Role; source: MembershipSource } | undefined> {
  return membershipQuery(db).get({ userId, organizationId });
}

/**
 * SQL: `organizationId` is an organization whose staff the viewer is. The same rule as
 * `isStaffIn`, for list queries.
 */
export function staffOrganization(organizationId: SQLiteColumn, viewer: Viewer): SQL {
  const organizations = staffOrganizations(viewer);
  if (organizations === "all") return sql`1`;
  return organizations.length > 0 ? inArray(organizationId, organizations) : sql`0`;
}

/**
 * SQL: the user of the `users` row in the query is staff of `organizationId` now, by the rights
 * their latest token gave (`role` and `org_id` as synced from it). The same rule as `isStaffIn`,
 * for the flows that act on users who are not the caller.
 */
export function staffNow(organizationId: SQLiteColumn): SQL {
  const staffRoles = ROLES.filter((r) => hasRole(r, "interviewer"));
  return or(eq(users.role, "admin"), and(eq(users.orgId, organizationId), inArray(users.role, staffRoles)))!;
}
