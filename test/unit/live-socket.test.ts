import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { executionServerMessageSchema, notificationServerMessageSchema } from "../../protocol/socket-messages";
import { mustOpenLive } from "../../scripts/lib/live-socket";

// The e2e tests' socket client reads every frame with the schema the Worker sends by: a test gets
// typed messages, and a frame outside the contract fails the test instead of passing unnoticed.
describe("the live socket client (scripts/lib/live-socket.ts)", () => {
  let server: WebSocketServer | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  /** A server that sends `frames` to each client once it connects; its ws:// address. */
  async function serving(frames: string[]): Promise<string> {
    server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    server.on("connection", (ws) => frames.forEach((f) => ws.send(f)));
    await new Promise((resolve) => server!.once("listening", resolve));
    return `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  }

  it("answers the next message of a type, parsed and typed by the socket's schema", async () => {
    const url = await serving([
      JSON.stringify({ type: "hello", execution_id: "exe_1", status: "running", role: "owner", next_seq: 1, replay_from: 1 }),
      JSON.stringify({ type: "stdout", seq: 1, data: "ready\n" }),
      JSON.stringify({ type: "stdout", seq: 2, data: "done\n", later: "a field a newer Worker adds" }),
    ]);
    const socket = await mustOpenLive(url, executionServerMessageSchema);
    const hello = await socket.next("hello");
    expect(hello.next_seq + hello.replay_from).toBe(2);
    expect((await socket.next("stdout")).data).toBe("ready\n");
    expect((await socket.next()).type).toBe("stdout");
    expect(socket.messages.map((m) => m.type)).toEqual(["hello", "stdout", "stdout"]);
    socket.close();
  });

  it("fails the next wait at a frame that is not a message of the schema, naming what is wrong", async () => {
    const url = await serving([
      JSON.stringify({ type: "hello", user_id: "usr_1", last_id: 0, unread: 0, gap: false }),
      JSON.stringify({ type: "notification", notification: { id: "not a number", type: "run.finished", created_at: "", read_at: null, payload: {} } }),
      "not JSON",
    ]);
    const socket = await mustOpenLive(url, notificationServerMessageSchema);
    await expect(socket.next("notification")).rejects.toThrow(/no message of the socket \(notification\.id: .*\): .*"not a number"/);
    // Even a wait for a type the bad frame is not: it is never skipped.
    await expect(socket.next("read")).rejects.toThrow(/no message of the socket/);
    expect(socket.messages.map((m) => m.type)).toEqual(["hello"]);
    socket.close();
  });
});
