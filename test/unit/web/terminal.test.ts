import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ExecutionSession, type ExecutionExit, type SocketLike } from "../../../web/src/candidate/execution-session";
import { LineEditor } from "../../../web/src/candidate/terminal-line";

describe("LineEditor (line-mode stdin for the live execution's terminal)", () => {
  it("echoes what is typed and sends the whole line on Enter", () => {
    const editor = new LineEditor();
    expect(editor.input("ab")).toEqual({ echo: "ab", send: [], eof: false, interrupt: false });
    expect(editor.input("c\r")).toEqual({ echo: "c\r\n", send: ["abc\n"], eof: false, interrupt: false });
    expect(editor.line).toBe("");
  });

  it("Backspace removes the last character (a whole emoji, erasing two columns for a wide one)", () => {
    const editor = new LineEditor();
    editor.input("né😀");
    expect(editor.input("\x7f").echo).toBe("\b\b  \b\b");
    expect(editor.input("\x7f").echo).toBe("\b \b");
    expect(editor.line).toBe("n");
    expect(editor.input("\x7f\x7f").echo).toBe("\b \b");
    expect(editor.input("x\r").send).toEqual(["x\n"]);
  });

  it("a pasted block sends each line, CRLF counted once; the rest stays on the line", () => {
    const editor = new LineEditor();
    expect(editor.input("one\r\ntwo\nthr").send).toEqual(["one\n", "two\n"]);
    expect(editor.line).toBe("thr");
  });

  it("CRLF split across two inputs is one line end", () => {
    const editor = new LineEditor();
    expect(editor.input("a\r").send).toEqual(["a\n"]);
    expect(editor.input("\nb\r").send).toEqual(["b\n"]);
  });

  it("ignores arrow keys and other escape sequences; Ctrl-U clears the line", () => {
    const editor = new LineEditor();
    expect(editor.input("ab\x1b[D\x1b[1;5Cc\x1bOP").echo).toBe("abc");
    expect(editor.input("\x15").echo).toBe("\b \b\b \b\b \b");
    expect(editor.line).toBe("");
  });

  it("Ctrl-D on an empty line closes stdin, otherwise sends the line without a newline; Ctrl-C interrupts", () => {
    const editor = new LineEditor();
    expect(editor.input("\x04")).toMatchObject({ eof: true, send: [] });
    expect(editor.input("abc\x04")).toMatchObject({ eof: false, send: ["abc"] });
    expect(editor.input("zz\x03")).toMatchObject({ interrupt: true, echo: "zz^C\r\n" });
    expect(editor.line).toBe("");
  });
});

class FakeSocket implements SocketLike {
  readyState = 0;
  sent: string[] = [];
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  constructor(readonly url: string) {}
  send(data: string): void {
    this.sent.push(data);
  }
  close(): void {
    this.readyState = 3;
  }
  open(): void {
    this.readyState = 1;
    this.onopen?.(new Event("open"));
  }
  message(value: object): void {
    this.onmessage?.(new MessageEvent("message", { data: JSON.stringify(value) }));
  }
  drop(code = 1006): void {
    this.readyState = 3;
    this.onclose?.({ code } as CloseEvent);
  }
}

function setUp(freshTicket: () => Promise<string> = async () => "wst_next") {
  const sockets: FakeSocket[] = [];
  const output: string[] = [];
  const errors: string[] = [];
  const exits: ExecutionExit[] = [];
  const states: string[] = [];
  const session = new ExecutionSession({
    wsUrl: "ws://127.0.0.1:8787/api/v1/code-execution/ws/exe_1",
    ticket: "wst_first",
    freshTicket,
    connect: (url) => {
      const socket = new FakeSocket(url);
      sockets.push(socket);
      return socket;
    },
    backoff: () => 1000,
    maxReconnects: 2,
    onOutput: (stream, data) => output.push(`${stream}:${data}`),
    onExit: (exit) => exits.push(exit),
    onError: (detail) => errors.push(detail),
    onConnection: (state) => states.push(state),
  });
  return { session, sockets, output, errors, exits, states };
}

describe("ExecutionSession (the live execution's socket)", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("opens ws_url with the ticket, shows output, and keeps stdin typed before the socket opened", () => {
    const { session, sockets, output } = setUp();
    session.start();
    expect(sockets[0]!.url).toBe("ws://127.0.0.1:8787/api/v1/code-execution/ws/exe_1?ticket=wst_first");
    session.stdin("ada\n");
    sockets[0]!.open();
    expect(sockets[0]!.sent).toEqual(['{"type":"stdin","data":"ada\\n"}']);
    sockets[0]!.message({ type: "hello", status: "running", next_seq: 0 });
    sockets[0]!.message({ type: "stdout", seq: 0, data: "name? " });
    sockets[0]!.message({ type: "stderr", seq: 1, data: "warning\n" });
    expect(output).toEqual(["stdout:name? ", "stderr:warning\n"]);
    session.stdin("", true);
    session.terminate();
    expect(sockets[0]!.sent.slice(1)).toEqual(['{"type":"stdin","eof":true}', '{"type":"terminate"}']);
  });

  it("reconnects after a dropped socket with a fresh ticket and after_seq, and shows no replayed chunk twice", async () => {
    const { session, sockets, output, states } = setUp();
    session.start();
    sockets[0]!.open();
    sockets[0]!.message({ type: "stdout", seq: 0, data: "a" });
    sockets[0]!.message({ type: "stdout", seq: 1, data: "b" });
    sockets[0]!.drop();
    session.stdin("typed while away\n");
    await vi.advanceTimersByTimeAsync(1000);
    expect(sockets[1]!.url).toBe("ws://127.0.0.1:8787/api/v1/code-execution/ws/exe_1?ticket=wst_next&after_seq=1");
    sockets[1]!.open();
    expect(sockets[1]!.sent).toEqual(['{"type":"stdin","data":"typed while away\\n"}']);
    sockets[1]!.message({ type: "hello", status: "running", next_seq: 3, replay_from: 1 });
    sockets[1]!.message({ type: "stdout", seq: 1, data: "b" });
    sockets[1]!.message({ type: "stdout", seq: 2, data: "c" });
    expect(output).toEqual(["stdout:a", "stdout:b", "stdout:c"]);
    expect(states).toEqual(["connecting", "open", "reconnecting", "reconnecting", "open"]);
  });

  it("ends on exit and the server's 1000 close, without reconnecting", async () => {
    const { session, sockets, exits, states } = setUp();
    session.start();
    sockets[0]!.open();
    const exit = { type: "exit", status: "exited", cause: null, code: 0, signal: null, truncated: false, detail: null, timings: { setup_ms: 40, run_ms: 12, total_ms: 60 } };
    sockets[0]!.message(exit);
    sockets[0]!.drop(1000);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(exits).toEqual([exit]);
    expect(sockets.length).toBe(1);
    expect(states.at(-1)).toBe("ended");
    session.stdin("late\n");
    expect(sockets[0]!.sent).toEqual([]);
  });

  it("gives up when the execution is gone (404 on the ticket) or after too many tries, saying so", async () => {
    const gone = Object.assign(new Error("No execution exe_1"), { status: 404 });
    const first = setUp(() => Promise.reject(gone));
    first.session.start();
    first.sockets[0]!.drop();
    await vi.advanceTimersByTimeAsync(1000);
    expect(first.errors).toEqual(["No execution exe_1"]);
    expect(first.states.at(-1)).toBe("lost");

    const second = setUp();
    second.session.start();
    second.sockets[0]!.drop();
    await vi.advanceTimersByTimeAsync(1000);
    second.sockets[1]!.drop();
    await vi.advanceTimersByTimeAsync(1000);
    second.sockets[2]!.drop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(second.sockets.length).toBe(3);
    expect(second.errors[0]).toMatch(/connection to the program was lost/);
  });

  it("close() stops the socket and any reconnection", async () => {
    const { session, sockets } = setUp();
    session.start();
    sockets[0]!.drop();
    session.close();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(sockets.length).toBe(1);
  });
});
