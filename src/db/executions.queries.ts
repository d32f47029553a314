import { and, eq, gt, isNull, sql } from "drizzle-orm";
import type { FinalExecutionStatus } from "../domain/executions";
import type { Database } from "./client";
import { executions } from "./schema";

export type ExecutionRow = typeof executions.$inferSelect;
export type NewExecution = Omit<ExecutionRow, "endedAt" | "exitCode" | "status">;

const live = (nowIso: string) => and(isNull(executions.endedAt), gt(executions.liveUntil, nowIso));

/**
 * Stores a new execution unless its user, or its attempt, already has `limits` live ones.
 * Count and insert are one statement, so concurrent requests cannot pass the limits together.
 * Returns which limit refused it, with the count, or null when it was stored.
 */
export async function insertExecutionWithin(
  db: Database,
  row: NewExecution,
  limits: { perUser: number; perAttempt: number },
): Promise<{ scope: "user" | "attempt"; active: number } | null> {
  const now = row.createdAt;
  const byUser = sql`(SELECT COUNT(*) FROM executions WHERE user_id = ${row.userId} AND ended_at IS NULL AND live_until > ${now})`;
  const byAttempt = sql`(SELECT COUNT(*) FROM executions WHERE attempt_id = ${row.attemptId} AND ended_at IS NULL AND live_until > ${now})`;
  const inserted = await db.all<{ id: string }>(sql`
    INSERT INTO executions (id, user_id, attempt_id, organization_id, language, file, timeout_seconds, status, created_at, live_until)
    SELECT ${row.id}, ${row.userId}, ${row.attemptId}, ${row.organizationId}, ${row.language}, ${row.file}, ${row.timeoutSeconds},
           'starting', ${row.createdAt}, ${row.liveUntil}
    WHERE ${byUser} < ${limits.perUser} AND (${row.attemptId} IS NULL OR ${byAttempt} < ${limits.perAttempt})
    RETURNING id`);
  if (inserted.length > 0) return null;
  const [user, attempt] = await Promise.all([
    db.$count(executions, and(eq(executions.userId, row.userId), live(now))),
    row.attemptId ? db.$count(executions, and(eq(executions.attemptId, row.attemptId), live(now))) : 0,
  ]);
  return user >= limits.perUser ? { scope: "user", active: user } : { scope: "attempt", active: attempt };
}

export async function findExecution(db: Database, id: string): Promise<ExecutionRow | undefined> {
  return db.select().from(executions).where(eq(executions.id, id)).get();
}

/** Records the end the object reached; the first end written stays. */
export async function endExecution(db: Database, id: string, status: FinalExecutionStatus, endedAt: string, exitCode: number | null): Promise<void> {
  await db
    .update(executions)
    .set({ status, endedAt, exitCode })
    .where(and(eq(executions.id, id), isNull(executions.endedAt)));
}
