// A live session's client as a browser runs one (docs/api.md, "Live sessions"): a Yjs document
// synced over the attempt's live socket with y-protocols, as y-websocket does, and the JSON
// control messages parsed with the protocol's schemas. The workerd tests and the live bench
// drive their sockets through it.
import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import * as awarenessProtocol from "y-protocols/awareness";
import * as sync from "y-protocols/sync";
import * as Y from "yjs";
import {
  LIVE_FILES_MAP,
  LIVE_FRAME,
  liveServerMessageSchema,
  type LiveAwareness,
  type LiveClientMessage,
  type LiveServerMessage,
} from "../../protocol/socket-messages";
import { MessageQueue } from "./message-queue";
import { Changes } from "./wait";

/** What the client needs of a socket: the browser's WebSocket, workerd's, and the `ws` package's all have it. */
export interface LiveSocketLike {
  send(data: string | Uint8Array): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: "close", listener: (event: { code: number; reason: string }) => void): void;
  close(code?: number, reason?: string): void;
}

export class LiveClient {
  readonly doc = new Y.Doc();
  readonly files: Y.Map<Y.Text>;
  readonly awareness: awarenessProtocol.Awareness;
  /** The JSON control messages, each parsed with the protocol's schema: one that does not parse fails every later `next`. */
  readonly messages = new MessageQueue<LiveServerMessage>();
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly changes = new Changes();
  private isClosed = false;
  private inbound: Promise<void> = Promise.resolve();

  constructor(
    private readonly socket: LiveSocketLike,
    user?: LiveAwareness["user"],
  ) {
    this.files = this.doc.getMap(LIVE_FILES_MAP);
    this.awareness = new awarenessProtocol.Awareness(this.doc);
    this.closed = new Promise((resolve) => {
      socket.addEventListener("close", (e) => {
        this.isClosed = true;
        this.awareness.destroy();
        this.messages.poke();
        this.changes.notify();
        resolve({ code: e.code, reason: e.reason });
      });
    });
    // Binary frames come as ArrayBuffers where binaryType is honoured, as Blobs where it is not (workerd's client
    // sockets): those are read in arrival order.
    (socket as { binaryType?: string }).binaryType = "arraybuffer";
    socket.addEventListener("message", (e) => {
      this.inbound = this.inbound.then(async () => this.receive(e.data instanceof Blob ? await e.data.arrayBuffer() : e.data));
    });
    this.doc.on("update", (update: Uint8Array, origin: unknown) => {
      if (origin !== this) this.sendBinary(LIVE_FRAME.sync, (enc) => sync.writeUpdate(enc, update));
      this.changes.notify();
    });
    this.awareness.on("update", ({ added, updated, removed }: { added: number[]; updated: number[]; removed: number[] }, origin: unknown) => {
      this.changes.notify();
      if (origin === this) return;
      const update = awarenessProtocol.encodeAwarenessUpdate(this.awareness, [...added, ...updated, ...removed]);
      this.sendBinary(LIVE_FRAME.awareness, (enc) => encoding.writeVarUint8Array(enc, update));
    });
    this.sendBinary(LIVE_FRAME.sync, (enc) => sync.writeSyncStep1(enc, this.doc));
    if (user) this.awareness.setLocalState({ user, file: null, cursor: null } satisfies LiveAwareness);
  }

  send(message: LiveClientMessage | string): void {
    this.socket.send(typeof message === "string" ? message : JSON.stringify(message));
  }

  /** The next control message (of `type`, skipping others). */
  next<K extends LiveServerMessage["type"]>(type: K, timeoutMs?: number): Promise<Extract<LiveServerMessage, { type: K }>> {
    return this.messages.next(type, timeoutMs) as Promise<Extract<LiveServerMessage, { type: K }>>;
  }

  /** The text of `path` in this client's document; undefined until it has one. */
  text(path: string): string | undefined {
    return this.files.get(path)?.toString();
  }

  /** Asks for `path` and waits until the object seeded it (or another client created it). */
  async open(path: string, timeoutMs = 5000): Promise<Y.Text> {
    this.send({ type: "open", path });
    await this.until(`${path} in the document`, () => this.files.has(path), timeoutMs);
    return this.files.get(path)!;
  }

  insert(path: string, index: number, text: string): void {
    const file = this.files.get(path);
    if (!file) throw new Error(`${path} is not open`);
    file.insert(index, text);
  }

  /** Resolves once `ready` holds, looking again on every change of the document, awareness or socket. */
  until(what: string, ready: () => boolean, timeoutMs = 5000): Promise<void> {
    return this.changes.until(() => (ready() ? true : undefined), {
      timeoutMs,
      ended: () => this.isClosed,
      failure: (ended) => (ended ? `the socket closed before ${what}` : `no ${what} within ${timeoutMs} ms`),
    }).then(() => undefined);
  }

  close(): void {
    this.socket.close(1000, "done");
  }

  private sendBinary(kind: number, write: (encoder: encoding.Encoder) => void): void {
    const encoder = encoding.createEncoder();
    encoding.writeVarUint(encoder, kind);
    write(encoder);
    if (!this.isClosed) this.socket.send(encoding.toUint8Array(encoder));
  }

  private receive(data: unknown): void {
    if (typeof data === "string") {
      const parsed = liveServerMessageSchema.safeParse(JSON.parse(data));
      if (parsed.success) this.messages.push(parsed.data);
      else this.messages.refuse(new Error(`a control message outside the protocol: ${data}`));
      this.changes.notify();
      return;
    }
    const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data as Uint8Array);
    const decoder = decoding.createDecoder(bytes);
    const kind = decoding.readVarUint(decoder);
    if (kind === LIVE_FRAME.sync) {
      const reply = encoding.createEncoder();
      encoding.writeVarUint(reply, LIVE_FRAME.sync);
      sync.readSyncMessage(decoder, reply, this.doc, this);
      if (encoding.length(reply) > 1) this.socket.send(encoding.toUint8Array(reply));
    } else if (kind === LIVE_FRAME.awareness) {
      awarenessProtocol.applyAwarenessUpdate(this.awareness, decoding.readVarUint8Array(decoder), this);
    }
    this.changes.notify();
  }
}
