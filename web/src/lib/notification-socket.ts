// The user's notification socket (docs/api.md, "Notifications"): a browser ticket, then the
// socket; reconnects with backoff and `after_id` so nothing is missed; pings to stay open.
// Pages subscribe to the notifications they care about (run.finished, task.import_finished, ...).
// Every frame is parsed with the schema the Worker sends it by (protocol/socket-messages.ts); one
// that does not parse is ignored.
import { signal } from "@preact/signals";
import { notificationServerMessageSchema, parseSocketMessage, PING, type NotificationServerMessage, type SocketNotification } from "../../../protocol/socket-messages";
import { api, call } from "./data";
import { backoffMs } from "./backoff";

export type AppNotification = SocketNotification;

type Listener = (notification: AppNotification) => void;

export const socketState = signal<"connecting" | "open" | "closed">("closed");
export const unreadCount = signal(0);

const listeners = new Set<Listener>();
let lastId: number | undefined;
let socket: WebSocket | undefined;
let attempt = 0;
let stopped = true;
let pinger: ReturnType<typeof setInterval> | undefined;

/** Calls `listener` for every notification from now on; returns what unsubscribes it. */
export function onNotification(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

async function connect(): Promise<void> {
  if (stopped) return;
  socketState.value = "connecting";
  let url: string;
  try {
    const ticket = await call(api.POST("/api/v1/notifications/ws-ticket"));
    url = `${ticket.ws_url}?ticket=${encodeURIComponent(ticket.ws_ticket)}${lastId !== undefined ? `&after_id=${lastId}` : ""}`;
  } catch {
    return retry();
  }
  const ws = new WebSocket(url);
  socket = ws;
  ws.onopen = () => {
    attempt = 0;
    socketState.value = "open";
    pinger = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send(PING), 30_000);
  };
  ws.onmessage = (event) => receiveFrame(event.data);
  ws.onclose = () => {
    clearInterval(pinger);
    if (socket === ws) socket = undefined;
    socketState.value = "closed";
    retry();
  };
}

/**
 * One frame of the socket: what it changes (the unread count, the replay point) and the
 * listeners it tells. A frame that is not JSON or not a message of the schema is ignored.
 */
export function receiveFrame(raw: unknown): void {
  const message = parseSocketMessage(notificationServerMessageSchema, raw);
  if (message) receive(message);
}

function receive(message: NotificationServerMessage): void {
  if (message.type === "hello") {
    unreadCount.value = message.unread;
    lastId ??= message.last_id;
  } else if (message.type === "notification") {
    lastId = Math.max(lastId ?? 0, message.notification.id);
    if (!message.notification.read_at) unreadCount.value += 1;
    for (const listener of listeners) listener(message.notification);
  } else if (message.type === "read") {
    unreadCount.value = message.unread;
  }
}

function retry(): void {
  if (stopped) return;
  attempt += 1;
  setTimeout(() => void connect(), backoffMs(attempt));
}

export function startNotifications(): void {
  if (!stopped) return;
  stopped = false;
  void connect();
}

export function stopNotifications(): void {
  stopped = true;
  socket?.close();
}
