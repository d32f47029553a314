import { database } from "../../db/client";
import { findTask } from "../../db/tasks.queries";
import { accept, type Outcome } from "../../domain/outcome";
import { newRunnerJobId } from "../../domain/runner-jobs";
import { newRunId, runJobSpec, runTaskOf, type RunRecord } from "../../domain/runs";
import { attemptObject } from "../../durable/attempt/attempt-object";
import type { Env } from "../../env";
import { enqueueRunnerJob, offerRunnerJob } from "../runner-jobs.flow";

/** What a candidate asks to run: overlay paths (as listed) and the tests' time limit. */
export interface RunRequest {
  changed_files: string[];
  timeout_seconds: number;
}

/**
 * Queues a test run of the attempt's work (docs/api.md, "Runs"): the attempt's object stores
 * it, with its runner job's id, and hands back the files for the job, which is queued here and
 * first offered to the runners after the answer, in `exec`'s waitUntil. A run whose job could
 * not be queued ends ERROR; one left half-way is ended by its sweep.
 */
export async function createRun(
  env: Env,
  exec: Pick<ExecutionContext, "waitUntil">,
  attempt: { id: string; taskId: string },
  request: RunRequest,
): Promise<Outcome<RunRecord>> {
  const task = await findTask(database(env.DB), attempt.taskId);
  if (!task) throw new Error(`task ${attempt.taskId} of attempt ${attempt.id} is missing`);
  const object = attemptObject(env, attempt.id);
  const jobId = newRunnerJobId();
  const reserved = await object.reserveRun({ id: newRunId(), job_id: jobId, ...request });
  if (!reserved.ok) return reserved;
  const { record, files } = reserved.value;
  try {
    await enqueueRunnerJob(env, runJobSpec(record, runTaskOf(task), files), jobId, { offerNow: true });
  } catch (e) {
    await object.finishRun(record.id, jobId, { status: "ERROR", reason: `the run could not be queued: ${String(e)}`, result: null });
    throw e;
  }
  exec.waitUntil(offerRunnerJob(env, jobId));
  return accept(record);
}
