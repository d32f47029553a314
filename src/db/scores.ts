import { and, desc, eq } from "drizzle-orm";
import type { Database } from "./client";
import { scores } from "./schema";

export type ScoreRow = typeof scores.$inferSelect;

export async function findScore(db: Database, scoreId: string): Promise<ScoreRow | undefined> {
  return db.select().from(scores).where(eq(scores.id, scoreId)).get();
}

/** The attempt's newest score report, whatever its status. */
export async function latestScore(db: Database, attemptId: string): Promise<ScoreRow | undefined> {
  return db.select().from(scores).where(eq(scores.attemptId, attemptId)).orderBy(desc(scores.createdAt), desc(scores.id)).get();
}

/** A change to a score report still being computed; a finished one is never changed. */
export async function updateScoring(db: Database, scoreId: string, set: Partial<ScoreRow>): Promise<boolean> {
  const updated = await db
    .update(scores)
    .set({ ...set, updatedAt: new Date().toISOString() })
    .where(and(eq(scores.id, scoreId), eq(scores.status, "scoring")))
    .returning({ id: scores.id })
    .all();
  return updated.length > 0;
}
