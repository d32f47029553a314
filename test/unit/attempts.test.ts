import { describe, expect, it } from "vitest";
import {
  attemptAudience,
  deadlineFor,
  isOverdue,
  newAttemptId,
  stateRefusal,
  submissionProblem,
  summarizeSubmission,
  type AttemptStatus,
} from "../../src/domain/attempts";

const attempt = (status: AttemptStatus, auto_submitted = false) => ({ id: "att_1", status, auto_submitted });

describe("attempt state machine", () => {
  it("start only from NOT_STARTED", () => {
    expect(stateRefusal("start", attempt("NOT_STARTED"))).toBeUndefined();
    expect(stateRefusal("start", attempt("IN_PROGRESS"))).toEqual({ kind: "conflict", detail: "Attempt att_1 has already been started" });
    expect(stateRefusal("start", attempt("SUBMITTED"))?.detail).toBe("Attempt att_1 is locked: it was submitted");
    expect(stateRefusal("start", attempt("SCORED"))?.kind).toBe("conflict");
  });

  it("submit and changes only while IN_PROGRESS; after submission the attempt is locked", () => {
    for (const op of ["submit", "change"] as const) {
      expect(stateRefusal(op, attempt("IN_PROGRESS"))).toBeUndefined();
      expect(stateRefusal(op, attempt("NOT_STARTED"))?.detail).toMatch(/has not been started; start it before/);
      expect(stateRefusal(op, attempt("SUBMITTED"))?.detail).toMatch(/is locked/);
      expect(stateRefusal(op, attempt("SCORED"))?.detail).toMatch(/is locked/);
    }
    expect(stateRefusal("submit", attempt("SUBMITTED", true))?.detail).toBe(
      "Attempt att_1 is locked: it was submitted automatically at its deadline",
    );
  });

  it("IDE sessions until the attempt is locked", () => {
    expect(stateRefusal("ide-session", attempt("NOT_STARTED"))).toBeUndefined();
    expect(stateRefusal("ide-session", attempt("IN_PROGRESS"))).toBeUndefined();
    expect(stateRefusal("ide-session", attempt("SUBMITTED"))?.kind).toBe("conflict");
  });

  it("the deadline is the start plus the time limit; only an IN_PROGRESS attempt past it is overdue", () => {
    expect(deadlineFor(1_000, 90)).toBe(1_000 + 90 * 60_000);
    expect(deadlineFor(1_000, null)).toBeNull();
    const deadline_at = new Date(10_000).toISOString();
    expect(isOverdue({ status: "IN_PROGRESS", deadline_at }, 9_999)).toBe(false);
    expect(isOverdue({ status: "IN_PROGRESS", deadline_at }, 10_000)).toBe(true);
    expect(isOverdue({ status: "SUBMITTED", deadline_at }, 20_000)).toBe(false);
    expect(isOverdue({ status: "IN_PROGRESS", deadline_at: null }, 20_000)).toBe(false);
  });

  it("ids are opaque and unique", () => {
    expect(newAttemptId()).toMatch(/^att_[0-9a-f]{32}$/);
    expect(newAttemptId()).not.toBe(newAttemptId());
  });
});

describe("who sees an attempt", () => {
  it("its candidate, its organization's staff and platform admins; nobody else", () => {
    expect(attemptAudience({ isCandidate: true, orgRole: null, platformAdmin: false })).toBe("candidate");
    expect(attemptAudience({ isCandidate: true, orgRole: "interviewer", platformAdmin: false })).toBe("candidate");
    expect(attemptAudience({ isCandidate: false, orgRole: "interviewer", platformAdmin: false })).toBe("staff");
    expect(attemptAudience({ isCandidate: false, orgRole: null, platformAdmin: true })).toBe("staff");
    expect(attemptAudience({ isCandidate: false, orgRole: "candidate", platformAdmin: false })).toBe("none");
    expect(attemptAudience({ isCandidate: false, orgRole: null, platformAdmin: false })).toBe("none");
  });
});

describe("submission payload", () => {
  it("tests_passed and tests_total come together, passed at most total", () => {
    expect(submissionProblem({})).toBeUndefined();
    expect(submissionProblem({ tests_passed: 4, tests_total: 4 })).toBeUndefined();
    expect(submissionProblem({ tests_passed: 5, tests_total: 4 })).toEqual({
      field: "tests_passed",
      msg: "tests_passed (5) is more than tests_total (4)",
    });
    expect(submissionProblem({ tests_passed: 1 })?.field).toBe("tests_total");
    expect(submissionProblem({ tests_total: 1 })?.field).toBe("tests_passed");
  });

  it("the summary keeps the figures and sizes, not the diff or the signals", () => {
    const overlay = { files: 2, total_bytes: 10, sha256: "ab".repeat(32) };
    expect(
      summarizeSubmission(
        { tests_passed: 1, tests_total: 2, coverage: 0.5, git_diff: "é\n", behavior_signals: { a: 1, b: 2 }, changed_files: ["x"] },
        overlay,
      ),
    ).toEqual({
      tests_passed: 1,
      tests_total: 2,
      coverage: 0.5,
      lint_score: null,
      changed_files: 1,
      git_diff_bytes: 3,
      behavior_signals: 2,
      overlay,
    });
  });
});
