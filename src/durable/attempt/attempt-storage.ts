import type { AttemptRecord, SubmissionPayload } from "../../domain/attempts";
import type { OverlayEntry, OverlayOp } from "../../domain/overlay";
import type { OverlayContent, RunRecord, StoredRunStatus } from "../../domain/runs";
import type { FrozenEntry, StagedChange } from "./attempt-types";

// The object's own SQLite database: one attempt, its overlay, its IDE tokens, the full
// submission (the git diff and behavior signals are too large for the D1 row), and its test
// runs. Runs live here, written through to D1 like the attempt, because their bound in
// flight, the attempt's state and the overlay they copy must be read and changed in one step.
// The save history (saves.ts) keeps every change to the overlay, which holds only the latest.
// ai_chat_sends holds the times of the AI chat messages within the rate window (ai-chat.ts);
// AUTOINCREMENT keeps counting the messages after older rows are pruned.
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS attempt (
  id TEXT PRIMARY KEY, task_id TEXT NOT NULL, organization_id TEXT NOT NULL, candidate_id TEXT NOT NULL,
  status TEXT NOT NULL, time_limit_minutes INTEGER, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  started_at TEXT, deadline_at TEXT, submitted_at TEXT, auto_submitted INTEGER NOT NULL DEFAULT 0,
  score_id TEXT, submission TEXT, version INTEGER NOT NULL, synced_version INTEGER NOT NULL,
  scoring_enqueued_at TEXT
);
CREATE TABLE IF NOT EXISTS overlay (
  path TEXT PRIMARY KEY, op TEXT NOT NULL, content BLOB, size INTEGER NOT NULL, sha256 TEXT, updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ide_tokens (
  token_hash TEXT PRIMARY KEY, expires_at TEXT NOT NULL, revoked_at TEXT, created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS submission (
  id INTEGER PRIMARY KEY CHECK (id = 1), payload TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY, job_id TEXT, status TEXT NOT NULL, changed_files TEXT NOT NULL, timeout_seconds INTEGER NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, finished_at TEXT, reason TEXT, result TEXT,
  sweep_at INTEGER, version INTEGER NOT NULL, synced_version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS saves (
  seq INTEGER PRIMARY KEY, save INTEGER NOT NULL, at TEXT NOT NULL, path TEXT NOT NULL, op TEXT NOT NULL,
  size INTEGER NOT NULL, sha256 TEXT
);
CREATE INDEX IF NOT EXISTS saves_by_save ON saves (save);
CREATE INDEX IF NOT EXISTS saves_by_time ON saves (at, save);
CREATE INDEX IF NOT EXISTS saves_by_path ON saves (path, save);
CREATE TABLE IF NOT EXISTS save_contents (
  sha256 TEXT PRIMARY KEY, content BLOB NOT NULL, size INTEGER NOT NULL, last_seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS save_contents_by_age ON save_contents (last_seq, size);
CREATE TABLE IF NOT EXISTS ai_chat_sends (
  turn INTEGER PRIMARY KEY AUTOINCREMENT, at_ms INTEGER NOT NULL
);
`;

/** The attempt as its row stores it: SQLite has no booleans, and the submission summary is JSON. */
export type StateRow = Omit<AttemptRecord, "auto_submitted" | "submission"> & {
  auto_submitted: number;
  submission: string | null;
  /** Counts changes of the record; D1 takes a write-through only over an older version. */
  version: number;
  synced_version: number;
  scoring_enqueued_at: string | null;
};

export type TokenRow = { token_hash: string; expires_at: string; revoked_at: string | null };
export type RunRow = {
  id: string;
  job_id: string | null;
  status: StoredRunStatus;
  changed_files: string;
  timeout_seconds: number;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  reason: string | null;
  result: string | null;
  /** When the alarm checks on the run next (Unix ms); null once it is finished. */
  sweep_at: number | null;
  version: number;
  synced_version: number;
};
export type OverlayRow = { path: string; op: OverlayOp; size: number; sha256: string | null; updated_at: string };
/** An overlay entry with its stored content (null for a deletion). */
export type OverlayContentRow = { path: string; op: OverlayOp; content: ArrayBuffer | null };

export const iso = (ms: number) => new Date(ms).toISOString();

export function readAttempt(sql: SqlStorage): StateRow | undefined {
  return sql.exec<StateRow>("SELECT * FROM attempt").toArray()[0];
}

export function currentAttempt(sql: SqlStorage): AttemptRecord {
  const row = readAttempt(sql);
  if (!row) throw new Error("the attempt object has no attempt");
  return toRecord(row);
}

export function updateAttempt(sql: SqlStorage, nowMs: number, fields: Partial<Omit<StateRow, "version" | "synced_version" | "updated_at">>): void {
  const names = Object.keys(fields);
  sql.exec(
    `UPDATE attempt SET ${names.map((n) => `${n} = ?`).join(", ")}, updated_at = ?, version = version + 1`,
    ...Object.values(fields),
    iso(nowMs),
  );
}

export function readOverlay(sql: SqlStorage): OverlayEntry[] {
  return sql.exec<OverlayRow>("SELECT path, op, size, sha256, updated_at FROM overlay ORDER BY path").toArray();
}

/**
 * Makes `files` the whole overlay (a submission by diff). An entry the saved overlay held with
 * the same content keeps its updated_at: the overlay's last change, which scoring compares
 * with the runs, stays when the work last changed.
 */
export function replaceOverlay(sql: SqlStorage, files: readonly StagedChange[], at: string): void {
  const saved = new Map(readOverlay(sql).map((e) => [e.path, e]));
  sql.exec("DELETE FROM overlay");
  for (const file of files) {
    const [content, size, sha256] = file.op === "upsert" ? [file.content, file.content.byteLength, file.sha256] : [null, 0, null];
    const before = saved.get(file.path);
    const updatedAt = before && before.op === file.op && before.sha256 === sha256 ? before.updated_at : at;
    sql.exec(
      "INSERT INTO overlay (path, op, content, size, sha256, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
      file.path,
      file.op,
      content,
      size,
      sha256,
      updatedAt,
    );
  }
}

export function readOverlayContents(sql: SqlStorage): OverlayContentRow[] {
  return sql.exec<OverlayContentRow>("SELECT path, op, content FROM overlay ORDER BY path").toArray();
}

/** The overlay with its contents and change times, as scoring reads it once it is frozen. */
export function readFrozenOverlay(sql: SqlStorage): FrozenEntry[] {
  return sql.exec<FrozenEntry>("SELECT path, op, content, updated_at FROM overlay ORDER BY path").toArray();
}

/** The overlay with its contents as bytes, as the runner's files are built from it. */
export function readOverlayBytes(sql: SqlStorage): OverlayContent[] {
  return readOverlayContents(sql).map((e) => ({ path: e.path, op: e.op, content: e.content === null ? null : new Uint8Array(e.content) }));
}

export function readSubmissionPayload(sql: SqlStorage): SubmissionPayload | null {
  const row = sql.exec<{ payload: string }>("SELECT payload FROM submission").toArray()[0];
  return row ? (JSON.parse(row.payload) as SubmissionPayload) : null;
}

export function readIdeTokens(sql: SqlStorage): TokenRow[] {
  return sql.exec<TokenRow>("SELECT token_hash, expires_at, revoked_at FROM ide_tokens").toArray();
}

export function toRecord(row: StateRow): AttemptRecord {
  return {
    id: row.id,
    task_id: row.task_id,
    organization_id: row.organization_id,
    candidate_id: row.candidate_id,
    status: row.status,
    time_limit_minutes: row.time_limit_minutes,
    created_at: row.created_at,
    updated_at: row.updated_at,
    started_at: row.started_at,
    deadline_at: row.deadline_at,
    submitted_at: row.submitted_at,
    auto_submitted: row.auto_submitted === 1,
    score_id: row.score_id,
    submission: row.submission === null ? null : (JSON.parse(row.submission) as AttemptRecord["submission"]),
  };
}

export function toRunRecord(row: RunRow, attemptId: string): RunRecord {
  return {
    id: row.id,
    attempt_id: attemptId,
    status: row.status,
    changed_files: JSON.parse(row.changed_files) as string[],
    timeout_seconds: row.timeout_seconds,
    created_at: row.created_at,
    updated_at: row.updated_at,
    finished_at: row.finished_at,
    reason: row.reason,
    result: row.result === null ? null : (JSON.parse(row.result) as RunRecord["result"]),
  };
}
