import { database } from "../../db/client";
import { findRunAttempt } from "../../db/runs";
import { runSummary } from "../../domain/runs";
import { attemptObject } from "../../durable/attempt";
import type { Env } from "../../env";
import type { FinishedRunnerJob } from "../runner/completion";

/**
 * Completion handler of candidate runs' jobs (owner type `run`): tells the run's attempt how
 * its job ended. The object records it once, so a repeated notification changes nothing.
 */
export async function onRunJobFinished(env: Env, job: FinishedRunnerJob): Promise<void> {
  const attemptId = await findRunAttempt(database(env.DB), job.owner.owner_id);
  if (!attemptId) return;
  await attemptObject(env, attemptId).finishRun(job.owner.owner_id, job.id, {
    status: job.status,
    reason: job.reason,
    result: job.result && runSummary(job.result),
  });
}
