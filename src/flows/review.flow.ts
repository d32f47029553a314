import { attemptRecord, type AttemptRow } from "../db/attempts.queries";
import { database } from "../db/client";
import type { InvitationDetails } from "../db/invitations.queries";
import { countTaskCandidates, scoresOfAttempts, taskCandidatePage, taskNames, userEmails } from "../db/review.queries";
import { findTask } from "../db/tasks.queries";
import type { AttemptRecord } from "../domain/attempts";
import { accept, refuse, type Outcome } from "../domain/outcome";
import type { Listing } from "../domain/pagination";
import { keptAtTaskVersion, REVIEW_DIFF_LIMITS, reviewDiffFiles, type ReviewDiffFile } from "../domain/review-diff";
import { hiddenTestFiles } from "../domain/scoring-jobs";
import type { ScoringStatus } from "../domain/score-views";
import type { SubmittedWork } from "../durable/attempt/attempt-types";
import { attemptObject } from "../durable/attempt/attempt-object";
import type { Env } from "../env";
import { attemptView } from "./attempts.flow";
import { scoreEvidence } from "./evaluation.flow";
import { type ScoringState } from "./scores.flow";
import { snapshotContents, snapshotFiles } from "./workspace-files.flow";

// The reviewer's views (docs/api.md, "The reviewer's view"): what the staff's score report page
// and a task's candidates list show, each in one request, as the resources they gather say it.

export interface CandidateRef {
  id: string;
  /** The address the API knows the candidate by (its identity provider's `email`). */
  email: string | null;
}

export interface AttemptReview {
  attempt: AttemptRecord & { scoring: ScoringState };
  task: { task_id: string; title: string; organization_id: string };
  candidate: CandidateRef;
  report: Record<string, unknown> | null;
  report_missing: string | null;
}

/** An attempt for its reviewer: the attempt, its task's and candidate's names, and the report in force (or why there is none). */
export async function attemptReview(env: Env, row: AttemptRow): Promise<AttemptReview> {
  const db = database(env.DB);
  const [attempt, names, emails, evidence] = await Promise.all([
    attemptView(env, row, "staff"),
    taskNames(db, row.taskId),
    userEmails(db, [row.candidateId]),
    scoreEvidence(env, { id: row.id, taskId: row.taskId }),
  ]);
  return {
    attempt,
    task: { task_id: row.taskId, title: names?.title ?? row.taskId, organization_id: row.organizationId },
    candidate: { id: row.candidateId, email: emails.get(row.candidateId) ?? null },
    report: evidence.ok ? evidence.value : null,
    report_missing: evidence.ok ? null : String(evidence.refusal.detail),
  };
}

export interface ReviewDiff {
  attempt_id: string;
  submitted_at: string;
  /** Where `kept_at_task_version` comes from: the finished report in force, or the scoring rules before one. */
  kept_from: "report" | "rules";
  files: ReviewDiffFile[];
}

/** The submission's diff against the task's version, file by file; a conflict before submission. */
export async function reviewDiff(env: Env, row: AttemptRow): Promise<Outcome<ReviewDiff>> {
  const db = database(env.DB);
  // RPC types the payload's free-form behavior_signals away; it is the object's own SubmittedWork.
  const [work, task, evidence] = await Promise.all([
    attemptObject(env, row.id).submittedWork() as Promise<SubmittedWork | null>,
    findTask(db, row.taskId),
    scoreEvidence(env, { id: row.id, taskId: row.taskId }),
  ]);
  if (!work?.record.submitted_at) return refuse("conflict", `Attempt ${row.id} is ${work?.record.status ?? row.status}; its diff exists once it is submitted`);
  const paths = work.overlay.map((f) => f.path);
  const [listed, base] = await Promise.all([
    snapshotFiles(env, row.taskId),
    snapshotContents(env, row.taskId, paths, 2 * REVIEW_DIFF_LIMITS.totalBytes),
  ]);
  const hiddenTests = new Set([...(task?.testFiles ?? []), ...hiddenTestFiles(task?.failToPass ?? [], task?.passToPass ?? [])]);
  const reported = evidence.ok && Array.isArray(evidence.value.excluded_from_hidden_run) ? (evidence.value.excluded_from_hidden_run as string[]) : null;
  const inputs = work.overlay.map((f) => ({
    path: f.path,
    op: f.op,
    base: !listed.has(f.path) ? null : base ? (base.get(f.path) ?? null) : undefined,
    submitted: f.content ? new Uint8Array(f.content) : null,
  }));
  return accept({
    attempt_id: row.id,
    submitted_at: work.record.submitted_at,
    kept_from: reported ? "report" : "rules",
    files: reviewDiffFiles(inputs, keptAtTaskVersion(paths, hiddenTests, reported)),
  });
}

export interface TaskCandidate {
  candidate: { id: string | null; email: string | null };
  invitation: InvitationDetails | null;
  attempt: AttemptRecord | null;
  attempts: number;
  score: { status: ScoringStatus; score_id: string | null; overall_score: number | null };
}

/** A task's candidates, newest activity first: each with their newest invitation, newest attempt and its score. */
export function taskCandidateListing(env: Env, taskId: string): Listing<TaskCandidate> {
  const db = database(env.DB);
  return {
    count: () => countTaskCandidates(db, taskId),
    page: async (limit, offset) => {
      const rows = await taskCandidatePage(db, taskId, limit, offset);
      const newest = rows.map((r) => r.attempts[0]).filter((a): a is AttemptRow => a !== undefined);
      const scores = await scoresOfAttempts(db, newest.map((a) => a.id));
      return rows.map((r) => {
        const attempt = r.attempts[0] ?? null;
        const latest = attempt ? scores.find((s) => s.attemptId === attempt.id) : undefined;
        const inForce = attempt?.scoreId ? scores.find((s) => s.id === attempt.scoreId) : undefined;
        return {
          candidate: { id: r.userId, email: r.email },
          invitation: r.invitation,
          attempt: attempt ? attemptRecord(attempt) : null,
          attempts: r.attempts.length,
          score: {
            status: latest?.status ?? "not_submitted",
            score_id: inForce?.id ?? null,
            overall_score: inForce?.overallScore ?? null,
          },
        };
      });
    },
  };
}
