import type { TaskRow } from "../../db/tasks.queries";
import type { RunnerResultSummary } from "../../domain/runner-callback";
import { runnerJobKeys, type RunnerJobStatus } from "../../domain/runner-jobs";
import type { Env } from "../../env";
import { artifactStorage } from "../../services/storage/artifact-storage";
import { runnerJob } from "../runner-jobs.flow";

/** One runner job of a task's import: preparing the environment, or a validation run. */
export interface ImportStepLog {
  step: "prepare" | "base" | "solution";
  job_id: string;
  status: RunnerJobStatus;
  reason: string | null;
  /** Presigned, time-limited; null until the job ended, or when the runner uploaded none. */
  log_url: string | null;
  junit_url: string | null;
  /** The prepare job's install steps; null for the validation runs. */
  install: RunnerResultSummary["install"] | null;
}

/**
 * The logs of a task's import for its staff (docs/tasks-from-prs.md, "Reasons and logs"): the
 * prepare job's install log and the two validation runs', as fresh presigned URLs.
 */
export async function importLogs(env: Env, task: TaskRow, urlTtlSeconds: number): Promise<{ steps: ImportStepLog[]; expires_at: string | null }> {
  const storage = artifactStorage(env);
  const ids = [
    ["prepare", task.prepareJobId],
    ["base", task.baseRunJobId],
    ["solution", task.solutionRunJobId],
  ] as const;
  let expiresAt: string | null = null;
  const steps = await Promise.all(
    ids.flatMap(([step, id]) => (id ? [{ step, id }] : [])).map(async ({ step, id }): Promise<ImportStepLog | null> => {
      const job = await runnerJob(env, id);
      if (!job) return null;
      const keys = runnerJobKeys(id);
      const [log, junit] = await Promise.all([
        job.result?.artifacts.log ? storage.presignGet(keys.log, urlTtlSeconds) : null,
        job.result?.artifacts.junit ? storage.presignGet(keys.junit, urlTtlSeconds) : null,
      ]);
      expiresAt ??= (log ?? junit)?.expires_at ?? null;
      return {
        step,
        job_id: id,
        status: job.status,
        reason: job.reason,
        log_url: log?.url ?? null,
        junit_url: junit?.url ?? null,
        install: step === "prepare" ? (job.result?.install ?? null) : null,
      };
    }),
  );
  return { steps: steps.filter((s): s is ImportStepLog => s !== null), expires_at: expiresAt };
}
