import { and, desc, eq, inArray, isNull, or, sql } from "drizzle-orm";
import { FALLBACK_TITLE, taskStatement } from "../domain/statement";
import type { AttemptRow } from "./attempts.queries";
import type { Database } from "./client";
import { statementColumns, withInvitationDetails, type InvitationDetails } from "./invitations.queries";
import type { ScoreRow } from "./scores.queries";
import { attempts, invitations, scores, tasks, users } from "./schema";

// What the reviewer's views (docs/api.md, "The reviewer's view") and the notifications read
// besides their resources: who a candidate is, what a task is called, and a task's candidates.

/** The users' e-mail addresses, by id; ids with no user are left out. */
export async function userEmails(db: Database, ids: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.select({ id: users.id, email: users.email }).from(users).where(inArray(users.id, unique)).all();
  return new Map(rows.map((r) => [r.id, r.email]));
}

export interface TaskNames {
  /** The staff's name for the task (at import, the or pull request's title). */
  title: string;
  /** The title of the statement candidates read; never the pull request's own. */
  statementTitle: string;
}

/** A task's names; undefined when there is no such task. */
export async function taskNames(db: Database, taskId: string): Promise<TaskNames | undefined> {
  const row = await db
    .select({ title: tasks.title, ...statementColumns })
    .from(tasks)
    .where(eq(tasks.id, taskId))
    .get();
  if (!row) return undefined;
  const statementTitle = taskStatement(row)?.title ?? FALLBACK_TITLE;
  return { title: row.title || statementTitle, statementTitle };
}

/**
 * A task's candidates, one key each: the user id of a candidate with an attempt or an accepted
 * invitation, `email:` and the normalized address of one only invited. Invitations that a newer
 * one replaced are left out. Newest activity first.
 */
function candidateKeys(taskId: string) {
  return sql`
    select key, max(at) as last_at from (
      select ${attempts.candidateId} as key, ${attempts.createdAt} as at from ${attempts} where ${attempts.taskId} = ${taskId}
      union all
      select coalesce(${invitations.usedBy}, 'email:' || ${invitations.emailNormalized}) as key, ${invitations.createdAt} as at
        from ${invitations} where ${invitations.taskId} = ${taskId} and ${invitations.supersededBy} is null
    ) group by key`;
}

export async function countTaskCandidates(db: Database, taskId: string): Promise<number> {
  const row = await db.get<{ n: number }>(sql`select count(*) as n from (${candidateKeys(taskId)})`);
  return row?.n ?? 0;
}

export interface TaskCandidateRows {
  key: string;
  userId: string | null;
  email: string | null;
  /** The candidate's newest invitation to the task. */
  invitation: InvitationDetails | null;
  /** The candidate's attempts on the task, newest first. */
  attempts: AttemptRow[];
}

/** One page of a task's candidates with their newest invitation and their attempts. */
export async function taskCandidatePage(db: Database, taskId: string, limit: number, offset: number): Promise<TaskCandidateRows[]> {
  const keys = await db.all<{ key: string }>(sql`${candidateKeys(taskId)} order by last_at desc, key limit ${limit} offset ${offset}`);
  if (keys.length === 0) return [];
  const userIds = keys.map((k) => k.key).filter((k) => !k.startsWith("email:"));
  const invitedEmails = keys.map((k) => k.key).filter((k) => k.startsWith("email:")).map((k) => k.slice("email:".length));
  const byUser = or(
    userIds.length > 0 ? inArray(invitations.usedBy, userIds) : undefined,
    invitedEmails.length > 0 ? and(isNull(invitations.usedBy), inArray(invitations.emailNormalized, invitedEmails)) : undefined,
  );
  const [attemptRows, invitationRows, emails] = await Promise.all([
    userIds.length > 0
      ? db
          .select()
          .from(attempts)
          .where(and(eq(attempts.taskId, taskId), inArray(attempts.candidateId, userIds)))
          .orderBy(desc(attempts.createdAt), desc(attempts.id))
          .all()
      : Promise.resolve([]),
    withInvitationDetails(db, and(eq(invitations.taskId, taskId), isNull(invitations.supersededBy), byUser)),
    userEmails(db, userIds),
  ]);
  return keys.map(({ key }) => {
    const userId = key.startsWith("email:") ? null : key;
    const own = invitationRows.filter((i) => (userId ? i.usedBy === userId : i.usedBy === null && `email:${i.emailNormalized}` === key));
    const invitation = own.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0))[0] ?? null;
    return {
      key,
      userId,
      email: (userId ? emails.get(userId) : undefined) ?? invitation?.email ?? null,
      invitation,
      attempts: userId ? attemptRows.filter((a) => a.candidateId === userId) : [],
    };
  });
}

export type ScoreSummaryRow = Pick<ScoreRow, "id" | "attemptId" | "status" | "overallScore" | "createdAt">;

/** The score rows of the attempts without their reports, newest first. */
export async function scoresOfAttempts(db: Database, attemptIds: readonly string[]): Promise<ScoreSummaryRow[]> {
  if (attemptIds.length === 0) return [];
  return db
    .select({ id: scores.id, attemptId: scores.attemptId, status: scores.status, overallScore: scores.overallScore, createdAt: scores.createdAt })
    .from(scores)
    .where(inArray(scores.attemptId, [...new Set(attemptIds)]))
    .orderBy(desc(scores.createdAt), desc(scores.id))
    .all();
}

/** The task an attempt is on; undefined when there is no such attempt. */
export async function attemptTaskId(db: Database, attemptId: string): Promise<string | undefined> {
  return (await db.select({ taskId: attempts.taskId }).from(attempts).where(eq(attempts.id, attemptId)).get())?.taskId;
}

/** What a notification about a task (and a candidate) names: the task as staff and as candidates read it, the candidate's address. */
export async function notificationNames(
  db: Database,
  taskId: string,
  candidateId: string | null,
): Promise<{ staffTitle: string | undefined; candidateTitle: string | undefined; candidateEmail: string | null }> {
  const [names, emails] = await Promise.all([taskNames(db, taskId), userEmails(db, candidateId ? [candidateId] : [])]);
  return { staffTitle: names?.title, candidateTitle: names?.statementTitle, candidateEmail: (candidateId && emails.get(candidateId)) || null };
}
