import { z } from "zod";
import { accept, refuse, type FieldIssue, type Outcome } from "./outcome";
import { overlayPathProblem } from "./overlay";

/**
 * The catalogue of telemetry events an IDE client may send to `POST /siem/events/batch`:
 * activity metadata only, never code, clipboard text, credentials or free text.
 */
export const TELEMETRY_EVENT_KINDS = [
  "focus_lost",
  "focus_gained",
  "visibility_hidden",
  "visibility_visible",
  "paste",
  "copy",
  "typing_window",
  "run_clicked",
  "submit_clicked",
  "file_opened",
  "ai_chat_message_sent",
] as const;
export type TelemetryEventKind = (typeof TELEMETRY_EVENT_KINDS)[number];

const MiB = 1024 * 1024;

/** Bounds of telemetry ingestion (docs/limits.md, "Telemetry"). */
export const TELEMETRY_LIMITS = {
  eventsPerBatch: 500,
  /**
   * A batch's JSON body. 500 ordinary events take about 100 KiB; the bound also keeps a whole
   * batch within one `sendBatch` of the queue (256 KB), so a 202 means all of it was queued.
   */
  batchBytes: 128 * 1024,
  /** Per attempt; the RL_TELEMETRY binding in wrangler.toml counts them. */
  batchesPerMinute: 30,
  /** After submission, how long buffered events from before it are still taken. */
  graceAfterSubmitMs: 10 * 60_000,
  /** Events per queue message: well under a message's 128 KB even with 1 KiB paths. */
  eventsPerMessage: 50,
} as const;

/**
 * A short client-chosen identifier (a UUID, a ULID, a counter): its alphabet and length leave
 * no room for prose or code.
 */
const identifier = (what: string) =>
  z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, `${what} is 1–64 letters, digits, '_' or '-'`);

const count = (max: number) => z.int().min(0).max(max);

/** A repository path: an identifier of a file, under the overlay's rules (docs/api.md, "Changes overlay"). */
const FilePath = z
  .string()
  .superRefine((path, ctx) => {
    const problem = overlayPathProblem(path);
    if (problem) ctx.addIssue({ code: "custom", message: problem, params: { type: "invalid_path" } });
  })
  .describe("Repository path of the file, as in the changes overlay");

const common = {
  event_id: identifier("an event id").describe(
    "The client's id of the event, unique within the attempt: a re-sent event with the same id is stored once",
  ),
  seq: z.int().min(0).optional().describe("The client's sequence number of the event, when it keeps one"),
  occurred_at: z.iso.datetime({ offset: true }).describe("When the event happened, by the client's clock (ISO 8601)"),
};

const awayMs = count(7 * 24 * 3_600_000).optional();
const sizeBytes = count(64 * MiB).describe("Bytes of the text, UTF-8; never the text itself");
const lineCount = count(1_000_000).describe("Lines of the text");

const event = <K extends TelemetryEventKind, S extends z.ZodRawShape>(kind: K, shape: S, description: string) =>
  z.strictObject({ kind: z.literal(kind), ...common, ...shape }).describe(description);

export const TELEMETRY_EVENT_SCHEMAS = [
  event("focus_lost", {}, "The IDE window lost focus"),
  event("focus_gained", { away_ms: awayMs.describe("How long focus was away, when the client measured it") }, "The IDE window got focus back"),
  event("visibility_hidden", {}, "The IDE went out of sight (minimized, another tab)"),
  event("visibility_visible", { away_ms: awayMs.describe("How long it was hidden") }, "The IDE is visible again"),
  event(
    "paste",
    {
      size_bytes: sizeBytes,
      line_count: lineCount,
      file_path: FilePath.optional(),
      source: z.enum(["internal", "external"]).optional().describe("internal: the text was copied inside the IDE in this attempt"),
    },
    "Text was pasted into the editor",
  ),
  event("copy", { size_bytes: sizeBytes, line_count: lineCount, file_path: FilePath.optional() }, "Text was copied from the editor"),
  event(
    "typing_window",
    {
      window_ms: z.int().min(1).max(600_000).describe("Length of the window, at most 10 minutes"),
      keystrokes: count(100_000).describe("Keys that inserted text in the window"),
      deletions: count(100_000).optional().describe("Backspace and delete presses in the window"),
      file_path: FilePath.optional(),
    },
    "Typing cadence over a window of time",
  ),
  event("run_clicked", { run_id: identifier("a run id").optional().describe("The run it started, when known") }, "The candidate asked for a test run"),
  event("submit_clicked", {}, "The candidate pressed submit"),
  event("file_opened", { file_path: FilePath }, "A file was opened in the editor"),
  event(
    "ai_chat_message_sent",
    { message_chars: count(100_000).describe("Characters of the message; never the message") },
    "The candidate sent a message to the AI assistant",
  ),
] as const;

export const TelemetryEventSchema = z.discriminatedUnion("kind", TELEMETRY_EVENT_SCHEMAS).meta({ id: "TelemetryEvent" });
export type TelemetryEvent = z.infer<typeof TelemetryEventSchema>;

/** A batch's events; an id twice in one batch is a client bug that would otherwise lose an event silently. */
export const TelemetryEventsSchema = z
  .array(TelemetryEventSchema)
  .min(1)
  .max(TELEMETRY_LIMITS.eventsPerBatch)
  .superRefine((events, ctx) => {
    const first = new Map<string, number>();
    events.forEach((e, i) => {
      const seen = first.get(e.event_id);
      if (seen === undefined) first.set(e.event_id, i);
      else ctx.addIssue({ code: "custom", path: [i, "event_id"], message: `the same event_id as events[${seen}]`, params: { type: "duplicate" } });
    });
  });

/** An event as it is queued and stored: the common fields, and the rest as its metadata. */
export interface TelemetryRecord {
  event_id: string;
  seq: number | null;
  kind: TelemetryEventKind;
  /** UTC, millisecond precision, so stored times sort as text. */
  occurred_at: string;
  data: Record<string, unknown>;
}

export function telemetryRecord(e: TelemetryEvent): TelemetryRecord {
  const { event_id, seq, kind, occurred_at, ...data } = e;
  return { event_id, seq: seq ?? null, kind, occurred_at: new Date(occurred_at).toISOString(), data };
}

export interface TelemetryAdmission {
  accepted: TelemetryRecord[];
  /** Events from after the submission, dropped. */
  ignored: number;
}

/**
 * Which events of a batch an attempt still takes. Before submission, all of them (also while
 * NOT_STARTED: the IDE reports from when it opens the attempt). After it, for a grace period,
 * the events the client buffered from before submission; past the grace period, or when no
 * event is from before submission, the batch is a 409. No events at all (every one of the
 * batch was refused) are taken within the grace period, so that the refusals are the answer.
 */
export function admitTelemetry(
  attempt: { id: string; submitted_at: string | null },
  events: readonly TelemetryEvent[],
  nowMs: number,
): Outcome<TelemetryAdmission> {
  const records = events.map(telemetryRecord);
  if (attempt.submitted_at === null) return accept({ accepted: records, ignored: 0 });
  const submittedMs = Date.parse(attempt.submitted_at);
  const graceMinutes = TELEMETRY_LIMITS.graceAfterSubmitMs / 60_000;
  if (nowMs > submittedMs + TELEMETRY_LIMITS.graceAfterSubmitMs) {
    return refuse(
      "conflict",
      `Attempt ${attempt.id} was submitted at ${attempt.submitted_at}; telemetry is accepted until ${graceMinutes} minutes after submission`,
    );
  }
  const accepted = records.filter((r) => Date.parse(r.occurred_at) <= submittedMs);
  if (accepted.length === 0 && records.length > 0) {
    return refuse("conflict", `Attempt ${attempt.id} was submitted at ${attempt.submitted_at}; none of these events happened before that`);
  }
  return accept({ accepted, ignored: records.length - accepted.length });
}

/** Items in groups of at most `size`, in order: a batch's queue messages, a message's insert statements. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The files and runs a batch names, each once: what must be the attempt's own. */
export function telemetryReferences(events: readonly TelemetryEvent[]): { paths: string[]; runIds: string[] } {
  const paths = new Set<string>();
  const runIds = new Set<string>();
  for (const e of events) {
    if ("file_path" in e && e.file_path !== undefined) paths.add(e.file_path);
    if ("run_id" in e && e.run_id !== undefined) runIds.add(e.run_id);
  }
  return { paths: [...paths], runIds: [...runIds] };
}

/** An event of a batch that is not stored: where it is in the batch, its id, and why, as a 422 entry says it. */
export interface RefusedEvent extends FieldIssue {
  index: number;
  event_id: string;
}

/**
 * Every event naming a file that is not the attempt's (its task's snapshot or its saved
 * changes) or a run that is not one of its runs: a path is metadata only when it names a file,
 * and anything else written there (a line of code fits the path rules) is text. An entry per
 * problem, so `index` may repeat.
 */
export function refusedReferences(events: readonly TelemetryEvent[], known: { paths: ReadonlySet<string>; runIds: ReadonlySet<string> }): RefusedEvent[] {
  const refused: RefusedEvent[] = [];
  events.forEach((e, index) => {
    if ("file_path" in e && e.file_path !== undefined && !known.paths.has(e.file_path)) {
      refused.push({
        index,
        event_id: e.event_id,
        loc: ["body", "events", index, "file_path"],
        msg: "not a file of the attempt: a path of its task's files or of its saved changes",
        type: "unknown_file",
      });
    }
    if ("run_id" in e && e.run_id !== undefined && !known.runIds.has(e.run_id)) {
      refused.push({ index, event_id: e.event_id, loc: ["body", "events", index, "run_id"], msg: "not a run of the attempt", type: "unknown_run" });
    }
  });
  return refused;
}
