import { describe, expect, it } from "vitest";
import { notificationText } from "../../../web/src/components/notification-text";
import { contentNote, diffSummary, diffTexts, fileStatusText, KEPT_AT_TASK_VERSION } from "../../../web/src/interviewer/diff-words";

describe("the submission's diff in words", () => {
  it("sums the files up by what happened to them, and says how many the hidden-test run kept", () => {
    const files = [
      { status: "added" as const, kept_at_task_version: false },
      { status: "modified" as const, kept_at_task_version: true },
      { status: "modified" as const, kept_at_task_version: false },
      { status: "deleted" as const, kept_at_task_version: false },
    ];
    expect(diffSummary(files)).toBe("4 files: 1 added, 2 changed, 1 deleted; 1 kept at the task's version in the hidden-test run");
    expect(diffSummary([{ status: "unchanged", kept_at_task_version: false }])).toBe("1 file: 1 saved as the task has it");
    expect(diffSummary([])).toBe("The submission changed no file.");
    expect(fileStatusText({ status: "modified" })).toBe("changed");
    expect(KEPT_AT_TASK_VERSION).toBe("Kept at the task's version in the hidden-test run: this change does not count.");
  });

  it("says why a file's text is not shown, and compares a missing side as empty", () => {
    const note = (content: "text" | "binary" | "too_large" | "omitted" | "base_unavailable") => contentNote({ content, base_bytes: 1, submitted_bytes: 1 });
    expect(note("text")).toBeNull();
    expect(note("binary")).toMatch(/binary/);
    expect(note("too_large")).toMatch(/256 KiB/);
    expect(note("omitted")).toMatch(/Not shown/);
    expect(note("base_unavailable")).toMatch(/could not be read/);
    expect(diffTexts({ base: null, submitted: "new\n" })).toEqual({ base: "", submitted: "new\n" });
  });
});

describe("notifications name the candidate and the task", () => {
  const names = { task_title: "Fix the slug", candidate_email: "ada@example.com" };

  it("staff read who did what on which task", () => {
    const ready = { type: "score_report.ready", payload: { attempt_id: "att_1", score_id: "scr_1", task_id: "tsk_1", ...names } };
    expect(notificationText(ready, true)).toEqual({ text: "ada@example.com's score report for “Fix the slug” is ready", href: "/console/attempts/att_1/report" });
    expect(notificationText({ type: "attempt.submitted", payload: { attempt_id: "att_1", auto_submitted: false, ...names } }, true).text).toBe(
      "ada@example.com submitted an attempt at “Fix the slug”; scoring has started",
    );
    expect(notificationText({ type: "attempt.submitted", payload: { attempt_id: "att_1", auto_submitted: true, ...names } }, true).text).toBe(
      "ada@example.com's attempt at “Fix the slug” was submitted at its deadline; scoring has started",
    );
    expect(notificationText({ type: "attempt.auto_submitted", payload: { attempt_id: "att_1", ...names } }, true).text).toBe(
      "ada@example.com's attempt at “Fix the slug” was submitted at its deadline",
    );
    expect(notificationText({ type: "invitation.accepted", payload: { task_id: "tsk_1", ...names } }, true)).toEqual({
      text: "ada@example.com accepted the invitation to “Fix the slug”",
      href: "/console/tasks/tsk_1",
    });
    expect(notificationText({ type: "task.import_finished", payload: { task_id: "tsk_1", status: "READY", task_title: "Fix the slug" } }, true).text).toBe(
      "The import of “Fix the slug” finished: it is ready for invitations",
    );
    expect(notificationText({ type: "task_draft.validation_finished", payload: { draft_id: "tsk_1", status: "FAILED", task_title: "Fix the slug" } }, true).text).toBe(
      "The validation of the draft “Fix the slug” failed",
    );
  });

  it("candidates read which task", () => {
    expect(notificationText({ type: "score_report.ready", payload: { attempt_id: "att_1", ...names } }, false).text).toBe("Your score report for “Fix the slug” is ready");
    const counts = { total: 1, passed: 1, failed: 0, skipped: 0, errored: 0 };
    expect(notificationText({ type: "run.finished", payload: { attempt_id: "att_1", status: "SUCCEEDED", counts, task_title: "Fix the slug" } }, false).text).toBe(
      "Your test run on “Fix the slug” finished: 1 passed, 0 failed",
    );
  });

  it("older notifications, without the names, read as before", () => {
    expect(notificationText({ type: "score_report.ready", payload: { attempt_id: "att_1" } }, true).text).toBe("A score report is ready");
    expect(notificationText({ type: "attempt.submitted", payload: { attempt_id: "att_1", auto_submitted: false } }, true).text).toBe("An attempt was submitted; scoring has started");
    expect(notificationText({ type: "invitation.accepted", payload: {} }, true).text).toBe("A candidate accepted an invitation");
    expect(notificationText({ type: "task.import_finished", payload: { status: "FAILED" } }, true).text).toBe("A task's import failed");
    expect(notificationText({ type: "task_draft.validation_finished", payload: { status: "VALIDATED" } }, true).text).toBe("A draft passed validation and can be published");
    expect(notificationText({ type: "score_report.ready", payload: { attempt_id: "att_1", task_title: "  " } }, false).text).toBe("Your score report is ready");
  });
});
