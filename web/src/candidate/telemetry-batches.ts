// What the telemetry batcher does with a batch after POST /siem/events/batch answers, and with
// the events it holds about a file that was deleted (docs/web-app.md, "Telemetry"). Pure: the
// batcher (telemetry.ts) applies the verdicts.
import type { components } from "../../../client/src/index";
import { retryable } from "../lib/errors";

export type TelemetryEvent = components["schemas"]["TelemetryEvent"];

/** How a send ended: with a 2xx, or with an error's status (0: no answer) and a 422's entries. */
export type BatchAnswer = { ok: true } | { ok: false; status: number; issues: readonly { loc: readonly (string | number)[] }[] };

export type BatchVerdict =
  /** Off the buffer: stored, or refused by the service event by event (a 202 lists those), or refused for good. */
  | { kind: "done" }
  /** Kept whole and sent again after a backoff: the failure may pass. */
  | { kind: "retry" }
  /** The events at `drop` go; the rest of the batch is sent again. */
  | { kind: "resend"; drop: ReadonlySet<number> }
  /** Too large for one request: kept, and sent in smaller requests. */
  | { kind: "split" }
  /** The credential is no longer taken: nothing more can be sent. */
  | { kind: "stop" };

/** What may pass for any request, but a 409: for telemetry it means the attempt was submitted, which stays so. */
function worthRetrying(status: number): boolean {
  return status !== 409 && retryable(status);
}

/** The batch positions a 422 names (`["body", "events", i, ...]`). */
function namedEvents(issues: readonly { loc: readonly (string | number)[] }[], size: number): Set<number> {
  const named = new Set<number>();
  for (const { loc } of issues) {
    const index = loc[2];
    if (loc[0] === "body" && loc[1] === "events" && typeof index === "number" && Number.isInteger(index) && index >= 0 && index < size) named.add(index);
  }
  return named;
}

/**
 * A 422 refuses the whole batch, but when it names events the others are well-formed and are
 * sent again without them; a 422 that names none (the batch's own fields) cannot be helped by
 * re-sending, and neither can a 409 (the attempt was submitted) or a 403/404.
 */
export function batchVerdict(size: number, answer: BatchAnswer): BatchVerdict {
  if (answer.ok) return { kind: "done" };
  if (worthRetrying(answer.status)) return { kind: "retry" };
  if (answer.status === 401) return { kind: "stop" };
  if (answer.status === 413) return size > 1 ? { kind: "split" } : { kind: "done" };
  if (answer.status === 422) {
    const drop = namedEvents(answer.issues, size);
    return drop.size > 0 && drop.size < size ? { kind: "resend", drop } : { kind: "done" };
  }
  return { kind: "done" };
}

/**
 * The events once `path` is deleted: the service takes a path only while it names a file of the
 * attempt, so an event about the file keeps its counts without the path, and a `file_opened`
 * (nothing but the path) goes.
 */
export function withoutFile(events: readonly TelemetryEvent[], path: string): TelemetryEvent[] {
  const kept: TelemetryEvent[] = [];
  for (const event of events) {
    if (!("file_path" in event) || event.file_path !== path) kept.push(event);
    else if (event.kind !== "file_opened") {
      const { file_path: _deleted, ...rest } = event;
      kept.push(rest);
    }
  }
  return kept;
}
