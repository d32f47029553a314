import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { TELEMETRY_EVENT_KINDS } from "../../domain/telemetry";
import { attempts } from "./attempts.table";
import { timestamp } from "./columns";

/**
 * IDE telemetry, one row per event, ingested from the `telemetry` queue. Keyed by the
 * client's own event id, so a batch the client re-sends after a network failure changes nothing.
 */
export const telemetryEvents = sqliteTable(
  "telemetry_events",
  {
    attemptId: text("attempt_id").notNull().references(() => attempts.id),
    eventId: text("event_id").notNull(),
    organizationId: text("organization_id").notNull(),
    /** The client's sequence number of the event, when it keeps one. */
    seq: integer("seq"),
    kind: text("kind", { enum: TELEMETRY_EVENT_KINDS }).notNull(),
    /** When the event happened, by the client's clock. */
    occurredAt: text("occurred_at").notNull(),
    /** The event's metadata fields (sizes, durations, counts, short identifiers), as validated. */
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    receivedAt: timestamp("received_at"),
  },
  (t) => [
    primaryKey({ columns: [t.attemptId, t.eventId] }),
    index("telemetry_attempt_time_idx").on(t.attemptId, t.occurredAt),
    index("telemetry_org_time_idx").on(t.organizationId, t.occurredAt),
  ],
);
