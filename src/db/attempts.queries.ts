import { and, count, desc, eq, isNull, lt, or, sql, type SQL } from "drizzle-orm";
import { attemptAudience, type AttemptAudience, type AttemptRecord, type AttemptStatus } from "../domain/attempts";
import { roleIn, type Viewer } from "../domain/roles";
import { staffOrganization } from "./accounts.queries";
import { preparedQuery, type Database } from "./client";
import { mayAttemptAgain } from "./retakes.queries";
import { rowValues } from "./rows";
import { attempts, ideTokens, memberships } from "./schema";

export type AttemptRow = typeof attempts.$inferSelect;

export function attemptRecord(row: AttemptRow): AttemptRecord {
  return {
    id: row.id,
    task_id: row.taskId,
    organization_id: row.organizationId,
    candidate_id: row.candidateId,
    status: row.status,
    time_limit_minutes: row.timeLimitMinutes,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    started_at: row.startedAt,
    deadline_at: row.deadlineAt,
    submitted_at: row.submittedAt,
    auto_submitted: row.autoSubmitted,
    score_id: row.scoreId,
    submission: row.submission,
  };
}

function columns(record: AttemptRecord, version: number) {
  return {
    status: record.status,
    updatedAt: record.updated_at,
    startedAt: record.started_at,
    deadlineAt: record.deadline_at,
    submittedAt: record.submitted_at,
    autoSubmitted: record.auto_submitted,
    scoreId: record.score_id,
    submission: record.submission,
    version,
  };
}

/**
 * The first write of an attempt. False when the candidate already has an open attempt on the
 * task (the partial unique index decides) or, when `oneSubmission` holds, has made every
 * attempt allowed: one, plus one per retake granted (docs/api.md, "Retakes"). Both are decided
 * inside the insert, so two concurrent creations cannot both pass either.
 */
export async function insertAttempt(db: Database, record: AttemptRecord, version: number, oneSubmission: boolean): Promise<boolean> {
  const row = rowValues(attempts, {
    id: record.id,
    taskId: record.task_id,
    organizationId: record.organization_id,
    candidateId: record.candidate_id,
    timeLimitMinutes: record.time_limit_minutes,
    createdAt: record.created_at,
    ...columns(record, version),
  });
  const allowed = oneSubmission ? mayAttemptAgain(record.task_id, record.candidate_id) : sql`1`;
  const inserted = await db
    .insert(attempts)
    .select(sql`SELECT ${row} WHERE ${allowed}`)
    .onConflictDoNothing()
    .returning({ id: attempts.id })
    .all();
  return inserted.length === 1;
}

/** Writes the object's state through, unless D1 already holds this version or a newer one. */
export async function writeAttemptThrough(db: Database, record: AttemptRecord, version: number): Promise<void> {
  await db
    .update(attempts)
    .set(columns(record, version))
    .where(and(eq(attempts.id, record.id), lt(attempts.version, version)));
}

/**
 * The one visibility check on an attempt: its candidate and the staff of its organization
 * see it; for anyone else it is undefined, as if it did not exist.
 */
export async function findVisibleAttempt(
  db: Database,
  viewer: Viewer,
  attemptId: string,
): Promise<{ attempt: AttemptRow; audience: Exclude<AttemptAudience, "none"> } | undefined> {
  const row = await db
    .select({ attempt: attempts, membership: memberships.source })
    .from(attempts)
    .leftJoin(memberships, and(eq(memberships.organizationId, attempts.organizationId), eq(memberships.userId, viewer.userId)))
    .where(eq(attempts.id, attemptId))
    .get();
  if (!row) return undefined;
  const audience = attemptAudience({
    isCandidate: row.attempt.candidateId === viewer.userId,
    orgRole: roleIn(viewer, row.attempt.organizationId, row.membership),
    platformAdmin: viewer.role === "admin",
  });
  return audience === "none" ? undefined : { attempt: row.attempt, audience };
}

export interface AttemptFilter {
  taskId?: string;
  status?: AttemptStatus;
}

/**
 * Attempts a caller may list: their own, and all of the organizations where they are staff
 * (every one for a platform admin).
 */
export function listableAttempts(viewer: Viewer, filter: AttemptFilter): SQL | undefined {
  return and(
    viewer.role === "admin"
      ? undefined
      : or(eq(attempts.candidateId, viewer.userId), staffOrganization(attempts.organizationId, viewer)),
    filter.taskId ? eq(attempts.taskId, filter.taskId) : undefined,
    filter.status ? eq(attempts.status, filter.status) : undefined,
  );
}

export async function countAttempts(db: Database, where: SQL | undefined): Promise<number> {
  return (await db.select({ n: count() }).from(attempts).where(where).get())?.n ?? 0;
}

export async function attemptPage(db: Database, where: SQL | undefined, limit: number, offset: number): Promise<AttemptRow[]> {
  return db.select().from(attempts).where(where).orderBy(desc(attempts.createdAt), desc(attempts.id)).limit(limit).offset(offset).all();
}

export type IdeTokenRow = typeof ideTokens.$inferSelect;

/** Every request of an IDE client authenticates with this, a save every few seconds. */
const ideTokenQuery = preparedQuery((db) =>
  db
    .select({ token: ideTokens, candidateId: attempts.candidateId })
    .from(ideTokens)
    .innerJoin(attempts, eq(attempts.id, ideTokens.attemptId))
    .where(eq(ideTokens.tokenHash, sql.placeholder("tokenHash")))
    .prepare(),
);

/** An IDE token by its hash, with the candidate of its attempt. */
export async function findIdeToken(db: Database, tokenHash: string): Promise<(IdeTokenRow & { candidateId: string }) | undefined> {
  const row = await ideTokenQuery(db).get({ tokenHash });
  return row && { ...row.token, candidateId: row.candidateId };
}

export async function insertIdeToken(db: Database, token: { tokenHash: string; attemptId: string; expiresAt: string; createdAt: string }) {
  await db.insert(ideTokens).values(token);
}

export async function revokeIdeTokenRow(db: Database, tokenHash: string, revokedAt: string): Promise<void> {
  await db.update(ideTokens).set({ revokedAt }).where(and(eq(ideTokens.tokenHash, tokenHash), isNull(ideTokens.revokedAt)));
}
