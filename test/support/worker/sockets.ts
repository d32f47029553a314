import { socketInbox, type Message } from "../../../scripts/lib/message-queue";
import { call, freshIp } from "./client";

export type SocketMessage = Message;

/** One accepted WebSocket as a client sees it: what arrived, in order, and how it closed. */
export interface TestSocket {
  ws: WebSocket;
  messages: SocketMessage[];
  /** The next message not yet taken (of `type`, when given, skipping others); fails after `timeoutMs`. */
  next(type?: string, timeoutMs?: number): Promise<SocketMessage>;
  send(message: unknown): void;
  closed: Promise<{ code: number; reason: string }>;
}

/** Upgrades `path` through the Worker's fetch handler; the Response when it is not a 101. */
export async function openSocket(path: string, opts: { token?: string; ip?: string } = {}): Promise<TestSocket | Response> {
  const res = await call(path, { token: opts.token, ip: opts.ip ?? freshIp(), headers: { Upgrade: "websocket" } });
  if (res.status !== 101 || !res.webSocket) return res;
  const ws = res.webSocket;
  const { queue, closed } = socketInbox(ws);
  ws.accept();
  return {
    ws,
    messages: queue.messages,
    send: (message) => ws.send(typeof message === "string" ? message : JSON.stringify(message)),
    closed,
    next: (type, timeoutMs) => queue.next(type, timeoutMs),
  };
}

/** A socket that must have opened. */
export async function mustOpen(path: string, opts: { token?: string; ip?: string } = {}): Promise<TestSocket> {
  const socket = await openSocket(path, opts);
  if (socket instanceof Response) throw new Error(`upgrade of ${path} refused: ${socket.status} ${await socket.text()}`);
  return socket;
}
