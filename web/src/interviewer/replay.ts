// The evaluation replay (docs/api.md, "Evaluation"): the timeline's events in time order, what
// the attempt looked like at a position, which saved contents a save's diff needs, and a line
// diff between two versions of a file. Pure: the replay page fetches, this decides.
import type { components } from "../../../client/src/index";
import { runOutcomeText } from "../lib/run-words";
import { formatBytes, formatDateTime, plural } from "./format";

export type TimelineEvent = components["schemas"]["TimelineEvent"];
export type SaveEvent = Extract<TimelineEvent, { type: "save" }>;
export type RunEvent = Extract<TimelineEvent, { type: "run" }>;

// The API's order for events at one instant; sorting keeps it.
const TYPE_ORDER: TimelineEvent["type"][] = [
  "created",
  "started",
  "save",
  "run",
  "telemetry",
  "ai_chat_message",
  "submitted",
  "scoring_started",
  "scoring_finished",
];

const chatSeq = (e: TimelineEvent) => (e.type === "ai_chat_message" ? e.message.seq : 0);

/**
 * The events oldest first. The API sends them so, but telemetry carries the client's clock and
 * pages read at different times can interleave; a stable sort by time, then the API's order of
 * types at one instant, then chat order, makes one sequence whatever arrived how. Nothing comes
 * before the attempt's creation: a telemetry event stands at the start of its minute (and on the
 * candidate's clock), which can be earlier, so it counts as happening at the creation.
 */
export function orderEvents(events: readonly TimelineEvent[]): TimelineEvent[] {
  const created = events.find((e) => e.type === "created");
  const start = created ? Date.parse(created.at) : Number.NaN;
  return events
    .map((event, i) => ({ event, i, t: Number.isNaN(start) ? Date.parse(event.at) : Math.max(start, Date.parse(event.at)) }))
    .sort(
      (a, b) =>
        (a.t - b.t || 0) ||
        TYPE_ORDER.indexOf(a.event.type) - TYPE_ORDER.indexOf(b.event.type) ||
        chatSeq(a.event) - chatSeq(b.event) ||
        a.i - b.i,
    )
    .map((x) => x.event);
}

export interface SavedFile {
  path: string;
  /** The save that last changed it. */
  save: number;
  op: "upsert" | "delete";
}

/** The attempt as of the event at `index` (that event included). */
export interface ReplayState {
  event: TimelineEvent;
  /** Milliseconds since the first event. */
  offsetMs: number;
  saves: number;
  runs: number;
  chatMessages: number;
  lastRun: RunEvent | null;
  /** Every file saved so far, by path, with the save that last changed it. */
  files: SavedFile[];
  submitted: boolean;
}

/** The state at `index` of ordered events, or null when there is no such event. */
export function stateAt(events: readonly TimelineEvent[], index: number): ReplayState | null {
  const event = events[index];
  if (!event) return null;
  const first = Date.parse(events[0]!.at);
  const files = new Map<string, SavedFile>();
  let saves = 0;
  let runs = 0;
  let chatMessages = 0;
  let lastRun: RunEvent | null = null;
  let submitted = false;
  for (const e of events.slice(0, index + 1)) {
    if (e.type === "save") {
      saves += 1;
      for (const f of e.files) files.set(f.path, { path: f.path, save: e.save, op: f.op });
    } else if (e.type === "run") {
      runs += 1;
      lastRun = e;
    } else if (e.type === "ai_chat_message") chatMessages += 1;
    else if (e.type === "submitted") submitted = true;
  }
  const offset = Date.parse(event.at) - first;
  return {
    event,
    offsetMs: Number.isNaN(offset) ? 0 : Math.max(0, offset),
    saves,
    runs,
    chatMessages,
    lastRun,
    files: [...files.values()].sort((a, b) => a.path.localeCompare(b.path)),
    submitted,
  };
}

/** One file of a save and what its diff compares: its content as of this save and as of the save before that changed it. */
export interface FileChange {
  path: string;
  op: "upsert" | "delete";
  size: number;
  save: number;
  /** The earlier save that last changed the path; null when this is its first save (the task's version is not in the history). */
  previousSave: number | null;
}

/** The files the save at `index` changed, each with the save its diff starts from; [] when that event is not a save. */
export function changesAt(events: readonly TimelineEvent[], index: number): FileChange[] {
  const event = events[index];
  if (!event || event.type !== "save") return [];
  return event.files.map((f) => ({ path: f.path, op: f.op, size: f.size, save: event.save, previousSave: previousSaveOf(events, index, f.path) }));
}

/** The last save before `index` that changed `path`, or null. */
export function previousSaveOf(events: readonly TimelineEvent[], index: number, path: string): number | null {
  for (let i = Math.min(index, events.length) - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === "save" && e.files.some((f) => f.path === path)) return e.save;
  }
  return null;
}

/** The change to show: the one at `wanted` when the save has it, else its first. */
export function pickChange(changes: readonly FileChange[], wanted: string | null): FileChange | null {
  return changes.find((c) => c.path === wanted) ?? changes[0] ?? null;
}

/** Positions of the events of one type, to step from save to save (or run to run). */
export function positionsOf(events: readonly TimelineEvent[], type: TimelineEvent["type"]): number[] {
  return events.flatMap((e, i) => (e.type === type ? [i] : []));
}

/** The next (direction 1) or previous (-1) of `positions` from `index`, or null at the end. */
export function stepTo(positions: readonly number[], index: number, direction: 1 | -1): number | null {
  if (direction === 1) return positions.find((p) => p > index) ?? null;
  return [...positions].reverse().find((p) => p < index) ?? null;
}

// ---------------------------------------------------------------- what an event says

/** A one-line title and the details of an event, in words. */
export function describeEvent(event: TimelineEvent): { title: string; details: string[] } {
  switch (event.type) {
    case "created":
      return { title: "Attempt created", details: [] };
    case "started":
      return { title: "Started", details: event.deadline_at ? [`Deadline: ${formatDateTime(event.deadline_at)}`] : ["No time limit"] };
    case "save":
      return {
        title: `Save ${event.save}: ${plural(event.files.length, "file")}, ${formatBytes(event.bytes)}`,
        details: event.files.map((f) => (f.op === "delete" ? `deleted ${f.path}` : `${f.path} (${formatBytes(f.size)})`)),
      };
    case "run": {
      const c = event.counts;
      const details = c ? [`${c.passed} passed, ${c.failed} failed, ${c.errored} errored, ${c.skipped} skipped of ${c.total}`] : [];
      if (event.reason) details.push(event.reason);
      if (event.finished_at) details.push(`Finished ${formatDateTime(event.finished_at)}`);
      return { title: `Test run: ${runOutcomeText(event.status, c)}`, details };
    }
    case "telemetry":
      return {
        title: `IDE activity: ${plural(event.total, "event")} in the minute`,
        details: Object.entries(event.counts)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([kind, n]) => `${kind.replace(/_/g, " ")}: ${n}`),
      };
    case "ai_chat_message": {
      const m = event.message;
      const who = m.role === "user" ? "The candidate asked the AI assistant" : "The AI assistant answered";
      const details = m.files.map((f) => `shared ${f.path} (${formatBytes(f.bytes)})`);
      if (m.status === "error" && m.error) details.push(`The answer failed: ${m.error}`);
      return { title: who, details };
    }
    case "submitted":
      return {
        title: event.auto_submitted ? "Submitted by the deadline" : "Submitted by the candidate",
        details: event.explanation ? [] : ["No explanation written"],
      };
    case "scoring_started":
      return { title: "Scoring started", details: [] };
    case "scoring_finished":
      return event.status === "scored"
        ? { title: `Scored: ${event.overall_score ?? "—"}`, details: [] }
        : { title: "Scoring failed", details: event.reason ? [event.reason] : [] };
  }
}

/** Time since the start as "+m:ss" or "+h:mm:ss". */
export function formatOffset(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h > 0 ? `+${h}:${String(m).padStart(2, "0")}:${s}` : `+${m}:${s}`;
}

// ---------------------------------------------------------------- contents and the line diff

/** A saved file's `content_b64` as text (UTF-8; invalid bytes become U+FFFD). */
export function decodeContent(b64: string): string {
  const binary = atob(b64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}

export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

export interface DiffLine {
  kind: "same" | "add" | "del";
  text: string;
  /** Its number in the old version; null for an added line. */
  oldNo: number | null;
  /** Its number in the new version; null for a removed line. */
  newNo: number | null;
}

/** Beyond this many cells of the LCS table a change is shown as a rewrite, so a huge file cannot stall the page. */
const MAX_CELLS = 4_000_000;

/** The lines of `after` against `before` by a longest common subsequence: kept, removed and added lines in order. */
export function lineDiff(before: string, after: string, maxCells = MAX_CELLS): DiffLine[] {
  const a = splitLines(before);
  const b = splitLines(after);
  // Edits are local: the common head and tail need no table.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const am = a.slice(head, a.length - tail);
  const bm = b.slice(head, b.length - tail);

  const out: DiffLine[] = [];
  for (let i = 0; i < head; i++) out.push({ kind: "same", text: a[i]!, oldNo: i + 1, newNo: i + 1 });
  for (const step of middle(am, bm, maxCells)) {
    if (step.kind === "same") out.push({ kind: "same", text: am[step.i]!, oldNo: head + step.i + 1, newNo: head + step.j + 1 });
    else if (step.kind === "del") out.push({ kind: "del", text: am[step.i]!, oldNo: head + step.i + 1, newNo: null });
    else out.push({ kind: "add", text: bm[step.j]!, oldNo: null, newNo: head + step.j + 1 });
  }
  for (let k = 0; k < tail; k++) {
    const i = a.length - tail + k;
    const j = b.length - tail + k;
    out.push({ kind: "same", text: a[i]!, oldNo: i + 1, newNo: j + 1 });
  }
  return out;
}

type Step = { kind: "same" | "del" | "add"; i: number; j: number };

function middle(a: string[], b: string[], maxCells: number): Step[] {
  if (a.length * b.length > maxCells) {
    return [...a.map((_, i) => ({ kind: "del" as const, i, j: 0 })), ...b.map((_, j) => ({ kind: "add" as const, i: 0, j }))];
  }
  const w = b.length + 1;
  const table = new Uint32Array((a.length + 1) * w);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i * w + j] = a[i] === b[j] ? table[(i + 1) * w + j + 1]! + 1 : Math.max(table[(i + 1) * w + j]!, table[i * w + j + 1]!);
    }
  }
  const steps: Step[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) steps.push({ kind: "same", i: i++, j: j++ });
    else if (table[(i + 1) * w + j]! >= table[i * w + j + 1]!) steps.push({ kind: "del", i: i++, j });
    else steps.push({ kind: "add", i, j: j++ });
  }
  while (i < a.length) steps.push({ kind: "del", i: i++, j });
  while (j < b.length) steps.push({ kind: "add", i, j: j++ });
  return steps;
}

export type DiffRow = DiffLine | { kind: "skip"; count: number };

/** The diff with runs of unchanged lines farther than `context` from a change folded into one "skip" row. */
export function withContext(lines: readonly DiffLine[], context = 3): DiffRow[] {
  const near = new Array<boolean>(lines.length).fill(false);
  lines.forEach((line, i) => {
    if (line.kind === "same") return;
    for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) near[k] = true;
  });
  const rows: DiffRow[] = [];
  let skipped = 0;
  lines.forEach((line, i) => {
    if (near[i]) {
      if (skipped > 0) rows.push({ kind: "skip", count: skipped });
      skipped = 0;
      rows.push(line);
    } else skipped += 1;
  });
  if (skipped > 0) rows.push({ kind: "skip", count: skipped });
  return rows;
}

export function diffStats(lines: readonly DiffLine[]): { added: number; removed: number } {
  return { added: lines.filter((l) => l.kind === "add").length, removed: lines.filter((l) => l.kind === "del").length };
}
