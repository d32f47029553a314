import { DurableObject } from "cloudflare:workers";
import { insertAttempt, insertIdeToken, revokeIdeTokenRow, writeAttemptThrough } from "../db/attempts";
import { database } from "../db/client";
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
import type { Env } from "../env";
import { constantTimeEqual } from "../services/hmac";

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
type OverlayRow = { path: string; op: "upsert" | "delete"; size: number; sha256: string | null; updated_at: string };

// The object's own SQLite database: one attempt, its overlay, its IDE tokens, and the full
// submission (the git diff and behavior signals are too large for the D1 row).
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
 * alarm, changes overlay and IDE tokens. Every check and change of an operation runs without
 * an await between them, so the object's input gate makes operations atomic and serial: of
 * 20 concurrent submits exactly one passes, and a submit and the deadline alarm cannot both.
 * D1 is written after the change is stored (`settle`); when that fails an alarm retries it.
 */
export class AttemptDO extends DurableObject<Env> {
  // Write-throughs run one after another, so a slow one never lands after a newer one.
  private settling: Promise<void> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(SCHEMA);
  }

  async create(init: NewAttempt): Promise<AttemptRecord | null> {
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
    // D1's unique index on open attempts is the guard across attempts; without its row this
    // attempt does not exist.
    let inserted = false;
    try {
      inserted = await insertAttempt(database(this.env.DB), record, 1);
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

  /** The deadline (auto-submit with the work saved so far), and retries of a failed settle. */
  override async alarm(): Promise<void> {
    this.lockIfOverdue(Date.now());
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

  private settle(): Promise<void> {
    const run = this.settling.then(() => this.settleNow());
    this.settling = run.catch(() => undefined);
    return run;
  }

  /**
   * Completes what a change owes the outside, each step at most once: the submission's
   * summary (with the frozen overlay's digest), the write-through to D1, the scoring message.
   * On failure the alarm tries again; the deadline alarm is kept either way.
   */
  private async settleNow(): Promise<void> {
    let failed = false;
    try {
      await this.seal();
      await this.writeThrough();
      await this.enqueueScoring();
    } catch (e) {
      failed = true;
      console.error(
        JSON.stringify({ level: "error", msg: "attempt: settle failed, retrying by alarm", attempt_id: this.row()?.id, error: String(e) }),
      );
    }
    const row = this.row();
    const due: number[] = [];
    if (row?.status === "IN_PROGRESS" && row.deadline_at) due.push(Date.parse(row.deadline_at));
    if (failed) due.push(Date.now() + SETTLE_RETRY_MS);
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
