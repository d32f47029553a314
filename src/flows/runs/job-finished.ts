import { parseRunOwnerId, runSummary } from "../../domain/runs";
import type { FinishedRunnerJob } from "../../domain/runner-callback";
import { attemptObject } from "../../durable/attempt/object";
import type { Env } from "../../env";

/**
 * Job-finished handler of candidate runs (owner type `run`): tells the run's attempt how its
 * job ended. The object records it once, so a repeated call changes nothing. A job whose
 * owner id names no attempt (queued before owner ids carried it) is left to the attempt's
 * sweep, which reads the job's final status itself.
 */
export async function runJobFinished(env: Env, job: FinishedRunnerJob): Promise<void> {
  const owner = parseRunOwnerId(job.owner.owner_id);
  if (!owner) return;
  await attemptObject(env, owner.attemptId).finishRun(owner.runId, job.id, {
    status: job.status,
    reason: job.reason,
    result: job.result && runSummary(job.result),
  });
}
