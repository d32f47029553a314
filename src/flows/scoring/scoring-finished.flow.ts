import { database } from "../../db/client";
import { claimFailedRound, findScore, updateScoring } from "../../db/scores.queries";
import { findTask } from "../../db/tasks.queries";
import type { FinishedRunnerJob } from "../../domain/runner-callback";
import { isFinalStatus, parseStepOwnerId } from "../../domain/runner-jobs";
import { hiddenTestFiles, SCORING_STEPS, SCORING_TRIES, scoringJobFiles } from "../../domain/scoring-jobs";
import { bytesToBase64 } from "../../domain/overlay";
import type { AttemptRecord } from "../../domain/attempts";
import { attemptObject } from "../../durable/attempt/attempt-object";
import type { Env } from "../../env";
import { taskFollowers } from "../../db/invitations.queries";
import { notificationNames } from "../../db/review.queries";
import { notificationsFor } from "../../domain/notifications";
import { notify } from "../notify.flow";
import { readRunnerResult, runnerJob } from "../runner-jobs.flow";
import { buildReport, hiddenRunOf } from "./scoring-report.flow";
import { runScoringJobs, submittedWork } from "./scoring-start.flow";

/**
 * Completion handler of scoring's runner jobs (owner type `scoring`). When both runs of the
 * current round have ended it writes the report and marks the attempt SCORED; when the runner
 * failed for reasons outside the candidate's code it starts another round, up to SCORING_TRIES,
 * then records the failure. Runs at least once per job; every step is conditional.
 */
export async function scoringJobFinished(env: Env, job: FinishedRunnerJob): Promise<void> {
  const owner = parseStepOwnerId(job.owner.owner_id, SCORING_STEPS);
  if (!owner) return;
  const db = database(env.DB);
  const score = await findScore(db, owner.id);
  if (!score) return;
  if (score.status === "scored") return reportReady(env, score.id, await attemptObject(env, score.attemptId).markScored(score.id));
  if (score.status !== "scoring") return;
  // The round's job ids are written right after both are queued; a job may finish first.
  if (!score.hiddenJobId || !score.workspaceJobId) throw new Error(`score ${score.id}: the round's jobs are not recorded yet`);
  if (job.id !== score.hiddenJobId && job.id !== score.workspaceJobId) return;
  const [hidden, workspace] = await Promise.all([runnerJob(env, score.hiddenJobId), runnerJob(env, score.workspaceJobId)]);
  if (!hidden || !workspace || !isFinalStatus(hidden.status) || !isFinalStatus(workspace.status)) return;

  const infrastructure = [hidden, workspace].filter((j) => j.status === "ERROR");
  if (infrastructure.length > 0) {
    const reasons = infrastructure.map((j) => j.reason ?? "unknown").join("; ");
    if (!(await claimFailedRound(db, score.id, score.hiddenJobId, reasons))) return;
    if (score.tries < SCORING_TRIES) return runScoringJobs(env, score.id, await submittedWork(env, score.attemptId));
    await updateScoring(db, score.id, {
      status: "failed",
      reason: `Scoring failed after ${score.tries} tries because the sandbox runner could not run it: ${reasons}. An admin can re-score.`,
      completedAt: new Date().toISOString(),
    });
    return;
  }

  const work = await submittedWork(env, score.attemptId);
  const task = await findTask(db, work.record.task_id);
  if (!task) throw new Error(`score ${score.id}: task ${work.record.task_id} missing`);
  const [hiddenResult, workspaceResult] = await Promise.all([readRunnerResult(env, hidden.id), readRunnerResult(env, workspace.id)]);
  const hiddenTests = new Set([...(task.testFiles ?? []), ...hiddenTestFiles(task.failToPass ?? [], task.passToPass ?? [])]);
  const jobFiles = scoringJobFiles(
    work.overlay.map((f) => ({ path: f.path, op: f.op, content: null })),
    hiddenTests,
    bytesToBase64,
  );
  const report = await buildReport(
    env,
    { scoreId: score.id, task, work },
    hiddenRunOf(hidden.status as "SUCCEEDED" | "FAILED" | "TIMED_OUT", hidden.reason, hiddenResult),
    { status: workspace.status, reason: workspace.reason, result: workspaceResult },
    jobFiles,
  );
  const now = new Date().toISOString();
  const stored = await updateScoring(db, score.id, {
    status: "scored",
    overallScore: report.overall_score,
    report: report as unknown as Record<string, unknown>,
    reason: null,
    completedAt: now,
  });
  if (!stored) return;
  await reportReady(env, score.id, await attemptObject(env, score.attemptId).markScored(score.id));
}

/** Tells the candidate and the staff following the task that the report is there; a repeat is skipped by key. */
async function reportReady(env: Env, scoreId: string, record: AttemptRecord): Promise<void> {
  const db = database(env.DB);
  const [followers, names] = await Promise.all([taskFollowers(db, record.task_id), notificationNames(db, record.task_id, record.candidate_id)]);
  const payload = { attempt_id: record.id, score_id: scoreId, task_id: record.task_id, candidate_id: record.candidate_id, candidate_email: names.candidateEmail };
  // Each reads the task by the title they know it by: staff by theirs, the candidate by the statement's.
  await notify(env, [
    ...notificationsFor([record.candidate_id], "score_report.ready", { ...payload, task_title: names.candidateTitle }, scoreId),
    ...notificationsFor(followers.filter((id) => id !== record.candidate_id), "score_report.ready", { ...payload, task_title: names.staffTitle }, scoreId),
  ]);
}
