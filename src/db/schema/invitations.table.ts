import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { DELIVERY_STATUSES } from "../../domain/invitations";
import { organizations, users } from "./accounts.table";
import { timestamp } from "./columns";
import { tasks } from "./tasks.table";

/**
 * Invitations of candidates to tasks. The secret token is kept only as its SHA-256; the
 * status (unused, used, expired, revoked) follows from the timestamps and the clock.
 */
export const invitations = sqliteTable(
  "invitations",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id").notNull().references(() => organizations.id),
    taskId: text("task_id").notNull().references(() => tasks.id),
    /** As the inviter wrote it; `emailNormalized` is what is compared. */
    email: text("email").notNull(),
    emailNormalized: text("email_normalized").notNull(),
    invitedBy: text("invited_by").notNull().references(() => users.id),
    tokenHash: text("token_hash").notNull().unique(),
    /** 1 on creation, one more per resend; names the e-mail of the current token. */
    tokenVersion: integer("token_version").notNull().default(1),
    /** When the current token was issued. */
    issuedAt: text("issued_at").notNull(),
    /** The validity the inviter chose; a resend gives the new token as long. */
    validHours: integer("valid_hours").notNull(),
    expiresAt: text("expires_at").notNull(),
    createdAt: timestamp("created_at"),
    usedAt: text("used_at"),
    usedBy: text("used_by").references(() => users.id),
    revokedAt: text("revoked_at"),
    revokedBy: text("revoked_by").references(() => users.id),
    /** The invitation that replaced this expired one when the candidate was invited again. */
    supersededBy: text("superseded_by"),
    deliveryStatus: text("delivery_status", { enum: DELIVERY_STATUSES }).notNull().default("queued"),
    /** Sends of the current token's e-mail so far. */
    deliveryAttempts: integer("delivery_attempts").notNull().default(0),
    deliveryError: text("delivery_error"),
    deliveredAt: text("delivered_at"),
  },
  (t) => [
    // One open invitation per candidate and task; two concurrent identical invitations cannot both be stored.
    uniqueIndex("invitations_open_unique")
      .on(t.taskId, t.emailNormalized)
      .where(sql`${t.usedAt} IS NULL AND ${t.revokedAt} IS NULL AND ${t.supersededBy} IS NULL`),
    // The trailing columns let analytics count a window's invitations without reading the rows.
    index("invitations_org_created_idx").on(t.organizationId, t.createdAt, t.taskId, t.supersededBy, t.usedAt),
    index("invitations_org_email_idx").on(t.organizationId, t.emailNormalized),
  ],
);
