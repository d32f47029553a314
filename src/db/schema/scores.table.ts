import { index, integer, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { attempts } from "./attempts.table";
import { timestamp } from "./columns";

export const SCORE_STATUSES = ["scoring", "scored", "failed"] as const;

/**
 * Score reports. One attempt may have several (an admin re-scores); the attempt's score_id
 * names the one in force. The report is final once `scored`.
 */
export const scores = sqliteTable(
  "scores",
  {
    id: text("id").primaryKey(),
    attemptId: text("attempt_id").notNull().references(() => attempts.id),
    status: text("status", { enum: SCORE_STATUSES }).notNull(),
    /** Rounds of runner jobs so far; infrastructure failures start another, up to SCORING_TRIES. */
    tries: integer("tries").notNull().default(0),
    hiddenJobId: text("hidden_job_id"),
    workspaceJobId: text("workspace_job_id"),
    reason: text("reason"),
    rubricVersion: text("rubric_version").notNull(),
    overallScore: real("overall_score"),
    /**
     * Copies of the report's subscores, so analytics reads them without parsing every report.
     * Whole numbers by the rubric; SQLite keeps a fractional one as it is all the same.
     */
    correctnessScore: integer("correctness_score"),
    testCoverageScore: integer("test_coverage_score"),
    codeQualityScore: integer("code_quality_score"),
    behaviorScore: integer("behavior_score"),
    communicationScore: integer("communication_score"),
    /** The report body: subscores, evidence, claims (docs/scoring.md). */
    report: text("report", { mode: "json" }).$type<Record<string, unknown>>(),
    createdAt: timestamp("created_at"),
    updatedAt: timestamp("updated_at"),
    completedAt: text("completed_at"),
  },
  (t) => [
    index("scores_attempt_idx").on(t.attemptId, t.createdAt),
    // Analytics joins attempts to their reports by id and reads only these; the rows, reports included, stay unread.
    index("scores_analytics_idx").on(
      t.id,
      t.status,
      t.overallScore,
      t.correctnessScore,
      t.testCoverageScore,
      t.codeQualityScore,
      t.behaviorScore,
      t.communicationScore,
    ),
  ],
);
