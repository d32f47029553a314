import { database } from "../../db/client";
import { insertScore, latestScore, updateScoring } from "../../db/scores.queries";
import { taskFollowers } from "../../db/invitations.queries";
import { notificationNames } from "../../db/review.queries";
import { findTask } from "../../db/tasks.queries";
import { bytesToBase64 } from "../../domain/overlay";
import { stepOwnerId, TEST_FRAMEWORKS } from "../../domain/runner-jobs";
import { jobRuntime } from "../../domain/task-settings";
import { hiddenTestFiles, RUNNABLE_TEST_FILE, scoringJobFiles, type FrozenFile } from "../../domain/scoring-jobs";
import { taskKeys } from "../../domain/tasks";
import type { AttemptRecord } from "../../domain/attempts";
import { attemptObject } from "../../durable/attempt/attempt-object";
import type { SubmittedWork } from "../../durable/attempt/attempt-types";
import type { Env } from "../../env";
import { enqueueRunnerJob, offerRunnerJob } from "../runner-jobs.flow";
import { artifactStorage } from "../../services/storage/artifact-storage";
import { notificationsFor } from "../../domain/notifications";
import { notify } from "../notify.flow";
import { log } from "../../lib/log";

/** Scoring cannot start and retrying will not change that: the attempt shows why. */
export class ScoringStartError extends Error {
  override name = "ScoringStartError";
}

/** Limits of the two scoring runs: the hidden tests may be slower than the candidate's own. */
const SCORING_LIMITS = { wall_ms: 300_000, cpu_ms: 600_000 };

/**
 * Starts scoring an attempt: a new score report unless one is already in progress or done
 * (`rescore` asks for a new one regardless). Called at least once: by the submit's request and
 * by the queue's message after it (each may repeat), so a repeated start finds the report
 * begun and does nothing, not even the notices and the similarity its first start asked for.
 */
export async function startScoring(env: Env, attemptId: string, rescore: boolean): Promise<void> {
  const db = database(env.DB);
  const latest = await latestScore(db, attemptId);
  if (!rescore && latest && (latest.status !== "scoring" || latest.hiddenJobId)) return;
  const work = await submittedWork(env, attemptId);
  await noticeSubmission(env, work.record);
  // Every submission passes here, so its similarity is asked for here: beside scoring, never part of it.
  if (!rescore) await env.SIMILARITY.send({ attempt_id: attemptId });
  let scoreId: string;
  if (latest?.status === "scoring") {
    // A re-score leaves a round in progress alone; otherwise this resumes a report whose jobs
    // were never queued (the previous start stopped halfway).
    if (latest.hiddenJobId) return;
    scoreId = latest.id;
  } else {
    scoreId = await insertScore(db, attemptId, { status: "scoring" });
  }
  await runScoringJobs(env, scoreId, work);
}

/** startScoring; a start that retrying cannot help is recorded on the attempt's report as failed, with why. */
export async function startScoringOrSayWhyNot(env: Env, attemptId: string, rescore: boolean): Promise<void> {
  try {
    await startScoring(env, attemptId, rescore);
  } catch (e) {
    if (!(e instanceof ScoringStartError)) throw e;
    await recordStartFailure(env, attemptId, `Scoring could not be started: ${e.message}.`);
  }
}

/**
 * Scoring started by the submit's own request, a queue hop sooner than its message; a failure
 * is left to that message (and to the object's sync, which sends it).
 */
export async function startScoringNow(env: Env, attemptId: string): Promise<void> {
  try {
    await startScoringOrSayWhyNot(env, attemptId, false);
  } catch (e) {
    log("warn", "scoring: the start beside the submit failed; the scoring queue's message starts it", { attempt_id: attemptId, error: String(e) });
  }
}

/** All that scoring reads of a submitted attempt, from its object in one call. */
export async function submittedWork(env: Env, attemptId: string): Promise<SubmittedWork> {
  // RPC types the payload's free-form behavior_signals away; it is the object's own SubmittedWork.
  const work = (await attemptObject(env, attemptId).submittedWork()) as SubmittedWork | null;
  if (!work) throw new Error(`attempt ${attemptId} is not submitted`);
  return work;
}

/** Queues the hidden-test run and the workspace run of one round of scoring of the submitted work. */
export async function runScoringJobs(env: Env, scoreId: string, work: SubmittedWork): Promise<void> {
  const db = database(env.DB);
  const { record, overlay: frozen } = work;
  const attemptId = record.id;
  const task = await findTask(db, record.task_id);
  if (!task?.snapshotSha256 || !task.testFramework) throw new Error(`task ${record.task_id} is not ready to score against`);
  const storage = artifactStorage(env);
  const read = async (key: string) => (await storage.get(key))?.text();
  const [testPatch, solutionPatch] = await Promise.all([read(taskKeys(task.id).testPatch), read(taskKeys(task.id).solutionPatch)]);
  if (testPatch === undefined) throw new Error(`task ${task.id} has no test patch`);

  const testFiles = hiddenTestFiles(task.failToPass ?? [], task.passToPass ?? []);
  if (testFiles.length === 0 || !testFiles.every((f) => RUNNABLE_TEST_FILE.test(f))) {
    throw new ScoringStartError(`task ${task.id} was validated before tests were identified by their file; import it again to score against it`);
  }
  const files: FrozenFile[] = frozen.map((f) => ({ path: f.path, op: f.op, content: f.content ? new Uint8Array(f.content) : null }));
  const jobFiles = scoringJobFiles(files, new Set([...(task.testFiles ?? []), ...testFiles]), bytesToBase64);
  const common = {
    kind: "test" as const,
    schedule: { attempt_id: attemptId, org_id: task.organizationId },
    snapshot: { key: taskKeys(task.id).snapshot, sha256: task.snapshotSha256 },
    environment: task.environmentKey && task.environmentSha256 ? { key: task.environmentKey, sha256: task.environmentSha256 } : null,
    limits: SCORING_LIMITS,
    runtime: jobRuntime(task.settings).runtime,
  };
  const framework = TEST_FRAMEWORKS.find((f) => f === task.testFramework) ?? "auto";
  // Both are offered here once their ids are on the score, each a queue hop sooner than its message.
  const offerNow = { offerNow: true };
  const hidden = await enqueueRunnerJob(env, {
    ...common,
    owner: { owner_type: "scoring", owner_id: stepOwnerId(scoreId, "hidden") },
    files: jobFiles.hidden,
    patches: [testPatch],
    // The solution's changes to the harness (a config, a setup file) are the task's harness: validation ran with them.
    test: { framework, command: task.testCommand, files: testFiles, canaries: true, harness_patch: solutionPatch ?? null },
  }, undefined, offerNow);
  const workspace = await enqueueRunnerJob(env, {
    ...common,
    owner: { owner_type: "scoring", owner_id: stepOwnerId(scoreId, "workspace") },
    files: jobFiles.workspace,
    test: { framework, command: task.testCommand, coverage: true },
    coverage_files: jobFiles.coverageFiles,
    lint: { files: jobFiles.lintFiles },
  }, undefined, offerNow);
  const latest = await latestScore(db, attemptId);
  await updateScoring(db, scoreId, { hiddenJobId: hidden.id, workspaceJobId: workspace.id, tries: (latest?.id === scoreId ? latest.tries : 0) + 1 });
  await Promise.all([offerRunnerJob(env, hidden.id), offerRunnerJob(env, workspace.id)]);
}

/** Scoring that never got its runner jobs: the attempt's report shows it failed, with why. */
export async function recordStartFailure(env: Env, attemptId: string, reason: string): Promise<void> {
  const db = database(env.DB);
  const latest = await latestScore(db, attemptId);
  const completedAt = new Date().toISOString();
  if (latest?.status === "scoring") {
    await updateScoring(db, latest.id, { status: "failed", reason, completedAt });
  } else if (!latest) {
    await insertScore(db, attemptId, { status: "failed", reason, completedAt });
  }
}

/**
 * Staff following the task hear of every submission here, where each passes on its way to
 * scoring, and the candidate of one submitted by its deadline hears of that too (so do the
 * staff); the key is the attempt, so each is said once, re-scoring included.
 */
async function noticeSubmission(env: Env, record: AttemptRecord): Promise<void> {
  if (record.submitted_at === null) return;
  const db = database(env.DB);
  const [all, names] = await Promise.all([taskFollowers(db, record.task_id), notificationNames(db, record.task_id, record.candidate_id)]);
  const followers = all.filter((id) => id !== record.candidate_id);
  const who = { candidate_id: record.candidate_id, candidate_email: names.candidateEmail };
  const submitted = { attempt_id: record.id, task_id: record.task_id, auto_submitted: record.auto_submitted, task_title: names.staffTitle, ...who };
  await notify(env, notificationsFor(followers, "attempt.submitted", submitted, record.id));
  if (!record.auto_submitted) return;
  // Each reads the task by the title they know it by: staff by theirs, the candidate by the statement's.
  const auto = { attempt_id: record.id, task_id: record.task_id, ...who };
  await notify(env, [
    ...notificationsFor([record.candidate_id], "attempt.auto_submitted", { ...auto, task_title: names.candidateTitle }, record.id),
    ...notificationsFor(followers, "attempt.auto_submitted", { ...auto, task_title: names.staffTitle }, record.id),
  ]);
}
