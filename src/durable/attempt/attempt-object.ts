import { DurableObject } from "cloudflare:workers";
import { insertAttempt, insertIdeToken, revokeIdeTokenRow } from "../../db/attempts.queries";
import { database } from "../../db/client";
import { insertRun } from "../../db/runs.queries";
import { deadlineFor, isOverdue, stateRefusal, type AttemptRecord, type SubmissionPayload } from "../../domain/attempts";
import { accept, refuse, type Outcome } from "../../domain/outcome";
import type { SavedFileLookup, SaveEntry, SaveGroup } from "../../domain/evaluation";
import { IDE_SESSION_LIMITS, ideTokenProblem, isActive } from "../../domain/ide-sessions";
import { KEYSTROKE_LIMITS, type KeystrokeEdit, type KeystrokeItem, type RecordingState } from "../../domain/keystrokes";
import { planOverlay, type OverlayEntry } from "../../domain/overlay";
import { runFiles, type EndedRun, type RunOutcome } from "../../domain/runs";
import type { OverlayFile } from "../../domain/runner-jobs";
import { SCORING_START_BACKSTOP_SECONDS } from "../../domain/scoring-jobs";
import { PING, PONG, type LiveNote, type LiveParticipant } from "../../../protocol/socket-messages";
import type { Env } from "../../env";
import { constantTimeEqual } from "../../lib/hmac";
import { reserveChatTurn } from "./attempt-ai-chat";
import {
  announceReadOnly,
  broadcastLive,
  closeLiveSocket,
  hasLiveDocument,
  isLiveSocket,
  LIVE_SCHEMA,
  liveNoteCount,
  liveParticipants,
  liveRunMessage,
  liveSaveDue,
  LiveSession,
  readLiveNotes,
  type LiveHost,
  type LiveSnapshot,
} from "./attempt-live";
import {
  KEYSTROKE_SCHEMA,
  keystrokeItemCount,
  readKeystrokeItems,
  readPastes,
  recordedLengths,
  recordingState,
  recordKeystrokeEdits,
  type KeystrokesRecorded,
} from "./attempt-keystrokes";
import { deleteRun, endedRun, finishQueuedRun, readStoredRun, reserveRun, sweepDueRuns } from "./attempt-runs";
import { readSavedFile, readSaveEntries, readSaveGroups, recordSaves, saveHistorySize, type SaveBound } from "./attempt-saves";
import {
  SCHEMA,
  currentAttempt,
  iso,
  readAttempt,
  readIdeTokens,
  readOverlay,
  readFrozenOverlay,
  readOverlayBytes,
  readSubmissionPayload,
  replaceOverlay,
  toRecord,
  updateAttempt,
  type OverlayRow,
  type TokenRow,
} from "./attempt-storage";
import { syncChangeOutside } from "./attempt-sync";
import type {
  AttemptActor,
  IdeSessionOpened,
  NewAttempt,
  NewRun,
  OverlaySaved,
  ReservedRun,
  RunSweepJobs,
  StagedChange,
  StoredRun,
  SubmittedWork,
} from "./attempt-types";

/** The AttemptDO of an attempt: one per attempt id. */
export function attemptObject(env: Env, attemptId: string): DurableObjectStub<AttemptObject> {
  return env.ATTEMPTS.get(env.ATTEMPTS.idFromName(attemptId)) as unknown as DurableObjectStub<AttemptObject>;
}

/**
 * The only writer of one attempt's state (docs/api.md, "Attempts"): state machine, deadline
 * alarm, changes overlay and its save history, IDE tokens, test runs and the AI chat's window.
 * Every check and change of an operation runs without an await between them, so the object's
 * input gate makes operations atomic and serial: of 20 concurrent submits exactly one passes,
 * and a submit and the deadline alarm cannot both.
 * D1 is written after the change is stored (`syncOutside`); when that fails an alarm retries it.
 */
export abstract class AttemptObject extends DurableObject<Env> {
  // Write-throughs run one after another, so a slow one never lands after a newer one.
  private syncing: Promise<void> = Promise.resolve();
  /** The runner-job lifecycle, which its run sweep calls; the class the Worker exports (src/index.ts) gives it. */
  protected abstract readonly runnerJobs: RunSweepJobs;
  /** How a live session reads the task's snapshot (a flow's), which the class the Worker exports gives it. */
  protected abstract readonly liveSnapshot: LiveSnapshot;
  private liveSession: LiveSession | undefined;
  /** Wake-ups of the GETs waiting for a run's end (waitForRunEnd), by run id. */
  private readonly runWaiters = new Map<string, Set<() => void>>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(SCHEMA);
    ctx.storage.sql.exec(KEYSTROKE_SCHEMA);
    ctx.storage.sql.exec(LIVE_SCHEMA);
    // The live sockets' keep-alive, answered without waking the object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PING, PONG));
  }

  /** `oneSubmission`: whether the candidate's attempts on the task are bounded (docs/api.md, "Retakes"). */
  async create(init: NewAttempt, oneSubmission: boolean): Promise<AttemptRecord | null> {
    if (readAttempt(this.sql)) throw new Error(`attempt ${init.id} exists already`);
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
    const row = readAttempt(this.sql);
    return row ? toRecord(row) : null;
  }

  async start(actor: AttemptActor): Promise<Outcome<AttemptRecord>> {
    const denied = this.actorRefusal(actor);
    if (denied) return denied;
    const record = currentAttempt(this.sql);
    const refusal = stateRefusal("start", record);
    if (refusal) return { ok: false, refusal };
    const now = Date.now();
    const deadline = deadlineFor(now, record.time_limit_minutes);
    updateAttempt(this.sql, now, { status: "IN_PROGRESS", started_at: iso(now), deadline_at: deadline === null ? null : iso(deadline) });
    await this.syncOutside();
    return accept(currentAttempt(this.sql));
  }

  /**
   * `diffFiles`: the files of a submission by diff (flows/submission.flow.ts), which replace the
   * saved overlay in the step that locks the attempt; null submits the overlay as saved.
   */
  async submit(actor: AttemptActor, payload: SubmissionPayload, diffFiles: StagedChange[] | null): Promise<Outcome<AttemptRecord>> {
    await this.saveLiveEdits();
    const autoSubmitted = this.autoSubmitIfOverdue(Date.now());
    const outcome = this.submitNow(actor, payload, diffFiles);
    // The caller starts scoring a submit of its own (submission.flow.ts); the queue's message follows.
    if (autoSubmitted || outcome.ok) await this.syncOutside(autoSubmitted ? 0 : SCORING_START_BACKSTOP_SECONDS);
    return outcome.ok ? accept(currentAttempt(this.sql)) : outcome;
  }

  async applyChanges(changes: StagedChange[]): Promise<Outcome<OverlaySaved>> {
    const autoSubmitted = this.autoSubmitIfOverdue(Date.now());
    const outcome = this.applyNow(changes);
    if (outcome.ok && hasLiveDocument(this.sql)) this.live.savedElsewhere(changes);
    if (autoSubmitted) await this.syncOutside();
    return outcome;
  }

  async overlay(): Promise<OverlayEntry[]> {
    return readOverlay(this.sql);
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
    const autoSubmitted = this.autoSubmitIfOverdue(now);
    const outcome = this.openIdeSessionNow(now, tokenHash, expiresAt);
    if (autoSubmitted) await this.syncOutside();
    if (!outcome.ok) return outcome;
    // The D1 index is how a bearer token finds this attempt; a token without it would never work.
    try {
      await insertIdeToken(database(this.env.DB), { tokenHash, attemptId: currentAttempt(this.sql).id, expiresAt, createdAt: iso(now) });
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
   * Stores a test run of the overlay entries named in `changed_files` (docs/api.md, "Runs"),
   * queued, for its runner job, which the caller queues next (flows/runs/run-create.flow.ts). The
   * checks and the run's row are one step without an await, so concurrent requests cannot
   * pass the bound on runs in flight together. Then the D1 row, which the job's completion
   * looks the run up by. A run whose job is never queued is ended by its sweep.
   */
  async reserveRun(init: NewRun): Promise<Outcome<ReservedRun>> {
    await this.saveLiveEdits();
    const now = Date.now();
    const autoSubmitted = this.autoSubmitIfOverdue(now);
    const reserved = reserveRun(this.sql, now, init);
    // The run's sweep is on the alarm before anything below can stop half-way.
    if (autoSubmitted || reserved.ok) await this.syncOutside();
    if (!reserved.ok) return reserved;
    try {
      await insertRun(database(this.env.DB), reserved.value.record, 1);
    } catch (e) {
      deleteRun(this.sql, init.id);
      throw e;
    }
    broadcastLive(this.ctx, liveRunMessage(reserved.value.record));
    return reserved;
  }

  /**
   * The overlay as a live execution's files (docs/api.md, "Live code execution"): all of it,
   * while the attempt is in progress; an overdue attempt is submitted first and refuses.
   */
  async executionFiles(): Promise<Outcome<OverlayFile[]>> {
    await this.saveLiveEdits();
    if (this.autoSubmitIfOverdue(Date.now())) await this.syncOutside();
    const refusal = stateRefusal("execute", currentAttempt(this.sql));
    if (refusal) return { ok: false, refusal };
    const entries = readOverlayBytes(this.sql);
    return accept(runFiles(entries, entries.map((e) => e.path)));
  }

  /**
   * Counts an AI chat message (docs/limits.md, "AI chat"): its candidate's or one of its IDE
   * tokens', while the attempt is in progress and its window has room. Returns the message's
   * turn. An overdue attempt is submitted first and refuses.
   */
  async reserveChatMessage(actor: AttemptActor): Promise<Outcome<number>> {
    const now = Date.now();
    const autoSubmitted = this.autoSubmitIfOverdue(now);
    const outcome = this.actorRefusal(actor) ?? reserveChatTurn(this.sql, currentAttempt(this.sql), now);
    if (autoSubmitted) await this.syncOutside();
    return outcome;
  }

  /**
   * Which of `paths` are entries of the overlay (upserts: a deleted file is no longer the
   * attempt's) and which of `runIds` are runs of the attempt: telemetry may name only these.
   */
  async knownReferences(paths: string[], runIds: string[]): Promise<{ paths: string[]; runIds: string[] }> {
    const overlay = new Set(readOverlay(this.sql).filter((e) => e.op === "upsert").map((e) => e.path));
    return { paths: paths.filter((p) => overlay.has(p)), runIds: runIds.filter((id) => readStoredRun(this.sql, id) !== null) };
  }

  async findRun(runId: string): Promise<StoredRun | null> {
    return readStoredRun(this.sql, runId);
  }

  /**
   * Resolves once the run has ended, or after `waitMs`, whichever comes first: a GET of the run
   * that asked to wait (`Prefer: wait`). The waiters live in memory only: an object that goes
   * away ends the call, and the GET answers the run as it stands.
   */
  async waitForRunEnd(runId: string, waitMs: number): Promise<void> {
    if (readStoredRun(this.sql, runId)?.record.status !== "queued") return;
    const waiters = this.runWaiters.get(runId) ?? new Set<() => void>();
    this.runWaiters.set(runId, waiters);
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0 && this.runWaiters.get(runId) === waiters) this.runWaiters.delete(runId);
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      waiters.add(done);
    });
  }

  /**
   * Records how a run's job ended; a repeated or late report changes nothing. Runs finish
   * after submission too. Returns the run once it has ended, by this call or an earlier one.
   */
  async finishRun(runId: string, jobId: string, outcome: RunOutcome): Promise<EndedRun | null> {
    if (finishQueuedRun(this.sql, runId, jobId, outcome)) {
      const run = readStoredRun(this.sql, runId);
      if (run) broadcastLive(this.ctx, liveRunMessage(run.record));
      this.wakeRunWaiters();
      await this.syncOutside();
    }
    return endedRun(this.sql, runId);
  }

  /** All that scoring reads of a submitted attempt, in one call; null before submission. */
  async submittedWork(): Promise<SubmittedWork | null> {
    const row = readAttempt(this.sql);
    if (row?.status !== "SUBMITTED" && row?.status !== "SCORED") return null;
    const payload = readSubmissionPayload(this.sql);
    if (!payload) throw new Error(`submitted attempt ${row.id} has no submission payload`);
    return { record: toRecord(row), payload, overlay: readFrozenOverlay(this.sql) };
  }

  /** The submit payload as the client sent it (the D1 row keeps only its summary). */
  async submissionPayload(): Promise<SubmissionPayload | null> {
    return readSubmissionPayload(this.sql);
  }

  /**
   * The candidate's explanation from the submit payload; null before submission or without one.
   * Reports and the timeline read only this, not the payload with its git_diff of up to megabytes.
   */
  async submittedExplanation(): Promise<string | null> {
    return readSubmissionPayload(this.sql)?.explanation ?? null;
  }

  /** Up to `limit` saves after `after`, in time order, with their files (the evaluation timeline). */
  async saveGroups(after: SaveBound | null, limit: number): Promise<SaveGroup[]> {
    return readSaveGroups(this.sql, after, limit);
  }

  /** How many entries the save history holds now, and how many its bound dropped. */
  async saveHistorySize(): Promise<{ entries: number; dropped: number }> {
    return saveHistorySize(this.sql);
  }

  /** A page of the save history's entries, oldest first. */
  async saveHistory(limit: number, offset: number): Promise<SaveEntry[]> {
    return readSaveEntries(this.sql, limit, offset);
  }

  /** A file as of a save, for a replay: its newest change up to that save. */
  async savedFile(save: number, path: string): Promise<SavedFileLookup> {
    return readSavedFile(this.sql, save, path);
  }

  /**
   * Records a batch of the editor's edits (docs/api.md, "Keystroke recording") while the attempt
   * is in progress; `bases` holds the text of each file it names that the recording does not
   * have yet (keystrokeFiles). An overdue attempt is submitted first and refuses.
   */
  async recordKeystrokes(edits: KeystrokeEdit[], bases: Record<string, string>): Promise<Outcome<KeystrokesRecorded>> {
    const autoSubmitted = this.autoSubmitIfOverdue(Date.now());
    const refusal = stateRefusal("change", currentAttempt(this.sql));
    const outcome: Outcome<KeystrokesRecorded> = refusal ? { ok: false, refusal } : recordKeystrokeEdits(this.ctx.storage, edits, bases);
    if (autoSubmitted) await this.syncOutside();
    return outcome;
  }

  /** The length of each of `paths` the keystroke recording has a text of. */
  async keystrokeFiles(paths: string[]): Promise<Record<string, number>> {
    return recordedLengths(this.sql, paths);
  }

  /** The keystroke recording's size and state, and its first pastes for the playback's markers. */
  async keystrokeSummary(): Promise<RecordingState & { items: number; pastes: { seq: number; t: number; path: string }[] }> {
    return { ...recordingState(this.sql), items: keystrokeItemCount(this.sql), pastes: readPastes(this.sql, KEYSTROKE_LIMITS.markers) };
  }

  /** A page of the keystroke recording, in recording order. */
  async keystrokeItems(limit: number, offset: number): Promise<KeystrokeItem[]> {
    return readKeystrokeItems(this.sql, limit, offset);
  }

  /** Scoring finished: SUBMITTED → SCORED with the report's id; a re-score moves score_id on. */
  async markScored(scoreId: string): Promise<AttemptRecord> {
    const row = readAttempt(this.sql);
    if (!row || (row.status !== "SUBMITTED" && row.status !== "SCORED")) throw new Error("only a submitted attempt is scored");
    if (row.score_id !== scoreId) updateAttempt(this.sql, Date.now(), { status: "SCORED", score_id: scoreId });
    await this.syncOutside();
    return currentAttempt(this.sql);
  }

  /**
   * Live edits due to be saved, the deadline (auto-submit with the work saved so far), runs
   * overdue for a result, and retries of a failed sync.
   */
  override async alarm(): Promise<void> {
    const liveDue = liveSaveDue(this.sql);
    if (liveDue !== null && liveDue <= Date.now()) await this.saveLiveEdits();
    this.autoSubmitIfOverdue(Date.now());
    await sweepDueRuns(this.env, this.sql, this.runnerJobs, Date.now());
    this.wakeRunWaiters();
    await this.syncOutside();
  }

  /** A live execution of the attempt started: the live sessions' staff open its socket to watch. */
  async announceExecution(executionId: string): Promise<void> {
    broadcastLive(this.ctx, { type: "execution", execution_id: executionId });
  }

  /** Who is in the attempt's live session now. */
  async livePresence(): Promise<LiveParticipant[]> {
    return liveParticipants(this.ctx);
  }

  /** A page of the live session's staff notes, oldest first, and how many there are. */
  async liveNotes(limit: number, offset: number): Promise<{ notes: LiveNote[]; total: number }> {
    return { notes: readLiveNotes(this.sql, limit, offset), total: liveNoteCount(this.sql) };
  }

  /** The live session's socket (docs/api.md, "Live sessions"), handed over by the Worker with who the caller is. */
  override async fetch(request: Request): Promise<Response> {
    return this.live.accept(request);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    if (isLiveSocket(this.ctx, ws)) await this.live.message(ws, message);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    if (isLiveSocket(this.ctx, ws)) this.live.closed(ws);
    closeLiveSocket(ws, code, reason);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    if (isLiveSocket(this.ctx, ws)) this.live.closed(ws);
  }

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  /** The live session's document, loaded from storage on first use after the object woke. */
  private get live(): LiveSession {
    this.liveSession ??= new LiveSession(this.ctx, this.liveHost());
    return this.liveSession;
  }

  private liveHost(): LiveHost {
    return {
      state: async () => {
        const row = readAttempt(this.sql);
        if (row && isOverdue(toRecord(row), Date.now())) {
          await this.saveLiveEdits();
          if (this.autoSubmitIfOverdue(Date.now())) await this.syncOutside();
        }
        const { id, status } = currentAttempt(this.sql);
        return { id, status };
      },
      save: (changes) => this.applyNow(changes),
      snapshotFile: (path) => this.liveSnapshot.snapshotFile(this.env, currentAttempt(this.sql).task_id, path),
    };
  }

  /** Saves what was typed live and is not saved yet, through the one save path; nothing to do without a live document. */
  private async saveLiveEdits(): Promise<void> {
    if (liveSaveDue(this.sql) !== null) await this.live.flush();
  }

  /** Answers the waiting GETs of every run that has ended. */
  private wakeRunWaiters(): void {
    for (const [runId, waiters] of this.runWaiters) {
      if (readStoredRun(this.sql, runId)?.record.status === "queued") continue;
      for (const wake of [...waiters]) wake();
    }
  }

  /** Brings D1, the scoring queue and the alarm up to the stored state, one sync after another. */
  private syncOutside(scoringDelaySeconds = 0): Promise<void> {
    const sync = this.syncing.then(() => syncChangeOutside(this.env, this.ctx.storage, scoringDelaySeconds));
    this.syncing = sync.catch(() => undefined);
    return sync;
  }

  /** Unauthenticated unless an IDE actor's token is one of this attempt's, unexpired and unrevoked. */
  private actorRefusal(actor: AttemptActor): Outcome<never> | undefined {
    if (actor.kind === "candidate") return undefined;
    let match: TokenRow | undefined;
    for (const token of readIdeTokens(this.sql)) {
      if (constantTimeEqual(token.token_hash, actor.tokenHash)) match = token;
    }
    const problem = match ? ideTokenProblem(match, Date.now()) : "This IDE session token is not valid for this attempt";
    return problem ? refuse("unauthenticated", problem) : undefined;
  }

  /** Submits an attempt whose deadline has passed with the work saved so far. True when it did. */
  private autoSubmitIfOverdue(nowMs: number): boolean {
    const row = readAttempt(this.sql);
    if (!row || !isOverdue(toRecord(row), nowMs)) return false;
    this.recordSubmission(nowMs, {}, true, null);
    return true;
  }

  /** SUBMITTED with the payload, and the diff's files as the overlay, in one transaction: from here the overlay is frozen. */
  private recordSubmission(nowMs: number, payload: SubmissionPayload, auto: boolean, diffFiles: StagedChange[] | null): void {
    this.ctx.storage.transactionSync(() => {
      if (diffFiles) replaceOverlay(this.sql, diffFiles, iso(nowMs));
      updateAttempt(this.sql, nowMs, { status: "SUBMITTED", submitted_at: iso(nowMs), auto_submitted: auto ? 1 : 0 });
      this.sql.exec("INSERT INTO submission (id, payload) VALUES (1, ?)", JSON.stringify(payload));
    });
    announceReadOnly(this.ctx);
  }

  private submitNow(actor: AttemptActor, payload: SubmissionPayload, diffFiles: StagedChange[] | null): Outcome<true> {
    const denied = this.actorRefusal(actor);
    if (denied) return denied;
    const refusal = stateRefusal("submit", currentAttempt(this.sql));
    if (refusal) return { ok: false, refusal };
    if (diffFiles) {
      // The diff's files are the whole overlay, so they are held to its limits on their own.
      const plan = planOverlay(
        new Map(),
        diffFiles.map((f) => ({ path: f.path, op: f.op, size: f.op === "upsert" ? f.content.byteLength : 0 })),
      );
      if (!plan.ok) return plan;
    }
    this.recordSubmission(Date.now(), payload, false, diffFiles);
    return accept(true);
  }

  private applyNow(changes: StagedChange[]): Outcome<OverlaySaved> {
    const refusal = stateRefusal("change", currentAttempt(this.sql));
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
      recordSaves(this.sql, at, changes);
    });
    return accept({ saved: changes.length, files: plan.files, total_bytes: plan.totalBytes, updated_at: at });
  }

  private openIdeSessionNow(nowMs: number, tokenHash: string, expiresAt: string): Outcome<IdeSessionOpened> {
    const record = currentAttempt(this.sql);
    const refusal = stateRefusal("ide-session", record);
    if (refusal) return { ok: false, refusal };
    const active = readIdeTokens(this.sql).filter((t) => isActive(t, nowMs));
    if (active.length >= IDE_SESSION_LIMITS.maxActive) {
      return refuse(
        "conflict",
        `Attempt ${record.id} already has ${IDE_SESSION_LIMITS.maxActive} active IDE session tokens; revoke one with ` +
          `DELETE /api/v1/attempts/${record.id}/ide-session/{token}, or wait until one expires`,
      );
    }
    this.sql.exec("INSERT INTO ide_tokens (token_hash, expires_at, created_at) VALUES (?, ?, ?)", tokenHash, expiresAt, iso(nowMs));
    return accept({ expires_at: expiresAt, active_sessions: active.length + 1 });
  }
}
