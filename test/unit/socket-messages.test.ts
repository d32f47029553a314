import { describe, expect, it } from "vitest";
import {
  executionClientMessageSchema,
  executionServerMessageSchema,
  notificationServerMessageSchema,
  parseSocketMessage,
  PING,
  PONG,
} from "../../protocol/socket-messages";
import { clientEffect, exitByObject, exitFromRunner, type ServerMessage } from "../../src/domain/executions";
import type { NotificationServerMessage } from "../../src/domain/notifications";

// protocol/socket-messages.ts is the one contract of the client sockets: what the Worker's
// objects send (their types come from it) must parse with the schemas the web app reads with.
const parses = (schema: Parameters<typeof parseSocketMessage>[0], message: unknown) => parseSocketMessage(schema, JSON.stringify(message)) !== undefined;

describe("the notification socket's messages", () => {
  it("every message the object sends parses as the app reads it", () => {
    const sent: NotificationServerMessage[] = [
      { type: "hello", user_id: "usr_1", last_id: 0, unread: 0, gap: false },
      { type: "notification", notification: { id: 3, type: "run.finished", created_at: "2026-01-01T00:00:00.000Z", read_at: null, payload: { run_id: "run_1" } } },
      { type: "read", ids: [1, 2], unread: 1 },
      { type: "error", detail: "This socket only delivers notifications" },
    ];
    for (const message of sent) expect(parses(notificationServerMessageSchema, message), message.type).toBe(true);
    expect(parseSocketMessage(notificationServerMessageSchema, PONG)).toEqual({ type: "pong" });
  });

  it("a notification of a type the app does not know still parses (clients ignore types, not messages)", () => {
    const later = { type: "notification", notification: { id: 4, type: "some.future_type", created_at: "2026-01-01T00:00:00.000Z", read_at: null, payload: {} } };
    expect(parses(notificationServerMessageSchema, later)).toBe(true);
  });

  it("a malformed frame is no message: not JSON, no type, an unknown type, a missing field", () => {
    for (const raw of ["not json", "{}", '{"type":"surprise"}', '{"type":"hello","unread":1}', '{"type":"notification"}', "null", "42"]) {
      expect(parseSocketMessage(notificationServerMessageSchema, raw), raw).toBeUndefined();
    }
    expect(parseSocketMessage(notificationServerMessageSchema, new ArrayBuffer(4))).toBeUndefined();
  });
});

describe("the execution socket's messages", () => {
  it("every message the object sends parses as the app reads it, exits of every kind included", () => {
    const sent: ServerMessage[] = [
      { type: "hello", execution_id: "exe_1", status: "starting", role: "owner", next_seq: 0, replay_from: 0 },
      { type: "status", status: "running" },
      { type: "stdout", seq: 0, data: "hi\n" },
      { type: "stderr", seq: 1, data: "warning\n" },
      { type: "error", detail: "stdin refused by the runner: closed" },
      { type: "exit", ...exitByObject("runner_missing", 60_000) },
      { type: "exit", ...exitByObject("terminated", 10) },
      {
        type: "exit",
        ...exitFromRunner({ type: "exit", status: "exited", cause: null, code: 0, signal: null, truncated: false, error: null, timings: { setup_ms: 3, run_ms: 40 } }, 50),
      },
    ];
    for (const message of sent) expect(parses(executionServerMessageSchema, message), message.type).toBe(true);
  });

  it("what the app sends is what the object accepts, and the ping is the keep-alive both answer", () => {
    for (const message of [{ type: "stdin", data: "x\n" }, { type: "stdin", eof: true }, { type: "terminate" }]) {
      expect(executionClientMessageSchema.safeParse(message).success).toBe(true);
      expect(clientEffect(JSON.stringify(message), "owner", "running").kind).toBe("runner");
    }
    expect(executionClientMessageSchema.safeParse({ type: "stdin" }).success).toBe(false);
    expect(JSON.parse(PING)).toEqual({ type: "ping" });
  });
});
