import { afterEach, describe, expect, it } from "vitest";
import { ExecutionSession, type ExecutionExit, type SocketLike } from "../../../web/src/candidate/execution-session";
import { onNotification, receiveFrame, unreadCount, type AppNotification } from "../../../web/src/lib/notification-socket";

// The app parses every socket frame with protocol/socket-messages.ts: one that does not parse is
// ignored (nothing changes, nothing throws), and the next good one is read as usual.
const MALFORMED = ["not json", "", "null", "[]", '{"type":"notification"}', '{"type":"notification","notification":{"id":"x"}}', '{"type":"hello","unread":"many"}', '{"type":"read"}'];

describe("the notification socket's frames", () => {
  const unreadBefore = unreadCount.peek();
  afterEach(() => {
    unreadCount.value = unreadBefore;
  });

  it("a malformed frame is ignored, not a crash; a good one after it is read", () => {
    const heard: AppNotification[] = [];
    const stop = onNotification((n) => heard.push(n));
    try {
      unreadCount.value = 2;
      for (const raw of MALFORMED) expect(() => receiveFrame(raw), raw).not.toThrow();
      receiveFrame(new ArrayBuffer(8));
      expect(unreadCount.value).toBe(2);
      expect(heard).toEqual([]);

      const notification = { id: 7, type: "run.finished", created_at: "2026-01-01T00:00:00.000Z", read_at: null, payload: { run_id: "run_1" } };
      receiveFrame(JSON.stringify({ type: "notification", notification }));
      expect(heard).toEqual([notification]);
      expect(unreadCount.value).toBe(3);
      receiveFrame(JSON.stringify({ type: "read", ids: [7], unread: 0 }));
      expect(unreadCount.value).toBe(0);
    } finally {
      stop();
    }
  });
});

class FakeSocket implements SocketLike {
  readyState = 1;
  sent: string[] = [];
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  send(data: string): void {
    this.sent.push(data);
  }
  close(): void {
    this.readyState = 3;
  }
  frame(data: string): void {
    this.onmessage?.(new MessageEvent("message", { data }));
  }
}

describe("the execution socket's frames", () => {
  it("a malformed frame is ignored, not a crash: no output, no exit, no error shown", () => {
    const socket = new FakeSocket();
    const output: string[] = [];
    const exits: ExecutionExit[] = [];
    const errors: string[] = [];
    const session = new ExecutionSession({
      wsUrl: "ws://127.0.0.1:8787/api/v1/code-execution/ws/exe_1",
      ticket: "wst_1",
      freshTicket: async () => "wst_2",
      connect: () => socket,
      onOutput: (stream, data) => output.push(`${stream}:${data}`),
      onExit: (exit) => exits.push(exit),
      onError: (detail) => errors.push(detail),
    });
    session.start();
    for (const raw of [...MALFORMED, '{"type":"stdout","seq":"0","data":"x"}', '{"type":"stdout","data":"no seq"}', '{"type":"exit","status":"exited"}', '{"type":"error"}']) {
      expect(() => socket.frame(raw), raw).not.toThrow();
    }
    expect({ output, exits, errors }).toEqual({ output: [], exits: [], errors: [] });

    socket.frame(JSON.stringify({ type: "stdout", seq: 0, data: "hello\n" }));
    const exit = { status: "exited", cause: null, code: 0, signal: null, truncated: false, detail: null, timings: { setup_ms: 1, run_ms: 2, total_ms: 3 } };
    socket.frame(JSON.stringify({ type: "exit", ...exit }));
    expect(output).toEqual(["stdout:hello\n"]);
    expect(exits).toEqual([{ type: "exit", ...exit }]);
    session.close();
  });
});
