import { and, asc, count, desc, eq, gt, gte, inArray, or, sql } from "drizzle-orm";
import { minuteOf, numberTie, type ScoreTimes, type SourceBound, type TimelineEvent } from "../domain/evaluation";
import { runStatus } from "../domain/runs";
import { chatMessageOf } from "./ai-chat.queries";
import type { Database } from "./client";
import { aiChatMessages, runnerJobs, runs, scores, telemetryEvents } from "./schema";
import type { ScoreRow } from "./scores.queries";

// The D1 reads of an attempt's evaluation (docs/api.md, "Evaluation"). The timeline's sources
// are read in time order after a bound, so a page never reads more than it shows.

/** Up to `limit` of the attempt's runs after `bound`, by when they were asked for, each as a timeline event. */
export async function runsAfter(db: Database, attemptId: string, bound: SourceBound | null, limit: number): Promise<TimelineEvent[]> {
  const after = bound
    ? or(gt(runs.createdAt, bound.at), bound.tie === null ? undefined : and(eq(runs.createdAt, bound.at), gt(runs.id, bound.tie)))
    : undefined;
  const rows = await db
    .select({ run: runs, jobStatus: runnerJobs.status })
    .from(runs)
    // The job's owner id is `runOwnerId(attempt_id, run_id)` (domain/runs.ts), written in SQL.
    .leftJoin(runnerJobs, and(eq(runnerJobs.ownerType, "run"), eq(runnerJobs.ownerId, sql`${runs.attemptId} || '/' || ${runs.id}`)))
    .where(and(eq(runs.attemptId, attemptId), after))
    .orderBy(asc(runs.createdAt), asc(runs.id))
    .limit(limit)
    .all();
  return rows.map(({ run, jobStatus }) => ({
    type: "run",
    at: run.createdAt,
    run_id: run.id,
    status: runStatus(run.status, jobStatus),
    finished_at: run.finishedAt,
    reason: run.reason,
    counts: run.result?.counts ?? null,
  }));
}

/** Up to `limit` of the attempt's AI chat messages after `bound`, by time and seq, each as a timeline event. */
export async function chatMessagesAfter(db: Database, attemptId: string, bound: SourceBound | null, limit: number): Promise<TimelineEvent[]> {
  const after = bound
    ? or(
        gt(aiChatMessages.createdAt, bound.at),
        and(eq(aiChatMessages.createdAt, bound.at), gt(aiChatMessages.seq, numberTie(bound))),
      )
    : undefined;
  const rows = await db
    .select()
    .from(aiChatMessages)
    .where(and(eq(aiChatMessages.attemptId, attemptId), after))
    .orderBy(asc(aiChatMessages.createdAt), asc(aiChatMessages.seq))
    .limit(limit)
    .all();
  return rows.map((row) => ({ type: "ai_chat_message", at: row.createdAt, message: chatMessageOf(row) }));
}

/**
 * The attempt's telemetry, counted per kind and minute (`YYYY-MM-DDTHH:MM`, by the client's
 * clock), for up to `minutes` minutes from the one `from` falls in.
 */
export async function telemetryPerMinute(
  db: Database,
  attemptId: string,
  from: string | null,
  minutes: number,
): Promise<{ minute: string; kind: string; n: number }[]> {
  const minute = sql<string>`substr(${telemetryEvents.occurredAt}, 1, 16)`;
  const since = from === null ? undefined : gte(telemetryEvents.occurredAt, minuteOf(from));
  const page = db
    .selectDistinct({ minute })
    .from(telemetryEvents)
    .where(and(eq(telemetryEvents.attemptId, attemptId), since))
    .orderBy(minute)
    .limit(minutes);
  return db
    .select({ minute, kind: telemetryEvents.kind, n: count() })
    .from(telemetryEvents)
    .where(and(eq(telemetryEvents.attemptId, attemptId), since, inArray(minute, page)))
    .groupBy(minute, telemetryEvents.kind)
    .orderBy(minute, telemetryEvents.kind)
    .all();
}

/** Every score report of the attempt: a re-score adds one, so they are few. */
export async function scoreTimes(db: Database, attemptId: string): Promise<ScoreTimes[]> {
  return db
    .select({
      id: scores.id,
      status: scores.status,
      created_at: scores.createdAt,
      completed_at: scores.completedAt,
      overall_score: scores.overallScore,
      reason: scores.reason,
    })
    .from(scores)
    .where(eq(scores.attemptId, attemptId))
    .all();
}

/** The attempt's newest finished report: the one in force, also while a re-score runs. */
export async function newestFinishedScore(db: Database, attemptId: string): Promise<ScoreRow | undefined> {
  return db
    .select()
    .from(scores)
    .where(and(eq(scores.attemptId, attemptId), eq(scores.status, "scored")))
    .orderBy(desc(scores.createdAt), desc(scores.id))
    .get();
}
