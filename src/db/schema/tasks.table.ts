import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { TaskSettings } from "../../domain/task-settings";
import { DEFAULT_AI_ASSISTANCE, TASK_ORIGINS, TASK_STATUSES, TASK_VISIBILITIES } from "../../domain/tasks";
import { organizations, users } from "./accounts.table";
import { timestamp } from "./columns";

/**
 * Assessment tasks made from pull requests. Patches and the snapshot are in R2 under
 * `tasks/{id}/`; the row holds what is listed and filtered, and the validation's outcome.
 */
export const tasks = sqliteTable(
  "tasks",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id").notNull().references(() => organizations.id),
    visibility: text("visibility", { enum: TASK_VISIBILITIES }).notNull(),
    tags: text("tags", { mode: "json" }).$type<string[]>().notNull(),
    title: text("title").notNull(),
    description: text("description").notNull().default(""),
    status: text("status", { enum: TASK_STATUSES }).notNull(),
    failureReason: text("failure_reason"),
    /** How the task was made: imported from a pull request, built from a draft, or copied from a public template. */
    origin: text("origin", { enum: TASK_ORIGINS }).notNull().default("pull_request"),
    /** The issue a draft was built from (docs/task-builder.md); its title and body make the default statement. */
    issueNumber: integer("issue_number"),
    issueUrl: text("issue_url"),
    issueTitle: text("issue_title"),
    issueBody: text("issue_body"),
    /** The public template a task was copied from. */
    templateSlug: text("template_slug"),
    /** The repo host's web origin (https://github.com or a GitHub Enterprise origin). */
    sourceHost: text("source_host").notNull(),
    sourceApiBase: text("source_api_base").notNull(),
    sourceOwner: text("source_owner").notNull(),
    sourceRepo: text("source_repo").notNull(),
    prNumber: integer("pr_number").notNull(),
    prUrl: text("pr_url").notNull(),
    /** The pull request's title and body as the import read them; staff only. Null until then. */
    prTitle: text("pr_title"),
    prBody: text("pr_body"),
    /** The statement staff wrote; null where the default made from the pull request stands (domain/statement.ts). */
    statementTitle: text("statement_title"),
    statementBody: text("statement_body"),
    baseSha: text("base_sha"),
    headSha: text("head_sha"),
    language: text("language"),
    testFramework: text("test_framework"),
    testCommand: text("test_command", { mode: "json" }).$type<string[]>(),
    /** What the import stated instead of detection (domain/task-settings.ts); null: all detected. */
    settings: text("settings", { mode: "json" }).$type<TaskSettings>(),
    /** The install failure the fallbacks did not make good (a prepare job's `install.failure`), named in the FAILED reason. */
    installFailure: text("install_failure"),
    timeLimitMinutes: integer("time_limit_minutes"),
    /** Whether candidates may use AI chat in their attempts (docs/api.md, "AI chat"). */
    aiAssistance: integer("ai_assistance", { mode: "boolean" }).notNull().default(DEFAULT_AI_ASSISTANCE),
    failToPass: text("fail_to_pass", { mode: "json" }).$type<string[]>(),
    passToPass: text("pass_to_pass", { mode: "json" }).$type<string[]>(),
    /** Files the hidden test patch touches: reset to the task's version when scoring. */
    testFiles: text("test_files", { mode: "json" }).$type<string[]>(),
    snapshotSha256: text("snapshot_sha256"),
    environmentKey: text("environment_key"),
    environmentSha256: text("environment_sha256"),
    prepareJobId: text("prepare_job_id"),
    baseRunJobId: text("base_run_job_id"),
    solutionRunJobId: text("solution_run_job_id"),
    createdBy: text("created_by").notNull().references(() => users.id),
    createdAt: timestamp("created_at"),
    updatedAt: timestamp("updated_at"),
    /** When each phase began: the snapshot was stored (PREPARING), the environment was ready (VALIDATING). */
    preparingAt: text("preparing_at"),
    validatingAt: text("validating_at"),
    readyAt: text("ready_at"),
    archivedAt: text("archived_at"),
    /** Null while the task is an unpublished draft, which only the draft endpoints show. */
    publishedAt: text("published_at"),
  },
  (t) => [
    index("tasks_org_status_idx").on(t.organizationId, t.status),
    index("tasks_visibility_idx").on(t.visibility, t.status),
    index("tasks_creator_origin_idx").on(t.createdBy, t.origin, t.createdAt),
  ],
);

/** Candidates a task is assigned to (by accepting an invitation). */
export const taskAssignments = sqliteTable(
  "task_assignments",
  {
    taskId: text("task_id").notNull().references(() => tasks.id),
    userId: text("user_id").notNull().references(() => users.id),
    assignedAt: timestamp("assigned_at"),
  },
  (t) => [primaryKey({ columns: [t.taskId, t.userId] }), index("task_assignments_user_idx").on(t.userId)],
);

/** Repo host tokens for private repositories, one per organization and host, encrypted at rest. */
export const repohostTokens = sqliteTable(
  "repohost_tokens",
  {
    organizationId: text("organization_id").notNull().references(() => organizations.id),
    host: text("host").notNull(),
    ciphertext: text("ciphertext").notNull(),
    iv: text("iv").notNull(),
    last4: text("last4").notNull(),
    createdBy: text("created_by").notNull().references(() => users.id),
    createdAt: timestamp("created_at"),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.host] })],
);
