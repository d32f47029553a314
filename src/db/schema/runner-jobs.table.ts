import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { RunnerResultSummary } from "../../domain/runner-callback";
import { RUNNER_JOB_KINDS, RUNNER_JOB_OWNER_TYPES, RUNNER_JOB_STATUSES } from "../../domain/runner-jobs";
import { timestamp } from "./columns";

/**
 * Jobs handed to the sandbox runner. The spec and the full result can be megabytes (file
 * overlays, one entry per test), more than a D1 row holds, so they live in R2 under
 * `runner-jobs/{id}/`; the row keeps the state machine and the result's summary.
 */
export const runnerJobs = sqliteTable(
  "runner_jobs",
  {
    id: text("id").primaryKey(),
    kind: text("kind", { enum: RUNNER_JOB_KINDS }).notNull(),
    ownerType: text("owner_type", { enum: RUNNER_JOB_OWNER_TYPES }).notNull(),
    ownerId: text("owner_id").notNull(),
    status: text("status", { enum: RUNNER_JOB_STATUSES }).notNull().default("queued"),
    /** POSTs to the runner so far. */
    attempts: integer("attempts").notNull().default(0),
    /** Dispatches that failed (runner unreachable); a "full" answer is not one (docs/runner-protocol.md). */
    dispatchFailures: integer("dispatch_failures").notNull().default(0),
    /** Times the job went back to the queue because the runner holding it stopped renewing its lease or handed it back. */
    requeues: integer("requeues").notNull().default(0),
    /**
     * Until when someone holds the job: the consumer dispatching it (status queued) or the
     * runner that took it (status dispatched), which renews it by heartbeat. Once past, the
     * job is free to be dispatched again.
     */
    leaseExpiresAt: text("lease_expires_at"),
    /** The runner instance that took the job (its answer's `runner_id`); only it renews the lease. */
    runnerId: text("runner_id"),
    reason: text("reason"),
    result: text("result", { mode: "json" }).$type<RunnerResultSummary>(),
    createdAt: timestamp("created_at"),
    updatedAt: timestamp("updated_at"),
    dispatchedAt: text("dispatched_at"),
    finishedAt: text("finished_at"),
    /** When the owner's job-finished handler ran; null while it is still owed. */
    notifiedAt: text("notified_at"),
  },
  (t) => [index("runner_jobs_owner_idx").on(t.ownerType, t.ownerId), index("runner_jobs_lease_idx").on(t.status, t.leaseExpiresAt)],
);
