import { and, desc, eq } from "drizzle-orm";
import { RUBRIC_VERSION, type SubscoreName } from "../domain/scoring";
import { newId } from "../lib/ids";
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

/** The subscore columns of a report: its `subscores`, copied where analytics reads them without parsing reports. */
function subscoreColumns(report: Record<string, unknown>) {
  const subscores = (report.subscores ?? {}) as Partial<Record<SubscoreName, unknown>>;
  const score = (name: SubscoreName) => {
    const value = subscores[name];
    return typeof value === "number" && Number.isFinite(value) ? value : null;
  };
  return {
    correctnessScore: score("correctness"),
    testCoverageScore: score("test_coverage"),
    codeQualityScore: score("code_quality"),
    behaviorScore: score("behavior"),
    communicationScore: score("communication"),
  };
}

/**
 * A change to a score report still being computed; a finished one is never changed. Writing
 * the report writes its subscore columns too, so the two cannot disagree.
 */
export async function updateScoring(db: Database, scoreId: string, set: Partial<ScoreRow>): Promise<boolean> {
  const updated = await db
    .update(scores)
    .set({ ...set, ...(set.report && subscoreColumns(set.report)), updatedAt: new Date().toISOString() })
    .where(and(eq(scores.id, scoreId), eq(scores.status, "scoring")))
    .returning({ id: scores.id })
    .all();
  return updated.length > 0;
}

/** A new score report of an attempt: `scoring` until its runs end, or `failed` with the reason it could not start. */
export async function insertScore(
  db: Database,
  attemptId: string,
  state: { status: "scoring" } | { status: "failed"; reason: string; completedAt: string },
): Promise<string> {
  const id = newId("scr");
  await db.insert(scores).values({ id, attemptId, rubricVersion: RUBRIC_VERSION, ...state });
  return id;
}

/**
 * Clears the round of scoring whose hidden-test job is `hiddenJobId`, recording why it
 * failed. Of the two job-finished handlers that may see the round end, only the one that
 * clears it starts the next round: true for that one.
 */
export async function claimFailedRound(db: Database, scoreId: string, hiddenJobId: string, reason: string): Promise<boolean> {
  const claimed = await db
    .update(scores)
    .set({ hiddenJobId: null, workspaceJobId: null, reason, updatedAt: new Date().toISOString() })
    .where(and(eq(scores.id, scoreId), eq(scores.status, "scoring"), eq(scores.hiddenJobId, hiddenJobId)))
    .returning({ id: scores.id })
    .all();
  return claimed.length > 0;
}
