import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { STORED_RUN_STATUSES, type RunSummary } from "../../domain/runs";
import { attempts } from "./attempts.table";

/**
 * Candidate test runs, as their attempt's AttemptDO writes them through for lists. The
 * object is the only writer and the authority; this row may trail it briefly. Whether a
 * queued run is RUNNING is read from its runner job (owner `run`, owner id `{attempt_id}/{run_id}`).
 */
export const runs = sqliteTable(
  "runs",
  {
    id: text("id").primaryKey(),
    attemptId: text("attempt_id").notNull().references(() => attempts.id),
    status: text("status", { enum: STORED_RUN_STATUSES }).notNull(),
    changedFiles: text("changed_files", { mode: "json" }).$type<string[]>().notNull(),
    timeoutSeconds: integer("timeout_seconds").notNull(),
    reason: text("reason"),
    result: text("result", { mode: "json" }).$type<RunSummary>(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    finishedAt: text("finished_at"),
    /** The object's change counter for the run: a write-through applies only over an older one. */
    version: integer("version").notNull(),
  },
  (t) => [index("runs_attempt_idx").on(t.attemptId, t.createdAt)],
);
