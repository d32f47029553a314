import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { BILLING_PROVIDER, RECORDED_OUTCOMES, type BillingChanges } from "../../domain/billing";
import { organizations } from "./accounts.table";
import { timestamp } from "./columns";

/**
 * Every payment provider event received, one row each, keyed by the provider's event id: the
 * key that makes a redelivery change nothing, and the record of who changed what by which
 * event. Never changed or removed.
 */
export const billingEvents = sqliteTable(
  "billing_events",
  {
    /** The provider's event id (`evt_...`). */
    id: text("id").primaryKey(),
    provider: text("provider").notNull().default(BILLING_PROVIDER),
    type: text("type").notNull(),
    /** Null when the event matched no organization (outcome unmatched or invalid). */
    organizationId: text("organization_id").references(() => organizations.id),
    customerId: text("customer_id"),
    /** The Checkout Session, subscription or invoice the event is about. */
    objectId: text("object_id"),
    outcome: text("outcome", { enum: RECORDED_OUTCOMES }).notNull(),
    changes: text("changes", { mode: "json" }).$type<BillingChanges>().notNull(),
    /** Why the event changed nothing, when it did not. */
    detail: text("detail"),
    /** The provider's `created` of the event, ISO 8601. */
    eventCreatedAt: text("event_created_at").notNull(),
    receivedAt: timestamp("received_at"),
  },
  (t) => [index("billing_events_org_idx").on(t.organizationId, t.receivedAt)],
);
