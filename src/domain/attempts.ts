import { newId } from "../lib/ids";
import type { Refusal } from "./outcome";
/**
 * The attempt resource's vocabulary and state machine (spec section 3):
 * NOT_STARTED → IN_PROGRESS (start) → SUBMITTED (submit, or the deadline) → SCORED (scoring).
 */

export const ATTEMPT_STATUSES = ["NOT_STARTED", "IN_PROGRESS", "SUBMITTED", "SCORED"] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

/** An open attempt blocks another one by the same candidate on the same task. */
export const OPEN_ATTEMPT_STATUSES = ["NOT_STARTED", "IN_PROGRESS"] as const satisfies readonly AttemptStatus[];

/**
 * Attempts a candidate may make on a task without a retake: one, so a candidate cannot try
 * again with what their first report told them. Each retake staff grant allows one more.
 */
export const ATTEMPTS_WITHOUT_RETAKE = 1;

export function newAttemptId(): string {
  return newId("att");
}

/** What a client sees of an attempt; the AttemptDO keeps exactly these fields and D1 mirrors them. */
export interface AttemptRecord {
  id: string;
  task_id: string;
  organization_id: string;
  candidate_id: string;
  status: AttemptStatus;
  /** Copied from the task when the attempt is created; null is no limit. */
  time_limit_minutes: number | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  deadline_at: string | null;
  submitted_at: string | null;
  /** True when the deadline alarm submitted the attempt, not the candidate. */
  auto_submitted: boolean;
  score_id: string | null;
  submission: SubmissionSummary | null;
}

/** The submit payload (spec section 2). The service measures correctness itself; these are the client's figures. */
export interface SubmissionPayload {
  tests_passed?: number;
  tests_total?: number;
  coverage?: number;
  lint_score?: number;
  behavior_signals?: Record<string, unknown>;
  git_diff?: string;
  changed_files?: string[];
  /** The candidate's own account of the work: what, why, how it was tested (scored as communication). */
  explanation?: string;
}

/** What lists and analytics keep of a submission: the client's figures and what was frozen. */
export interface SubmissionSummary {
  tests_passed: number | null;
  tests_total: number | null;
  coverage: number | null;
  lint_score: number | null;
  changed_files: number;
  git_diff_bytes: number;
  behavior_signals: number;
  overlay: OverlayDigest;
}

/** The overlay as it was frozen at submission: entry count, bytes, and a digest of its manifest. */
export interface OverlayDigest {
  files: number;
  total_bytes: number;
  sha256: string;
}

export function summarizeSubmission(payload: SubmissionPayload, overlay: OverlayDigest): SubmissionSummary {
  return {
    tests_passed: payload.tests_passed ?? null,
    tests_total: payload.tests_total ?? null,
    coverage: payload.coverage ?? null,
    lint_score: payload.lint_score ?? null,
    changed_files: payload.changed_files?.length ?? 0,
    git_diff_bytes: new TextEncoder().encode(payload.git_diff ?? "").byteLength,
    behavior_signals: Object.keys(payload.behavior_signals ?? {}).length,
    overlay,
  };
}

/** Why a submit payload is inconsistent in itself, or undefined. */
export function submissionProblem(payload: SubmissionPayload): { field: keyof SubmissionPayload; msg: string } | undefined {
  const { tests_passed: passed, tests_total: total } = payload;
  if ((passed === undefined) !== (total === undefined)) {
    return { field: passed === undefined ? "tests_passed" : "tests_total", msg: "tests_passed and tests_total come together" };
  }
  if (passed !== undefined && total !== undefined && passed > total) {
    return { field: "tests_passed", msg: `tests_passed (${passed}) is more than tests_total (${total})` };
  }
  return undefined;
}

/** What each operation needs of the attempt's state; undefined when it may go ahead. */
export function stateRefusal(
  operation: "start" | "submit" | "change" | "run" | "execute" | "ide-session",
  attempt: Pick<AttemptRecord, "id" | "status" | "auto_submitted">,
): Refusal | undefined {
  const { id, status } = attempt;
  const locked =
    status === "SUBMITTED" || status === "SCORED"
      ? `Attempt ${id} is locked: it was submitted${attempt.auto_submitted ? " automatically at its deadline" : ""}`
      : undefined;
  switch (operation) {
    case "start":
      if (status === "NOT_STARTED") return undefined;
      return { kind: "conflict", detail: locked ?? `Attempt ${id} has already been started` };
    case "submit":
      if (status === "IN_PROGRESS") return undefined;
      return { kind: "conflict", detail: locked ?? `Attempt ${id} has not been started; start it before submitting` };
    case "change":
      if (status === "IN_PROGRESS") return undefined;
      return { kind: "conflict", detail: locked ?? `Attempt ${id} has not been started; start it before saving changes` };
    case "run":
      if (status === "IN_PROGRESS") return undefined;
      return { kind: "conflict", detail: locked ?? `Attempt ${id} has not been started; start it before running tests` };
    case "execute":
      if (status === "IN_PROGRESS") return undefined;
      return { kind: "conflict", detail: locked ?? `Attempt ${id} has not been started; start it before running programs in it` };
    case "ide-session":
      return locked ? { kind: "conflict", detail: locked } : undefined;
  }
}

/** The deadline of an attempt started at `startedAtMs`, or null for a task without a time limit. */
export function deadlineFor(startedAtMs: number, timeLimitMinutes: number | null): number | null {
  return timeLimitMinutes === null ? null : startedAtMs + timeLimitMinutes * 60_000;
}

/** True when an attempt still in progress has reached its deadline and must be submitted as it is. */
export function isOverdue(attempt: Pick<AttemptRecord, "status" | "deadline_at">, nowMs: number): boolean {
  return attempt.status === "IN_PROGRESS" && attempt.deadline_at !== null && Date.parse(attempt.deadline_at) <= nowMs;
}

/** How a caller relates to an attempt: its candidate, staff of its organization, or neither (a 404). */
export type AttemptAudience = "candidate" | "staff" | "none";

export function attemptAudience(f: {
  isCandidate: boolean;
  orgRole: "candidate" | "interviewer" | "orgadmin" | "admin" | null;
  platformAdmin: boolean;
}): AttemptAudience {
  if (f.isCandidate) return "candidate";
  if (f.platformAdmin || (f.orgRole && f.orgRole !== "candidate")) return "staff";
  return "none";
}

