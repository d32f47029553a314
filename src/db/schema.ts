// The D1 schema, one file per area; drizzle-kit generates migrations/ from these.
export * from "./schema/accounts";
export * from "./schema/runner-jobs";
export * from "./schema/tasks";
export * from "./schema/attempts";
export * from "./schema/invitations";
export * from "./schema/runs";
export * from "./schema/scores";
export * from "./schema/audit";
export * from "./schema/telemetry";
export * from "./schema/executions";
export * from "./schema/ai-chat";
export * from "./schema/billing";
