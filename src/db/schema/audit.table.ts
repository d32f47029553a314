import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { AUDIT_ACTIONS, AUDIT_TARGET_TYPES } from "../../domain/audit";
import { organizations, users } from "./accounts.table";
import { timestamp } from "./columns";

/** Staff actions that change what a candidate may do, one row each, never changed or removed. */
export const auditEvents = sqliteTable(
  "audit_events",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id").notNull().references(() => organizations.id),
    actorId: text("actor_id").notNull().references(() => users.id),
    action: text("action", { enum: AUDIT_ACTIONS }).notNull(),
    targetType: text("target_type", { enum: AUDIT_TARGET_TYPES }).notNull(),
    targetId: text("target_id").notNull(),
    detail: text("detail", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp("created_at"),
  },
  (t) => [index("audit_events_org_idx").on(t.organizationId, t.createdAt)],
);
