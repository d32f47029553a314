import { sql } from "drizzle-orm";
import { integer, primaryKey, sqliteTable, text, index } from "drizzle-orm/sqlite-core";
import type { RunnerResultSummary } from "../domain/runner-callback";
import { RUNNER_JOB_KINDS, RUNNER_JOB_OWNER_TYPES, RUNNER_JOB_STATUSES } from "../domain/runner-jobs";

/** ISO 8601 UTC timestamps, as the API returns them. */
const timestamp = (name: string) => text(name).notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`);

/** Subscription plans; `candidate_limit` null means unlimited. */
export const plans = sqliteTable("plans", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  candidateLimit: integer("candidate_limit"),
  upgradeUrl: text("upgrade_url"),
});

export const organizations = sqliteTable("organizations", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  planId: text("plan_id").notNull().references(() => plans.id),
  createdAt: timestamp("created_at"),
});

export const users = sqliteTable("users", {
  id: text("id").primaryKey(),
  /** The identity provider's `sub`; the unique key that makes first-request creation idempotent. */
  subject: text("subject").notNull().unique(),
  email: text("email").notNull(),
  role: text("role", { enum: ["candidate", "interviewer", "orgadmin", "admin"] }).notNull(),
  createdAt: timestamp("created_at"),
  updatedAt: timestamp("updated_at"),
});

export const memberships = sqliteTable(
  "memberships",
  {
    userId: text("user_id").notNull().references(() => users.id),
    organizationId: text("organization_id").notNull().references(() => organizations.id),
    role: text("role", { enum: ["candidate", "interviewer", "orgadmin", "admin"] }).notNull(),
    createdAt: timestamp("created_at"),
  },
  (t) => [primaryKey({ columns: [t.userId, t.organizationId] }), index("memberships_org_idx").on(t.organizationId)],
);

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
    reason: text("reason"),
    result: text("result", { mode: "json" }).$type<RunnerResultSummary>(),
    createdAt: timestamp("created_at"),
    updatedAt: timestamp("updated_at"),
    dispatchedAt: text("dispatched_at"),
    finishedAt: text("finished_at"),
    /** When the owner's completion handler ran; null while it is still owed. */
    notifiedAt: text("notified_at"),
  },
  (t) => [index("runner_jobs_owner_idx").on(t.ownerType, t.ownerId)],
);
