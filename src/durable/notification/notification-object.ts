import { DurableObject } from "cloudflare:workers";
import { PING, PONG } from "../../../protocol/socket-messages";
import {
  CLIENT_MESSAGE_REFUSAL,
  hasGap,
  NOTIFICATION_LIMITS,
  type Notification,
  type NotificationServerMessage,
  type NotificationType,
  type ReadSelection,
} from "../../domain/notifications";
import type { Env } from "../../env";
import { takeTicketHeader, TICKET_HEADER } from "../socket-tickets";
import {
  claimOwner,
  countNotifications,
  findNotification,
  insertNotification,
  lastId,
  markRead,
  notificationPage,
  notificationsAfter,
  oldestId,
  SCHEMA,
  trim,
} from "./notification-storage";

/** The NotificationDO of a user: one per user id. */
export function notificationObject(env: Env, userId: string): DurableObjectStub<NotificationDO> {
  return env.NOTIFICATIONS.get(env.NOTIFICATIONS.idFromName(userId)) as unknown as DurableObjectStub<NotificationDO>;
}

/** How the Worker hands a socket to the object: whose it is (checked by the Worker) and the browser ticket it came with. */
export const NOTIFICATION_SOCKET_HEADERS = { user: "X-Assay-User", ticket: TICKET_HEADER } as const;

export interface Delivery {
  key: string;
  type: NotificationType;
  payload: unknown;
  createdMs: number;
}

/**
 * One user's notifications (docs/api.md, "Notifications"): stored, bounded, and pushed to
 * every socket the user has open. Sockets are accepted with the Hibernation API and pings
 * answered by the auto-response, so idle sockets cost no wake-ups; the object wakes for a
 * delivery, a REST call or a socket opening.
 */
export class NotificationDO extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(SCHEMA);
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PING, PONG));
  }

  /**
   * Stores what is new (a key seen before is a redelivery and is skipped), drops the oldest
   * beyond the bound, and pushes the new ones to the user's sockets. Returns the stored ones.
   */
  async deliver(userId: string, deliveries: Delivery[]): Promise<Notification[]> {
    this.own(userId);
    const stored = this.ctx.storage.transactionSync(() => {
      const added = deliveries.flatMap((d) => insertNotification(this.sql, d) ?? []);
      trim(this.sql, NOTIFICATION_LIMITS.storedPerUser);
      return added;
    });
    for (const notification of stored) this.broadcast({ type: "notification", notification });
    return stored;
  }

  async page(userId: string, unreadOnly: boolean, limit: number, offset: number): Promise<Notification[]> {
    this.own(userId);
    return notificationPage(this.sql, unreadOnly, limit, offset);
  }

  async count(userId: string, unreadOnly: boolean): Promise<number> {
    this.own(userId);
    return countNotifications(this.sql, unreadOnly);
  }

  async find(userId: string, id: number): Promise<Notification | undefined> {
    this.own(userId);
    return findNotification(this.sql, id);
  }

  /** Marks the selected unread notifications read, and tells the user's sockets. */
  async markRead(userId: string, selection: ReadSelection): Promise<{ marked: number[]; unread: number }> {
    this.own(userId);
    const marked = markRead(this.sql, selection, Date.now());
    const unread = countNotifications(this.sql, true);
    if (marked.length > 0) this.broadcast({ type: "read", ids: marked, unread });
    return { marked, unread };
  }

  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return text(426, "Expected a WebSocket upgrade");
    const userId = request.headers.get(NOTIFICATION_SOCKET_HEADERS.user) ?? "";
    this.own(userId);
    if (!takeTicketHeader(this.sql, request.headers.get(NOTIFICATION_SOCKET_HEADERS.ticket), Date.now())) {
      return text(401, "This ticket has been used already; ask for a new one");
    }
    if (this.ctx.getWebSockets().length >= NOTIFICATION_LIMITS.socketsPerUser) {
      return text(429, `At most ${NOTIFICATION_LIMITS.socketsPerUser} notification sockets may be open per user; close one first`);
    }
    const after = new URL(request.url).searchParams.get("after_id");
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    const last = lastId(this.sql);
    const afterId = after === null ? last : Number(after);
    send(server, { type: "hello", user_id: userId, last_id: last, unread: countNotifications(this.sql, true), gap: hasGap(afterId, oldestId(this.sql), last) });
    for (const notification of notificationsAfter(this.sql, afterId)) send(server, { type: "notification", notification });
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketMessage(ws: WebSocket): Promise<void> {
    send(ws, { type: "error", detail: CLIENT_MESSAGE_REFUSAL });
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, reason);
    } catch {
      // Already closed on our side.
    }
  }

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  /** An object is named by its user's id: a call for another user is a bug in the caller, not a request to serve. */
  private own(userId: string): void {
    if (!claimOwner(this.sql, userId)) throw new Error("notification object called for another user");
  }

  private broadcast(message: NotificationServerMessage): void {
    for (const ws of this.ctx.getWebSockets()) send(ws, message);
  }
}

function send(ws: WebSocket, message: NotificationServerMessage): void {
  try {
    ws.send(JSON.stringify(message));
  } catch {
    // A socket closing meanwhile misses it; its reconnect with after_id gets it from storage.
  }
}

function text(status: number, detail: string): Response {
  return Response.json({ detail }, { status });
}
