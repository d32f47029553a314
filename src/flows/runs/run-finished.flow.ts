import { database } from "../../db/client";
import { attemptTaskId, taskNames } from "../../db/review.queries";
import { notificationsFor } from "../../domain/notifications";
import type { FinishedRunnerJob } from "../../domain/runner-callback";
import { parseRunOwnerId, runSummary, type EndedRun } from "../../domain/runs";
import { attemptObject } from "../../durable/attempt/attempt-object";
import type { Env } from "../../env";
import { notify } from "../notify.flow";

/**
 * Job-finished handler of candidate runs (owner type `run`): tells the run's attempt how its
 * job ended. The object records it once, so a repeated call changes nothing. A job whose
 * owner id names no attempt (queued before owner ids carried it) is left to the attempt's
 * sweep, which reads the job's final status itself.
 */
export async function runJobFinished(env: Env, job: FinishedRunnerJob): Promise<void> {
  const owner = parseRunOwnerId(job.owner.owner_id);
  if (!owner) return;
  const ended = await attemptObject(env, owner.attemptId).finishRun(owner.runId, job.id, {
    status: job.status,
    reason: job.reason,
    result: job.result && runSummary(job.result),
  });
  if (ended) await runEnded(env, ended);
}

/**
 * Announces a run that has ended, whoever ended it: its job's handler or its attempt's sweep
 * (docs/api.md, "Notifications"). The candidate is told; a repeat repeats the notification's
 * key, which the user's object skips.
 */
export async function runEnded(env: Env, run: EndedRun): Promise<void> {
  const db = database(env.DB);
  const taskId = await attemptTaskId(db, run.attempt_id);
  // The candidate reads the task by its statement's title.
  const taskTitle = taskId ? (await taskNames(db, taskId))?.statementTitle : undefined;
  const payload = { attempt_id: run.attempt_id, run_id: run.run_id, status: run.status, counts: run.counts, task_id: taskId, task_title: taskTitle };
  await notify(env, notificationsFor([run.candidate_id], "run.finished", payload, run.run_id));
}
