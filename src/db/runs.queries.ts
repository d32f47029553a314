import { and, count, desc, eq, lt, sql } from "drizzle-orm";
import type { RunRecord } from "../domain/runs";
import type { RunnerJobStatus } from "../domain/runner-jobs";
import type { Database } from "./client";
import { runnerJobs, runs } from "./schema";

function columns(record: RunRecord, version: number) {
  return {
    status: record.status,
    reason: record.reason,
    result: record.result,
    updatedAt: record.updated_at,
    finishedAt: record.finished_at,
    version,
  };
}

/** The first write of a run, before its job is queued, so a listed run always has its row. */
export async function insertRun(db: Database, record: RunRecord, version: number): Promise<void> {
  await db.insert(runs).values({
    id: record.id,
    attemptId: record.attempt_id,
    changedFiles: record.changed_files,
    timeoutSeconds: record.timeout_seconds,
    createdAt: record.created_at,
    ...columns(record, version),
  });
}

/** Writes the object's run through, unless D1 already holds this version or a newer one. */
export async function writeRunThrough(db: Database, record: RunRecord, version: number): Promise<void> {
  await db
    .update(runs)
    .set(columns(record, version))
    .where(and(eq(runs.id, record.id), lt(runs.version, version)));
}

export async function countRuns(db: Database, attemptId: string): Promise<number> {
  return (await db.select({ n: count() }).from(runs).where(eq(runs.attemptId, attemptId)).get())?.n ?? 0;
}

/** What a run's view needs of its runner job: whether the runner has it, and since when. */
export interface RunJobState {
  status: RunnerJobStatus;
  dispatchedAt: string | null;
}

/** A page of an attempt's runs, newest first, each with its runner job's state. */
export async function runPage(
  db: Database,
  attemptId: string,
  limit: number,
  offset: number,
): Promise<{ record: RunRecord; job: RunJobState | null }[]> {
  const rows = await db
    .select({ run: runs, jobStatus: runnerJobs.status, dispatchedAt: runnerJobs.dispatchedAt })
    .from(runs)
    // The job's owner id is `runOwnerId(attempt_id, run_id)` (domain/runs.ts), written in SQL.
    .leftJoin(runnerJobs, and(eq(runnerJobs.ownerType, "run"), eq(runnerJobs.ownerId, sql`${runs.attemptId} || '/' || ${runs.id}`)))
    .where(eq(runs.attemptId, attemptId))
    .orderBy(desc(runs.createdAt), desc(runs.id))
    .limit(limit)
    .offset(offset)
    .all();
  return rows.map(({ run, jobStatus, dispatchedAt }) => ({
    record: {
      id: run.id,
      attempt_id: run.attemptId,
      status: run.status,
      changed_files: run.changedFiles,
      timeout_seconds: run.timeoutSeconds,
      created_at: run.createdAt,
      updated_at: run.updatedAt,
      finished_at: run.finishedAt,
      reason: run.reason,
      result: run.result,
    },
    job: jobStatus ? { status: jobStatus, dispatchedAt } : null,
  }));
}

/** When each of an attempt's runs was asked for, and how it ended: what scoring's behavior subscore reads. */
export async function runTimeline(db: Database, attemptId: string): Promise<{ created_at: string; status: string }[]> {
  return db.select({ created_at: runs.createdAt, status: runs.status }).from(runs).where(eq(runs.attemptId, attemptId)).all();
}
