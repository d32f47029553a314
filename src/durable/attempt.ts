import { DurableObject } from "cloudflare:workers";
import { insertAttempt, insertIdeToken, revokeIdeTokenRow, writeAttemptThrough } from "../db/attempts";
import { database } from "../db/client";
import { findRunnerJob } from "../db/runner-jobs";
import { insertRun, writeRunThrough } from "../db/runs";
import {
  accept,
  deadlineFor,
  isOverdue,
  refuse,
  stateRefusal,
  summarizeSubmission,
  type AttemptRecord,
  type AttemptStatus,
  type Outcome,
  type SubmissionPayload,
} from "../domain/attempts";
import { IDE_SESSION_LIMITS, ideTokenProblem, isActive } from "../domain/ide-sessions";
import { overlayManifest, planOverlay, type OverlayEntry } from "../domain/overlay";
import { isFinalStatus, type OverlayFile } from "../domain/runner-jobs";
import {
  inFlightRefusal,
  runFiles,
  runJobSpec,
  runSummary,
  runSweepAt,
  sweepReason,
  unknownPathIssues,
  type RunOutcome,
  type RunRecord,
  type RunTask,
  type StoredRunStatus,
} from "../domain/runs";
import type { Env } from "../env";
import { log } from "../services/log";
import { constantTimeEqual } from "../services/hmac";
import { enqueueRunnerJob, giveUpRunnerJob } from "../services/runner/jobs";

/**
 * Who acts on an attempt: its candidate with a session (the route has checked that against
 * the attempt's candidate), or the holder of an IDE session token, checked here.
 */
export type AttemptActor = { kind: "candidate" } | { kind: "ide"; tokenHash: string };

export type NewAttempt = Pick<AttemptRecord, "id" | "task_id" | "organization_id" | "candidate_id" | "time_limit_minutes">;

/** One entry of a PATCH, decoded and hashed by the route so the object only checks and stores. */
export type StagedChange = { path: string; op: "upsert"; content: Uint8Array; sha256: string } | { path: string; op: "delete" };

export interface OverlaySaved {
  saved: number;
  files: number;
  total_bytes: number;
  updated_at: string;
}

export interface IdeSessionOpened {
  expires_at: string;
  active_sessions: number;
}

/** A run to queue: its id, the overlay paths it includes (as the client listed them), and its task. */
export interface NewRun {
  id: string;
  changed_files: string[];
  timeout_seconds: number;
  task: RunTask;
}

/** A run and its runner job (null until the job is queued). */
export interface StoredRun {
  record: RunRecord;
  job_id: string | null;
}

type StateRow = {
  id: string;
  task_id: string;
  organization_id: string;
  candidate_id: string;
  status: AttemptStatus;
  time_limit_minutes: number | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  deadline_at: string | null;
  submitted_at: string | null;
  auto_submitted: number;
  score_id: string | null;
  submission: string | null;
  /** Counts changes of the record; D1 takes a write-through only over an older version. */
  version: number;
  synced_version: number;
  scoring_enqueued_at: string | null;
};

type TokenRow = { token_hash: string; expires_at: string; revoked_at: string | null };
type RunRow = {
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
type OverlayRow = { path: string; op: "upsert" | "delete"; size: number; sha256: string | null; updated_at: string };

// The object's own SQLite database: one attempt, its overlay, its IDE tokens, the full
// submission (the git diff and behavior signals are too large for the D1 row), and its test
// runs. Runs live here, written through to D1 like the attempt, because their bound in
// flight, the attempt's state and the overlay they copy must be read and changed in one step.
const SCHEMA = `
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
`;

/** How soon a failed write-through to D1 or scoring enqueue is tried again, by alarm. */
const SETTLE_RETRY_MS = 30_000;

const iso = (ms: number) => new Date(ms).toISOString();

/** The AttemptDO of an attempt: one per attempt id. */
export function attemptObject(env: Env, attemptId: string): DurableObjectStub<AttemptDO> {
  return env.ATTEMPTS.get(env.ATTEMPTS.idFromName(attemptId));
}

/**
 * The only writer of one attempt's state (docs/api.md, "Attempts"): state machine, deadline
 * alarm, changes overlay, IDE tokens and test runs. Every check and change of an operation
 * runs without an await between them, so the object's input gate makes operations atomic and
 * serial: of 20 concurrent submits exactly one passes, and a submit and the deadline alarm
 * cannot both.
 * D1 is written after the change is stored (`settle`); when that fails an alarm retries it.
 */
export class AttemptDO extends DurableObject<Env> {
  // Write-throughs run one after another, so a slow one never lands after a newer one.
  private settling: Promise<void> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(SCHEMA);
  }

  /** `oneSubmission`: whether the candidate's attempts on the task are bounded (docs/api.md, "Retakes"). */
  async create(init: NewAttempt, oneSubmission: boolean): Promise<AttemptRecord | null> {
    if (this.row()) throw new Error(`attempt ${init.id} exists already`);
    const now = iso(Date.now());
    const record: AttemptRecord = {
      ...init,
      status: "NOT_STARTED",
      created_at: now,
      updated_at: now,
      started_at: null,
      deadline_at: null,
      submitted_at: null,
      auto_submitted: false,
      score_id: null,
      submission: null,
    };
    this.sql.exec(
      `INSERT INTO attempt (id, task_id, organization_id, candidate_id, status, time_limit_minutes, created_at, updated_at, version, synced_version)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, 1)`,
      record.id,
      record.task_id,
      record.organization_id,
      record.candidate_id,
      record.status,
      record.time_limit_minutes,
      record.created_at,
      record.updated_at,
    );
    // D1 is the guard across attempts (the unique index on open ones, the bound on how many);
    // without its row this attempt does not exist.
    let inserted = false;
    try {
      inserted = await insertAttempt(database(this.env.DB), record, 1, oneSubmission);
    } finally {
      if (!inserted) this.sql.exec("DELETE FROM attempt");
    }
    return inserted ? record : null;
  }

  async record(): Promise<AttemptRecord | null> {
    const row = this.row();
    return row ? toRecord(row) : null;
  }

  async start(actor: AttemptActor): Promise<Outcome<AttemptRecord>> {
    const denied = this.actorRefusal(actor);
    if (denied) return denied;
    const record = this.current();
    const refusal = stateRefusal("start", record);
    if (refusal) return { ok: false, refusal };
    const now = Date.now();
    const deadline = deadlineFor(now, record.time_limit_minutes);
    this.update(now, { status: "IN_PROGRESS", started_at: iso(now), deadline_at: deadline === null ? null : iso(deadline) });
    await this.settle();
    return accept(this.current());
  }

  async submit(actor: AttemptActor, payload: SubmissionPayload): Promise<Outcome<AttemptRecord>> {
    const lockedByDeadline = this.lockIfOverdue(Date.now());
    const outcome = this.submitNow(actor, payload);
    if (lockedByDeadline || outcome.ok) await this.settle();
    return outcome.ok ? accept(this.current()) : outcome;
  }

  async applyChanges(changes: StagedChange[]): Promise<Outcome<OverlaySaved>> {
    const lockedByDeadline = this.lockIfOverdue(Date.now());
    const outcome = this.applyNow(changes);
    if (lockedByDeadline) await this.settle();
    return outcome;
  }

  async overlay(): Promise<OverlayEntry[]> {
    return this.sql.exec<OverlayRow>("SELECT path, op, size, sha256, updated_at FROM overlay ORDER BY path").toArray();
  }

  async overlayFile(path: string): Promise<{ entry: OverlayEntry; content: ArrayBuffer | null } | null> {
    const row = this.sql
      .exec<OverlayRow & { content: ArrayBuffer | null }>("SELECT path, op, size, sha256, updated_at, content FROM overlay WHERE path = ?", path)
      .toArray()[0];
    if (!row) return null;
    const { content, ...entry } = row;
    return { entry, content };
  }

  async openIdeSession(tokenHash: string, expiresAt: string): Promise<Outcome<IdeSessionOpened>> {
    const now = Date.now();
    const lockedByDeadline = this.lockIfOverdue(now);
    const outcome = this.openIdeSessionNow(now, tokenHash, expiresAt);
    if (lockedByDeadline) await this.settle();
    if (!outcome.ok) return outcome;
    // The D1 index is how a bearer token finds this attempt; a token without it would never work.
    try {
      await insertIdeToken(database(this.env.DB), { tokenHash, attemptId: this.current().id, expiresAt, createdAt: iso(now) });
    } catch (e) {
      this.sql.exec("DELETE FROM ide_tokens WHERE token_hash = ?", tokenHash);
      throw e;
    }
    return outcome;
  }

  /** Revokes a token of this attempt; unknown and already revoked tokens are left as they are. */
  async revokeIdeSession(tokenHash: string): Promise<void> {
    this.sql.exec("UPDATE ide_tokens SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL", iso(Date.now()), tokenHash);
    const token = this.sql.exec<TokenRow>("SELECT * FROM ide_tokens WHERE token_hash = ?", tokenHash).toArray()[0];
    if (token?.revoked_at) await revokeIdeTokenRow(database(this.env.DB), tokenHash, token.revoked_at);
  }

  /**
   * Queues a test run of the overlay entries named in `changed_files` (docs/api.md, "Runs").
   * The checks and the run's row are one step without an await, so concurrent requests
   * cannot pass the bound on runs in flight together. Then the D1 row (which the job's
   * completion looks the run up by) and the runner job; a run whose job could not be queued ends ERROR.
   */
  async createRun(init: NewRun): Promise<Outcome<RunRecord>> {
    const now = Date.now();
    const lockedByDeadline = this.lockIfOverdue(now);
    const reserved = this.reserveRun(now, init);
    // The run's sweep is on the alarm before anything below can stop half-way.
    if (lockedByDeadline || reserved.ok) await this.settle();
    if (!reserved.ok) return reserved;
    const { record, files } = reserved.value;
    try {
      await insertRun(database(this.env.DB), record, 1);
    } catch (e) {
      this.sql.exec("DELETE FROM runs WHERE id = ?", record.id);
      throw e;
    }
    try {
      const job = await enqueueRunnerJob(this.env, runJobSpec(record, init.task, files));
      this.sql.exec("UPDATE runs SET job_id = ? WHERE id = ? AND job_id IS NULL", job.id, record.id);
    } catch (e) {
      this.finishRunNow(record.id, null, { status: "ERROR", reason: `the run could not be queued: ${String(e)}`, result: null });
      await this.settle();
      throw e;
    }
    return accept(record);
  }

  async run(runId: string): Promise<StoredRun | null> {
    return this.storedRun(runId);
  }

  /** Records how a run's job ended; a repeated or late report changes nothing. Runs finish after submission too. */
  async finishRun(runId: string, jobId: string, outcome: RunOutcome): Promise<void> {
    if (this.finishRunNow(runId, jobId, outcome)) await this.settle();
  }

  /** The overlay as frozen at submission, with contents, for scoring; null before submission. */
  async frozenOverlay(): Promise<{ path: string; op: "upsert" | "delete"; content: ArrayBuffer | null }[] | null> {
    const status = this.row()?.status;
    if (status !== "SUBMITTED" && status !== "SCORED") return null;
    return this.sql
      .exec<{ path: string; op: "upsert" | "delete"; content: ArrayBuffer | null }>("SELECT path, op, content FROM overlay ORDER BY path")
      .toArray();
  }

  /** The submit payload as the client sent it (the D1 row keeps only its summary). */
  async submissionPayload(): Promise<SubmissionPayload | null> {
    const row = this.sql.exec<{ payload: string }>("SELECT payload FROM submission").toArray()[0];
    return row ? (JSON.parse(row.payload) as SubmissionPayload) : null;
  }

  /** Scoring finished: SUBMITTED → SCORED with the report's id; a re-score moves score_id on. */
  async markScored(scoreId: string): Promise<AttemptRecord> {
    const row = this.row();
    if (!row || (row.status !== "SUBMITTED" && row.status !== "SCORED")) throw new Error("only a submitted attempt is scored");
    if (row.score_id !== scoreId) this.update(Date.now(), { status: "SCORED", score_id: scoreId });
    await this.settle();
    return this.current();
  }

  /** The deadline (auto-submit with the work saved so far), runs overdue for a result, and retries of a failed settle. */
  override async alarm(): Promise<void> {
    this.lockIfOverdue(Date.now());
    await this.sweepRuns(Date.now());
    await this.settle();
  }

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  private row(): StateRow | undefined {
    return this.sql.exec<StateRow>("SELECT * FROM attempt").toArray()[0];
  }

  private current(): AttemptRecord {
    const row = this.row();
    if (!row) throw new Error("the attempt object has no attempt");
    return toRecord(row);
  }

  private update(nowMs: number, fields: Partial<Omit<StateRow, "version" | "synced_version" | "updated_at">>): void {
    const names = Object.keys(fields);
    this.sql.exec(
      `UPDATE attempt SET ${names.map((n) => `${n} = ?`).join(", ")}, updated_at = ?, version = version + 1`,
      ...Object.values(fields),
      iso(nowMs),
    );
  }

  /** 401 unless an IDE actor's token is one of this attempt's, unexpired and unrevoked. */
  private actorRefusal(actor: AttemptActor): Outcome<never> | undefined {
    if (actor.kind === "candidate") return undefined;
    let match: TokenRow | undefined;
    for (const token of this.sql.exec<TokenRow>("SELECT token_hash, expires_at, revoked_at FROM ide_tokens")) {
      if (constantTimeEqual(token.token_hash, actor.tokenHash)) match = token;
    }
    const problem = match ? ideTokenProblem(match, Date.now()) : "This IDE session token is not valid for this attempt";
    return problem ? refuse(401, problem) : undefined;
  }

  /** Locks an attempt whose deadline has passed with the work saved so far. True when it did. */
  private lockIfOverdue(nowMs: number): boolean {
    const row = this.row();
    if (!row || !isOverdue(toRecord(row), nowMs)) return false;
    this.lock(nowMs, {}, true);
    return true;
  }

  private lock(nowMs: number, payload: SubmissionPayload, auto: boolean): void {
    this.ctx.storage.transactionSync(() => {
      this.update(nowMs, { status: "SUBMITTED", submitted_at: iso(nowMs), auto_submitted: auto ? 1 : 0 });
      this.sql.exec("INSERT INTO submission (id, payload) VALUES (1, ?)", JSON.stringify(payload));
    });
  }

  private submitNow(actor: AttemptActor, payload: SubmissionPayload): Outcome<true> {
    const denied = this.actorRefusal(actor);
    if (denied) return denied;
    const refusal = stateRefusal("submit", this.current());
    if (refusal) return { ok: false, refusal };
    this.lock(Date.now(), payload, false);
    return accept(true);
  }

  private applyNow(changes: StagedChange[]): Outcome<OverlaySaved> {
    const refusal = stateRefusal("change", this.current());
    if (refusal) return { ok: false, refusal };
    const sizes = new Map(this.sql.exec<{ path: string; size: number }>("SELECT path, size FROM overlay").toArray().map((r) => [r.path, r.size]));
    const plan = planOverlay(
      sizes,
      changes.map((c) => ({ path: c.path, op: c.op, size: c.op === "upsert" ? c.content.byteLength : 0 })),
    );
    if (!plan.ok) return plan;
    const at = iso(Date.now());
    this.ctx.storage.transactionSync(() => {
      for (const change of changes) {
        const [content, size, sha256] = change.op === "upsert" ? [change.content, change.content.byteLength, change.sha256] : [null, 0, null];
        this.sql.exec(
          `INSERT INTO overlay (path, op, content, size, sha256, updated_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (path) DO UPDATE SET op = excluded.op, content = excluded.content, size = excluded.size,
             sha256 = excluded.sha256, updated_at = excluded.updated_at`,
          change.path,
          change.op,
          content,
          size,
          sha256,
          at,
        );
      }
    });
    return accept({ saved: changes.length, files: plan.files, total_bytes: plan.totalBytes, updated_at: at });
  }

  private openIdeSessionNow(nowMs: number, tokenHash: string, expiresAt: string): Outcome<IdeSessionOpened> {
    const record = this.current();
    const refusal = stateRefusal("ide-session", record);
    if (refusal) return { ok: false, refusal };
    const active = this.sql.exec<TokenRow>("SELECT token_hash, expires_at, revoked_at FROM ide_tokens").toArray().filter((t) => isActive(t, nowMs));
    if (active.length >= IDE_SESSION_LIMITS.maxActive) {
      return refuse(
        409,
        `Attempt ${record.id} already has ${IDE_SESSION_LIMITS.maxActive} active IDE session tokens; revoke one with ` +
          `DELETE /api/v1/attempts/${record.id}/ide-session/{token}, or wait until one expires`,
      );
    }
    this.sql.exec("INSERT INTO ide_tokens (token_hash, expires_at, created_at) VALUES (?, ?, ?)", tokenHash, expiresAt, iso(nowMs));
    return accept({ expires_at: expiresAt, active_sessions: active.length + 1 });
  }

  private reserveRun(nowMs: number, init: NewRun): Outcome<{ record: RunRecord; files: OverlayFile[] }> {
    const attempt = this.current();
    const refusal = stateRefusal("run", attempt);
    if (refusal) return { ok: false, refusal };
    const overlay = this.sql
      .exec<{ path: string; op: "upsert" | "delete"; content: ArrayBuffer | null }>("SELECT path, op, content FROM overlay ORDER BY path")
      .toArray()
      .map((e) => ({ path: e.path, op: e.op, content: e.content === null ? null : new Uint8Array(e.content) }));
    const issues = unknownPathIssues(init.changed_files, new Set(overlay.map((e) => e.path)));
    if (issues.length > 0) return { ok: false, refusal: { status: 422, detail: issues } };
    const { n } = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM runs WHERE status = 'queued'").one();
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
    this.sql.exec(
      `INSERT INTO runs (id, status, changed_files, timeout_seconds, created_at, updated_at, sweep_at, version, synced_version)
       VALUES (?, ?, ?, ?, ?, ?, ?, 1, 1)`,
      record.id,
      record.status,
      JSON.stringify(record.changed_files),
      record.timeout_seconds,
      at,
      at,
      runSweepAt(record, null),
    );
    return accept({ record, files: runFiles(overlay, record.changed_files) });
  }

  private storedRun(runId: string): StoredRun | null {
    const row = this.sql.exec<RunRow>("SELECT * FROM runs WHERE id = ?", runId).toArray()[0];
    return row ? { record: toRunRecord(row, this.current().id), job_id: row.job_id } : null;
  }

  /** Gives a run still in flight its final status; true when this call did. */
  private finishRunNow(runId: string, jobId: string | null, outcome: RunOutcome): boolean {
    const at = iso(Date.now());
    const { rowsWritten } = this.sql.exec(
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
  private async sweepRuns(nowMs: number): Promise<void> {
    const due = this.sql.exec<RunRow>("SELECT * FROM runs WHERE status = 'queued' AND sweep_at <= ?", nowMs).toArray();
    for (const run of due) {
      try {
        await this.sweepRun(run, nowMs);
      } catch (e) {
        log("error", "attempt: run sweep failed, retrying by alarm", { run_id: run.id, error: String(e) });
        this.sql.exec("UPDATE runs SET sweep_at = ? WHERE id = ? AND status = 'queued'", nowMs + SETTLE_RETRY_MS, run.id);
      }
    }
  }

  private async sweepRun(run: RunRow, nowMs: number): Promise<void> {
    if (run.job_id === null) {
      // The object stopped between storing the run and queuing its job.
      this.finishRunNow(run.id, null, { status: "ERROR", reason: "the run was interrupted before it was queued", result: null });
      return;
    }
    const db = database(this.env.DB);
    let job = await findRunnerJob(db, run.job_id);
    if (job && !isFinalStatus(job.status)) {
      const record = toRunRecord(run, this.current().id);
      const sweepAt = runSweepAt(record, job.dispatchedAt);
      if (sweepAt > nowMs) {
        this.sql.exec("UPDATE runs SET sweep_at = ? WHERE id = ? AND status = 'queued'", sweepAt, run.id);
        return;
      }
      await giveUpRunnerJob(this.env, job.id, sweepReason(record, job.dispatchedAt));
      job = await findRunnerJob(db, job.id);
    }
    if (!job) {
      this.finishRunNow(run.id, run.job_id, { status: "ERROR", reason: `its runner job ${run.job_id} is missing`, result: null });
    } else if (isFinalStatus(job.status)) {
      this.finishRunNow(run.id, job.id, { status: job.status, reason: job.reason, result: job.result && runSummary(job.result) });
    }
  }

  private settle(): Promise<void> {
    const run = this.settling.then(() => this.settleNow());
    this.settling = run.catch(() => undefined);
    return run;
  }

  /**
   * Completes what a change owes the outside, each step at most once: the submission's
   * summary (with the frozen overlay's digest), the write-through to D1, the scoring message,
   * the runs' write-through. On failure the alarm tries again; the deadline alarm and the
   * runs' sweeps are kept either way.
   */
  private async settleNow(): Promise<void> {
    let failed = false;
    try {
      await this.seal();
      await this.writeThrough();
      await this.enqueueScoring();
      await this.writeRunsThrough();
    } catch (e) {
      failed = true;
      log("error", "attempt: settle failed, retrying by alarm", { attempt_id: this.row()?.id, error: String(e) });
    }
    const row = this.row();
    const due: number[] = [];
    if (row?.status === "IN_PROGRESS" && row.deadline_at) due.push(Date.parse(row.deadline_at));
    if (failed) due.push(Date.now() + SETTLE_RETRY_MS);
    const sweep = this.sql.exec<{ at: number | null }>("SELECT min(sweep_at) AS at FROM runs WHERE status = 'queued'").one().at;
    if (sweep !== null) due.push(sweep);
    if (due.length > 0) await this.ctx.storage.setAlarm(Math.min(...due));
    else await this.ctx.storage.deleteAlarm();
  }

  private async seal(): Promise<void> {
    const row = this.row();
    if (!row || row.submission !== null || (row.status !== "SUBMITTED" && row.status !== "SCORED")) return;
    // The overlay is frozen once the attempt is locked, so nothing changes it during the await.
    const entries = await this.overlay();
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(overlayManifest(entries)));
    const sha256 = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    const { payload } = this.sql.exec<{ payload: string }>("SELECT payload FROM submission").one();
    const summary = summarizeSubmission(JSON.parse(payload) as SubmissionPayload, {
      files: entries.length,
      total_bytes: entries.reduce((n, e) => n + e.size, 0),
      sha256,
    });
    this.sql.exec("UPDATE attempt SET submission = ?, version = version + 1 WHERE submission IS NULL", JSON.stringify(summary));
  }

  private async writeThrough(): Promise<void> {
    const row = this.row();
    if (!row || row.version <= row.synced_version) return;
    await writeAttemptThrough(database(this.env.DB), toRecord(row), row.version);
    this.sql.exec("UPDATE attempt SET synced_version = max(synced_version, ?)", row.version);
  }

  private async writeRunsThrough(): Promise<void> {
    const stale = this.sql.exec<RunRow>("SELECT * FROM runs WHERE version > synced_version").toArray();
    if (stale.length === 0) return;
    const attemptId = this.current().id;
    for (const run of stale) {
      await writeRunThrough(database(this.env.DB), toRunRecord(run, attemptId), run.version);
      this.sql.exec("UPDATE runs SET synced_version = max(synced_version, ?) WHERE id = ?", run.version, run.id);
    }
  }

  private async enqueueScoring(): Promise<void> {
    const row = this.row();
    if (!row || row.status !== "SUBMITTED" || row.submission === null || row.scoring_enqueued_at !== null) return;
    await this.env.SCORING.send({ attempt_id: row.id });
    this.sql.exec("UPDATE attempt SET scoring_enqueued_at = ?", iso(Date.now()));
  }
}

function toRecord(row: StateRow): AttemptRecord {
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

function toRunRecord(row: RunRow, attemptId: string): RunRecord {
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
