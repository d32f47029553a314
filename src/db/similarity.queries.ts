import { and, desc, eq, isNotNull, ne } from "drizzle-orm";
import { mirrored, type SimilarityRegion } from "../domain/similarity";
import type { Database } from "./client";
import { attempts, similarityPairs, similarityResults, users } from "./schema";

export type SimilarityResultRow = typeof similarityResults.$inferSelect;

export async function findSimilarityResult(db: Database, attemptId: string): Promise<SimilarityResultRow | undefined> {
  return db.select().from(similarityResults).where(eq(similarityResults.attemptId, attemptId)).get();
}

/** The attempt's comparison with its upstream solution; a repeat keeps the first. */
export async function insertSimilarityResult(db: Database, row: typeof similarityResults.$inferInsert): Promise<void> {
  await db.insert(similarityResults).values(row).onConflictDoNothing().run();
}

/** One pair, keyed by its two attempts in id order; a repeat (both sides computed it at once) keeps the first. */
export async function insertSimilarityPair(db: Database, row: typeof similarityPairs.$inferInsert): Promise<void> {
  await db.insert(similarityPairs).values(row).onConflictDoNothing().run();
}

/**
 * The other submitted attempts of the task in the organization, most recently submitted first,
 * at most `limit`. The organization is named as well as the task: a comparison never crosses one.
 */
export async function submittedPeers(db: Database, of: { id: string; taskId: string; organizationId: string }, limit: number) {
  return db
    .select({ id: attempts.id })
    .from(attempts)
    .where(and(eq(attempts.taskId, of.taskId), eq(attempts.organizationId, of.organizationId), ne(attempts.id, of.id), isNotNull(attempts.submittedAt)))
    .orderBy(desc(attempts.submittedAt), desc(attempts.id))
    .limit(limit)
    .all();
}

export interface PeerPair {
  attemptId: string;
  candidateId: string;
  email: string | null;
  similarity: number;
  /** Seen from the attempt asked about (`left`). */
  regions: SimilarityRegion[];
}

/** The attempt's pairs within its organization, each seen from it, with the other attempt's candidate. */
export async function pairsOf(db: Database, attemptId: string, organizationId: string): Promise<PeerPair[]> {
  // One query per side, so each reads its own index (the key for attempt_a, similarity_pairs_b_idx for attempt_b).
  const side = (self: typeof similarityPairs.attemptA | typeof similarityPairs.attemptB, other: typeof similarityPairs.attemptA | typeof similarityPairs.attemptB) =>
    db
      .select({
        attemptId: attempts.id,
        candidateId: attempts.candidateId,
        email: users.email,
        similarity: similarityPairs.similarity,
        regions: similarityPairs.regions,
      })
      .from(similarityPairs)
      .innerJoin(attempts, eq(attempts.id, other))
      .leftJoin(users, eq(users.id, attempts.candidateId))
      .where(and(eq(self, attemptId), eq(similarityPairs.organizationId, organizationId), eq(attempts.organizationId, organizationId)))
      .all();
  const [asA, asB] = await Promise.all([side(similarityPairs.attemptA, similarityPairs.attemptB), side(similarityPairs.attemptB, similarityPairs.attemptA)]);
  return [...asA, ...asB.map((r) => ({ ...r, regions: mirrored(r.regions) }))];
}
