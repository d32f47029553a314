import { database } from "../db/client";
import { findTelemetryAttempt } from "../db/telemetry.queries";
import { accept, refuse, type Outcome } from "../domain/outcome";
import { admitTelemetry, chunk, refusedReferences, TELEMETRY_LIMITS, telemetryReferences, type RefusedEvent, type TelemetryEvent } from "../domain/telemetry";
import { attemptObject } from "../durable/attempt/attempt-object";
import type { Env } from "../env";
import { snapshotFiles } from "./workspace-files.flow";

export interface TelemetryAttempt {
  id: string;
  organizationId: string;
  taskId: string;
  submittedAt: string | null;
}

/**
 * Who sends: the attempt's candidate, whose attempt the route has already read, or an IDE
 * session of the attempt, whose attempt is read here.
 */
export type TelemetrySender = { kind: "candidate"; attempt: TelemetryAttempt } | { kind: "ide"; attemptId: string };

async function senderAttempt(env: Env, sender: TelemetrySender): Promise<Outcome<TelemetryAttempt>> {
  if (sender.kind === "candidate") return accept(sender.attempt);
  const attempt = await findTelemetryAttempt(database(env.DB), sender.attemptId);
  return attempt ? accept(attempt) : refuse("not_found", `Attempt ${sender.attemptId} not found`);
}

/** The events of a batch naming a file or a run that is not the attempt's (docs/api.md, "Telemetry"). */
async function unknownReferences(env: Env, attempt: TelemetryAttempt, events: readonly TelemetryEvent[]): Promise<RefusedEvent[]> {
  const refs = telemetryReferences(events);
  if (refs.paths.length === 0 && refs.runIds.length === 0) return [];
  const own = await attemptObject(env, attempt.id).knownReferences(refs.paths, refs.runIds);
  const saved = new Set(own.paths);
  const snapshot = refs.paths.some((p) => !saved.has(p)) ? await snapshotFiles(env, attempt.taskId) : new Set<string>();
  return refusedReferences(events, { paths: new Set([...saved, ...refs.paths.filter((p) => snapshot.has(p))]), runIds: new Set(own.runIds) });
}

/**
 * Takes a batch of an attempt's telemetry (docs/api.md, "Telemetry"). Batches are limited per
 * attempt, so one IDE cannot flood ingestion whatever IPs it comes from. An event naming a file
 * or run that is not the attempt's is refused alone: a client cannot always know that a file it
 * reported on was deleted meanwhile, and the rest of its batch is still good. Events from after
 * a submission are dropped, and the rest is queued for storage.
 */
export async function ingestTelemetry(
  env: Env,
  sender: TelemetrySender,
  events: TelemetryEvent[],
  nowMs: number,
): Promise<Outcome<{ attempt_id: string; accepted: number; ignored: number; refused: RefusedEvent[] }>> {
  const found = await senderAttempt(env, sender);
  if (!found.ok) return found;
  const attempt = found.value;
  const { success } = await env.RL_TELEMETRY.limit({ key: `telemetry:${attempt.id}` });
  if (!success) {
    const detail =
      `Rate limit exceeded (${TELEMETRY_LIMITS.batchesPerMinute} telemetry batches per minute per attempt); keep the events ` +
      "buffered and retry after 60 seconds";
    return { ok: false, refusal: { kind: "rate_limited", detail, retryAfterSeconds: 60 } };
  }
  const refused = await unknownReferences(env, attempt, events);
  const refusedAt = new Set(refused.map((r) => r.index));
  const admitted = admitTelemetry(
    { id: attempt.id, submitted_at: attempt.submittedAt },
    events.filter((_, i) => !refusedAt.has(i)),
    nowMs,
  );
  if (!admitted.ok) return admitted;
  const { accepted, ignored } = admitted.value;
  if (accepted.length > 0) {
    await env.TELEMETRY.sendBatch(
      chunk(accepted, TELEMETRY_LIMITS.eventsPerMessage).map((batch) => ({
        body: { attempt_id: attempt.id, organization_id: attempt.organizationId, events: batch },
      })),
    );
  }
  return accept({ attempt_id: attempt.id, accepted: accepted.length, ignored, refused });
}
