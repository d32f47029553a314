// The D1 schema, one file per area; drizzle-kit generates migrations/ from these.
export * from "./schema/accounts.table";
export * from "./schema/runner-jobs.table";
export * from "./schema/tasks.table";
export * from "./schema/attempts.table";
export * from "./schema/invitations.table";
export * from "./schema/runs.table";
export * from "./schema/scores.table";
export * from "./schema/audit.table";
export * from "./schema/telemetry.table";
export * from "./schema/executions.table";
export * from "./schema/ai-chat.table";
export * from "./schema/billing.table";
export * from "./schema/similarity.table";
