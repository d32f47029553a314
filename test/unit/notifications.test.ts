import { describe, expect, it } from "vitest";
import { hasGap, NOTIFICATION_PAYLOADS, NOTIFICATION_TYPES, notificationsFor } from "../../src/domain/notifications";

const hex = "0123456789abcdef0123456789abcdef";

describe("notificationsFor", () => {
  it("one notification per distinct user, each keyed by its type and subject", () => {
    const events = notificationsFor(["usr_a", "usr_b", "usr_a"], "score_report.ready", { attempt_id: `att_${hex}`, score_id: `scr_${hex}`, task_id: `tsk_${hex}` }, `scr_${hex}`);
    expect(events.map((e) => e.userId)).toEqual(["usr_a", "usr_b"]);
    expect(new Set(events.map((e) => e.key))).toEqual(new Set([`score_report.ready:scr_${hex}`]));
  });
});

describe("the catalogue's payloads", () => {
  it("has a schema for each type, which refuses ids of the wrong kind", () => {
    expect(NOTIFICATION_TYPES).toEqual(Object.keys(NOTIFICATION_PAYLOADS));
    const run = NOTIFICATION_PAYLOADS["run.finished"];
    const counts = { total: 9, passed: 7, failed: 2, skipped: 0, errored: 0 };
    expect(run.safeParse({ attempt_id: `att_${hex}`, run_id: `run_${hex}`, status: "SUCCEEDED", counts }).success).toBe(true);
    expect(run.safeParse({ attempt_id: `att_${hex}`, run_id: `run_${hex}`, status: "ERROR", counts: null }).success).toBe(true);
    expect(run.safeParse({ attempt_id: `tsk_${hex}`, run_id: `run_${hex}`, status: "SUCCEEDED", counts }).success).toBe(false);
    expect(run.safeParse({ attempt_id: `att_${hex}`, run_id: `run_${hex}`, status: "queued", counts }).success).toBe(false);
    expect(run.safeParse({ attempt_id: `att_${hex}`, run_id: `run_${hex}`, status: "SUCCEEDED", counts: { ...counts, failed: -1 } }).success).toBe(false);
    expect(NOTIFICATION_PAYLOADS["task.import_finished"].safeParse({ task_id: `tsk_${hex}`, status: "IMPORTING" }).success).toBe(false);
  });
});

describe("hasGap", () => {
  it("is false when nothing after the client's id was dropped", () => {
    expect(hasGap(10, 1, 10)).toBe(false);
    expect(hasGap(0, 1, 10)).toBe(false);
    expect(hasGap(4, 5, 10)).toBe(false);
    expect(hasGap(0, null, 0)).toBe(false);
  });

  it("is true when notifications after the client's id are gone from storage", () => {
    expect(hasGap(3, 5, 10)).toBe(true);
    expect(hasGap(0, 6, 205)).toBe(true);
    expect(hasGap(2, null, 7)).toBe(true);
  });
});
