import { and, count, eq, inArray, sql, type SQL } from "drizzle-orm";
import { ATTEMPTS_WITHOUT_RETAKE, OPEN_ATTEMPT_STATUSES } from "../domain/attempts";
import type { Database } from "./client";
import { rowValues } from "./rows";
import { attempts, auditEvents, retakes, users } from "./schema";

type RetakeRow = typeof retakes.$inferInsert;
type AuditEventRow = typeof auditEvents.$inferInsert;

const attemptsMade = (taskId: string, userId: string): SQL =>
  sql`(SELECT count(*) FROM ${attempts} WHERE ${attempts.taskId} = ${taskId} AND ${attempts.candidateId} = ${userId})`;

const attemptsAllowed = (taskId: string, userId: string): SQL =>
  sql`(${ATTEMPTS_WITHOUT_RETAKE} + (SELECT count(*) FROM ${retakes} WHERE ${retakes.taskId} = ${taskId} AND ${retakes.userId} = ${userId}))`;

/**
 * True in SQL while the candidate may make another attempt on the task: fewer attempts than
 * one plus the retakes granted. Evaluated inside the statement that writes, so concurrent
 * creations cannot pass it together.
 */
export function mayAttemptAgain(taskId: string, userId: string): SQL {
  return sql`${attemptsMade(taskId, userId)} < ${attemptsAllowed(taskId, userId)}`;
}

/** Users with an attempt on the task, found by their id or (case-insensitively) their e-mail address. */
export async function attemptingCandidates(
  db: Database,
  taskId: string,
  who: { userId: string } | { email: string },
): Promise<{ id: string; email: string }[]> {
  return db
    .selectDistinct({ id: users.id, email: users.email })
    .from(users)
    .innerJoin(attempts, and(eq(attempts.candidateId, users.id), eq(attempts.taskId, taskId)))
    .where("userId" in who ? eq(users.id, who.userId) : sql`lower(${users.email}) = lower(${who.email})`)
    .all();
}

/** Where a candidate stands on a task: attempts made, attempts allowed, and the open one if any. */
export async function attemptStanding(db: Database, taskId: string, userId: string) {
  const [made, granted, open] = await Promise.all([
    db.select({ n: count() }).from(attempts).where(and(eq(attempts.taskId, taskId), eq(attempts.candidateId, userId))).get(),
    db.select({ n: count() }).from(retakes).where(and(eq(retakes.taskId, taskId), eq(retakes.userId, userId))).get(),
    db
      .select({ id: attempts.id, status: attempts.status })
      .from(attempts)
      .where(and(eq(attempts.taskId, taskId), eq(attempts.candidateId, userId), inArray(attempts.status, OPEN_ATTEMPT_STATUSES)))
      .get(),
  ]);
  return { made: made?.n ?? 0, allowed: ATTEMPTS_WITHOUT_RETAKE + (granted?.n ?? 0), open };
}

/**
 * Stores a retake and its audit event in one transaction, if the candidate has used every
 * attempt allowed and has none open: a grant is always exactly one more attempt, so of two
 * concurrent grants one is stored. False when nothing was.
 */
export async function insertRetake(db: Database, retake: RetakeRow, event: AuditEventRow): Promise<boolean> {
  const usedUp = sql`NOT EXISTS (SELECT 1 FROM ${attempts} WHERE ${attempts.taskId} = ${retake.taskId}
      AND ${attempts.candidateId} = ${retake.userId} AND ${inArray(attempts.status, OPEN_ATTEMPT_STATUSES)})
    AND NOT (${mayAttemptAgain(retake.taskId, retake.userId)})`;
  const [inserted] = await db.batch([
    db
      .insert(retakes)
      .select(sql`SELECT ${rowValues(retakes, retake)} WHERE ${usedUp}`)
      .returning({ id: retakes.id }),
    db
      .insert(auditEvents)
      .select(sql`SELECT ${rowValues(auditEvents, event)} WHERE EXISTS (SELECT 1 FROM ${retakes} WHERE ${retakes.id} = ${retake.id})`),
  ]);
  return inserted.length === 1;
}
