import { stateRefusal } from "../../domain/attempts";
import { accept, invalid, type Outcome } from "../../domain/outcome";
import { isFinalStatus } from "../../domain/runner-jobs";
import {
  inFlightRefusal,
  runFiles,
  runSummary,
  runSweepAt,
  sweepReason,
  unknownPathIssues,
  type EndedRun,
  type RunOutcome,
  type RunRecord,
} from "../../domain/runs";
import type { Env } from "../../env";
import { log } from "../../lib/log";
import { currentAttempt, iso, readOverlayBytes, toRunRecord, type RunRow } from "./attempt-storage";
import { RETRY_BY_ALARM_MS } from "./attempt-sync";
import type { NewRun, ReservedRun, RunSweepJobs, StoredRun } from "./attempt-types";

// The attempt's test runs in the object's storage. Every function but sweepDueRuns is
// synchronous, so the AttemptDO can check and change runs within one step of its input gate.

/**
 * Checks a new run against the attempt's state, its overlay and the bound on runs in flight,
 * and stores it queued, with the id its runner job will have and its first sweep; returns it
 * with the runner's files.
 */
export function reserveRun(sql: SqlStorage, nowMs: number, init: NewRun): Outcome<ReservedRun> {
  const attempt = currentAttempt(sql);
  const refusal = stateRefusal("run", attempt);
  if (refusal) return { ok: false, refusal };
  const overlay = readOverlayBytes(sql);
  const issues = unknownPathIssues(init.changed_files, new Set(overlay.map((e) => e.path)));
  if (issues.length > 0) return invalid(issues);
  const { n } = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM runs WHERE status = 'queued'").one();
  const busy = inFlightRefusal(attempt.id, n);
  if (busy) return { ok: false, refusal: busy };
  const at = iso(nowMs);
  const record: RunRecord = {
    id: init.id,
    attempt_id: attempt.id,
    status: "queued",
    changed_files: [...new Set(init.changed_files)],
    timeout_seconds: init.timeout_seconds,
    created_at: at,
    updated_at: at,
    finished_at: null,
    reason: null,
    result: null,
  };
  sql.exec(
    `INSERT INTO runs (id, job_id, status, changed_files, timeout_seconds, created_at, updated_at, sweep_at, version, synced_version)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, 1)`,
    record.id,
    init.job_id,
    record.status,
    JSON.stringify(record.changed_files),
    record.timeout_seconds,
    at,
    at,
    runSweepAt(record, null),
  );
  return accept({ record, files: runFiles(overlay, record.changed_files) });
}

/** Forgets a reserved run that never reached D1. */
export function deleteRun(sql: SqlStorage, runId: string): void {
  sql.exec("DELETE FROM runs WHERE id = ?", runId);
}

export function readStoredRun(sql: SqlStorage, runId: string): StoredRun | null {
  const row = sql.exec<RunRow>("SELECT * FROM runs WHERE id = ?", runId).toArray()[0];
  return row ? { record: toRunRecord(row, currentAttempt(sql).id), job_id: row.job_id } : null;
}

/** The run once it has ended, with its attempt's candidate; null while it is in flight, or when there is no such run. */
export function endedRun(sql: SqlStorage, runId: string): EndedRun | null {
  const row = sql.exec<Pick<RunRow, "status" | "result">>("SELECT status, result FROM runs WHERE id = ?", runId).toArray()[0];
  if (!row || row.status === "queued") return null;
  const attempt = currentAttempt(sql);
  const result = row.result === null ? null : (JSON.parse(row.result) as RunRecord["result"]);
  return { attempt_id: attempt.id, candidate_id: attempt.candidate_id, run_id: runId, status: row.status, counts: result?.counts ?? null };
}

/** Gives a run still in flight its final status; true when this call did. */
export function finishQueuedRun(sql: SqlStorage, runId: string, jobId: string | null, outcome: RunOutcome): boolean {
  const at = iso(Date.now());
  const { rowsWritten } = sql.exec(
    `UPDATE runs SET status = ?, reason = ?, result = ?, finished_at = ?, updated_at = ?, job_id = coalesce(job_id, ?),
       sweep_at = NULL, version = version + 1
     WHERE id = ? AND status = 'queued'`,
    outcome.status,
    outcome.reason,
    outcome.result === null ? null : JSON.stringify(outcome.result),
    at,
    at,
    jobId,
    runId,
  );
  return rowsWritten > 0;
}

/**
 * Runs whose sweep time has come. A run whose job has ended is recorded from the job (its
 * completion message may still be on its way); one the runner has not answered for within
 * its bound is given up, which ends its job ERROR; any other waits for the job's own bound.
 */
export async function sweepDueRuns(env: Env, sql: SqlStorage, jobs: RunSweepJobs, nowMs: number): Promise<void> {
  const due = sql.exec<RunRow>("SELECT * FROM runs WHERE status = 'queued' AND sweep_at <= ?", nowMs).toArray();
  for (const run of due) {
    try {
      await sweepRun(env, sql, jobs, run, nowMs);
    } catch (e) {
      log("error", "attempt: run sweep failed, retrying by alarm", { run_id: run.id, error: String(e) });
      sql.exec("UPDATE runs SET sweep_at = ? WHERE id = ? AND status = 'queued'", nowMs + RETRY_BY_ALARM_MS, run.id);
    }
  }
}

async function sweepRun(env: Env, sql: SqlStorage, jobs: RunSweepJobs, run: RunRow, nowMs: number): Promise<void> {
  if (run.job_id === null) {
    // Stored before runs were stored with their job's id, and stopped before its job was queued.
    await sweptFinish(env, sql, run.id, null, { status: "ERROR", reason: "the run was interrupted before it was queued", result: null });
    return;
  }
  let job = await jobs.runnerJob(env, run.job_id);
  if (job && !isFinalStatus(job.status)) {
    const record = toRunRecord(run, currentAttempt(sql).id);
    const sweepAt = runSweepAt(record, job.dispatchedAt);
    if (sweepAt > nowMs) {
      sql.exec("UPDATE runs SET sweep_at = ? WHERE id = ? AND status = 'queued'", sweepAt, run.id);
      return;
    }
    await jobs.giveUpRunnerJob(env, job.id, sweepReason(record, job.dispatchedAt));
    job = await jobs.runnerJob(env, job.id);
  }
  if (!job) {
    await sweptFinish(env, sql, run.id, run.job_id, { status: "ERROR", reason: `its runner job ${run.job_id} is missing`, result: null });
  } else if (isFinalStatus(job.status)) {
    await sweptFinish(env, sql, run.id, job.id, { status: job.status, reason: job.reason, result: job.result && runSummary(job.result) });
  }
}

/**
 * A run the sweep ends. The object records it, as it records the runs their jobs' handlers
 * end; telling the candidate is the run-ended flow's (flows/runs/run-finished.flow.ts), reached
 * through the notification queue, whose consumer calls it at least once: an object decides no
 * notifications. Like every notification, a message that cannot be queued is logged, not
 * retried: the run has ended either way.
 */
async function sweptFinish(env: Env, sql: SqlStorage, runId: string, jobId: string | null, outcome: RunOutcome): Promise<void> {
  if (!finishQueuedRun(sql, runId, jobId, outcome)) return;
  const run = endedRun(sql, runId);
  if (!run) return;
  try {
    await env.NOTIFICATION_EVENTS.send({ type: "run_ended", run });
  } catch (e) {
    log("error", "attempt: a swept run's announcement could not be queued", { run_id: runId, error: String(e) });
  }
}
