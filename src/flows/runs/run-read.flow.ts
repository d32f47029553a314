import { database } from "../../db/client";
import { countRuns, runPage, type RunJobState } from "../../db/runs.queries";
import type { Listing } from "../../domain/pagination";
import { accept, refuse, type Outcome } from "../../domain/outcome";
import type { RunRecord } from "../../domain/runs";
import { attemptObject } from "../../durable/attempt/attempt-object";
import type { Env } from "../../env";
import { log } from "../../lib/log";
import { runnerJob } from "../runner-jobs.flow";
import { runResults } from "./run-results.flow";

export type { RunJobState } from "../../db/runs.queries";

/** A run with its runner job's state, as lists show it. */
export interface RunState {
  record: RunRecord;
  job: RunJobState | null;
}

/** One run in full: its per-test results and artifacts once its job left a result, null before and without one. */
export interface RunDetail extends RunState {
  results: Awaited<ReturnType<typeof runResults>> | null;
}

/** A run of the attempt as its object holds it (never behind D1), with its job's state and results. */
export async function runDetail(env: Env, attemptId: string, runId: string, urlTtlSeconds: number): Promise<Outcome<RunDetail>> {
  const stored = await attemptObject(env, attemptId).findRun(runId);
  if (!stored) return refuse("not_found", `Run ${runId} not found in attempt ${attemptId}`);
  const { record, job_id: jobId } = stored;
  const job = jobId ? await runnerJob(env, jobId) : undefined;
  const results = record.status !== "queued" && jobId && record.result ? await runResults(env, jobId, record.result, urlTtlSeconds) : null;
  return accept({ record, job: job ? { status: job.status, dispatchedAt: job.dispatchedAt } : null, results });
}

/**
 * Returns once the run has ended or `seconds` have passed (a GET's `Prefer: wait`), from its
 * attempt's object, which wakes its waiters as it records the end. An object that went away
 * meanwhile only ends the wait early.
 */
export async function awaitRunEnd(env: Env, attemptId: string, runId: string, seconds: number): Promise<void> {
  try {
    await attemptObject(env, attemptId).waitForRunEnd(runId, seconds * 1000);
  } catch (e) {
    log("warn", "run: the wait for its end was cut short", { attempt_id: attemptId, run_id: runId, error: String(e) });
  }
}

/** The attempt's runs, newest first, from D1's mirror. */
export function runListing(env: Env, attemptId: string): Listing<RunState> {
  const db = database(env.DB);
  return { count: () => countRuns(db, attemptId), page: (limit, offset) => runPage(db, attemptId, limit, offset) };
}
