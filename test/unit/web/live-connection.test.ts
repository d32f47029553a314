import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import { afterEach, describe, expect, it } from "vitest";
import * as awarenessProtocol from "y-protocols/awareness";
import * as syncProtocol from "y-protocols/sync";
import * as Y from "yjs";
import { LIVE_FRAME, type LiveServerMessage } from "../../../protocol/socket-messages";
import { LiveConnection, sharedFiles, type LiveSocketLike, type LiveState } from "../../../web/src/live/live-connection";

class FakeSocket implements LiveSocketLike {
  readyState = 0;
  binaryType: BinaryType = "blob";
  sent: (string | Uint8Array<ArrayBuffer>)[] = [];
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  closedWith: number | undefined;
  constructor(readonly url: string) {}
  send(data: string | Uint8Array<ArrayBuffer>): void {
    this.sent.push(data);
  }
  close(code?: number): void {
    this.closedWith = code;
    this.readyState = 3;
  }
  open(): void {
    this.readyState = 1;
    this.onopen?.(new Event("open"));
  }
  frame(data: string | Uint8Array): void {
    this.onmessage?.({ data: typeof data === "string" ? data : data.slice().buffer } as MessageEvent);
  }
  drop(): void {
    this.readyState = 3;
    this.onclose?.({ code: 1006 } as CloseEvent);
  }
  texts(): unknown[] {
    return this.sent.filter((f): f is string => typeof f === "string").map((f) => JSON.parse(f) as unknown);
  }
}

/** The server's side of y-websocket's protocol on a document of its own, as the Durable Object keeps it. */
class FakeServer {
  readonly doc = new Y.Doc();
  readonly awareness = new awarenessProtocol.Awareness(this.doc);
  constructor() {
    this.awareness.setLocalState(null);
  }
  /** Answers one client frame (sync step 1 with step 2, updates applied); the answers go back to `socket`. */
  receive(frame: Uint8Array, socket: FakeSocket): void {
    const decoder = decoding.createDecoder(frame);
    const kind = decoding.readVarUint(decoder);
    if (kind === LIVE_FRAME.sync) {
      const encoder = encoding.createEncoder();
      encoding.writeVarUint(encoder, LIVE_FRAME.sync);
      syncProtocol.readSyncMessage(decoder, encoder, this.doc, "client");
      if (encoding.length(encoder) > 1) socket.frame(encoding.toUint8Array(encoder));
    } else awarenessProtocol.applyAwarenessUpdate(this.awareness, decoding.readVarUint8Array(decoder), "client");
  }
  /** The server's sync step 1, as it sends it after `hello`. */
  step1(socket: FakeSocket): void {
    const encoder = encoding.createEncoder();
    encoding.writeVarUint(encoder, LIVE_FRAME.sync);
    syncProtocol.writeSyncStep1(encoder, this.doc);
    socket.frame(encoding.toUint8Array(encoder));
  }
  /** Handles every binary frame the client has sent since `from`; answers what is next to read. */
  pump(socket: FakeSocket, from = 0): number {
    const frames = socket.sent.slice(from);
    for (const f of frames) if (typeof f !== "string") this.receive(f, socket);
    return from + frames.length;
  }
  /** A change made on the server (another client's edit, or a file seeded): sent as an update. */
  change(socket: FakeSocket, edit: (doc: Y.Doc) => void): void {
    const before = Y.encodeStateVector(this.doc);
    edit(this.doc);
    const encoder = encoding.createEncoder();
    encoding.writeVarUint(encoder, LIVE_FRAME.sync);
    syncProtocol.writeUpdate(encoder, Y.encodeStateAsUpdate(this.doc, before));
    socket.frame(encoding.toUint8Array(encoder));
  }
}

class ManualTimers {
  private next = 1;
  readonly pending = new Map<number, { callback: () => void; ms: number }>();
  set = (callback: () => void, ms: number): unknown => {
    const id = this.next++;
    this.pending.set(id, { callback, ms });
    return id;
  };
  clear = (handle: unknown): void => {
    this.pending.delete(handle as number);
  };
  /** Runs the timers waiting `ms` or less (not the ones they set). */
  run(ms: number): void {
    for (const [id, t] of [...this.pending]) {
      if (t.ms > ms) continue;
      this.pending.delete(id);
      t.callback();
    }
  }
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const done of cleanup) done();
  cleanup = [];
});

function setUp() {
  const doc = new Y.Doc();
  const awareness = new awarenessProtocol.Awareness(doc);
  awareness.setLocalState(null);
  const server = new FakeServer();
  const sockets: FakeSocket[] = [];
  const messages: LiveServerMessage[] = [];
  const states: LiveState[] = [];
  const timers = new ManualTimers();
  let tickets = 0;
  let synced = 0;
  const connection = new LiveConnection({
    doc,
    awareness,
    socketUrl: async () => `wss://assay.test/live/ws?ticket=wst_${++tickets}`,
    connect: (url) => {
      const socket = new FakeSocket(url);
      sockets.push(socket);
      return socket;
    },
    timers,
    backoff: () => 500,
    onMessage: (m) => messages.push(m),
    onState: (s) => states.push(s),
    onSynced: () => synced++,
  });
  cleanup.push(() => {
    connection.close();
    awareness.destroy();
    server.awareness.destroy();
  });
  /** Opens the newest socket and runs the handshake both ways. */
  const handshake = async () => {
    await flush();
    const socket = sockets.at(-1)!;
    socket.open();
    server.step1(socket);
    server.pump(socket);
    return socket;
  };
  return { doc, awareness, server, sockets, messages, states, timers, connection, handshake, synced: () => synced };
}

describe("LiveConnection (the live session's socket: Yjs sync and awareness, JSON control messages)", () => {
  it("opens the socket with a fresh ticket, in binary, and syncs both ways: the server's files arrive, offline edits reach it", async () => {
    const t = setUp();
    t.server.doc.transact(() => sharedFiles(t.server.doc).set("src/a.js", new Y.Text("const a = 1;\n")));
    sharedFiles(t.doc).set("notes.md", new Y.Text("typed before the socket opened"));
    t.connection.start();
    const socket = await t.handshake();
    expect(socket.url).toBe("wss://assay.test/live/ws?ticket=wst_1");
    expect(socket.binaryType).toBe("arraybuffer");
    expect(t.states).toEqual(["connecting", "open"]);
    expect(sharedFiles(t.doc).get("src/a.js")?.toString()).toBe("const a = 1;\n");
    expect(sharedFiles(t.server.doc).get("notes.md")?.toString()).toBe("typed before the socket opened");
    expect(t.connection.synced).toBe(true);
    expect(t.synced()).toBe(1);
  });

  it("sends each local edit as an update, and applies the server's without echoing them back", async () => {
    const t = setUp();
    t.server.doc.transact(() => sharedFiles(t.server.doc).set("a.js", new Y.Text("ab")));
    t.connection.start();
    const socket = await t.handshake();
    let read = socket.sent.length;
    sharedFiles(t.doc).get("a.js")!.insert(2, "c");
    read = t.server.pump(socket, read);
    expect(sharedFiles(t.server.doc).get("a.js")!.toString()).toBe("abc");

    t.server.change(socket, (doc) => sharedFiles(doc).get("a.js")!.insert(0, ">"));
    expect(sharedFiles(t.doc).get("a.js")!.toString()).toBe(">abc");
    expect(socket.sent.length).toBe(read);
  });

  it("openFile asks the server to seed a file it does not have and waits for it; one it has comes at once", async () => {
    const t = setUp();
    t.connection.start();
    const socket = await t.handshake();
    let resolved: string | undefined;
    const waiting = t.connection.openFile("src/b.js").then((text) => (resolved = text.toString()));
    void t.connection.openFile("src/b.js");
    expect(socket.texts()).toEqual([{ type: "open", path: "src/b.js" }]);
    await flush();
    expect(resolved).toBeUndefined();
    t.server.change(socket, (doc) => sharedFiles(doc).set("src/b.js", new Y.Text("seeded")));
    await waiting;
    expect(resolved).toBe("seeded");
    expect((await t.connection.openFile("src/b.js")).toString()).toBe("seeded");
    expect(socket.texts()).toHaveLength(1);
  });

  it("passes on the server's JSON messages and ignores frames that do not parse", async () => {
    const t = setUp();
    t.connection.start();
    const socket = await t.handshake();
    socket.frame(JSON.stringify({ type: "hello", attempt_id: "att_1", role: "candidate", read_only: false, you: { user_id: "u1", name: "Cy" }, participants: [] }));
    socket.frame("not json");
    socket.frame(JSON.stringify({ type: "hello" }));
    socket.frame(JSON.stringify({ type: "surprise" }));
    socket.frame(new Uint8Array([7, 1, 2]));
    socket.frame(new Uint8Array([LIVE_FRAME.sync, 9, 9, 9]));
    socket.frame(JSON.stringify({ type: "saved", at: "2026-11-28T12:00:00.000Z", paths: ["a.js"] }));
    expect(t.messages.map((m) => m.type)).toEqual(["hello", "saved"]);
  });

  it("shares this user's awareness, applies the others', and drops the others' when the socket drops", async () => {
    const t = setUp();
    t.connection.start();
    const socket = await t.handshake();
    const read = socket.sent.length;
    t.awareness.setLocalState({ user: { id: "u1", name: "Cy", role: "candidate", color: "#0b5cad" }, file: "a.js" });
    t.server.pump(socket, read);
    expect(t.server.awareness.getStates().get(t.doc.clientID)).toMatchObject({ file: "a.js" });

    const staff = new Y.Doc();
    const staffAwareness = new awarenessProtocol.Awareness(staff);
    cleanup.push(() => staffAwareness.destroy());
    staffAwareness.setLocalState({ user: { id: "u2", name: "Ada", role: "staff", color: "#a3127f" }, file: "b.js" });
    const encoder = encoding.createEncoder();
    encoding.writeVarUint(encoder, LIVE_FRAME.awareness);
    encoding.writeVarUint8Array(encoder, awarenessProtocol.encodeAwarenessUpdate(staffAwareness, [staff.clientID]));
    socket.frame(encoding.toUint8Array(encoder));
    expect(t.awareness.getStates().get(staff.clientID)).toMatchObject({ file: "b.js" });

    socket.drop();
    expect([...t.awareness.getStates().keys()]).toEqual([t.doc.clientID]);
  });

  it("reconnects with a new ticket after backoff; edits made meanwhile, files waited for and queued notes reach the server", async () => {
    const t = setUp();
    t.server.doc.transact(() => sharedFiles(t.server.doc).set("a.js", new Y.Text("one")));
    t.connection.start();
    const first = await t.handshake();
    first.drop();
    expect(t.states.at(-1)).toBe("reconnecting");
    expect(t.connection.synced).toBe(false);
    sharedFiles(t.doc).get("a.js")!.insert(3, " two");
    const waiting = t.connection.openFile("c.js");
    t.connection.send({ type: "note_add", text: "asked about edge cases" });
    let synced: boolean | undefined;
    void t.connection.whenSynced(10_000).then((r) => (synced = r));
    expect(first.sent.filter((f) => typeof f === "string")).toEqual([]);

    t.timers.run(500);
    const second = await t.handshake();
    expect(second.url).toBe("wss://assay.test/live/ws?ticket=wst_2");
    expect(sharedFiles(t.server.doc).get("a.js")!.toString()).toBe("one two");
    await flush();
    expect(synced).toBe(true);
    expect(await t.connection.whenSynced(10_000)).toBe(true);
    expect(second.texts()).toEqual([
      { type: "open", path: "c.js" },
      { type: "note_add", text: "asked about edge cases" },
    ]);
    t.server.change(second, (doc) => sharedFiles(doc).set("c.js", new Y.Text("")));
    expect((await waiting).toString()).toBe("");
    expect(t.states).toEqual(["connecting", "open", "reconnecting", "reconnecting", "open"]);
  });

  it("whenSynced gives up after its time while the server cannot be reached", async () => {
    const t = setUp();
    t.connection.start();
    const socket = await t.handshake();
    socket.drop();
    const synced = t.connection.whenSynced(10_000);
    t.timers.run(10_000);
    expect(await synced).toBe(false);
  });

  it("a refused ticket (404: not the caller's, or live sessions off) ends the session without retrying; a failed request retries", async () => {
    let calls = 0;
    const t = setUp();
    const seen: [LiveState, string | undefined][] = [];
    const connection = new LiveConnection({
      doc: t.doc,
      awareness: t.awareness,
      socketUrl: async () => {
        calls += 1;
        throw Object.assign(new Error(calls === 1 ? "Service unavailable" : "Attempt att_1 not found"), { status: calls === 1 ? 503 : 404 });
      },
      connect: () => {
        throw new Error("no socket may open");
      },
      timers: t.timers,
      backoff: () => 500,
      onState: (state, detail) => seen.push([state, detail]),
    });
    cleanup.push(() => connection.close());
    connection.start();
    await flush();
    expect(seen.at(-1)).toEqual(["reconnecting", undefined]);
    t.timers.run(500);
    await flush();
    expect(seen.at(-1)).toEqual(["lost", "Attempt att_1 not found"]);
    expect(t.timers.pending.size).toBe(0);
  });

  it("pings while open; close() tells the others this user left, closes with 1000 and stops", async () => {
    const t = setUp();
    t.connection.start();
    const socket = await t.handshake();
    t.awareness.setLocalState({ user: { id: "u1", name: "Cy", role: "candidate", color: "#0b5cad" }, file: null });
    t.server.pump(socket);
    t.timers.run(30_000);
    expect(socket.sent.filter((f) => f === '{"type":"ping"}')).toHaveLength(1);
    const read = socket.sent.length;
    t.connection.close();
    t.server.pump(socket, read);
    expect(t.server.awareness.getStates().has(t.doc.clientID)).toBe(false);
    expect(socket.closedWith).toBe(1000);
    expect(t.states.at(-1)).toBe("closed");
    expect(t.timers.pending.size).toBe(0);
  });
});
