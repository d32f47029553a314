import { database } from "../db/client";
import { findTelemetryAttempt } from "../db/telemetry.queries";
import { accept, invalid, refuse, type Outcome } from "../domain/outcome";
import { admitTelemetry, chunk, TELEMETRY_LIMITS, telemetryReferences, unknownReferenceIssues, type TelemetryEvent } from "../domain/telemetry";
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

/**
 * Takes a batch of an attempt's telemetry (docs/api.md, "Telemetry"). Batches are limited per attempt, so one IDE cannot flood ingestion whatever IPs it comes
 * from; events from after a submission are dropped, every file and run an event names must be
 * the attempt's own (else 422 naming each), and the rest is queued for storage.
 */
export async function ingestTelemetry(
  env: Env,
  sender: TelemetrySender,
  events: TelemetryEvent[],
  nowMs: number,
): Promise<Outcome<{ attempt_id: string; accepted: number; ignored: number }>> {
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
  const admitted = admitTelemetry({ id: attempt.id, submitted_at: attempt.submittedAt }, events, nowMs);
  if (!admitted.ok) return admitted;
  const refs = telemetryReferences(events);
  if (refs.paths.length > 0 || refs.runIds.length > 0) {
    const own = await attemptObject(env, attempt.id).knownReferences(refs.paths, refs.runIds);
    const saved = new Set(own.paths);
    const snapshot = refs.paths.some((p) => !saved.has(p)) ? await snapshotFiles(env, attempt.taskId) : new Set<string>();
    const issues = unknownReferenceIssues(events, { paths: new Set([...saved, ...refs.paths.filter((p) => snapshot.has(p))]), runIds: new Set(own.runIds) });
    if (issues.length > 0) return invalid(issues);
  }
  const { accepted, ignored } = admitted.value;
  await env.TELEMETRY.sendBatch(
    chunk(accepted, TELEMETRY_LIMITS.eventsPerMessage).map((batch) => ({
      body: { attempt_id: attempt.id, organization_id: attempt.organizationId, events: batch },
    })),
  );
  return accept({ attempt_id: attempt.id, accepted: accepted.length, ignored });
}
