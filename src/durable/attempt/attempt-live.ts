import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import * as sync from "y-protocols/sync";
import * as Y from "yjs";
import {
  LIVE_CLOSE_CODES,
  LIVE_FILES_MAP,
  LIVE_FRAME,
  LIVE_LIMITS,
  liveClientMessageSchema,
  parseSocketMessage,
  type LiveNote,
  type LiveParticipant,
  type LiveRun,
  type LiveServerMessage,
} from "../../../protocol/socket-messages";
import type { Outcome } from "../../domain/outcome";
import { overlayPathProblem } from "../../domain/overlay";
import type { RunRecord } from "../../domain/runs";
import type { Env } from "../../env";
import { sha256Hex } from "../../lib/digest";
import { takeTicketHeader, TICKET_HEADER, TICKETS_SCHEMA } from "../socket-tickets";
import type { OverlaySaved, StagedChange } from "./attempt-types";

// The attempt's live session (docs/api.md, "Live sessions"): one shared Yjs document per
// attempt, whose sockets the AttemptDO accepts with the Hibernation API. The document is
// stored as its updates, appended as they come and compacted into one now and then, so an
// object that hibernated or was evicted loads it again as it was. Client edits mark their
// files dirty; the object's alarm saves them to the attempt's changes through the one save
// path (AttemptObject.applyChanges' step), and a submit, run or execution saves them first.

export const LIVE_SCHEMA = `
CREATE TABLE IF NOT EXISTS live_updates (seq INTEGER PRIMARY KEY AUTOINCREMENT, data BLOB NOT NULL, part INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS live_dirty (path TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS live_save (id INTEGER PRIMARY KEY CHECK (id = 1), due_ms INTEGER NOT NULL, first_ms INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS live_notes (
  id INTEGER PRIMARY KEY AUTOINCREMENT, author_id TEXT NOT NULL, author_name TEXT NOT NULL, text TEXT NOT NULL, at TEXT NOT NULL
);
${TICKETS_SCHEMA}`;

/** WebSocket's OPEN ready state (the runtime's class has no static for it). */
const WS_OPEN = 1;
/** The tag of a live socket among the object's hibernatable sockets. */
const LIVE_TAG = "live";
/** Stored updates beyond which the document is compacted into one. */
const COMPACT_AT = 256;
/** A compacted document is stored in rows of at most this many bytes: a SQLite row of a Durable Object holds at most 2 MB. */
const ROW_BYTES = 1024 * 1024;
/** Transaction origins that are not a client's edit, so mark nothing dirty. */
const SEEDED = Symbol("seeded");
const SAVED_ELSEWHERE = Symbol("saved elsewhere");

/** How the Worker hands a socket to the object: who the caller is, checked by the Worker. */
export const LIVE_SOCKET_HEADERS = { user: "X-Assay-Live-User", name: "X-Assay-Live-Name", role: "X-Assay-Live-Role", ticket: TICKET_HEADER } as const;

/** Who a live socket is, kept across hibernation; `clients`: the awareness client ids it speaks for, with their last clock. */
interface LiveAttachment {
  user_id: string;
  name: string;
  role: LiveParticipant["role"];
  clients: Record<string, number>;
}

/** What the live session asks of the object it lives in. */
export interface LiveHost {
  /** The attempt's id and status now; an overdue attempt is saved and submitted first. */
  state(): Promise<{ id: string; status: "NOT_STARTED" | "IN_PROGRESS" | "SUBMITTED" | "SCORED" }>;
  /** The one save path: stores the changes and their save history in one step, or refuses. */
  save(changes: StagedChange[]): Outcome<OverlaySaved>;
  /** The task snapshot's bytes of a file; null when the snapshot has none; undefined when it is too large or not stored. */
  snapshotFile(path: string): Promise<Uint8Array | null | undefined>;
}

/** How a live session reads a file of the task's snapshot: a flow's, handed to the object by the class the Worker exports. */
export interface LiveSnapshot {
  /** The file's bytes; null when the snapshot has no such file; undefined when it is too large or the snapshot is not stored. */
  snapshotFile(env: Env, taskId: string, path: string): Promise<Uint8Array | null | undefined>;
}

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function send(ws: WebSocket, message: LiveServerMessage | Uint8Array): void {
  try {
    ws.send(message instanceof Uint8Array ? message : JSON.stringify(message));
  } catch {
    // A socket closing meanwhile misses it; its reconnect syncs the document again.
  }
}

function attachmentOf(ws: WebSocket): LiveAttachment | null {
  return ws.deserializeAttachment() as LiveAttachment | null;
}

function liveSockets(ctx: DurableObjectState, except?: WebSocket): WebSocket[] {
  return ctx.getWebSockets(LIVE_TAG).filter((ws) => ws !== except && ws.readyState === WS_OPEN);
}

/** Sends `message` to every live socket, or to staff only. */
export function broadcastLive(ctx: DurableObjectState, message: LiveServerMessage, staffOnly = false): void {
  for (const ws of liveSockets(ctx)) if (!staffOnly || attachmentOf(ws)?.role === "staff") send(ws, message);
}

/** Who is connected now, once per user and role, in the order they came. */
export function liveParticipants(ctx: DurableObjectState, except?: WebSocket): LiveParticipant[] {
  const seen = new Map<string, LiveParticipant>();
  for (const ws of liveSockets(ctx, except)) {
    const a = attachmentOf(ws);
    if (a && !seen.has(`${a.role}:${a.user_id}`)) seen.set(`${a.role}:${a.user_id}`, { user_id: a.user_id, name: a.name, role: a.role });
  }
  return [...seen.values()];
}

/** The `run` message of a run as stored now. */
export function liveRunMessage(run: RunRecord): LiveServerMessage {
  const view: LiveRun = {
    run_id: run.id,
    status: run.status,
    changed_files: run.changed_files,
    created_at: run.created_at,
    finished_at: run.finished_at,
    reason: run.reason,
    counts: run.result?.counts ?? null,
  };
  return { type: "run", ...view };
}

/** When the live edits are next due to be saved; null with none waiting. */
export function liveSaveDue(sql: SqlStorage): number | null {
  return sql.exec<{ due_ms: number }>("SELECT due_ms FROM live_save").toArray()[0]?.due_ms ?? null;
}

/** Whether the attempt has a live document at all, so an object without one never loads it. */
export function hasLiveDocument(sql: SqlStorage): boolean {
  return sql.exec("SELECT 1 FROM live_updates LIMIT 1").toArray().length > 0;
}

/** The staff notes, oldest first. */
export function readLiveNotes(sql: SqlStorage, limit: number = LIVE_LIMITS.notesPerAttempt, offset = 0): LiveNote[] {
  return sql
    .exec<{ id: number; author_id: string; author_name: string; text: string; at: string }>(
      "SELECT * FROM live_notes ORDER BY id LIMIT ? OFFSET ?",
      limit,
      offset,
    )
    .toArray()
    .map((n) => ({ id: n.id, author: { user_id: n.author_id, name: n.author_name }, text: n.text, at: n.at }));
}

export function liveNoteCount(sql: SqlStorage): number {
  return sql.exec<{ n: number }>("SELECT count(*) AS n FROM live_notes").one().n;
}

function frameBytes(message: string | ArrayBuffer): number {
  if (typeof message !== "string") return message.byteLength;
  return message.length * 3 <= LIVE_LIMITS.frameBytes ? message.length : utf8.encode(message).byteLength;
}

function syncFrame(write: (encoder: encoding.Encoder) => void): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, LIVE_FRAME.sync);
  write(encoder);
  return encoding.toUint8Array(encoder);
}

/** An awareness frame of the given states (clientID, clock, state as JSON), as y-protocols/awareness encodes one. */
function awarenessFrame(states: [number, number, string][]): Uint8Array {
  const update = encoding.createEncoder();
  encoding.writeVarUint(update, states.length);
  for (const [client, clock, state] of states) {
    encoding.writeVarUint(update, client);
    encoding.writeVarUint(update, clock);
    encoding.writeVarString(update, state);
  }
  const frame = encoding.createEncoder();
  encoding.writeVarUint(frame, LIVE_FRAME.awareness);
  encoding.writeVarUint8Array(frame, encoding.toUint8Array(update));
  return encoding.toUint8Array(frame);
}

function isEmptyUpdate(update: Uint8Array): boolean {
  const { structs, ds } = Y.decodeUpdate(update);
  return structs.length === 0 && ds.clients.size === 0;
}

/** The files a transaction touched: keys of the files map set or removed, and texts under it edited. */
function changedPaths(tr: Y.Transaction, files: Y.Map<unknown>): string[] {
  const paths = new Set<string>();
  for (const [type, keys] of tr.changed) {
    if ((type as unknown) === files) for (const key of keys) if (key !== null) paths.add(key);
    const item = type._item;
    if (item && item.parent === files && item.parentSub !== null) paths.add(item.parentSub);
  }
  return [...paths];
}

/** The shortest edit that turns `text` into `next`: the common head and tail are kept, so cursors elsewhere stay put. */
function replaceText(text: Y.Text, next: string): void {
  const now = text.toString();
  if (now === next) return;
  let head = 0;
  while (head < now.length && head < next.length && now[head] === next[head]) head++;
  let tail = 0;
  while (tail < now.length - head && tail < next.length - head && now[now.length - 1 - tail] === next[next.length - 1 - tail]) tail++;
  text.delete(head, now.length - head - tail);
  text.insert(head, next.slice(head, next.length - tail));
}

/** The overlay's own rule for a path, as PATCH .../changes applies it: the document names files as the overlay does. */
function pathProblem(path: string): string | null {
  const problem = overlayPathProblem(path);
  return problem ? `${JSON.stringify(path)}: ${problem}` : null;
}

/**
 * The live document of one attempt, loaded from storage when the object first needs it after
 * waking. Awareness states are relayed as they come and kept in memory only: clients renew
 * theirs every 15 s, and a socket's attachment keeps the ids it spoke for so that its
 * states are removed when it closes, even after the object hibernated.
 */
export class LiveSession {
  private readonly doc = new Y.Doc();
  private readonly files: Y.Map<unknown>;
  private readonly awareness = new Map<number, { clock: number; state: string }>();
  private readonly seeding = new Map<string, Promise<void>>();
  private flushes: Promise<void> = Promise.resolve();
  private storedUpdates: number;
  private storedBytes: number;
  private seeds = { since: 0, count: 0 };
  /** Files a client's transaction edited, marked dirty with its update. */
  private readonly edited: string[] = [];

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly host: LiveHost,
  ) {
    const rows = this.sql.exec<{ data: ArrayBuffer; part: number }>("SELECT data, part FROM live_updates ORDER BY seq").toArray();
    if (rows.length > 0) Y.applyUpdate(this.doc, Y.mergeUpdates(joinParts(rows)));
    this.storedUpdates = rows.length;
    this.storedBytes = rows.reduce((n, r) => n + r.data.byteLength, 0);
    this.files = this.doc.getMap(LIVE_FILES_MAP);
    this.doc.on("update", (update: Uint8Array, origin: unknown) => this.updated(update, origin));
    // Yjs calls afterTransaction before update: the paths wait for the update's own step.
    this.doc.on("afterTransaction", (tr: Y.Transaction) => {
      if (tr.origin !== SEEDED && tr.origin !== SAVED_ELSEWHERE) this.edited.push(...changedPaths(tr, this.files));
    });
  }

  /** Accepts a socket the Worker checked (its role and ticket in the headers), or refuses it as the API's error. */
  async accept(request: Request): Promise<Response> {
    const role = request.headers.get(LIVE_SOCKET_HEADERS.role) === "staff" ? "staff" : "candidate";
    const you = { user_id: request.headers.get(LIVE_SOCKET_HEADERS.user) ?? "", name: decodeURIComponent(request.headers.get(LIVE_SOCKET_HEADERS.name) ?? "") };
    const { id, status } = await this.host.state();
    if (status === "NOT_STARTED") return refusal(409, "The attempt has not been started; a live session opens once it is");
    if (!takeTicketHeader(this.sql, request.headers.get(LIVE_SOCKET_HEADERS.ticket), Date.now())) {
      return refusal(401, "This ticket has been used already; ask for a new one");
    }
    const open = liveSockets(this.ctx);
    if (open.length >= LIVE_LIMITS.socketsPerAttempt) {
      return refusal(429, `At most ${LIVE_LIMITS.socketsPerAttempt} live sockets may be open on one attempt; close one first`);
    }
    if (open.filter((ws) => attachmentOf(ws)?.role === role).length >= LIVE_LIMITS.socketsPerSide) {
      return refusal(429, `At most ${LIVE_LIMITS.socketsPerSide} live sockets of the ${role === "staff" ? "staff" : "candidate"} may be open on one attempt; close one first`);
    }
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server, [LIVE_TAG]);
    server.serializeAttachment({ ...you, role, clients: {} } satisfies LiveAttachment);
    const participants = liveParticipants(this.ctx);
    send(server, { type: "hello", attempt_id: id, role, read_only: status !== "IN_PROGRESS", you, participants });
    if (role === "staff") send(server, { type: "notes", notes: readLiveNotes(this.sql) });
    send(server, syncFrame((e) => sync.writeSyncStep1(e, this.doc)));
    if (this.awareness.size > 0) send(server, awarenessFrame([...this.awareness].map(([id, s]) => [id, s.clock, s.state])));
    for (const ws of liveSockets(this.ctx, server)) send(ws, { type: "presence", participants });
    return new Response(null, { status: 101, webSocket: client });
  }

  async message(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const who = attachmentOf(ws);
    if (!who) return;
    if (frameBytes(message) > LIVE_LIMITS.frameBytes) {
      send(ws, { type: "error", detail: `A frame may hold at most ${LIVE_LIMITS.frameBytes} bytes; this socket is closed` });
      ws.close(LIVE_CLOSE_CODES.tooLarge, "frame too large");
      return;
    }
    if (typeof message === "string") return this.control(ws, who, message);
    try {
      const decoder = decoding.createDecoder(new Uint8Array(message));
      const kind = decoding.readVarUint(decoder);
      if (kind === LIVE_FRAME.sync) return await this.syncMessage(ws, decoder);
      if (kind === LIVE_FRAME.awareness) return this.awarenessMessage(ws, who, decoding.readVarUint8Array(decoder));
      send(ws, { type: "error", detail: `Unknown binary frame kind ${kind}: 0 is sync, 1 is awareness` });
    } catch {
      send(ws, { type: "error", detail: "A binary frame that is not a Yjs sync or awareness message was ignored" });
    }
  }

  /** A socket went: its awareness states are removed for the others, and presence updated. */
  closed(ws: WebSocket): void {
    const who = attachmentOf(ws);
    const gone = Object.entries(who?.clients ?? {}).map(([id, clock]): [number, number, string] => [Number(id), clock + 1, "null"]);
    for (const [id] of gone) this.awareness.delete(id);
    const others = liveSockets(this.ctx, ws);
    const participants = liveParticipants(this.ctx, ws);
    for (const other of others) {
      if (gone.length > 0) send(other, awarenessFrame(gone));
      send(other, { type: "presence", participants });
    }
  }

  /**
   * Saves what clients typed and is not saved yet to the attempt's changes: each dirty file's
   * text as it is now, unless the changes hold it already. One save at a time; edits that come
   * while one hashes are saved by the next round, and the caller waits for all of them.
   */
  flush(): Promise<void> {
    const run = this.flushes.then(() => this.flushRounds());
    this.flushes = run.catch(() => undefined);
    return run;
  }

  /** The attempt's changes were saved by another client (PATCH .../changes): the document follows, and the saved text wins. */
  savedElsewhere(changes: readonly StagedChange[]): void {
    this.doc.transact(() => {
      for (const change of changes) {
        const text = this.files.get(change.path);
        if (text === undefined) continue;
        this.sql.exec("DELETE FROM live_dirty WHERE path = ?", change.path);
        if (change.op === "delete") this.files.delete(change.path);
        else if (text instanceof Y.Text) replaceText(text, new TextDecoder().decode(change.content));
      }
    }, SAVED_ELSEWHERE);
  }

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  private async flushRounds(): Promise<void> {
    // Each round saves what was dirty when it began; a bound keeps a client typing nonstop from holding a submit forever.
    for (let round = 0; round < 3 && this.sql.exec("SELECT 1 FROM live_dirty LIMIT 1").toArray().length > 0; round++) await this.flushOnce();
  }

  private async flushOnce(): Promise<void> {
    const paths = this.sql.exec<{ path: string }>("SELECT path FROM live_dirty ORDER BY path").toArray().map((r) => r.path);
    const texts = paths.map((path) => ({ path, value: this.files.get(path) }));
    this.sql.exec("DELETE FROM live_dirty");
    this.sql.exec("DELETE FROM live_save");
    const saved = new Map(
      this.sql.exec<{ path: string; op: string; sha256: string | null }>("SELECT path, op, sha256 FROM overlay").toArray().map((r) => [r.path, r]),
    );
    const changes: StagedChange[] = [];
    const problems: string[] = [];
    for (const { path, value } of texts) {
      const problem = pathProblem(path);
      if (problem) problems.push(problem);
      else if (value instanceof Y.Text) {
        const content = utf8.encode(value.toString());
        const sha256 = await sha256Hex(content);
        if (saved.get(path)?.sha256 !== sha256) changes.push({ path, op: "upsert", content, sha256 });
      } else if (value === undefined) {
        if (saved.get(path)?.op !== "delete") changes.push({ path, op: "delete" });
      } else problems.push(`${path}: the document holds no text there`);
    }
    if (problems.length > 0) broadcastLive(this.ctx, { type: "error", detail: `Not saved: ${problems.join("; ")}` });
    if (changes.length === 0) return;
    const outcome = this.host.save(changes);
    if (outcome.ok) broadcastLive(this.ctx, { type: "saved", at: outcome.value.updated_at, paths: changes.map((c) => c.path) });
    else broadcastLive(this.ctx, { type: "error", detail: `The edits were not saved: ${outcome.refusal.detail}` });
  }

  private async control(ws: WebSocket, who: LiveAttachment, raw: string): Promise<void> {
    const message = parseSocketMessage(liveClientMessageSchema, raw);
    if (!message) {
      return send(ws, { type: "error", detail: 'Not a live session message: send {"type":"open","path":…} or, staff only, {"type":"note_add","text":…}' });
    }
    if (message.type === "open") return this.open(ws, message.path);
    if (who.role !== "staff") return send(ws, { type: "error", detail: "Only staff of the organization may add notes" });
    if ((await this.host.state()).status !== "IN_PROGRESS") return send(ws, { type: "error", detail: "The attempt is submitted: the session is read-only, notes included" });
    if (liveNoteCount(this.sql) >= LIVE_LIMITS.notesPerAttempt) {
      return send(ws, { type: "error", detail: `An attempt keeps at most ${LIVE_LIMITS.notesPerAttempt} notes` });
    }
    const at = new Date().toISOString();
    const { id } = this.sql
      .exec<{ id: number }>("INSERT INTO live_notes (author_id, author_name, text, at) VALUES (?, ?, ?, ?) RETURNING id", who.user_id, who.name, message.text, at)
      .one();
    broadcastLive(this.ctx, { type: "note", id, author: { user_id: who.user_id, name: who.name }, text: message.text, at }, true);
  }

  /** Puts the attempt's current text of `path` into the document unless it has one; concurrent opens share one seeding. */
  private async open(ws: WebSocket, path: string): Promise<void> {
    const problem = pathProblem(path);
    if (problem) return send(ws, { type: "error", detail: problem });
    if (this.files.has(path)) return;
    let seeding = this.seeding.get(path);
    if (!seeding) {
      seeding = this.seed(path).finally(() => this.seeding.delete(path));
      this.seeding.set(path, seeding);
    }
    try {
      await seeding;
    } catch (e) {
      send(ws, { type: "error", detail: e instanceof SeedError ? e.message : `${path} could not be opened` });
    }
  }

  private async seed(path: string): Promise<void> {
    const saved = this.sql.exec<{ op: string; content: ArrayBuffer | null }>("SELECT op, content FROM overlay WHERE path = ?", path).toArray()[0];
    if (!saved && !this.takeSeed(Date.now())) {
      throw new SeedError(`${path} was not opened: a session opens at most ${LIVE_LIMITS.seedsPer10s} new files in 10 s; open it again in a few seconds`);
    }
    // A file deleted in the changes, or in neither the changes nor the snapshot, opens empty: typing in it creates it.
    const snapshot = saved ? null : await this.host.snapshotFile(path);
    if (snapshot === undefined) throw new SeedError(`${path} is larger than ${LIVE_LIMITS.fileBytes} bytes, or the task's snapshot is not stored`);
    const bytes = saved ? new Uint8Array(saved.content ?? new ArrayBuffer(0)) : (snapshot ?? new Uint8Array());
    if (bytes.byteLength > LIVE_LIMITS.fileBytes) throw new SeedError(`${path} is larger than ${LIVE_LIMITS.fileBytes} bytes: it cannot be opened live`);
    let text: string;
    try {
      text = strictUtf8.decode(bytes);
    } catch {
      throw new SeedError(`${path} is not UTF-8 text: it cannot be opened live`);
    }
    if (this.files.has(path)) return;
    if (!this.roomFor(bytes.byteLength)) throw new SeedError(`${path} does not fit: the live document holds at most ${LIVE_LIMITS.documentBytes} bytes`);
    this.doc.transact(() => this.files.set(path, new Y.Text(text)), SEEDED);
  }

  /** Counts a seed against LIVE_LIMITS.seedsPer10s, in memory: a window lost to hibernation only starts afresh. */
  private takeSeed(now: number): boolean {
    if (now - this.seeds.since >= 10_000) this.seeds = { since: now, count: 0 };
    return ++this.seeds.count <= LIVE_LIMITS.seedsPer10s;
  }

  private async syncMessage(ws: WebSocket, decoder: decoding.Decoder): Promise<void> {
    const step = decoding.readVarUint(decoder);
    if (step === sync.messageYjsSyncStep1) {
      const stateVector = decoding.readVarUint8Array(decoder);
      return send(ws, syncFrame((e) => sync.writeSyncStep2(e, this.doc, stateVector)));
    }
    if (step !== sync.messageYjsSyncStep2 && step !== sync.messageYjsUpdate) return send(ws, { type: "error", detail: `Unknown sync message ${step}` });
    const update = decoding.readVarUint8Array(decoder);
    if ((await this.host.state()).status !== "IN_PROGRESS") {
      // A client with nothing new answers the object's step 1 with an empty step 2: nothing to refuse.
      if (isEmptyUpdate(update)) return;
      return send(ws, { type: "error", detail: "The attempt is submitted: the session is read-only and this update was not applied" });
    }
    if (!this.roomFor(update.byteLength)) {
      return send(ws, { type: "error", detail: `The live document holds at most ${LIVE_LIMITS.documentBytes} bytes; this update was not applied` });
    }
    Y.applyUpdate(this.doc, update, ws);
    await this.scheduleSave();
  }

  /**
   * Keeps and relays a socket's awareness states, as the server's, not the client's, word on who
   * it is: a state names the socket's own user (its `user` id, name and role are overwritten with
   * those the Worker checked), a socket speaks for at most LIVE_LIMITS.awarenessClients client ids
   * and never for another socket's, and a state that is not a JSON object is dropped. So no one
   * shows a cursor under another's name or role, nor moves or removes another's.
   */
  private awarenessMessage(ws: WebSocket, who: LiveAttachment, update: Uint8Array): void {
    const decoder = decoding.createDecoder(update);
    const count = decoding.readVarUint(decoder);
    const clients = { ...who.clients };
    const othersClients = new Set(liveSockets(this.ctx, ws).flatMap((other) => Object.keys(attachmentOf(other)?.clients ?? {})));
    const relayed: [number, number, string][] = [];
    for (let i = 0; i < count; i++) {
      const id = decoding.readVarUint(decoder);
      const clock = decoding.readVarUint(decoder);
      const raw = decoding.readVarString(decoder);
      if (othersClients.has(String(id))) continue;
      if (raw === "null") {
        if (!(id in clients)) continue;
        this.awareness.delete(id);
        delete clients[id];
        relayed.push([id, clock, raw]);
        continue;
      }
      const state = ownState(raw, who);
      if (state === null || (!(id in clients) && Object.keys(clients).length >= LIVE_LIMITS.awarenessClients)) continue;
      this.awareness.set(id, { clock, state });
      clients[id] = clock;
      relayed.push([id, clock, state]);
    }
    ws.serializeAttachment({ ...who, clients } satisfies LiveAttachment);
    if (relayed.length === 0) return;
    const bytes = awarenessFrame(relayed);
    for (const other of liveSockets(this.ctx, ws)) send(other, bytes);
  }

  /**
   * Sends an update to every socket but the one it came from, then stores it (compacting now and
   * then) and marks its files dirty. Sent first: a message sent after a write waits until the
   * write is durable, and the relay need not, since every client keeps the updates it has and
   * sends back what the object lacks when it syncs again.
   */
  private updated(update: Uint8Array, origin: unknown): void {
    const frame = syncFrame((e) => sync.writeUpdate(e, update));
    for (const ws of liveSockets(this.ctx, origin instanceof WebSocket ? origin : undefined)) send(ws, frame);
    this.sql.exec("INSERT INTO live_updates (data) VALUES (?)", update);
    this.storedBytes += update.byteLength;
    if (++this.storedUpdates > COMPACT_AT) this.compact();
    this.markDirty(this.edited.splice(0));
  }

  /** Replaces the stored updates with the document's state, in rows a Durable Object's SQLite can hold. */
  private compact(): void {
    const state = Y.encodeStateAsUpdate(this.doc);
    this.ctx.storage.transactionSync(() => {
      this.sql.exec("DELETE FROM live_updates");
      for (let at = 0; at < state.byteLength; at += ROW_BYTES) {
        this.sql.exec("INSERT INTO live_updates (data, part) VALUES (?, ?)", state.subarray(at, at + ROW_BYTES), at === 0 ? 0 : 1);
      }
    });
    this.storedUpdates = 1;
    this.storedBytes = state.byteLength;
  }

  /**
   * Whether `bytes` more fit the stored document (LIVE_LIMITS.documentBytes), compacting it first
   * when they would not: every client edit and seeded file is stored, so without a bound a client
   * could grow the attempt's storage without end.
   */
  private roomFor(bytes: number): boolean {
    if (this.storedBytes + bytes <= LIVE_LIMITS.documentBytes) return true;
    if (this.storedUpdates > 1) this.compact();
    return this.storedBytes + bytes <= LIVE_LIMITS.documentBytes;
  }

  private markDirty(paths: string[]): void {
    if (paths.length === 0) return;
    const now = Date.now();
    for (const path of paths) this.sql.exec("INSERT OR IGNORE INTO live_dirty (path) VALUES (?)", path);
    this.sql.exec(
      `INSERT INTO live_save (id, due_ms, first_ms) VALUES (1, ?, ?)
       ON CONFLICT (id) DO UPDATE SET due_ms = min(?, first_ms + ?)`,
      now + LIVE_LIMITS.saveDebounceMs,
      now,
      now + LIVE_LIMITS.saveDebounceMs,
      LIVE_LIMITS.saveMaxWaitMs,
    );
  }

  /** The object's alarm is shared with the deadline and the runs' sweeps: it is only ever moved earlier here. */
  private async scheduleSave(): Promise<void> {
    const due = liveSaveDue(this.sql);
    if (due === null) return;
    const alarm = await this.ctx.storage.getAlarm();
    if (alarm === null || alarm > due) await this.ctx.storage.setAlarm(due);
  }
}

class SeedError extends Error {}

/** An awareness state as the object keeps it: the client's JSON object with `user` naming the socket's user; null when it is no object. */
function ownState(raw: string, who: LiveAttachment): string | null {
  let state: unknown;
  try {
    state = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof state !== "object" || state === null || Array.isArray(state)) return null;
  const { user } = state as { user?: unknown };
  const given = typeof user === "object" && user !== null && !Array.isArray(user) ? user : {};
  return JSON.stringify({ ...state, user: { ...given, id: who.user_id, name: who.name, role: who.role } });
}

/** The stored updates, a compacted one's rows (part 1 continues the row before it) joined again. */
function joinParts(rows: readonly { data: ArrayBuffer; part: number }[]): Uint8Array[] {
  const updates: Uint8Array[][] = [];
  for (const row of rows) {
    if (row.part === 0 || updates.length === 0) updates.push([new Uint8Array(row.data)]);
    else updates.at(-1)!.push(new Uint8Array(row.data));
  }
  return updates.map((parts) => (parts.length === 1 ? parts[0]! : concatBytes(parts)));
}

function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

function refusal(status: number, detail: string): Response {
  return Response.json({ detail }, { status });
}

/** Tells every live socket the attempt is submitted: from now on updates are refused. */
export function announceReadOnly(ctx: DurableObjectState): void {
  broadcastLive(ctx, { type: "read_only" });
}

/** Whether a socket of the object is a live one. */
export function isLiveSocket(ctx: DurableObjectState, ws: WebSocket): boolean {
  return ctx.getTags(ws).includes(LIVE_TAG);
}

/** Closes a socket the client closed, as the runtime expects of a hibernatable one. */
export function closeLiveSocket(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code === 1005 || code === 1006 ? 1000 : code, reason);
  } catch {
    // Already closed on our side.
  }
}
