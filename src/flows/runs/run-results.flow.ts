import type { RunnerCallback } from "../../domain/runner-callback";
import { runnerJobKeys } from "../../domain/runner-jobs";
import type { RunSummary } from "../../domain/runs";
import type { Env } from "../../env";
import { readRunnerResult } from "../runner-jobs.flow";
import { artifactStorage } from "../../services/storage/artifact-storage";

/** Presigned downloads of a finished run's JUnit XML and log; null for an artifact the runner did not upload. */
export interface RunArtifacts {
  urls: { junit: string | null; logs: string | null };
  expires_at: string | null;
}

/**
 * What a finished run's job left in the bucket: its per-test results (from the stored result,
 * which only a result that won the job's row counts as) and fresh artifact URLs.
 */
export async function runResults(
  env: Env,
  jobId: string,
  summary: RunSummary,
  urlTtlSeconds: number,
): Promise<{ tests: RunnerCallback["tests"]; artifacts: RunArtifacts }> {
  const storage = artifactStorage(env);
  const keys = runnerJobKeys(jobId);
  const stored = await readRunnerResult(env, jobId);
  if (!stored) throw new Error(`runner job ${jobId} is missing its result at ${keys.result}`);
  const { tests } = stored;
  const [junit, logs] = await Promise.all([
    summary.artifacts.junit ? storage.presignGet(keys.junit, urlTtlSeconds) : null,
    summary.artifacts.log ? storage.presignGet(keys.log, urlTtlSeconds) : null,
  ]);
  return {
    tests,
    artifacts: { urls: { junit: junit?.url ?? null, logs: logs?.url ?? null }, expires_at: (junit ?? logs)?.expires_at ?? null },
  };
}
