import { writeAttemptThrough } from "../../db/attempts.queries";
import { database } from "../../db/client";
import { writeRunThrough } from "../../db/runs.queries";
import { summarizeSubmission } from "../../domain/attempts";
import { overlayManifest } from "../../domain/overlay";
import type { Env } from "../../env";
import { log } from "../../lib/log";
import { liveSaveDue } from "./attempt-live";
import { currentAttempt, iso, readAttempt, readOverlay, readSubmissionPayload, toRecord, toRunRecord, type RunRow } from "./attempt-storage";
import { sha256Hex } from "../../lib/digest";

/** How soon a failed write-through to D1, scoring enqueue or run sweep is tried again, by alarm. */
export const RETRY_BY_ALARM_MS = 30_000;

/**
 * Completes what a change owes the outside, each step at most once: the submission's
 * summary (with the frozen overlay's digest), the write-through to D1, the scoring message,
 * the runs' write-through. On failure the alarm tries again; the deadline alarm, the
 * runs' sweeps and the live edits' save are kept either way.
 */
export async function syncChangeOutside(env: Env, storage: DurableObjectStorage, scoringDelaySeconds = 0): Promise<void> {
  const sql = storage.sql;
  let failed = false;
  try {
    await storeSubmissionSummary(sql);
    await writeAttemptToD1(env, sql);
    await enqueueScoring(env, sql, scoringDelaySeconds);
    await writeRunsToD1(env, sql);
  } catch (e) {
    failed = true;
    log("error", "attempt: sync to D1 and scoring failed, retrying by alarm", { attempt_id: readAttempt(sql)?.id, error: String(e) });
  }
  const row = readAttempt(sql);
  const due: number[] = [];
  if (row?.status === "IN_PROGRESS" && row.deadline_at) due.push(Date.parse(row.deadline_at));
  if (failed) due.push(Date.now() + RETRY_BY_ALARM_MS);
  const sweep = sql.exec<{ at: number | null }>("SELECT min(sweep_at) AS at FROM runs WHERE status = 'queued'").one().at;
  if (sweep !== null) due.push(sweep);
  const liveSave = liveSaveDue(sql);
  if (liveSave !== null) due.push(liveSave);
  if (due.length > 0) await storage.setAlarm(Math.min(...due));
  else await storage.deleteAlarm();
}

async function storeSubmissionSummary(sql: SqlStorage): Promise<void> {
  const row = readAttempt(sql);
  if (!row || row.submission !== null || (row.status !== "SUBMITTED" && row.status !== "SCORED")) return;
  // The overlay is frozen once the attempt is submitted, so nothing changes it during the await.
  const entries = readOverlay(sql);
  const sha256 = await sha256Hex(overlayManifest(entries));
  const payload = readSubmissionPayload(sql);
  if (!payload) throw new Error(`submitted attempt ${row.id} has no submission payload`);
  const summary = summarizeSubmission(payload, {
    files: entries.length,
    total_bytes: entries.reduce((n, e) => n + e.size, 0),
    sha256,
  });
  sql.exec("UPDATE attempt SET submission = ?, version = version + 1 WHERE submission IS NULL", JSON.stringify(summary));
}

async function writeAttemptToD1(env: Env, sql: SqlStorage): Promise<void> {
  const row = readAttempt(sql);
  if (!row || row.version <= row.synced_version) return;
  await writeAttemptThrough(database(env.DB), toRecord(row), row.version);
  sql.exec("UPDATE attempt SET synced_version = max(synced_version, ?)", row.version);
}

async function writeRunsToD1(env: Env, sql: SqlStorage): Promise<void> {
  const stale = sql.exec<RunRow>("SELECT * FROM runs WHERE version > synced_version").toArray();
  if (stale.length === 0) return;
  const attemptId = currentAttempt(sql).id;
  for (const run of stale) {
    await writeRunThrough(database(env.DB), toRunRecord(run, attemptId), run.version);
    sql.exec("UPDATE runs SET synced_version = max(synced_version, ?) WHERE id = ?", run.version, run.id);
  }
}

async function enqueueScoring(env: Env, sql: SqlStorage, delaySeconds: number): Promise<void> {
  const row = readAttempt(sql);
  if (!row || row.status !== "SUBMITTED" || row.submission === null || row.scoring_enqueued_at !== null) return;
  await env.SCORING.send({ attempt_id: row.id }, { delaySeconds });
  sql.exec("UPDATE attempt SET scoring_enqueued_at = ?", iso(Date.now()));
}
