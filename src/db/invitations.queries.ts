import { and, count, desc, eq, exists, gt, isNotNull, isNull, lte, or, sql, type SQL } from "drizzle-orm";
import type { DeliveryStatus, InvitationStatus } from "../domain/invitations";
import { FALLBACK_TITLE, taskStatement, type StatementColumns } from "../domain/statement";
import { staffNow } from "./accounts.queries";
import type { Database } from "./client";
import { rowValues } from "./rows";
import { invitations, memberships, organizations, plans, taskAssignments, tasks, users } from "./schema";

export type InvitationRow = typeof invitations.$inferSelect;
/**
 * An invitation with what its views and its e-mail show besides the row. The candidate reads
 * the task's title there, so it is the statement's title, never the pull request's.
 */
export type InvitationDetails = InvitationRow & { taskTitle: string; organizationName: string; inviterEmail: string };

/** The task columns `taskStatement` (domain/statement.ts) reads, for a select. */
export const statementColumns = {
  statementTitle: tasks.statementTitle,
  statementBody: tasks.statementBody,
  prTitle: tasks.prTitle,
  prBody: tasks.prBody,
  issueTitle: tasks.issueTitle,
  issueBody: tasks.issueBody,
  sourceOwner: tasks.sourceOwner,
  sourceRepo: tasks.sourceRepo,
};

const detailsSelection = {
  invitation: invitations,
  statement: statementColumns,
  organizationName: organizations.name,
  inviterEmail: users.email,
};

function withDetails(db: Database) {
  return db
    .select(detailsSelection)
    .from(invitations)
    .innerJoin(tasks, eq(tasks.id, invitations.taskId))
    .innerJoin(organizations, eq(organizations.id, invitations.organizationId))
    .innerJoin(users, eq(users.id, invitations.invitedBy));
}

type DetailsRow = { invitation: InvitationRow; statement: StatementColumns; organizationName: string; inviterEmail: string };

function flatten(row: DetailsRow): InvitationDetails {
  // Only READY tasks take invitations, and those have a statement; the fallback is for the type.
  const taskTitle = taskStatement(row.statement)?.title ?? FALLBACK_TITLE;
  return { ...row.invitation, taskTitle, organizationName: row.organizationName, inviterEmail: row.inviterEmail };
}

/** The invitations `where` names, with their details (the reviewer's views). */
export async function withInvitationDetails(db: Database, where: SQL | undefined): Promise<InvitationDetails[]> {
  return (await withDetails(db).where(where).all()).map(flatten);
}

export async function findInvitation(db: Database, id: string): Promise<InvitationDetails | undefined> {
  const row = await withDetails(db).where(eq(invitations.id, id)).get();
  return row && flatten(row);
}

export async function findInvitationByTokenHash(db: Database, tokenHash: string): Promise<InvitationDetails | undefined> {
  const row = await withDetails(db).where(eq(invitations.tokenHash, tokenHash)).get();
  return row && flatten(row);
}

/** The invitation that holds the one open slot of a candidate and task (unused and not revoked, expired or not). */
export async function findOpenInvitation(db: Database, taskId: string, emailNormalized: string): Promise<InvitationDetails | undefined> {
  const row = await withDetails(db)
    .where(
      and(
        eq(invitations.taskId, taskId),
        eq(invitations.emailNormalized, emailNormalized),
        isNull(invitations.usedAt),
        isNull(invitations.revokedAt),
        isNull(invitations.supersededBy),
      ),
    )
    .get();
  return row && flatten(row);
}

export async function organizationPlan(db: Database, organizationId: string) {
  return db
    .select({
      organizationId: organizations.id,
      planName: plans.name,
      candidateLimit: plans.candidateLimit,
      upgradeUrl: plans.upgradeUrl,
    })
    .from(organizations)
    .innerJoin(plans, eq(plans.id, organizations.planId))
    .where(eq(organizations.id, organizationId))
    .get();
}

/**
 * True in SQL while the organization may have this candidate invited: the plan is unlimited,
 * the candidate already counts, or fewer distinct candidates than the limit count. A
 * candidate counts while they have a used invitation or an open one (not revoked, not
 * expired) in the organization (docs/limits.md). Evaluated inside the statement that writes,
 * so concurrent invitations cannot together pass the limit.
 */
function withinCandidateLimit(organizationId: string, emailNormalized: string, limit: number | null, now: string): SQL {
  if (limit === null) return sql`1`;
  const counts = sql`c.organization_id = ${organizationId}
    AND (c.used_at IS NOT NULL OR (c.revoked_at IS NULL AND c.expires_at > ${now}))`;
  return sql`(EXISTS (SELECT 1 FROM invitations c WHERE ${counts} AND c.email_normalized = ${emailNormalized})
    OR (SELECT COUNT(DISTINCT c.email_normalized) FROM invitations c WHERE ${counts}) < ${limit})`;
}

export interface NewInvitation {
  id: string;
  organizationId: string;
  taskId: string;
  email: string;
  emailNormalized: string;
  invitedBy: string;
  tokenHash: string;
  validHours: number;
  expiresAt: string;
}

/**
 * Stores an invitation unless the plan's candidate limit forbids it or the candidate already
 * has an open invitation to the task (the partial unique index decides, so of two concurrent
 * identical invitations one is stored). An expired unused invitation of the same candidate
 * and task is superseded in the same transaction. False when nothing was stored.
 */
export async function insertInvitation(db: Database, inv: NewInvitation, limit: number | null, now: string): Promise<boolean> {
  const allowed = withinCandidateLimit(inv.organizationId, inv.emailNormalized, limit, now);
  const [, inserted] = await db.batch([
    db
      .update(invitations)
      .set({ supersededBy: inv.id })
      .where(
        and(
          eq(invitations.taskId, inv.taskId),
          eq(invitations.emailNormalized, inv.emailNormalized),
          isNull(invitations.usedAt),
          isNull(invitations.revokedAt),
          isNull(invitations.supersededBy),
          lte(invitations.expiresAt, now),
          allowed,
        ),
      ),
    db
      .insert(invitations)
      .select(sql`SELECT ${rowValues(invitations, { ...inv, issuedAt: now, createdAt: now })} WHERE ${allowed}`)
      .onConflictDoNothing()
      .returning({ id: invitations.id }),
  ]);
  return inserted.length === 1;
}

/**
 * A new token and expiry for an unused invitation (open or expired), with its e-mail queued
 * again; the old token stops working. Undefined when the invitation is used, revoked or
 * superseded, or when reopening an expired one would exceed the plan's candidate limit.
 */
export async function reissueInvitation(
  db: Database,
  inv: InvitationRow,
  tokenHash: string,
  expiresAt: string,
  limit: number | null,
  now: string,
): Promise<InvitationRow | undefined> {
  return db
    .update(invitations)
    .set({
      tokenHash,
      tokenVersion: sql`${invitations.tokenVersion} + 1`,
      issuedAt: now,
      expiresAt,
      deliveryStatus: "queued",
      deliveryAttempts: 0,
      deliveryError: null,
      deliveredAt: null,
    })
    .where(
      and(
        eq(invitations.id, inv.id),
        isNull(invitations.usedAt),
        isNull(invitations.revokedAt),
        isNull(invitations.supersededBy),
        withinCandidateLimit(inv.organizationId, inv.emailNormalized, limit, now),
      ),
    )
    .returning()
    .get();
}

/** Revokes an invitation unless it is used or already revoked; true when this call did. */
export async function revokeInvitation(db: Database, id: string, userId: string, now: string): Promise<boolean> {
  const rows = await db
    .update(invitations)
    .set({ revokedAt: now, revokedBy: userId })
    .where(and(eq(invitations.id, id), isNull(invitations.usedAt), isNull(invitations.revokedAt)))
    .returning({ id: invitations.id })
    .all();
  return rows.length === 1;
}

/**
 * Uses an invitation, makes the user a candidate of its organization and assigns the task,
 * in one transaction. The inserts take their values from the invitation as this call marked
 * it used, so when the conditional update loses (used, revoked, expired, or a concurrent
 * acceptance won) nothing else is written. A membership recorded from a token becomes the
 * invitation's: a record of a token grants nothing, the invitation's candidate rights last.
 */
export async function acceptInvitation(db: Database, id: string, tokenHash: string, userId: string, now: string): Promise<boolean> {
  const usedByThisCall = and(eq(invitations.id, id), eq(invitations.usedBy, userId), eq(invitations.usedAt, now));
  const [used] = await db.batch([
    db
      .update(invitations)
      .set({ usedAt: now, usedBy: userId })
      .where(
        and(
          eq(invitations.id, id),
          eq(invitations.tokenHash, tokenHash),
          isNull(invitations.usedAt),
          isNull(invitations.revokedAt),
          gt(invitations.expiresAt, now),
        ),
      )
      .returning({ id: invitations.id }),
    db
      .insert(memberships)
      .select(
        db
          .select({
            userId: sql<string>`${invitations.usedBy}`.as("user_id"),
            organizationId: invitations.organizationId,
            role: sql<"candidate">`'candidate'`.as("role"),
            source: sql<"invitation">`'invitation'`.as("source"),
            createdAt: sql<string>`${now}`.as("created_at"),
          })
          .from(invitations)
          .where(usedByThisCall),
      )
      .onConflictDoUpdate({
        target: [memberships.userId, memberships.organizationId],
        set: { role: "candidate", source: "invitation" },
      }),
    db
      .insert(taskAssignments)
      .select(
        db
          .select({
            taskId: invitations.taskId,
            userId: sql<string>`${invitations.usedBy}`.as("user_id"),
            assignedAt: sql<string>`${now}`.as("assigned_at"),
          })
          .from(invitations)
          .where(usedByThisCall),
      )
      .onConflictDoNothing(),
  ]);
  return used.length === 1;
}

export interface InvitationFilter {
  organizationId: string;
  status?: InvitationStatus;
  taskId?: string;
  emailNormalized?: string;
}

function statusCondition(status: InvitationStatus, now: string): SQL | undefined {
  switch (status) {
    case "used":
      return isNotNull(invitations.usedAt);
    case "revoked":
      return and(isNull(invitations.usedAt), isNotNull(invitations.revokedAt));
    case "expired":
      return and(isNull(invitations.usedAt), isNull(invitations.revokedAt), lte(invitations.expiresAt, now));
    case "unused":
      return and(isNull(invitations.usedAt), isNull(invitations.revokedAt), gt(invitations.expiresAt, now));
  }
}

function filterCondition(f: InvitationFilter, now: string): SQL | undefined {
  return and(
    eq(invitations.organizationId, f.organizationId),
    f.status ? statusCondition(f.status, now) : undefined,
    f.taskId ? eq(invitations.taskId, f.taskId) : undefined,
    f.emailNormalized ? eq(invitations.emailNormalized, f.emailNormalized) : undefined,
  );
}

export async function countInvitations(db: Database, f: InvitationFilter, now: string): Promise<number> {
  const row = await db.select({ n: count() }).from(invitations).where(filterCondition(f, now)).get();
  return row?.n ?? 0;
}

export async function listInvitations(db: Database, f: InvitationFilter, now: string, limit: number, offset: number): Promise<InvitationDetails[]> {
  const rows = await withDetails(db)
    .where(filterCondition(f, now))
    .orderBy(desc(invitations.createdAt), desc(invitations.id))
    .limit(limit)
    .offset(offset)
    .all();
  return rows.map(flatten);
}

/** The current token's e-mail: only while it is still the current one and has no final delivery state. */
function currentDelivery(id: string, tokenHash: string): SQL | undefined {
  return and(eq(invitations.id, id), eq(invitations.tokenHash, tokenHash), eq(invitations.deliveryStatus, "queued"));
}

export async function countDeliveryAttempt(db: Database, id: string, tokenHash: string): Promise<void> {
  await db
    .update(invitations)
    .set({ deliveryAttempts: sql`${invitations.deliveryAttempts} + 1` })
    .where(currentDelivery(id, tokenHash));
}

/** Records how a send ended; `queued` keeps the e-mail owed and notes the error of the last try. */
export async function recordDelivery(
  db: Database,
  id: string,
  tokenHash: string,
  outcome: { status: DeliveryStatus; error: string | null },
  now: string,
): Promise<void> {
  await db
    .update(invitations)
    .set({
      deliveryStatus: outcome.status,
      deliveryError: outcome.error,
      ...(outcome.status === "sent" && { deliveredAt: now }),
    })
    .where(currentDelivery(id, tokenHash));
}

/**
 * Staff who follow a task (docs/api.md, "Notifications"): who imported it and who invited
 * candidates to it, while they are staff of its organization by their latest token. A stored
 * membership is no staff right (src/domain/roles.ts), so one who moved on hears nothing more.
 */
export async function taskFollowers(db: Database, taskId: string): Promise<string[]> {
  const rows = await db
    .select({ userId: users.id })
    .from(users)
    .innerJoin(tasks, eq(tasks.id, taskId))
    .where(
      and(
        staffNow(tasks.organizationId),
        or(
          eq(users.id, tasks.createdBy),
          exists(db.select({ one: sql`1` }).from(invitations).where(and(eq(invitations.taskId, taskId), eq(invitations.invitedBy, users.id)))),
        ),
      ),
    )
    .all();
  return rows.map((r) => r.userId);
}
