import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { RunnerResultSummary } from "../domain/runner-callback";
import type { FinalRunnerJobStatus, RunnerJobKind, RunnerJobOwner } from "../domain/runner-jobs";
import type { Database } from "./client";
import { runnerJobs } from "./schema";

export type RunnerJobRow = typeof runnerJobs.$inferSelect;

const now = () => new Date().toISOString();

export async function insertRunnerJob(db: Database, id: string, kind: RunnerJobKind, owner: RunnerJobOwner): Promise<void> {
  await db.insert(runnerJobs).values({ id, kind, ownerType: owner.owner_type, ownerId: owner.owner_id });
}

export async function findRunnerJob(db: Database, id: string): Promise<RunnerJobRow | undefined> {
  return db.select().from(runnerJobs).where(eq(runnerJobs.id, id)).get();
}

/** Counts one more POST to the runner. */
export async function countDispatchAttempt(db: Database, id: string): Promise<void> {
  await db
    .update(runnerJobs)
    .set({ attempts: sql`${runnerJobs.attempts} + 1`, updatedAt: now() })
    .where(eq(runnerJobs.id, id));
}

/**
 * Queued → dispatched. Conditional, because a fast job's callback can finish the job before
 * the consumer gets here, and a final status must never go back.
 */
export async function markDispatched(db: Database, id: string): Promise<void> {
  const at = now();
  await db
    .update(runnerJobs)
    .set({ status: "dispatched", dispatchedAt: at, updatedAt: at })
    .where(and(eq(runnerJobs.id, id), eq(runnerJobs.status, "queued")));
}

export interface JobOutcome {
  status: FinalRunnerJobStatus;
  reason: string | null;
  result: RunnerResultSummary | null;
}

/**
 * Gives a job its final status unless it already has one: one conditional UPDATE, so of
 * two concurrent callbacks (or a callback racing the consumer's give-up) exactly one wins.
 * True when this call did.
 */
export async function finishRunnerJob(db: Database, id: string, outcome: JobOutcome): Promise<boolean> {
  const at = now();
  const won = await db
    .update(runnerJobs)
    .set({ ...outcome, finishedAt: at, updatedAt: at })
    .where(and(eq(runnerJobs.id, id), inArray(runnerJobs.status, ["queued", "dispatched"])))
    .returning({ id: runnerJobs.id })
    .all();
  return won.length === 1;
}

/** Records that the owner's job-finished handler ran. */
export async function markNotified(db: Database, id: string): Promise<void> {
  const at = now();
  await db
    .update(runnerJobs)
    .set({ notifiedAt: at, updatedAt: at })
    .where(and(eq(runnerJobs.id, id), isNull(runnerJobs.notifiedAt)));
}
