import { describe, expect, it } from "vitest";
import {
  changesAt,
  decodeContent,
  describeEvent,
  diffStats,
  formatOffset,
  lineDiff,
  orderEvents,
  pickChange,
  positionsOf,
  previousSaveOf,
  stateAt,
  stepTo,
  withContext,
  type TimelineEvent,
} from "../../../web/src/interviewer/replay";

const save = (n: number, at: string, files: { path: string; op?: "upsert" | "delete"; size?: number }[]): TimelineEvent => ({
  type: "save",
  at,
  save: n,
  bytes: files.reduce((sum, f) => sum + (f.size ?? 10), 0),
  files: files.map((f) => ({ path: f.path, op: f.op ?? "upsert", size: f.size ?? 10 })),
});

const run = (at: string, status: "SUCCEEDED" | "FAILED" = "SUCCEEDED"): TimelineEvent => ({
  type: "run",
  at,
  run_id: `run_${at}`,
  status,
  finished_at: null,
  reason: null,
  counts: { total: 4, passed: 3, failed: 1, errored: 0, skipped: 0 },
});

const chat = (at: string, seq: number): TimelineEvent => ({
  type: "ai_chat_message",
  at,
  message: {
    attempt_id: "att_1",
    content: seq % 2 === 0 ? "why?" : "because",
    created_at: at,
    error: null,
    files: [],
    message_id: `chat_${seq}`,
    model: null,
    provider: null,
    reply_to: null,
    role: seq % 2 === 0 ? "user" : "assistant",
    seq,
    status: "complete",
    timing: null,
    usage: null,
  },
});

const T0 = "2026-11-20T10:00:00.000Z";
const T1 = "2026-11-20T10:01:00.000Z";
const T2 = "2026-11-20T10:02:30.000Z";
const T3 = "2026-11-20T10:05:00.000Z";

const timeline: TimelineEvent[] = [
  { type: "created", at: T0 },
  { type: "started", at: T0, deadline_at: null },
  save(1, T1, [{ path: "src/a.js" }, { path: "src/b.js" }]),
  run(T2),
  save(2, T2, [{ path: "src/a.js", size: 20 }]),
  save(3, T3, [{ path: "src/b.js", op: "delete", size: 0 }, { path: "src/c.js" }]),
  { type: "submitted", at: T3, auto_submitted: false, explanation: "Fixed the cut" },
];

describe("orderEvents", () => {
  it("orders by time, then the API's order of types at one instant, then chat order", () => {
    const shuffled = [timeline[6]!, chat(T1, 3), timeline[3]!, timeline[1]!, chat(T1, 2), timeline[0]!, timeline[4]!, timeline[2]!, timeline[5]!];
    const ordered = orderEvents(shuffled);
    expect(ordered.map((e) => e.type)).toEqual([
      "created",
      "started",
      "save",
      "ai_chat_message",
      "ai_chat_message",
      "save",
      "run",
      "save",
      "submitted",
    ]);
    expect(ordered.filter((e) => e.type === "ai_chat_message").map((e) => (e.type === "ai_chat_message" ? e.message.seq : 0))).toEqual([2, 3]);
  });

  it("puts the attempt's creation before IDE activity counted from the start of its minute", () => {
    const created: TimelineEvent = { type: "created", at: "2026-11-20T10:00:40.000Z" };
    const started: TimelineEvent = { type: "started", at: "2026-11-20T10:00:45.000Z", deadline_at: null };
    const activity: TimelineEvent = { type: "telemetry", at: T0, total: 2, counts: { paste: 2 } };
    const later: TimelineEvent = { type: "telemetry", at: T1, total: 1, counts: { paste: 1 } };
    expect(orderEvents([activity, later, started, created])).toEqual([created, activity, started, later]);
    expect(stateAt(orderEvents([activity, created]), 1)?.offsetMs).toBe(0);
  });

  it("keeps the given order of events that compare equal, and does not change its input", () => {
    const a = save(1, T1, [{ path: "x" }]);
    const b = save(2, T1, [{ path: "y" }]);
    const input = [a, b];
    expect(orderEvents(input)).toEqual([a, b]);
    expect(input).toEqual([a, b]);
  });
});

describe("stateAt", () => {
  it("counts what happened up to and including the position, with each file's last save", () => {
    const state = stateAt(timeline, 4)!;
    expect(state.event).toBe(timeline[4]);
    expect(state.offsetMs).toBe(150_000);
    expect(state.saves).toBe(2);
    expect(state.runs).toBe(1);
    expect(state.lastRun?.type).toBe("run");
    expect(state.submitted).toBe(false);
    expect(state.files).toEqual([
      { path: "src/a.js", save: 2, op: "upsert" },
      { path: "src/b.js", save: 1, op: "upsert" },
    ]);
  });

  it("shows deletions and the submission at the end", () => {
    const state = stateAt(timeline, 6)!;
    expect(state.files.find((f) => f.path === "src/b.js")).toEqual({ path: "src/b.js", save: 3, op: "delete" });
    expect(state.submitted).toBe(true);
  });

  it("is null outside the events", () => {
    expect(stateAt(timeline, 7)).toBeNull();
    expect(stateAt([], 0)).toBeNull();
  });
});

describe("which contents a save's diff needs", () => {
  it("pairs each changed file with the earlier save that last changed it", () => {
    expect(changesAt(timeline, 4)).toEqual([{ path: "src/a.js", op: "upsert", size: 20, save: 2, previousSave: 1 }]);
    expect(changesAt(timeline, 5)).toEqual([
      { path: "src/b.js", op: "delete", size: 0, save: 3, previousSave: 1 },
      { path: "src/c.js", op: "upsert", size: 10, save: 3, previousSave: null },
    ]);
  });

  it("has no changes for other events", () => {
    expect(changesAt(timeline, 3)).toEqual([]);
    expect(changesAt(timeline, 99)).toEqual([]);
  });

  it("looks only before the position", () => {
    expect(previousSaveOf(timeline, 2, "src/a.js")).toBeNull();
    expect(previousSaveOf(timeline, 6, "src/a.js")).toBe(2);
  });

  it("picks the wanted file when the save has it, else the first", () => {
    const changes = changesAt(timeline, 5);
    expect(pickChange(changes, "src/c.js")?.path).toBe("src/c.js");
    expect(pickChange(changes, "src/a.js")?.path).toBe("src/b.js");
    expect(pickChange([], "src/a.js")).toBeNull();
  });
});

describe("stepping", () => {
  it("finds the next and previous event of a type", () => {
    const saves = positionsOf(timeline, "save");
    expect(saves).toEqual([2, 4, 5]);
    expect(stepTo(saves, 0, 1)).toBe(2);
    expect(stepTo(saves, 4, 1)).toBe(5);
    expect(stepTo(saves, 5, 1)).toBeNull();
    expect(stepTo(saves, 5, -1)).toBe(4);
    expect(stepTo(saves, 2, -1)).toBeNull();
  });
});

describe("lineDiff", () => {
  it("keeps common lines and marks removed and added ones with their numbers", () => {
    const diff = lineDiff("a\nb\nc\nd\n", "a\nB\nc\nd\ne\n");
    expect(diff).toEqual([
      { kind: "same", text: "a", oldNo: 1, newNo: 1 },
      { kind: "del", text: "b", oldNo: 2, newNo: null },
      { kind: "add", text: "B", oldNo: null, newNo: 2 },
      { kind: "same", text: "c", oldNo: 3, newNo: 3 },
      { kind: "same", text: "d", oldNo: 4, newNo: 4 },
      { kind: "add", text: "e", oldNo: null, newNo: 5 },
    ]);
    expect(diffStats(diff)).toEqual({ added: 2, removed: 1 });
  });

  it("finds the longest common subsequence inside the changed middle", () => {
    const diff = lineDiff("x\n1\n2\n3\ny", "x\n2\n3\n4\ny");
    expect(diff.map((l) => `${l.kind}:${l.text}`)).toEqual(["same:x", "del:1", "same:2", "same:3", "add:4", "same:y"]);
    expect(diff.at(-1)).toEqual({ kind: "same", text: "y", oldNo: 5, newNo: 5 });
  });

  it("treats a new file as all added and a deleted one as all removed, CRLF as LF", () => {
    expect(lineDiff("", "one\r\ntwo\r\n").map((l) => l.kind)).toEqual(["add", "add"]);
    expect(lineDiff("one\ntwo", "").map((l) => l.kind)).toEqual(["del", "del"]);
    expect(lineDiff("same\n", "same\n")).toEqual([{ kind: "same", text: "same", oldNo: 1, newNo: 1 }]);
  });

  it("shows a change too large for the table as a rewrite", () => {
    const diff = lineDiff("a\nb\nc", "d\ne\nf", 4);
    expect(diff.map((l) => l.kind)).toEqual(["del", "del", "del", "add", "add", "add"]);
    expect(diff.map((l) => l.oldNo ?? l.newNo)).toEqual([1, 2, 3, 1, 2, 3]);
  });
});

describe("withContext", () => {
  it("folds unchanged runs away from changes", () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n");
    const after = before.replace("line 10", "line ten");
    const rows = withContext(lineDiff(before, after), 2);
    expect(rows.map((r) => (r.kind === "skip" ? `skip ${r.count}` : `${r.kind} ${r.text}`))).toEqual([
      "skip 7",
      "same line 8",
      "same line 9",
      "del line 10",
      "add line ten",
      "same line 11",
      "same line 12",
      "skip 8",
    ]);
  });

  it("folds everything when nothing changed", () => {
    expect(withContext(lineDiff("a\nb", "a\nb"))).toEqual([{ kind: "skip", count: 2 }]);
  });
});

describe("words and figures", () => {
  it("describes each kind of event", () => {
    expect(describeEvent(timeline[2]!)).toEqual({ title: "Save 1: 2 files, 20 B", details: ["src/a.js (10 B)", "src/b.js (10 B)"] });
    expect(describeEvent(timeline[5]!).details[0]).toBe("deleted src/b.js");
    expect(describeEvent(timeline[3]!)).toEqual({ title: "Test run: 3 passed, 1 failed", details: ["3 passed, 1 failed, 0 errored, 0 skipped of 4"] });
    expect(describeEvent({ ...timeline[3]!, status: "TIMED_OUT" } as TimelineEvent).title).toBe("Test run: timed out");
    expect(describeEvent(chat(T1, 2)).title).toBe("The candidate asked the AI assistant");
    expect(describeEvent({ type: "telemetry", at: T1, total: 3, counts: { paste: 1, focus_lost: 2 } })).toEqual({
      title: "IDE activity: 3 events in the minute",
      details: ["focus lost: 2", "paste: 1"],
    });
    expect(describeEvent({ type: "submitted", at: T3, auto_submitted: true, explanation: null })).toEqual({
      title: "Submitted by the deadline",
      details: ["No explanation written"],
    });
    // The explanation itself is shown whole beside the event, not as a detail line.
    expect(describeEvent({ type: "submitted", at: T3, auto_submitted: false, explanation: "Fixed the cut" })).toEqual({ title: "Submitted by the candidate", details: [] });
    expect(describeEvent({ type: "scoring_finished", at: T3, score_id: "s", status: "failed", overall_score: null, reason: "runner down" })).toEqual({
      title: "Scoring failed",
      details: ["runner down"],
    });
  });

  it("writes offsets from the start", () => {
    expect(formatOffset(0)).toBe("+0:00");
    expect(formatOffset(150_500)).toBe("+2:30");
    expect(formatOffset(3_725_000)).toBe("+1:02:05");
  });

  it("decodes saved contents as UTF-8", () => {
    expect(decodeContent(Buffer.from("héllo → ✓\n").toString("base64"))).toBe("héllo → ✓\n");
  });
});
