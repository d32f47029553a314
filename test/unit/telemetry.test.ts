import { describe, expect, it } from "vitest";
import {
  admitTelemetry,
  chunk,
  TELEMETRY_EVENT_KINDS,
  TELEMETRY_LIMITS,
  TelemetryEventSchema,
  TelemetryEventsSchema,
  telemetryRecord,
  type TelemetryEvent,
} from "../../src/domain/telemetry";
import { toValidationIssues } from "../../src/http/validation";

const at = "2026-11-20T10:00:00.000Z";

/** One valid event of each kind, with every optional field. */
const examples: Record<string, Record<string, unknown>> = {
  focus_lost: {},
  focus_gained: { away_ms: 12_000 },
  visibility_hidden: {},
  visibility_visible: { away_ms: 3_000 },
  paste: { size_bytes: 2048, line_count: 40, file_path: "src/index.ts", source: "external" },
  copy: { size_bytes: 120, line_count: 3, file_path: "src/index.ts" },
  typing_window: { window_ms: 5_000, keystrokes: 42, deletions: 3, file_path: "src/index.ts" },
  run_clicked: { run_id: "run_01HZX" },
  submit_clicked: {},
  file_opened: { file_path: "test/app.test.ts" },
  ai_chat_message_sent: { message_chars: 180 },
};

const event = (kind: string, fields: Record<string, unknown> = {}, id = `ev-${kind}`) => ({
  event_id: id,
  occurred_at: at,
  kind,
  ...examples[kind],
  ...fields,
});

/** The 422 entries the API would answer for `events`, without the leading "body". */
function issues(events: unknown[]) {
  const result = TelemetryEventsSchema.safeParse(events);
  return result.success ? [] : toValidationIssues(result.error.issues);
}

describe("telemetry catalogue", () => {
  it("has an example for every kind, and the examples cover the catalogue", () => {
    expect(Object.keys(examples).sort()).toEqual([...TELEMETRY_EVENT_KINDS].sort());
  });

  it.each(TELEMETRY_EVENT_KINDS)("%s is accepted with its metadata, and with only the required fields", (kind) => {
    expect(TelemetryEventSchema.parse(event(kind, { seq: 7 }))).toEqual(event(kind, { seq: 7 }));
    const required = Object.fromEntries(
      Object.entries(event(kind)).filter(([k]) => !["away_ms", "file_path", "source", "deletions", "run_id"].includes(k) || kind === "file_opened"),
    );
    expect(TelemetryEventSchema.safeParse(required).success).toBe(true);
  });

  it.each([
    ["paste", "text"],
    ["paste", "clipboard"],
    ["copy", "content"],
    ["typing_window", "code"],
    ["file_opened", "content"],
    ["ai_chat_message_sent", "message"],
    ["focus_lost", "password"],
    ["run_clicked", "output"],
  ])("a %s event with %j is refused, with loc at the field", (kind, field) => {
    const found = issues([event("focus_lost", {}, "first"), event(kind, { [field]: "secret stuff" })]);
    expect(found).toEqual([{ loc: [1, field], msg: `Unrecognized key: "${field}"`, type: "unrecognized_keys" }]);
  });

  it("several content fields give one entry each", () => {
    const found = issues([event("paste", { text: "a", clipboard: "b" })]);
    expect(found.map((i) => i.loc)).toEqual([
      [0, "text"],
      [0, "clipboard"],
    ]);
  });

  it("a field of another kind is refused (message_chars on a paste)", () => {
    expect(issues([event("paste", { message_chars: 10 })])).toEqual([expect.objectContaining({ loc: [0, "message_chars"] })]);
  });

  it("short identifiers cannot carry prose or code", () => {
    expect(issues([event("focus_lost", {}, "console.log('hi')")])).toEqual([
      expect.objectContaining({ loc: [0, "event_id"], type: "invalid_format" }),
    ]);
    expect(issues([event("focus_lost", {}, "x".repeat(65))])[0]?.loc).toEqual([0, "event_id"]);
    expect(issues([event("run_clicked", { run_id: "run 1; rm -rf /" })])[0]?.loc).toEqual([0, "run_id"]);
  });

  it.each([["../etc/passwd"], ["/abs/path"], [".git/config"], ["a\nb"], [""], ["a".repeat(1025)]])(
    "file_opened with path %j is a 422 at file_path",
    (path) => {
      expect(issues([event("file_opened", { file_path: path })])).toEqual([
        expect.objectContaining({ loc: [0, "file_path"], type: "invalid_path" }),
      ]);
    },
  );

  it.each([
    ["paste", { size_bytes: -1 }, "size_bytes"],
    ["paste", { size_bytes: 1.5 }, "size_bytes"],
    ["paste", { size_bytes: "2048" }, "size_bytes"],
    ["paste", { source: "stackoverflow" }, "source"],
    ["copy", { line_count: 2_000_000 }, "line_count"],
    ["typing_window", { window_ms: 0 }, "window_ms"],
    ["typing_window", { window_ms: 600_001 }, "window_ms"],
    ["typing_window", { keystrokes: undefined }, "keystrokes"],
    ["ai_chat_message_sent", { message_chars: 100_001 }, "message_chars"],
    ["focus_gained", { seq: -1 }, "seq"],
    ["focus_gained", { occurred_at: "yesterday" }, "occurred_at"],
    ["focus_gained", { occurred_at: "2026-02-30T10:00:00Z" }, "occurred_at"],
  ])("%s with %j is a 422 at %s", (kind, fields, field) => {
    expect(issues([event(kind, fields)]).map((i) => i.loc)).toEqual([[0, field]]);
  });

  it("an unknown or missing kind is a 422 at kind", () => {
    expect(issues([event("screenshot_taken")])).toEqual([expect.objectContaining({ loc: [0, "kind"], type: "invalid_union" })]);
    const { kind: _kind, ...noKind } = event("paste");
    expect(issues([noKind])[0]?.loc).toEqual([0, "kind"]);
  });

  it("a batch has 1 to 500 events with distinct ids", () => {
    expect(issues([])[0]).toMatchObject({ loc: [], type: "too_small" });
    const many = Array.from({ length: TELEMETRY_LIMITS.eventsPerBatch }, (_, i) => event("focus_lost", {}, `e${i}`));
    expect(issues(many)).toEqual([]);
    expect(issues([...many, event("focus_lost", {}, "one-more")])[0]).toMatchObject({ loc: [], type: "too_big" });
    expect(issues([event("focus_lost", {}, "a"), event("copy", {}, "b"), event("paste", {}, "a")])).toEqual([
      { loc: [2, "event_id"], msg: "the same event_id as events[0]", type: "duplicate" },
    ]);
  });

  it("offsets are accepted; a record keeps the common fields apart and its time in UTC milliseconds", () => {
    const parsed = TelemetryEventSchema.parse(event("paste", { occurred_at: "2026-11-20T11:00:00+01:00", seq: 3 }));
    expect(telemetryRecord(parsed)).toEqual({
      event_id: "ev-paste",
      seq: 3,
      kind: "paste",
      occurred_at: "2026-11-20T10:00:00.000Z",
      data: { size_bytes: 2048, line_count: 40, file_path: "src/index.ts", source: "external" },
    });
    expect(telemetryRecord(TelemetryEventSchema.parse(event("focus_lost"))).seq).toBeNull();
  });
});

describe("events after submission", () => {
  const parse = (events: unknown[]) => TelemetryEventsSchema.parse(events) as TelemetryEvent[];
  const submittedAt = "2026-11-20T10:00:00.000Z";
  const submitted = { id: "att_1", submitted_at: submittedAt };
  const ms = (iso: string) => Date.parse(iso);
  const before = event("focus_lost", { occurred_at: "2026-11-20T09:59:59.999Z" }, "before");
  const exactly = event("copy", { occurred_at: submittedAt }, "exactly");
  const after = event("focus_gained", { occurred_at: "2026-11-20T10:00:00.001Z" }, "after");

  it("before submission (NOT_STARTED or IN_PROGRESS) every event is taken", () => {
    const outcome = admitTelemetry({ id: "att_1", submitted_at: null }, parse([before, after]), ms(submittedAt) + 3_600_000);
    expect(outcome).toEqual({ ok: true, value: { accepted: [expect.objectContaining({ event_id: "before" }), expect.objectContaining({ event_id: "after" })], ignored: 0 } });
  });

  it("within the grace period, events up to the submission are taken and later ones ignored", () => {
    const outcome = admitTelemetry(submitted, parse([before, exactly, after]), ms(submittedAt) + TELEMETRY_LIMITS.graceAfterSubmitMs);
    expect(outcome.ok && outcome.value.accepted.map((r) => r.event_id)).toEqual(["before", "exactly"]);
    expect(outcome.ok && outcome.value.ignored).toBe(1);
  });

  it("within the grace period, a batch of only later events is a 409", () => {
    const outcome = admitTelemetry(submitted, parse([after]), ms(submittedAt) + 1000);
    expect(outcome).toEqual({ ok: false, refusal: { kind: "conflict", detail: expect.stringMatching(/none of these events happened before/) } });
  });

  it("past the grace period, every batch is a 409", () => {
    const outcome = admitTelemetry(submitted, parse([before]), ms(submittedAt) + TELEMETRY_LIMITS.graceAfterSubmitMs + 1);
    expect(outcome).toEqual({ ok: false, refusal: { kind: "conflict", detail: expect.stringMatching(/accepted until 10 minutes after submission/) } });
  });
});

describe("chunk", () => {
  it("splits in order into groups of at most the size", () => {
    expect(chunk([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunk([], 3)).toEqual([]);
  });
});
