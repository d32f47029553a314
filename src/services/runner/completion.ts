import type { RunnerCallback } from "../../domain/runner-callback";
import {
  runnerJobKeys,
  type FinalRunnerJobStatus,
  type RunnerJobKind,
  type RunnerJobOwner,
  type RunnerJobOwnerType,
} from "../../domain/runner-jobs";
import type { Env } from "../../env";

export interface FinishedRunnerJob {
  id: string;
  kind: RunnerJobKind;
  owner: RunnerJobOwner;
  status: FinalRunnerJobStatus;
  reason: string | null;
  /** The runner's report; null when the Worker gave up on the job (runner unreachable or refusing it). */
  result: RunnerCallback | null;
  /**
   * Object keys of the job's uploads; each exists only when the result says so
   * (`artifacts.junit`, `artifacts.log`, `environment` for prepare jobs).
   */
  keys: ReturnType<typeof runnerJobKeys>;
}

/**
 * Called at least once after a job reaches its final status, from the queue consumer, never
 * from the runner's callback request. It must be idempotent; throwing retries it later.
 */
export type RunnerJobHandler = (env: Env, job: FinishedRunnerJob) => Promise<void>;

const handlers = new Map<RunnerJobOwnerType, RunnerJobHandler>();

/** Registers the completion handler of one owner type (at module load, like route tables). */
export function onRunnerJobFinished(ownerType: RunnerJobOwnerType, handler: RunnerJobHandler): void {
  handlers.set(ownerType, handler);
}

export function runnerJobHandler(ownerType: RunnerJobOwnerType): RunnerJobHandler | undefined {
  return handlers.get(ownerType);
}
