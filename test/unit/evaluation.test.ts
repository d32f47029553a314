import { describe, expect, it } from "vitest";
import {
  boundFor,
  compareCursors,
  contentCutoff,
  cursorOf,
  decodeCursor,
  encodeCursor,
  lifecycleEvents,
  mergeTimeline,
  saveEvents,
  numberTie,
  scoringEvents,
  telemetryEvents,
  type TimelineCursor,
  type TimelineEvent,
} from "../../src/domain/evaluation";

const save = (n: number, at: string): TimelineEvent => ({ type: "save", at, save: n, files: [{ path: "a.js", op: "upsert", size: 3 }], bytes: 3 });
const chat = (seq: number, at: string): TimelineEvent => ({
  type: "ai_chat_message",
  at,
  message: {
    message_id: `chat_${seq}`,
    attempt_id: "att_1",
    seq,
    role: seq % 2 === 0 ? "user" : "assistant",
    content: "hi",
    status: "complete",
    error: null,
    files: [],
    reply_to: null,
    provider: null,
    model: null,
    usage: null,
    timing: null,
    created_at: at,
  },
});
const run = (id: string, at: string): TimelineEvent => ({ type: "run", at, run_id: id, status: "SUCCEEDED", finished_at: null, reason: null, counts: null });

describe("save history bound", () => {
  const oldestFirst = [
    { last_seq: 3, size: 10 },
    { last_seq: 7, size: 20 },
    { last_seq: 9, size: 30 },
  ];

  it("drops nothing within the budget", () => {
    expect(contentCutoff(oldestFirst, 60, 60)).toBeNull();
    expect(contentCutoff([], 0, 0)).toBeNull();
  });

  it("drops the least recently saved contents until the rest fits", () => {
    expect(contentCutoff(oldestFirst, 60, 50)).toBe(3);
    expect(contentCutoff(oldestFirst, 60, 49)).toBe(7);
    expect(contentCutoff(oldestFirst, 60, 30)).toBe(7);
    expect(contentCutoff(oldestFirst, 60, 29)).toBe(9);
  });

  it("stops reading once enough is dropped", () => {
    let read = 0;
    function* contents() {
      for (const c of oldestFirst) {
        read += 1;
        yield c;
      }
    }
    contentCutoff(contents(), 60, 55);
    expect(read).toBe(1);
  });
});

describe("timeline cursors", () => {
  it("round-trip as opaque URL-safe text", () => {
    const cursor: TimelineCursor = { at: "2026-01-02T03:04:05.678Z", type: "run", id: "run_abc?/+" };
    const text = encodeCursor(cursor);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(text)).toEqual(cursor);
  });

  it.each([
    ["not base64", "!!!"],
    ["not JSON", btoa("nope").replaceAll("=", "")],
    ["not a triple", btoa(JSON.stringify({ at: "x" })).replaceAll("=", "")],
    ["an unknown type", btoa(JSON.stringify(["2026-01-01T00:00:00.000Z", "lunch", ""])).replaceAll("=", "")],
    ["a number inside", btoa(JSON.stringify(["2026-01-01T00:00:00.000Z", "run", 5])).replaceAll("=", "")],
    ["an overlong id", encodeCursor({ at: "2026-01-01T00:00:00.000Z", type: "run", id: "x".repeat(200) })],
    ["a save that is not a number", encodeCursor({ at: "2026-01-01T00:00:00.000Z", type: "save", id: "1; DROP" })],
    ["a chat message that is not a number", encodeCursor({ at: "2026-01-01T00:00:00.000Z", type: "ai_chat_message", id: "x" })],
    ["empty", ""],
  ])("refuse %s", (_what, text) => expect(decodeCursor(text)).toBeUndefined());

  it("order by time, then the order things happen in, then id; saves by number", () => {
    const at = "2026-01-01T00:00:00.000Z";
    expect(compareCursors(cursorOf(run("run_z", at)), cursorOf(save(1, "2026-01-01T00:00:00.001Z")))).toBeLessThan(0);
    expect(compareCursors(cursorOf(save(1, at)), cursorOf(run("run_a", at)))).toBeLessThan(0);
    expect(compareCursors(cursorOf(save(9, at)), cursorOf(save(10, at)))).toBeLessThan(0);
    expect(compareCursors(cursorOf({ type: "submitted", at, auto_submitted: false, explanation: null }), cursorOf({ type: "scoring_started", at, score_id: "s" }))).toBeLessThan(0);
    expect(compareCursors(cursorOf(run("run_a", at)), cursorOf(run("run_a", at)))).toBe(0);
  });

  it("put AI chat messages after the telemetry of their instant, before the submission, in seq order", () => {
    const at = "2026-01-01T00:00:00.000Z";
    const telemetry: TimelineEvent = { type: "telemetry", at, counts: { paste: 1 }, total: 1 };
    const submitted: TimelineEvent = { type: "submitted", at, auto_submitted: false, explanation: null };
    const order = mergeTimeline([[submitted, chat(11, at), chat(10, at), telemetry, chat(9, at)]], undefined, 10).items;
    expect(order.map((e) => (e.type === "ai_chat_message" ? e.message.seq : e.type))).toEqual(["telemetry", 9, 10, 11, "submitted"]);
    const cursor = cursorOf(chat(10, at));
    expect(decodeCursor(encodeCursor(cursor))).toEqual({ at, type: "ai_chat_message", id: "000000000010" });
    expect(numberTie(boundFor(cursor, "ai_chat_message")!)).toBe(10);
  });

  it("tell each source what is left at the cursor's instant", () => {
    const cursor: TimelineCursor = { at: "2026-01-01T00:00:00.000Z", type: "run", id: "run_m" };
    expect(boundFor(undefined, "save")).toBeNull();
    expect(boundFor(cursor, "save")).toEqual({ at: cursor.at, tie: null });
    expect(boundFor(cursor, "run")).toEqual({ at: cursor.at, tie: "run_m" });
    expect(boundFor(cursor, "telemetry")).toEqual({ at: cursor.at, tie: "" });
    expect(numberTie({ at: cursor.at, tie: null })).toBe(Number.MAX_SAFE_INTEGER);
    expect(numberTie({ at: cursor.at, tie: "" })).toBe(0);
    expect(numberTie(boundFor({ ...cursorOf(save(42, cursor.at)) }, "save")!)).toBe(42);
  });
});

describe("merging the timeline", () => {
  const lifecycle = lifecycleEvents(
    {
      created_at: "2026-01-01T10:00:00.000Z",
      started_at: "2026-01-01T10:01:00.000Z",
      deadline_at: "2026-01-01T11:31:00.000Z",
      submitted_at: "2026-01-01T10:30:00.000Z",
      auto_submitted: true,
    },
    null,
  );
  const saves = [save(1, "2026-01-01T10:02:00.000Z"), save(2, "2026-01-01T10:05:00.000Z"), save(3, "2026-01-01T10:05:00.000Z")];
  const runs = [run("run_b", "2026-01-01T10:05:00.000Z"), run("run_a", "2026-01-01T10:06:00.000Z")];
  const telemetry = telemetryEvents([
    { minute: "2026-01-01T10:02", kind: "paste", n: 2 },
    { minute: "2026-01-01T10:05", kind: "focus_lost", n: 1 },
    { minute: "2026-01-01T10:05", kind: "paste", n: 4 },
  ]);
  const scoring = scoringEvents([
    { id: "scr_1", status: "scored", created_at: "2026-01-01T10:30:00.001Z", completed_at: "2026-01-01T10:31:00.000Z", overall_score: 70, reason: null },
  ]);
  const sources = [lifecycle, saves, runs, telemetry, scoring];

  it("puts every source's events in one order", () => {
    const { items, next_cursor } = mergeTimeline(sources, undefined, 100);
    expect(next_cursor).toBeNull();
    expect(items.map((e) => `${e.type}@${e.at.slice(11, 19)}`)).toEqual([
      "created@10:00:00",
      "started@10:01:00",
      "save@10:02:00",
      "telemetry@10:02:00",
      "save@10:05:00",
      "save@10:05:00",
      "run@10:05:00",
      "telemetry@10:05:00",
      "run@10:06:00",
      "submitted@10:30:00",
      "scoring_started@10:30:00",
      "scoring_finished@10:31:00",
    ]);
  });

  it("pages through every event exactly once", () => {
    const all = mergeTimeline(sources, undefined, 100).items;
    const seen: TimelineEvent[] = [];
    let cursor: TimelineCursor | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const page = mergeTimeline(sources, cursor, 5);
      seen.push(...page.items);
      if (!page.next_cursor) break;
      cursor = decodeCursor(page.next_cursor);
    }
    expect(seen).toEqual(all);
  });

  it("ends with no cursor when the last page is exactly full", () => {
    const page = mergeTimeline([saves], undefined, 3);
    expect(page.items).toHaveLength(3);
    expect(page.next_cursor).toBeNull();
  });
});

describe("timeline events", () => {
  it("counts telemetry per kind and minute, at the minute's start", () => {
    expect(
      telemetryEvents([
        { minute: "2026-01-01T10:02", kind: "paste", n: 2 },
        { minute: "2026-01-01T10:02", kind: "copy", n: 1 },
        { minute: "2026-01-01T10:04", kind: "paste", n: 5 },
      ]),
    ).toEqual([
      { type: "telemetry", at: "2026-01-01T10:02:00.000Z", counts: { paste: 2, copy: 1 }, total: 3 },
      { type: "telemetry", at: "2026-01-01T10:04:00.000Z", counts: { paste: 5 }, total: 5 },
    ]);
  });

  it("shows a save's files and bytes", () => {
    const [event] = saveEvents([
      { save: 4, at: "t", files: [{ path: "a", op: "upsert", size: 10 }, { path: "b", op: "delete", size: 0 }, { path: "c", op: "upsert", size: 5 }] },
    ]);
    expect(event).toMatchObject({ type: "save", save: 4, bytes: 15 });
  });

  it("has only what happened of the lifecycle", () => {
    expect(lifecycleEvents({ created_at: "c", started_at: null, deadline_at: null, submitted_at: null, auto_submitted: false }, null)).toEqual([
      { type: "created", at: "c" },
    ]);
  });

  it("gives the submission the candidate's explanation", () => {
    const events = lifecycleEvents({ created_at: "c", started_at: "s", deadline_at: null, submitted_at: "t", auto_submitted: false }, "Fixed the slug cut");
    expect(events.at(-1)).toEqual({ type: "submitted", at: "t", auto_submitted: false, explanation: "Fixed the slug cut" });
  });

  it("ends a scoring only once it has ended, failed ones with their reason", () => {
    expect(
      scoringEvents([
        { id: "s1", status: "failed", created_at: "a", completed_at: "b", overall_score: null, reason: "runner down" },
        { id: "s2", status: "scoring", created_at: "c", completed_at: null, overall_score: null, reason: null },
      ]),
    ).toEqual([
      { type: "scoring_started", at: "a", score_id: "s1" },
      { type: "scoring_finished", at: "b", score_id: "s1", status: "failed", overall_score: null, reason: "runner down" },
      { type: "scoring_started", at: "c", score_id: "s2" },
    ]);
  });
});
