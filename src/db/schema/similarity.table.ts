import { index, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { SimilarityRegion } from "../../domain/similarity";
import { organizations } from "./accounts.table";
import { attempts } from "./attempts.table";
import { timestamp } from "./columns";
import { tasks } from "./tasks.table";

/**
 * A submitted attempt's similarity to its task's upstream solution (docs/scoring.md,
 * "Similarity"), written once by the `similarity` queue's consumer. Its row is what makes the
 * attempt's similarity `ready`; its pairs with other attempts are in similarity_pairs.
 */
export const similarityResults = sqliteTable("similarity_results", {
  attemptId: text("attempt_id")
    .primaryKey()
    .references(() => attempts.id),
  organizationId: text("organization_id")
    .notNull()
    .references(() => organizations.id),
  taskId: text("task_id")
    .notNull()
    .references(() => tasks.id),
  /** Null when there is no upstream solution to compare with; `upstream_missing` says why. */
  upstreamSimilarity: real("upstream_similarity"),
  /** Seen from the attempt (`left`) against the upstream solution (`right`). */
  upstreamRegions: text("upstream_regions", { mode: "json" }).$type<SimilarityRegion[]>(),
  upstreamMissing: text("upstream_missing"),
  computedAt: timestamp("computed_at"),
});

/**
 * Two submitted attempts of one task in one organization, compared once: `attempt_a` is the
 * smaller id, and the regions are seen from it (`left`); the other attempt reads them mirrored.
 */
export const similarityPairs = sqliteTable(
  "similarity_pairs",
  {
    attemptA: text("attempt_a")
      .notNull()
      .references(() => attempts.id),
    attemptB: text("attempt_b")
      .notNull()
      .references(() => attempts.id),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id),
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id),
    similarity: real("similarity").notNull(),
    regions: text("regions", { mode: "json" }).$type<SimilarityRegion[]>().notNull(),
    computedAt: timestamp("computed_at"),
  },
  (t) => [primaryKey({ columns: [t.attemptA, t.attemptB] }), index("similarity_pairs_b_idx").on(t.attemptB)],
);
