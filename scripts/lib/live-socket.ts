import { randomBytes } from "node:crypto";
import { request } from "node:http";
import type * as z from "zod/mini";
import type { ExecutionServerMessage, NotificationServerMessage } from "../../protocol/socket-messages";
import { socketInbox, type OfType } from "./message-queue";
// A Node client of the API's WebSockets (Node's own WebSocket, which may send headers): what
// arrived in order, the next message of a type, how it closed. Each frame is parsed with the
// schema the Worker sends by (protocol/socket-messages.ts), so a test reads typed messages and a
// frame outside the contract fails the test. Used by the end-to-end tests and the benches.

export interface LiveSocket<M extends { type: string }> {
  /** The messages that arrived, parsed, in order. */
  messages: M[];
  /** The next message not yet taken (of `type` when given, skipping others); fails once a frame did not parse. */
  next<K extends M["type"]>(type?: K, timeoutMs?: number): Promise<OfType<M, K>>;
  send(message: unknown): void;
  close(): void;
  closed: Promise<{ code: number; reason: string }>;
}

/** A live execution's socket (`WS /code-execution/ws/{id}`). */
export type ExecutionSocket = LiveSocket<ExecutionServerMessage>;
/** A user's notification socket (`WS /notifications/ws/{user_id}`). */
export type NotificationSocket = LiveSocket<NotificationServerMessage>;

export interface SocketRefused {
  refused: true;
  /** Node's WebSocket does not expose the HTTP status of a refused upgrade; the message says what failed. */
  message: string;
}

export interface SocketOptions {
  token?: string;
  /** Sent as `cf-connecting-ip`, which the local server takes as the client's address (rate limits are per IP). */
  ip?: string;
}

const headersOf = (opts: SocketOptions): Record<string, string> => ({
  ...(opts.token && { authorization: `Bearer ${opts.token}` }),
  ...(opts.ip && { "cf-connecting-ip": opts.ip }),
});

/** A frame as `schema` reads it; one that is not such a message throws, saying why. */
const parserOf =
  <M>(schema: z.ZodMiniType<M>) =>
  (json: unknown): M => {
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `${i.path.join(".") || "(message)"}: ${i.message}`).join("; "));
    return parsed.data;
  };

/**
 * Opens `url` with `Authorization: Bearer <token>` (when given), reading its frames with
 * `schema`; resolves once open, or with the refusal.
 */
export function openLiveSocket<M extends { type: string }>(url: string, schema: z.ZodMiniType<M>, opts: SocketOptions = {}): Promise<LiveSocket<M> | SocketRefused> {
  // Node's WebSocket (undici) takes an options object where the DOM type has protocols.
  const ws = new WebSocket(url, { headers: headersOf(opts) } as unknown as string[]);
  const { queue, closed } = socketInbox(ws, parserOf(schema));
  const socket: LiveSocket<M> = {
    messages: queue.messages,
    closed,
    send: (message) => ws.send(typeof message === "string" ? message : JSON.stringify(message)),
    close: () => ws.close(1000),
    next: (type, timeoutMs = 20_000) => queue.next(type, timeoutMs),
  };
  return new Promise((resolve) => {
    ws.addEventListener("open", () => resolve(socket), { once: true });
    ws.addEventListener("error", (e) => resolve({ refused: true, message: String((e as ErrorEvent).message ?? "refused") }), { once: true });
  });
}

export async function mustOpenLive<M extends { type: string }>(url: string, schema: z.ZodMiniType<M>, opts: SocketOptions = {}): Promise<LiveSocket<M>> {
  const socket = await openLiveSocket(url, schema, opts);
  if ("refused" in socket) throw new Error(`socket ${url} refused: ${socket.message}`);
  return socket;
}

/**
 * The HTTP status a WebSocket upgrade of `url` is answered with (101 when accepted; the socket
 * is then dropped), with the body of a refusal: what Node's WebSocket does not show.
 */
export function upgradeAnswer(url: string, opts: SocketOptions = {}): Promise<{ status: number; body: string }> {
  const target = new URL(url.replace(/^ws/, "http"));
  return new Promise((resolve, reject) => {
    const req = request(target, {
      headers: {
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": randomBytes(16).toString("base64"),
        ...headersOf(opts),
      },
    });
    req.on("upgrade", (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 101, body: "" });
    });
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}
