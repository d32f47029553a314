import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { ATTEMPT_STATUSES, OPEN_ATTEMPT_STATUSES, type SubmissionSummary } from "../../domain/attempts";
import { organizations, users } from "./accounts.table";
import { timestamp } from "./columns";
import { tasks } from "./tasks.table";

/**
 * Attempts, as their AttemptDO writes them through for lists and analytics. The Durable
 * Object is the only writer and the authority; this row may trail it briefly.
 */
export const attempts = sqliteTable(
  "attempts",
  {
    id: text("id").primaryKey(),
    taskId: text("task_id").notNull().references(() => tasks.id),
    organizationId: text("organization_id").notNull().references(() => organizations.id),
    candidateId: text("candidate_id").notNull().references(() => users.id),
    status: text("status", { enum: ATTEMPT_STATUSES }).notNull(),
    timeLimitMinutes: integer("time_limit_minutes"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    startedAt: text("started_at"),
    deadlineAt: text("deadline_at"),
    submittedAt: text("submitted_at"),
    autoSubmitted: integer("auto_submitted", { mode: "boolean" }).notNull().default(false),
    scoreId: text("score_id"),
    submission: text("submission", { mode: "json" }).$type<SubmissionSummary>(),
    /** The object's change counter: a write-through applies only over an older one, so a late one never undoes a newer. */
    version: integer("version").notNull(),
  },
  (t) => [
    index("attempts_candidate_idx").on(t.candidateId, t.createdAt),
    // Organization lists by creation time; the trailing columns let analytics read a window without the rows.
    index("attempts_org_idx").on(t.organizationId, t.createdAt, t.taskId, t.startedAt, t.submittedAt, t.scoreId),
    index("attempts_task_idx").on(t.taskId),
    // At most one open attempt per candidate and task, even when two are created at once.
    uniqueIndex("attempts_open_uq")
      .on(t.taskId, t.candidateId)
      .where(sql.raw(`"status" in (${OPEN_ATTEMPT_STATUSES.map((s) => `'${s}'`).join(", ")})`)),
  ],
);

/**
 * Index of IDE session tokens by hash, so a bearer token finds its attempt without a JWT.
 * The attempt's AttemptDO holds the same hashes and has the last word on each.
 */
export const ideTokens = sqliteTable(
  "ide_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    attemptId: text("attempt_id").notNull().references(() => attempts.id),
    expiresAt: text("expires_at").notNull(),
    revokedAt: text("revoked_at"),
    createdAt: timestamp("created_at"),
  },
  (t) => [index("ide_tokens_attempt_idx").on(t.attemptId)],
);

/**
 * Retakes staff granted (docs/api.md, "Retakes"): each allows the candidate one attempt on the
 * task beyond the first. Kept for good; the audit log records who granted each and why.
 */
export const retakes = sqliteTable(
  "retakes",
  {
    id: text("id").primaryKey(),
    taskId: text("task_id").notNull().references(() => tasks.id),
    userId: text("user_id").notNull().references(() => users.id),
    grantedBy: text("granted_by").notNull().references(() => users.id),
    reason: text("reason").notNull(),
    createdAt: timestamp("created_at"),
  },
  (t) => [index("retakes_task_user_idx").on(t.taskId, t.userId)],
);
