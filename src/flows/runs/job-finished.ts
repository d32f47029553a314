import { parseRunOwnerId, runSummary } from "../../domain/runs";
import type { FinishedRunnerJob } from "../../domain/runner-callback";
import { attemptObject } from "../../durable/attempt/object";
import type { Env } from "../../env";
import { notificationsFor } from "../../domain/notifications";
import { notify } from "../../durable/notification/send";

/**
 * Job-finished handler of candidate runs (owner type `run`): tells the run's attempt how its
 * job ended. The object records it once, so a repeated call changes nothing. A job whose
 * owner id names no attempt (queued before owner ids carried it) is left to the attempt's
 * sweep, which reads the job's final status itself. The candidate is notified once the run
 * has ended (a repeated call repeats the notification's key, which the user's object skips).
 */
export async function runJobFinished(env: Env, job: FinishedRunnerJob): Promise<void> {
  const owner = parseRunOwnerId(job.owner.owner_id);
  if (!owner) return;
  const attempt = attemptObject(env, owner.attemptId);
  await attempt.finishRun(owner.runId, job.id, {
    status: job.status,
    reason: job.reason,
    result: job.result && runSummary(job.result),
  });
  const [run, record] = await Promise.all([attempt.findRun(owner.runId), attempt.record()]);
  if (!run || !record || run.record.status === "queued") return;
  const payload = { attempt_id: record.id, run_id: run.record.id, status: run.record.status };
  await notify(env, notificationsFor([record.candidate_id], "run.finished", payload, run.record.id));
}
