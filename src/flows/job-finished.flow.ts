import { database } from "../db/client";
import { findRunnerJob, markNotified } from "../db/runner-jobs.queries";
import type { FinishedRunnerJob } from "../domain/runner-callback";
import { isFinalStatus, runnerJobKeys, type RunnerJobOwnerType } from "../domain/runner-jobs";
import type { Env } from "../env";
import { runJobFinished } from "./runs/run-finished.flow";
import { scoringJobFinished } from "./scoring/scoring-finished.flow";
import { validationJobFinished } from "./task-import/validation-finished.flow";

/**
 * Called at least once after a job reaches its final status, from the queue consumer, never
 * from the runner's callback request. It must be idempotent; throwing retries it later.
 */
type JobFinishedHandler = (env: Env, job: FinishedRunnerJob) => Promise<void>;

/** The job-finished handler of an owner type of runner jobs. */
function jobFinishedHandler(ownerType: RunnerJobOwnerType): JobFinishedHandler {
  switch (ownerType) {
    case "task_validation":
      return validationJobFinished;
    case "run":
      return runJobFinished;
    case "scoring":
      return scoringJobFinished;
  }
}

/** Calls the owner's job-finished handler for a final job, unless it already ran to the end. */
export async function callJobFinishedHandler(env: Env, jobId: string): Promise<void> {
  const db = database(env.DB);
  const job = await findRunnerJob(db, jobId);
  if (!job || !isFinalStatus(job.status) || job.notifiedAt) return;
  await jobFinishedHandler(job.ownerType)(env, {
    id: job.id,
    kind: job.kind,
    owner: { owner_type: job.ownerType, owner_id: job.ownerId },
    status: job.status,
    reason: job.reason,
    // The row holds only the result that won it; a late callback that lost to the Worker's give-up may still have written R2.
    result: job.result,
    keys: runnerJobKeys(jobId),
  });
  await markNotified(db, jobId);
}
