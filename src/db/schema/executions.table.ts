import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { EXECUTION_LANGUAGES, EXECUTION_STATUSES } from "../../domain/executions";

/**
 * Live code executions, for the limits on live ones and for who may watch them. The
 * execution's ExecutionDO holds its output and is the authority on its state; this row is
 * written when the execution is created and when it ends. An execution counts as live until
 * it has `ended_at` or its `deadline_at` (plus the object's grace) has passed, so a row whose
 * end was never written stops counting by itself.
 */
export const executions = sqliteTable(
  "executions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id").notNull(),
    /** Null for a free-standing execution. */
    attemptId: text("attempt_id"),
    /** The attempt's organization, whose staff may watch; null for a free-standing execution. */
    organizationId: text("organization_id"),
    language: text("language", { enum: EXECUTION_LANGUAGES }).notNull(),
    file: text("file").notNull(),
    timeoutSeconds: integer("timeout_seconds").notNull(),
    status: text("status", { enum: EXECUTION_STATUSES }).notNull(),
    createdAt: text("created_at").notNull(),
    /** When it stops counting as live even without an end: its deadline plus the grace for the kill. */
    liveUntil: text("live_until").notNull(),
    endedAt: text("ended_at"),
    exitCode: integer("exit_code"),
  },
  (t) => [index("executions_user_idx").on(t.userId, t.endedAt), index("executions_attempt_idx").on(t.attemptId, t.endedAt)],
);
