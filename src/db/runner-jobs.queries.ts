import { and, eq, inArray, isNull, lte, or, sql } from "drizzle-orm";
import type { RunnerResultSummary } from "../domain/runner-callback";
import { isoAfter, type FinalRunnerJobStatus, type RunnerJobKind, type RunnerJobOwner } from "../domain/runner-jobs";
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

/**
 * Takes a queued job for one offer to the runners, unless another delivery holds it: one
 * conditional UPDATE, so of two deliveries of the same job only one POSTs it. Counts the POST.
 */
export async function claimForDispatch(db: Database, id: string, nowMs: number, holdSeconds: number): Promise<boolean> {
  const at = new Date(nowMs).toISOString();
  const won = await db
    .update(runnerJobs)
    .set({ leaseExpiresAt: isoAfter(nowMs, holdSeconds), attempts: sql`${runnerJobs.attempts} + 1`, updatedAt: at })
    .where(and(eq(runnerJobs.id, id), eq(runnerJobs.status, "queued"), or(isNull(runnerJobs.leaseExpiresAt), lte(runnerJobs.leaseExpiresAt, at))))
    .returning({ id: runnerJobs.id })
    .all();
  return won.length === 1;
}

/** Lets go of a queued job that was not taken; a dispatch that failed also counts against the job. */
export async function releaseClaim(db: Database, id: string, failed: boolean): Promise<number> {
  const row = await db
    .update(runnerJobs)
    .set({ leaseExpiresAt: null, updatedAt: now(), ...(failed && { dispatchFailures: sql`${runnerJobs.dispatchFailures} + 1` }) })
    .where(and(eq(runnerJobs.id, id), eq(runnerJobs.status, "queued")))
    .returning({ failures: runnerJobs.dispatchFailures })
    .get();
  return row?.failures ?? 0;
}

/**
 * Queued → dispatched, held by the runner that took it until its lease runs out. Conditional,
 * because a fast job's callback can finish the job before the consumer gets here, and a final
 * status must never go back.
 */
export async function markDispatched(db: Database, id: string, runnerId: string | null, leaseUntil: string): Promise<void> {
  const at = now();
  await db
    .update(runnerJobs)
    .set({ status: "dispatched", dispatchedAt: at, updatedAt: at, runnerId, leaseExpiresAt: leaseUntil })
    .where(and(eq(runnerJobs.id, id), eq(runnerJobs.status, "queued")));
}

/** Extends the leases of the jobs a runner still holds; returns the ids renewed (the others are no longer its). */
export async function renewLeases(db: Database, runnerId: string, ids: string[], leaseUntil: string): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .update(runnerJobs)
    .set({ leaseExpiresAt: leaseUntil })
    .where(and(inArray(runnerJobs.id, ids), eq(runnerJobs.status, "dispatched"), eq(runnerJobs.runnerId, runnerId)))
    .returning({ id: runnerJobs.id })
    .all();
  return rows.map((r) => r.id);
}

/** Where these jobs stand, for a runner asking after jobs it holds. */
export async function jobHolders(db: Database, ids: string[]): Promise<{ id: string; status: RunnerJobRow["status"]; runnerId: string | null }[]> {
  if (ids.length === 0) return [];
  return db.select({ id: runnerJobs.id, status: runnerJobs.status, runnerId: runnerJobs.runnerId }).from(runnerJobs).where(inArray(runnerJobs.id, ids)).all();
}

/** Ends the leases of jobs a runner hands back (it is draining), so the next sweep requeues them at once. */
export async function endLeases(db: Database, runnerId: string, ids: string[], nowMs: number): Promise<void> {
  if (ids.length === 0) return;
  await db
    .update(runnerJobs)
    .set({ leaseExpiresAt: new Date(nowMs).toISOString() })
    .where(and(inArray(runnerJobs.id, ids), eq(runnerJobs.status, "dispatched"), eq(runnerJobs.runnerId, runnerId)));
}

/**
 * Dispatched jobs whose lease ran out go back to queued, each with one more requeue; at
 * most `limit` per call. Returns them with their requeue counts.
 */
export async function requeueExpired(db: Database, nowMs: number, limit: number): Promise<{ id: string; requeues: number }[]> {
  const at = new Date(nowMs).toISOString();
  const expired = db
    .select({ id: runnerJobs.id })
    .from(runnerJobs)
    .where(and(eq(runnerJobs.status, "dispatched"), lte(runnerJobs.leaseExpiresAt, at)))
    .limit(limit);
  return db
    .update(runnerJobs)
    .set({ status: "queued", leaseExpiresAt: null, runnerId: null, requeues: sql`${runnerJobs.requeues} + 1`, updatedAt: at })
    .where(and(inArray(runnerJobs.id, expired), eq(runnerJobs.status, "dispatched"), lte(runnerJobs.leaseExpiresAt, at)))
    .returning({ id: runnerJobs.id, requeues: runnerJobs.requeues })
    .all();
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
