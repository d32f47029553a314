/**
 * The evaluation of one attempt for its organization's staff (docs/api.md, "Evaluation"): its
 * timeline, merged from the attempt object's save history, the runs, the telemetry, the AI chat
 * transcript and the score reports, and the bound on the save history.
 */
import type { ChatMessage } from "./ai-chat";
import type { OverlayOp } from "./overlay";

/**
 * How much save history an attempt keeps (docs/limits.md, "Attempts"). Entries are file
 * changes; past the bound the oldest saves go as a whole. Contents are kept once per SHA-256
 * and dropped least recently saved first, so the latest state of every file stays replayable.
 */
export const SAVE_HISTORY_LIMITS = {
  entries: 20_000,
  contentBytes: 64 * 1024 * 1024,
} as const;

export type SaveHistoryLimits = { readonly entries: number; readonly contentBytes: number };

/** One file change of one save (a PATCH .../changes), as the history lists it. */
export interface SaveEntry {
  seq: number;
  save: number;
  at: string;
  path: string;
  op: OverlayOp;
  size: number;
  sha256: string | null;
  /** Whether the content can still be read; null for a deletion, which has none. */
  content_kept: boolean | null;
}

export interface SaveFile {
  path: string;
  op: OverlayOp;
  size: number;
}

/** One save with its files, as the timeline shows it. */
export interface SaveGroup {
  save: number;
  at: string;
  files: SaveFile[];
}

/** A file as of a save: its newest change up to that save, with the content when it is kept. */
export type SavedFileLookup =
  | { found: true; entry: SaveEntry; content: ArrayBuffer | null }
  | { found: false; why: "no_such_save" | "not_changed" };

/**
 * The newest `last_seq` up to which kept contents are dropped to bring `total` bytes within
 * `budget`, reading them least recently saved first; null when nothing has to go.
 */
export function contentCutoff(oldestFirst: Iterable<{ last_seq: number; size: number }>, total: number, budget: number): number | null {
  let over = total - budget;
  if (over <= 0) return null;
  let cutoff: number | null = null;
  for (const content of oldestFirst) {
    cutoff = content.last_seq;
    over -= content.size;
    if (over <= 0) break;
  }
  return cutoff;
}

// ---------------------------------------------------------------- timeline

export interface RunCounts {
  total: number;
  passed: number;
  failed: number;
  skipped: number;
  errored: number;
}

export type TimelineEvent =
  | { type: "created"; at: string }
  | { type: "started"; at: string; deadline_at: string | null }
  | { type: "save"; at: string; save: number; files: SaveFile[]; bytes: number }
  | { type: "run"; at: string; run_id: string; status: string; finished_at: string | null; reason: string | null; counts: RunCounts | null }
  | { type: "telemetry"; at: string; counts: Record<string, number>; total: number }
  | { type: "ai_chat_message"; at: string; message: ChatMessage }
  | { type: "submitted"; at: string; auto_submitted: boolean; explanation: string | null }
  | { type: "scoring_started"; at: string; score_id: string }
  | { type: "scoring_finished"; at: string; score_id: string; status: string; overall_score: number | null; reason: string | null };

export type TimelineEventType = TimelineEvent["type"];

/** Events at the same instant come in this order, the order they happen in. */
export const TIMELINE_EVENT_TYPES = [
  "created",
  "started",
  "save",
  "run",
  "telemetry",
  "ai_chat_message",
  "submitted",
  "scoring_started",
  "scoring_finished",
] as const satisfies readonly TimelineEventType[];

/** Where a page of the timeline ended: the last event's position, `(at, type, id)`. */
export interface TimelineCursor {
  at: string;
  type: TimelineEventType;
  id: string;
}

const rank = (type: TimelineEventType) => TIMELINE_EVENT_TYPES.indexOf(type);

/** Numbers as ids, padded so that they compare as strings in order. */
const numberId = (n: number) => String(n).padStart(12, "0");

/** Tells apart events of one type at one instant. */
function eventId(e: TimelineEvent): string {
  switch (e.type) {
    case "save":
      return numberId(e.save);
    case "ai_chat_message":
      return numberId(e.message.seq);
    case "run":
      return e.run_id;
    case "scoring_started":
    case "scoring_finished":
      return e.score_id;
    default:
      return "";
  }
}

export function cursorOf(e: TimelineEvent): TimelineCursor {
  return { at: e.at, type: e.type, id: eventId(e) };
}

export function compareCursors(a: TimelineCursor, b: TimelineCursor): number {
  if (a.at !== b.at) return a.at < b.at ? -1 : 1;
  if (a.type !== b.type) return rank(a.type) - rank(b.type);
  return a.id === b.id ? 0 : a.id < b.id ? -1 : 1;
}

/** The cursor as clients pass it back: opaque, URL-safe. */
export function encodeCursor(c: TimelineCursor): string {
  return btoa(JSON.stringify([c.at, c.type, c.id])).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}

/** The cursor a client sent, or undefined when it is not one this API issued. */
export function decodeCursor(text: string): TimelineCursor | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(atob(text.replaceAll("-", "+").replaceAll("_", "/")));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 3 || !value.every((v) => typeof v === "string")) return undefined;
  const [at, type, id] = value as [string, string, string];
  const known = (TIMELINE_EVENT_TYPES as readonly string[]).includes(type);
  // A save's and a chat message's id go to SQL as numbers (numberTie).
  const idFits = type === "save" || type === "ai_chat_message" ? /^\d{1,15}$/.test(id) : id.length <= 128;
  return known && at.length <= 64 && idFits ? { at, type: type as TimelineEventType, id } : undefined;
}

/**
 * What a source of one event type still has to give after `cursor`: events after `at`, and
 * at `at` itself those whose id is greater than `tie` (every id when `tie` is "", none when
 * it is null). Null: no cursor, everything.
 */
export interface SourceBound {
  at: string;
  tie: string | null;
}

export function boundFor(cursor: TimelineCursor | undefined, type: TimelineEventType): SourceBound | null {
  if (!cursor) return null;
  const order = rank(type) - rank(cursor.type);
  return { at: cursor.at, tie: order > 0 ? "" : order < 0 ? null : cursor.id };
}

/** The number (a save's, a chat message's seq) after which a numbered source continues at the bound's instant (see SourceBound). */
export function numberTie(bound: SourceBound): number {
  if (bound.tie === null) return Number.MAX_SAFE_INTEGER;
  return bound.tie === "" ? 0 : Number(bound.tie);
}

export interface TimelinePage {
  items: TimelineEvent[];
  next_cursor: string | null;
}

/**
 * One page of the timeline from its sources, each in time order and holding at least
 * `limit + 1` events after the cursor when it has them: then a longer merge than `limit`
 * means there is more, and the next page starts after this one's last event.
 */
export function mergeTimeline(sources: readonly TimelineEvent[][], cursor: TimelineCursor | undefined, limit: number): TimelinePage {
  const merged = sources
    .flat()
    .map((event) => ({ event, key: cursorOf(event) }))
    .filter((e) => !cursor || compareCursors(e.key, cursor) > 0)
    .sort((a, b) => compareCursors(a.key, b.key));
  const page = merged.slice(0, limit);
  const last = page.at(-1);
  return { items: page.map((e) => e.event), next_cursor: merged.length > limit && last ? encodeCursor(last.key) : null };
}

export interface AttemptTimes {
  created_at: string;
  started_at: string | null;
  deadline_at: string | null;
  submitted_at: string | null;
  auto_submitted: boolean;
}

/** The attempt's creation, start and submission; the submission with the candidate's explanation, for the reviewer. */
export function lifecycleEvents(a: AttemptTimes, explanation: string | null): TimelineEvent[] {
  const events: TimelineEvent[] = [{ type: "created", at: a.created_at }];
  if (a.started_at) events.push({ type: "started", at: a.started_at, deadline_at: a.deadline_at });
  if (a.submitted_at) events.push({ type: "submitted", at: a.submitted_at, auto_submitted: a.auto_submitted, explanation });
  return events;
}

export interface ScoreTimes {
  id: string;
  status: string;
  created_at: string;
  completed_at: string | null;
  overall_score: number | null;
  reason: string | null;
}

/** Each score report's start, and its end once it has one (a re-score adds another pair). */
export function scoringEvents(scores: readonly ScoreTimes[]): TimelineEvent[] {
  return scores.flatMap((s): TimelineEvent[] => [
    { type: "scoring_started", at: s.created_at, score_id: s.id },
    ...(s.completed_at && s.status !== "scoring"
      ? [
          {
            type: "scoring_finished" as const,
            at: s.completed_at,
            score_id: s.id,
            status: s.status,
            overall_score: s.overall_score,
            reason: s.reason,
          },
        ]
      : []),
  ]);
}

export function saveEvents(groups: readonly SaveGroup[]): TimelineEvent[] {
  return groups.map((g) => ({ type: "save", at: g.at, save: g.save, files: g.files, bytes: g.files.reduce((n, f) => n + f.size, 0) }));
}

/** The minute of an ISO 8601 UTC timestamp, `YYYY-MM-DDTHH:MM`, as telemetry is bucketed. */
export const minuteOf = (iso: string) => iso.slice(0, 16);

/** Telemetry counts per kind and minute (rows in minute order) as one event per minute, at the minute's start. */
export function telemetryEvents(rows: readonly { minute: string; kind: string; n: number }[]): TimelineEvent[] {
  const byMinute = new Map<string, Record<string, number>>();
  for (const row of rows) {
    const counts = byMinute.get(row.minute) ?? {};
    counts[row.kind] = (counts[row.kind] ?? 0) + row.n;
    byMinute.set(row.minute, counts);
  }
  return [...byMinute].map(([minute, counts]) => ({
    type: "telemetry",
    at: `${minute}:00.000Z`,
    counts,
    total: Object.values(counts).reduce((n, c) => n + c, 0),
  }));
}
