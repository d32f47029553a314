import { describe, expect, it } from "vitest";
import { notificationText } from "../../../web/src/components/notification-text";
import { analyticsQuery, filterDates, funnelRows, percentiles } from "../../../web/src/interviewer/analytics";
import { formatScalar, shapeOf } from "../../../web/src/interviewer/evidence";
import { formatBytes, formatDuration, humanize, plural } from "../../../web/src/interviewer/format";
import { fieldsOf, parseTags, parseTimeLimit, patchOf, type TaskFieldsSource } from "../../../web/src/interviewer/task-fields";

const task: TaskFieldsSource = {
  title: "Slugify max length",
  description: "",
  statement: { title: "Add maxLength", body: "Cut long slugs." },
  tags: ["js", "strings"],
  time_limit_minutes: 90,
  visibility: "PRIVATE_ORG",
  ai_assistance: false,
  live_sessions: false,
};

describe("task fields", () => {
  it("sends only what changed", () => {
    const initial = fieldsOf(task);
    expect(patchOf(initial, initial)).toEqual({ body: {} });
    expect(patchOf(initial, { ...initial, statementBody: "Cut long slugs at a word.", tags: "js,  strings", aiAssistance: true })).toEqual({
      body: { statement: { body: "Cut long slugs at a word." }, ai_assistance: true },
    });
    expect(patchOf(initial, { ...initial, title: " New name ", tags: "js, sql,", timeLimit: "", visibility: "PUBLIC" })).toEqual({
      body: { title: "New name", tags: ["js", "sql"], time_limit_minutes: null, visibility: "PUBLIC" },
    });
    expect(patchOf(initial, { ...initial, liveSessions: true })).toEqual({ body: { live_sessions: true } });
  });

  it("leaves live sessions off and unsent for a draft, which has no such setting", () => {
    const { live_sessions: _none, ...draft } = task;
    const initial = fieldsOf(draft);
    expect(initial.liveSessions).toBe(false);
    expect(patchOf(initial, { ...initial, aiAssistance: true })).toEqual({ body: { ai_assistance: true } });
  });

  it("refuses a time limit that is not whole minutes", () => {
    expect(patchOf(fieldsOf(task), { ...fieldsOf(task), timeLimit: "1.5" })).toHaveProperty("error");
    expect(parseTimeLimit(" 120 ")).toBe(120);
    expect(parseTimeLimit("")).toBeNull();
    expect(parseTimeLimit("-5")).toBeUndefined();
  });

  it("shows a task without a statement or staff fields as empty text", () => {
    const fields = fieldsOf({ ...task, title: undefined, description: undefined, statement: null, time_limit_minutes: null });
    expect(fields).toMatchObject({ title: "", description: "", statementTitle: "", statementBody: "", timeLimit: "" });
    expect(parseTags(" a, ,b ,")).toEqual(["a", "b"]);
  });
});

describe("analytics figures", () => {
  it("gives each funnel step its share of the step before in its cohort", () => {
    const rows = funnelRows({ invited: 10, accepted: 7, attempts: 8, started: 6, submitted: 3, scored: 0 });
    expect(rows.map((r) => [r.label, r.value, r.ofPrevious])).toEqual([
      ["Invited", 10, null],
      ["Accepted", 7, 70],
      ["Attempts", 8, null],
      ["Started", 6, 75],
      ["Submitted", 3, 50],
      ["Scored", 0, 0],
    ]);
    expect(funnelRows({ invited: 0, accepted: 0, attempts: 0, started: 0, submitted: 0, scored: 0 })[1]!.ofPrevious).toBeNull();
  });

  it("lists percentiles in order, scaled and rounded", () => {
    expect(percentiles({ count: 3, mean: 1, p10: 90, p25: 125, p50: 600, p75: 1000, p90: null }, 60)).toEqual([1.5, 2.1, 10, 16.7, null]);
  });

  it("writes the filter as a query string", () => {
    expect(analyticsQuery({ from: "2026-01-05", to: "", taskId: "tsk_1" })).toBe("?from=2026-01-05&task_id=tsk_1");
    expect(analyticsQuery({ from: "", to: "", taskId: "" })).toBe("");
  });

  it("shows the days of the window in use in the filter when the address names none", () => {
    const window = { from: "2026-10-22", to: "2026-11-20" };
    expect(filterDates({ from: "", to: "" }, window)).toEqual(window);
    expect(filterDates({ from: "2026-11-01", to: "" }, window)).toEqual({ from: "2026-11-01", to: "2026-11-20" });
    expect(filterDates({ from: "", to: "" }, undefined)).toEqual({ from: "", to: "" });
  });
});

describe("evidence shapes", () => {
  it("shows flat objects in lists as tables, scalars in lists as lists, objects as groups", () => {
    expect(shapeOf([{ file: "a.js", line: 3 }, { file: "b.js", rule: "no-undef" }])).toEqual({
      kind: "table",
      columns: ["file", "line", "rule"],
      rows: [{ file: "a.js", line: 3 }, { file: "b.js", rule: "no-undef" }],
    });
    expect(shapeOf(["t::a", "t::b"])).toEqual({ kind: "list", items: ["t::a", "t::b"] });
    expect(shapeOf([])).toEqual({ kind: "list", items: [] });
    expect(shapeOf({ passed: 1, failing: [] })).toEqual({ kind: "group", entries: [["passed", 1], ["failing", []]] });
    expect(shapeOf(true)).toEqual({ kind: "scalar", text: "yes" });
    expect(formatScalar(null)).toBe("—");
  });
});

describe("formats", () => {
  it("writes sizes, durations, names and counts", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(2048)).toBe("2.0 KiB");
    expect(formatDuration(45)).toBe("45 s");
    expect(formatDuration(723)).toBe("12 min 3 s");
    expect(formatDuration(3900)).toBe("1 h 5 min");
    expect(humanize("fail_to_pass")).toBe("Fail to pass");
    expect(plural(1, "entry", "entries")).toBe("1 entry");
    expect(plural(2, "file")).toBe("2 files");
  });
});

describe("notification text", () => {
  it("links staff to the console and candidates to their attempt", () => {
    const ready = { type: "score_report.ready", payload: { attempt_id: "att_1", score_id: "sc_1", task_id: "tsk_1" } };
    expect(notificationText(ready, true)).toEqual({ text: "A score report is ready", href: "/console/attempts/att_1/report" });
    expect(notificationText(ready, false)).toEqual({ text: "Your score report is ready", href: "/attempts/att_1" });
    expect(notificationText({ type: "task.import_finished", payload: { task_id: "tsk 2", status: "FAILED" } }, true)).toEqual({
      text: "A task's import failed",
      href: "/console/tasks/tsk%202",
    });
    expect(notificationText({ type: "task_draft.validation_finished", payload: { draft_id: "tsk_3", status: "VALIDATED" } }, true).href).toBe(
      "/console/drafts/tsk_3",
    );
  });

  it("tells a finished run by its tests, and a run without a report by why", () => {
    const run = (status: string, counts: unknown) => notificationText({ type: "run.finished", payload: { attempt_id: "att_1", run_id: "run_1", status, counts } }, false);
    expect(run("SUCCEEDED", { total: 9, passed: 7, failed: 2, skipped: 0, errored: 0 })).toEqual({ text: "Your test run finished: 7 passed, 2 failed", href: "/attempts/att_1" });
    expect(run("SUCCEEDED", { total: 9, passed: 7, failed: 1, skipped: 0, errored: 1 }).text).toBe("Your test run finished: 7 passed, 2 failed");
    expect(run("TIMED_OUT", { total: 0, passed: 0, failed: 0, skipped: 0, errored: 0 }).text).toBe("Your test run finished: timed out");
    expect(run("ERROR", null).text).toBe("Your test run finished: error, the tests could not run");
    expect(run("FAILED", null).text).toBe("Your test run finished: no test report");
    // Stored before payloads carried counts, or with counts that are not whole.
    expect(run("SUCCEEDED", undefined).text).toBe("Your test run finished: open it for the results");
    expect(run("SUCCEEDED", { passed: 7 }).text).toBe("Your test run finished: open it for the results");
    expect(run("SUCCEEDED", undefined).text).not.toContain("SUCCEEDED");
  });

  it("has no link without the id it needs, and words for unknown types", () => {
    expect(notificationText({ type: "invitation.accepted", payload: {} }, true).href).toBeNull();
    expect(notificationText({ type: "something.new", payload: {} }, true)).toEqual({ text: "Notification: something.new", href: null });
  });
});
