import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { lineCount, TelemetryBatcher, TypingWindows, type TelemetryInput } from "../../../web/src/candidate/telemetry";
import type { TelemetryEvent } from "../../../web/src/candidate/telemetry-batches";

class Failure extends Error {
  constructor(
    readonly status: number,
    readonly issues: { loc: (string | number)[]; msg: string; type: string }[] = [],
  ) {
    super(`failed with ${status}`);
  }
}

function setUp(options: { online?: () => boolean } = {}) {
  const sent: TelemetryEvent[][] = [];
  const answers: (() => Promise<void>)[] = [];
  let id = 0;
  const batcher = new TelemetryBatcher({
    send: (events) => {
      sent.push(events);
      return (answers.shift() ?? (() => Promise.resolve()))();
    },
    newId: () => `e${++id}`,
    online: options.online,
    backoff: (n) => 5000 * n,
  });
  return { batcher, sent, answers };
}

const opened = (file_path: string): TelemetryInput => ({ kind: "file_opened", file_path });

describe("TelemetryBatcher (metadata events, batched to POST /siem/events/batch)", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-11-20T10:00:00.000Z"));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("sends every 10 s with an id, the time and a sequence number on each event", async () => {
    const { batcher, sent } = setUp();
    batcher.record(opened("src/a.js"));
    await vi.advanceTimersByTimeAsync(4000);
    batcher.record({ kind: "run_clicked", run_id: "run_1" });
    await vi.advanceTimersByTimeAsync(5999);
    expect(sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent).toEqual([
      [
        { kind: "file_opened", file_path: "src/a.js", event_id: "e1", occurred_at: "2026-11-20T10:00:00.000Z", seq: 1 },
        { kind: "run_clicked", run_id: "run_1", event_id: "e2", occurred_at: "2026-11-20T10:00:04.000Z", seq: 2 },
      ],
    ]);
    expect(batcher.buffered).toBe(0);
  });

  it("sends at once at 20 events, but never two batches within 3 s", async () => {
    const { batcher, sent } = setUp();
    for (let i = 0; i < 20; i++) batcher.record(opened(`f${i}`));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.map((b) => b.length)).toEqual([20]);
    for (let i = 0; i < 20; i++) batcher.record(opened(`g${i}`));
    await vi.advanceTimersByTimeAsync(2999);
    expect(sent.length).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent.map((b) => b.length)).toEqual([20, 20]);
  });

  it("keeps the batch on a failure that may pass and sends it again with backoff; the event ids stay the same", async () => {
    const { batcher, sent, answers } = setUp();
    answers.push(() => Promise.reject(new Failure(0)), () => Promise.reject(new Failure(429)));
    batcher.record(opened("a"));
    await vi.advanceTimersByTimeAsync(10_000);
    batcher.record(opened("b"));
    await vi.advanceTimersByTimeAsync(5000);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(sent.map((b) => b.map((e) => e.event_id))).toEqual([["e1"], ["e1", "e2"], ["e1", "e2"]]);
    expect(batcher.buffered).toBe(0);
  });

  it("drops a batch the API refused for good (409 after the submission, a 422 naming no event)", async () => {
    const { batcher, sent, answers } = setUp();
    answers.push(() => Promise.reject(new Failure(409)), () => Promise.reject(new Failure(422, [{ loc: ["body", "attempt_id"], msg: "Required", type: "invalid_type" }])));
    batcher.record(opened("a"));
    await batcher.flush();
    expect(batcher.buffered).toBe(0);
    batcher.record(opened("b"));
    await batcher.flush();
    expect(batcher.buffered).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sent.length).toBe(2);
  });

  it("a 202 takes the whole batch off the buffer, also when it lists refused events (#38)", async () => {
    const { batcher, sent } = setUp();
    batcher.record(opened("gone.js"));
    batcher.record({ kind: "focus_lost" });
    await batcher.flush();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sent.length).toBe(1);
    expect(batcher.buffered).toBe(0);
  });

  it("on a 422 naming events drops those and sends the rest again after the least gap (#38)", async () => {
    const { batcher, sent, answers } = setUp();
    answers.push(() => Promise.reject(new Failure(422, [{ loc: ["body", "events", 1, "size_bytes"], msg: "Too big", type: "too_big" }])));
    batcher.record(opened("a"));
    batcher.record({ kind: "copy", size_bytes: 1, line_count: 1 });
    batcher.record({ kind: "focus_lost" });
    await batcher.flush();
    expect(batcher.buffered).toBe(2);
    await vi.advanceTimersByTimeAsync(2999);
    expect(sent.length).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent.map((b) => b.map((e) => e.event_id))).toEqual([
      ["e1", "e2", "e3"],
      ["e1", "e3"],
    ]);
    expect(batcher.buffered).toBe(0);
  });

  it("on a 413 sends the batch in halves, losing nothing", async () => {
    const { batcher, sent, answers } = setUp();
    answers.push(() => Promise.reject(new Failure(413)));
    for (let i = 0; i < 6; i++) batcher.record(opened(`f${i}`));
    await batcher.flush();
    expect(batcher.buffered).toBe(6);
    await vi.advanceTimersByTimeAsync(3000);
    expect(sent.map((b) => b.length)).toEqual([6, 3]);
    // What is left is below a full batch: it waits for the next interval, as any events do.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(sent.map((b) => b.length)).toEqual([6, 3, 3]);
    expect(batcher.buffered).toBe(0);
  });

  it("forgetFile() keeps the counts of buffered events about a deleted file without its path, and drops its file_opened (#38)", async () => {
    const { batcher, sent } = setUp();
    batcher.record(opened("src/scratch.js"));
    batcher.record({ kind: "typing_window", window_ms: 4000, keystrokes: 30, file_path: "src/scratch.js" });
    batcher.record({ kind: "paste", size_bytes: 3, line_count: 1, file_path: "src/kept.js" });
    batcher.forgetFile("src/scratch.js");
    await batcher.flush();
    expect(sent[0]!.map(({ event_id, kind, ...rest }) => [event_id, kind, "file_path" in rest ? rest.file_path : null])).toEqual([
      ["e2", "typing_window", null],
      ["e3", "paste", "src/kept.js"],
    ]);
  });

  it("an event forgotten while its batch is on the way is not sent again", async () => {
    const { batcher, sent, answers } = setUp();
    let answer!: () => void;
    answers.push(() => new Promise<void>((resolve) => (answer = resolve)));
    batcher.record({ kind: "copy", size_bytes: 1, line_count: 1, file_path: "src/scratch.js" });
    const flushed = batcher.flush();
    batcher.forgetFile("src/scratch.js");
    answer();
    await flushed;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sent.length).toBe(1);
    expect(batcher.buffered).toBe(0);
  });

  it("stops on a 401 (a revoked IDE session token)", async () => {
    const { batcher, sent, answers } = setUp();
    answers.push(() => Promise.reject(new Failure(401)));
    batcher.record(opened("a"));
    await batcher.flush();
    batcher.record(opened("b"));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sent.length).toBe(1);
    expect(batcher.buffered).toBe(0);
  });

  it("buffers while offline, keeping the newest events, and sends them when the connection returns", async () => {
    let online = false;
    const sent: TelemetryEvent[][] = [];
    let id = 0;
    const batcher = new TelemetryBatcher({
      send: async (events) => void sent.push(events),
      newId: () => `e${++id}`,
      online: () => online,
      maxBuffered: 3,
    });
    for (let i = 0; i < 5; i++) batcher.record(opened(`f${i}`));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sent).toEqual([]);
    online = true;
    batcher.setOnline(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.map((b) => b.map((e) => e.event_id))).toEqual([["e3", "e4", "e5"]]);
  });

  it("flush() sends what is buffered now", async () => {
    const { batcher, sent } = setUp();
    batcher.record({ kind: "submit_clicked" });
    await batcher.flush();
    expect(sent.length).toBe(1);
  });
});

describe("TypingWindows (typing as counts per file and window)", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-11-20T10:00:00.000Z"));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("counts keys over 5 s and emits one event dated at the window's start", async () => {
    const events: [TelemetryInput, number][] = [];
    const windows = new TypingWindows((input, at) => events.push([input, at]));
    const start = Date.now();
    windows.key("src/a.js", "insert");
    await vi.advanceTimersByTimeAsync(1000);
    windows.key("src/a.js", "insert");
    windows.key("src/a.js", "delete");
    await vi.advanceTimersByTimeAsync(4000);
    expect(events).toEqual([[{ kind: "typing_window", window_ms: 5000, keystrokes: 2, deletions: 1, file_path: "src/a.js" }, start]]);
  });

  it("ends the window when another file is typed in, and leaves out a path the API does not know", async () => {
    const events: TelemetryInput[] = [];
    const windows = new TypingWindows((input) => events.push(input));
    windows.key("src/a.js", "insert");
    await vi.advanceTimersByTimeAsync(2000);
    windows.key(undefined, "insert");
    windows.close();
    expect(events).toEqual([
      { kind: "typing_window", window_ms: 2000, keystrokes: 1, deletions: 0, file_path: "src/a.js" },
      { kind: "typing_window", window_ms: 1, keystrokes: 1, deletions: 0 },
    ]);
  });

  it("lineCount counts line breaks plus one", () => {
    expect(lineCount("")).toBe(1);
    expect(lineCount("a\nb\n")).toBe(3);
  });
});
