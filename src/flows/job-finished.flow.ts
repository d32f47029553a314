import type { FinishedRunnerJob } from "../domain/runner-callback";
import type { RunnerJobOwnerType } from "../domain/runner-jobs";
import type { Env } from "../env";
import { log } from "../lib/log";
import { finishedJobToHandOver, markOwnerTold } from "./runner-jobs.flow";
import { runJobFinished } from "./runs/run-finished.flow";
import { scoringJobFinished } from "./scoring/scoring-finished.flow";
import { validationJobFinished } from "./task-import/validation-finished.flow";

/**
 * Called at least once after a job reaches its final status: beside the runner's callback
 * request that recorded it (after its answer), and from the queue consumer for a call that did
 * not run to the end. It must be idempotent, and two calls may overlap; throwing retries it later.
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
  const job = await finishedJobToHandOver(env, jobId);
  if (!job) return;
  await jobFinishedHandler(job.owner.owner_type)(env, job);
  await markOwnerTold(env, jobId);
}

/**
 * The owner's handler called beside the runner's callback that recorded the job's result, a
 * queue hop sooner than its message; a failure is left to that message.
 */
export async function tellOwnerNow(env: Env, jobId: string): Promise<void> {
  try {
    await callJobFinishedHandler(env, jobId);
  } catch (e) {
    log("warn", "runner job: the owner's handler failed beside the callback; its queue message calls it again", { job_id: jobId, error: String(e) });
  }
}
