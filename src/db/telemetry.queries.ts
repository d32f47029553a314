import { and, eq, lte, sql } from "drizzle-orm";
import { LARGE_PASTE, type MeasuredTelemetry } from "../domain/scoring";
import { chunk, type TelemetryRecord } from "../domain/telemetry";
import type { Database } from "./client";
import { attempts, telemetryEvents } from "./schema";

/** Bound parameters D1 takes in one statement. */
const D1_MAX_PARAMS = 100;

/**
 * What telemetry needs of an attempt, from D1's row (the AttemptDO's write-through, which may
 * trail the object by moments: good enough for a bound on late events).
 */
export async function findTelemetryAttempt(db: Database, attemptId: string) {
  return db
    .select({ id: attempts.id, organizationId: attempts.organizationId, taskId: attempts.taskId, submittedAt: attempts.submittedAt })
    .from(attempts)
    .where(eq(attempts.id, attemptId))
    .get();
}

/**
 * Stores an attempt's events, in one D1 batch (one transaction) of multi-row inserts sized to
 * the parameter limit. An event already stored under its id is left as it is, so re-sent and
 * re-delivered events change nothing. Returns how many were new.
 */
export async function insertTelemetry(
  db: Database,
  attemptId: string,
  organizationId: string,
  records: readonly TelemetryRecord[],
): Promise<number> {
  const rows = records.map((r) => ({
    attemptId,
    eventId: r.event_id,
    organizationId,
    seq: r.seq,
    kind: r.kind,
    occurredAt: r.occurred_at,
    data: r.data,
  }));
  if (rows.length === 0) return 0;
  const perStatement = Math.floor(D1_MAX_PARAMS / Object.keys(rows[0]!).length);
  const [first, ...rest] = chunk(rows, perStatement).map((values) =>
    db.insert(telemetryEvents).values(values).onConflictDoNothing().returning({ eventId: telemetryEvents.eventId }),
  );
  const results = await db.batch([first!, ...rest]);
  return results.reduce((n, inserted) => n + inserted.length, 0);
}

/**
 * What scoring's behavior subscore counts from an attempt's telemetry, up to `until` (its
 * submission). One switch away from the IDE usually fires both a focus and a visibility event,
 * so focus losses are the larger of the two counts, not their sum.
 */
export async function measuredTelemetry(db: Database, attemptId: string, until: string): Promise<MeasuredTelemetry> {
  const row = await db
    .select({
      events: sql<number>`count(*)`,
      largePastes: sql<number>`coalesce(sum(${telemetryEvents.kind} = 'paste' AND (json_extract(${telemetryEvents.data}, '$.size_bytes') >= ${LARGE_PASTE.bytes} OR json_extract(${telemetryEvents.data}, '$.line_count') >= ${LARGE_PASTE.lines})), 0)`,
      focusLost: sql<number>`coalesce(sum(${telemetryEvents.kind} = 'focus_lost'), 0)`,
      hidden: sql<number>`coalesce(sum(${telemetryEvents.kind} = 'visibility_hidden'), 0)`,
    })
    .from(telemetryEvents)
    .where(and(eq(telemetryEvents.attemptId, attemptId), lte(telemetryEvents.occurredAt, until)))
    .get();
  return {
    events: row?.events ?? 0,
    largePastes: row?.largePastes ?? 0,
    focusLosses: Math.max(row?.focusLost ?? 0, row?.hidden ?? 0),
  };
}
