import { describe, expect, it } from "vitest";
import { batchVerdict, withoutFile, type TelemetryEvent } from "../../../web/src/candidate/telemetry-batches";

const at = "2026-11-20T10:00:00.000Z";
const issue = (loc: (string | number)[]) => ({ loc });

describe("batchVerdict (what a telemetry batch's answer means for its events)", () => {
  it("a 2xx is done: the service stored the batch but for the events it listed as refused", () => {
    expect(batchVerdict(3, { ok: true })).toEqual({ kind: "done" });
  });

  it("no answer, a timeout, a rate limit, a server failure: kept and retried", () => {
    for (const status of [0, 408, 429, 500, 503]) expect(batchVerdict(3, { ok: false, status, issues: [] })).toEqual({ kind: "retry" });
  });

  it("a 422 naming some events: those go, the rest is sent again", () => {
    const verdict = batchVerdict(4, {
      ok: false,
      status: 422,
      issues: [issue(["body", "events", 1, "clipboard"]), issue(["body", "events", 3, "file_path"]), issue(["body", "events", 1, "size_bytes"])],
    });
    expect(verdict).toEqual({ kind: "resend", drop: new Set([1, 3]) });
  });

  it("a 422 naming no event, or every event, is done: re-sending cannot help", () => {
    expect(batchVerdict(2, { ok: false, status: 422, issues: [issue(["body", "attempt_id"])] })).toEqual({ kind: "done" });
    expect(batchVerdict(2, { ok: false, status: 422, issues: [issue(["body", "events"])] })).toEqual({ kind: "done" });
    expect(batchVerdict(2, { ok: false, status: 422, issues: [issue(["body", "events", 0, "x"]), issue(["body", "events", 1, "y"])] })).toEqual({ kind: "done" });
    expect(batchVerdict(2, { ok: false, status: 422, issues: [issue(["body", "events", 7, "x"])] })).toEqual({ kind: "done" });
  });

  it("a 413 splits a batch of more than one event; a single event too large is done", () => {
    expect(batchVerdict(2, { ok: false, status: 413, issues: [] })).toEqual({ kind: "split" });
    expect(batchVerdict(1, { ok: false, status: 413, issues: [] })).toEqual({ kind: "done" });
  });

  it("a 401 stops; a 409 (submitted), 403 and 404 are done", () => {
    expect(batchVerdict(1, { ok: false, status: 401, issues: [] })).toEqual({ kind: "stop" });
    for (const status of [403, 404, 409]) expect(batchVerdict(1, { ok: false, status, issues: [] })).toEqual({ kind: "done" });
  });
});

describe("withoutFile (events once a file is deleted)", () => {
  it("drops the file's file_opened, keeps other events about it without the path, and leaves the rest alone", () => {
    const events: TelemetryEvent[] = [
      { event_id: "1", occurred_at: at, kind: "file_opened", file_path: "a.js" },
      { event_id: "2", occurred_at: at, kind: "typing_window", window_ms: 10, keystrokes: 3, file_path: "a.js" },
      { event_id: "3", occurred_at: at, kind: "copy", size_bytes: 1, line_count: 1, file_path: "b.js" },
      { event_id: "4", occurred_at: at, kind: "file_opened", file_path: "b.js" },
      { event_id: "5", occurred_at: at, kind: "focus_lost" },
    ];
    expect(withoutFile(events, "a.js")).toEqual([
      { event_id: "2", occurred_at: at, kind: "typing_window", window_ms: 10, keystrokes: 3 },
      events[2],
      events[3],
      events[4],
    ]);
  });
});
