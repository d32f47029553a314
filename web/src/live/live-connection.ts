// The live session's socket (docs/web-app.md, "Live sessions"): the shared document and the
// presence of everyone in it, as y-websocket carries them, over the attempt's live socket opened
// with a single-use browser ticket. Binary frames are Yjs's: 0 the sync protocol (step 1, step 2,
// updates), 1 awareness (who is there, their file and cursor). Text frames are the session's
// own JSON messages, parsed with protocol/socket-messages.ts's schemas like every socket of the
// app: a frame that does not parse is ignored. A dropped socket reconnects with a new ticket and
// backoff; edits made meanwhile stay in the document and reach the server at the next sync.
// Framework-free: the socket, the ticket and the timers are given to it.
import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import * as awarenessProtocol from "y-protocols/awareness";
import * as syncProtocol from "y-protocols/sync";
import type * as Y from "yjs";
import { LIVE_FILES_MAP, LIVE_FRAME, liveServerMessageSchema, parseSocketMessage, PING, type LiveClientMessage, type LiveServerMessage } from "../../../protocol/socket-messages";
import { backoffMs } from "../lib/backoff";
import type { Timers } from "../candidate/save-queue";

/** The part of the browser's WebSocket the connection uses. */
export interface LiveSocketLike {
  readonly readyState: number;
  binaryType: BinaryType;
  send(data: string | Uint8Array<ArrayBuffer>): void;
  close(code?: number): void;
  onopen: ((event: Event) => void) | null;
  onmessage: ((event: MessageEvent) => void) | null;
  onclose: ((event: CloseEvent) => void) | null;
  onerror: ((event: Event) => void) | null;
}

/** `lost`: the server refused a ticket (the session ended, or is not the caller's); `closed`: closed here. */
export type LiveState = "connecting" | "open" | "reconnecting" | "lost" | "closed";

export interface LiveConnectionOptions {
  doc: Y.Doc;
  awareness: awarenessProtocol.Awareness;
  /** The socket's address with a fresh ticket (`?ticket=`); throws with `status` when none is given. */
  socketUrl: () => Promise<string>;
  connect: (url: string) => LiveSocketLike;
  timers?: Timers;
  backoff?: (attempt: number) => number;
  /** Every JSON message of the server, once parsed. */
  onMessage?: (message: LiveServerMessage) => void;
  onState?: (state: LiveState, detail?: string) => void;
  /** The first sync after each (re)connection is done: the document holds what the server has. */
  onSynced?: () => void;
  pingMs?: number;
}

const OPEN = 1;
/** Refusals of a ticket that another try cannot change. */
const FINAL_STATUSES = new Set([401, 403, 404, 409, 410]);

const defaultTimers: Timers = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** The shared files: path → its text. */
export function sharedFiles(doc: Y.Doc): Y.Map<Y.Text> {
  return doc.getMap<Y.Text>(LIVE_FILES_MAP);
}

export class LiveConnection {
  /** True once the document holds the server's state, until the socket drops. */
  synced = false;
  private socket: LiveSocketLike | null = null;
  private closed = false;
  private reconnects = 0;
  private timer: unknown;
  private pinger: unknown;
  private outbox: string[] = [];
  /** Who waits for the next sync (whenSynced). */
  private readonly syncWaiters = new Set<() => void>();
  /** Files asked for with `open`, waiting for the server to put them in the document. */
  private readonly waiting = new Map<string, ((text: Y.Text) => void)[]>();
  private readonly timers: Timers;
  private readonly backoff: (attempt: number) => number;

  constructor(private readonly options: LiveConnectionOptions) {
    this.timers = options.timers ?? defaultTimers;
    this.backoff = options.backoff ?? backoffMs;
    options.doc.on("update", this.onDocUpdate);
    options.awareness.on("update", this.onAwarenessUpdate);
    sharedFiles(options.doc).observe(this.onFiles);
  }

  start(): void {
    void this.open("connecting");
  }

  /**
   * The shared text of `path`: at once when the document has it, else once the server has put it
   * there after `open` (the server seeds it from the attempt's files, so the editor binds to the
   * one text everyone shares, never to a copy of its own).
   */
  openFile(path: string): Promise<Y.Text> {
    const found = sharedFiles(this.options.doc).get(path);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => {
      const waiters = this.waiting.get(path);
      if (waiters) waiters.push(resolve);
      else {
        this.waiting.set(path, [resolve]);
        this.send({ type: "open", path });
      }
    });
  }

  /**
   * True once the server has every edit made here: at once while the socket is open and synced
   * (each edit is sent as it is made, before any request that follows it), else at the next
   * sync; false when `timeoutMs` passes first.
   */
  whenSynced(timeoutMs: number): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = () => {
        this.timers.clear(timer);
        resolve(true);
      };
      const timer = this.timers.set(() => {
        this.syncWaiters.delete(done);
        resolve(false);
      }, timeoutMs);
      this.syncWaiters.add(done);
    });
  }

  /** Sends a JSON message now, or at the next connection. */
  send(message: LiveClientMessage): void {
    if (this.closed) return;
    const text = JSON.stringify(message);
    if (this.socket?.readyState === OPEN) this.socket.send(text);
    else if (message.type !== "open") this.outbox.push(text);
  }

  /** Leaves the session: the others see this user go at once. */
  close(): void {
    if (this.closed) return;
    const { doc, awareness } = this.options;
    awarenessProtocol.removeAwarenessStates(awareness, [doc.clientID], "local");
    this.closed = true;
    this.stopTimers();
    doc.off("update", this.onDocUpdate);
    awareness.off("update", this.onAwarenessUpdate);
    sharedFiles(doc).unobserve(this.onFiles);
    const socket = this.socket;
    this.socket = null;
    socket?.close(1000);
    this.options.onState?.("closed");
  }

  /** Routes one frame from the server: Yjs's binary frames to the document, text to `onMessage`. */
  receive(data: unknown): void {
    if (typeof data === "string") {
      const message = parseSocketMessage(liveServerMessageSchema, data);
      if (message) this.options.onMessage?.(message);
      return;
    }
    const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : data instanceof Uint8Array ? data : null;
    if (!bytes || bytes.length === 0) return;
    try {
      this.receiveBinary(bytes);
    } catch {
      // A frame that is not Yjs's protocol is ignored, like a text frame that does not parse.
    }
  }

  private receiveBinary(bytes: Uint8Array): void {
    const { doc, awareness } = this.options;
    const decoder = decoding.createDecoder(bytes);
    const kind = decoding.readVarUint(decoder);
    if (kind === LIVE_FRAME.sync) {
      const encoder = encoding.createEncoder();
      encoding.writeVarUint(encoder, LIVE_FRAME.sync);
      const step = syncProtocol.readSyncMessage(decoder, encoder, doc, this);
      // Step 1 is answered with step 2: what the server lacks, edits made offline included.
      if (encoding.length(encoder) > 1) this.sendBinary(encoding.toUint8Array(encoder));
      // The server's step 2 answers this client's step 1, which went before this client's own
      // step 2 (its offline edits): the server has them too, on this ordered socket.
      if (step === syncProtocol.messageYjsSyncStep2 && !this.synced) {
        this.synced = true;
        this.options.onSynced?.();
        for (const done of this.syncWaiters) done();
        this.syncWaiters.clear();
      }
    } else if (kind === LIVE_FRAME.awareness) {
      awarenessProtocol.applyAwarenessUpdate(awareness, decoding.readVarUint8Array(decoder), this);
    }
  }

  private readonly onDocUpdate = (update: Uint8Array, origin: unknown): void => {
    if (origin === this) return;
    const encoder = encoding.createEncoder();
    encoding.writeVarUint(encoder, LIVE_FRAME.sync);
    syncProtocol.writeUpdate(encoder, update);
    this.sendBinary(encoding.toUint8Array(encoder));
  };

  private readonly onAwarenessUpdate = ({ added, updated, removed }: { added: number[]; updated: number[]; removed: number[] }, origin: unknown): void => {
    if (origin === this) return;
    this.sendBinary(this.awarenessFrame([...added, ...updated, ...removed]));
  };

  private readonly onFiles = (event: Y.YMapEvent<Y.Text>): void => {
    for (const path of event.keysChanged) {
      const text = sharedFiles(this.options.doc).get(path);
      const waiters = this.waiting.get(path);
      if (!text || !waiters) continue;
      this.waiting.delete(path);
      for (const resolve of waiters) resolve(text);
    }
  };

  private awarenessFrame(clients: number[]): Uint8Array<ArrayBuffer> {
    const encoder = encoding.createEncoder();
    encoding.writeVarUint(encoder, LIVE_FRAME.awareness);
    encoding.writeVarUint8Array(encoder, awarenessProtocol.encodeAwarenessUpdate(this.options.awareness, clients));
    return encoding.toUint8Array(encoder);
  }

  /** Binary frames are sent only on an open socket: what is missed is resent by the next sync. */
  private sendBinary(frame: Uint8Array<ArrayBuffer>): void {
    if (this.socket?.readyState === OPEN) this.socket.send(frame);
  }

  private async open(state: "connecting" | "reconnecting"): Promise<void> {
    this.options.onState?.(state);
    let url: string;
    try {
      url = await this.options.socketUrl();
    } catch (error) {
      if (this.closed) return;
      const status = (error as { status?: number }).status;
      if (status !== undefined && FINAL_STATUSES.has(status)) {
        this.options.onState?.("lost", error instanceof Error ? error.message : String(error));
        return;
      }
      this.retry();
      return;
    }
    if (this.closed) return;
    const socket = this.options.connect(url);
    socket.binaryType = "arraybuffer";
    this.socket = socket;
    socket.onopen = () => {
      if (this.socket !== socket) return;
      this.reconnects = 0;
      this.options.onState?.("open");
      this.greet(socket);
      this.pinger = this.timers.set(() => this.ping(socket), this.options.pingMs ?? 30_000);
    };
    socket.onmessage = (event) => {
      if (this.socket === socket) this.receive(event.data);
    };
    socket.onerror = () => {};
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.synced = false;
      this.stopTimers();
      // Who was there is not known while away: their cursors go until the server says again.
      const { doc, awareness } = this.options;
      const others = [...awareness.getStates().keys()].filter((client) => client !== doc.clientID);
      awarenessProtocol.removeAwarenessStates(awareness, others, this);
      if (!this.closed) this.retry();
    };
  }

  /** A new socket: sync step 1 (what this document has), this user's presence, the files still waited for, what was queued. */
  private greet(socket: LiveSocketLike): void {
    const { doc, awareness } = this.options;
    const encoder = encoding.createEncoder();
    encoding.writeVarUint(encoder, LIVE_FRAME.sync);
    syncProtocol.writeSyncStep1(encoder, doc);
    socket.send(encoding.toUint8Array(encoder));
    if (awareness.getLocalState() !== null) socket.send(this.awarenessFrame([doc.clientID]));
    for (const path of this.waiting.keys()) socket.send(JSON.stringify({ type: "open", path } satisfies LiveClientMessage));
    const queued = this.outbox;
    this.outbox = [];
    for (const text of queued) socket.send(text);
  }

  private ping(socket: LiveSocketLike): void {
    if (this.socket !== socket) return;
    if (socket.readyState === OPEN) socket.send(PING);
    this.pinger = this.timers.set(() => this.ping(socket), this.options.pingMs ?? 30_000);
  }

  private retry(): void {
    this.reconnects += 1;
    this.options.onState?.("reconnecting");
    this.timer = this.timers.set(() => {
      this.timer = undefined;
      if (!this.closed) void this.open("reconnecting");
    }, this.backoff(this.reconnects));
  }

  private stopTimers(): void {
    if (this.timer !== undefined) this.timers.clear(this.timer);
    if (this.pinger !== undefined) this.timers.clear(this.pinger);
    this.timer = undefined;
    this.pinger = undefined;
  }
}
