import type { IRequest } from "itty-router";
import { z } from "zod";
import { NOTIFICATION_LIMITS, NOTIFICATION_PAYLOADS, NOTIFICATION_TYPES, USER_ID_PATTERN, type NotificationType } from "../domain/notifications";
import {
  markAllNotificationsRead,
  markNotificationRead,
  notificationList,
  openNotificationSocket,
  sendTestNotification,
} from "../flows/notifications.flow";
import { jsonContent, jsonResponse, SessionEndpoint, SocketEndpoint, type SessionContext, type SocketContext } from "../http/endpoint";
import { ErrorSchema, HttpError, json } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { pageEnvelope, paginate, paginationQuery } from "../http/paging";
import { socketAnswer, socketUrl } from "../http/sockets";
import { mintWsTicket } from "../http/ws-tickets";
import { requestState } from "../http/request-state";
import type { RouteTable } from "./table";

const notificationOf = <T extends NotificationType>(type: T) =>
  z
    .object({
      id: z.number().int().describe("Increases with every notification of the user; the socket's after_id"),
      type: z.literal(type),
      created_at: z.string().describe("When the event happened"),
      read_at: z.string().nullable(),
      payload: NOTIFICATION_PAYLOADS[type],
    })
    .describe(NOTIFICATION_PAYLOADS[type].description ?? type);

const NotificationSchema = z
  .discriminatedUnion(
    "type",
    NOTIFICATION_TYPES.map(notificationOf) as unknown as [ReturnType<typeof notificationOf>, ...ReturnType<typeof notificationOf>[]],
  )
  .meta({ id: "Notification" });

const NotificationIdParam = z.object({ notification_id: z.coerce.number().int().min(1).describe("The notification's id") });
const UserIdParam = z.object({ user_id: z.string().regex(USER_ID_PATTERN, "not a user id").describe("The caller's own user id (GET /me)") });

const ticketResource = (userId: string) => `notifications:${userId}`;

export class ListNotifications extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["notifications"],
    summary: "The caller's notifications, newest first",
    description:
      `The newest ${NOTIFICATION_LIMITS.storedPerUser} are kept per user. Every type, its payload and who gets it: ` +
      'docs/api.md, "Notifications".',
    request: {
      query: paginationQuery({ defaultLimit: 20, maxLimit: 100 }).extend({
        unread_only: z
          .enum(["true", "false"])
          .default("false")
          .transform((v) => v === "true")
          .describe("Only notifications not yet marked read"),
      }),
    },
    responses: { "200": jsonResponse("A page of notifications", pageEnvelope(NotificationSchema)) },
  };

  async run({ env, caller }: SessionContext) {
    const { query } = await this.getValidatedData<typeof this.schema>();
    const notifications = notificationList(env, caller.user.id, query.unread_only);
    return paginate(query, notifications.count, notifications.page);
  }
}

export class MarkNotificationRead extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["notifications"],
    summary: "Mark one notification read",
    description: "Marking it again changes nothing. The user's open sockets get `{type: \"read\", ids, unread}`.",
    request: { params: NotificationIdParam },
    responses: { "200": jsonResponse("The notification", NotificationSchema), "404": jsonResponse("No such notification of the caller's", ErrorSchema) },
  };

  async run({ env, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    return unwrap(await markNotificationRead(env, caller.user.id, params.notification_id));
  }
}

export class MarkAllNotificationsRead extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["notifications"],
    summary: "Mark every notification of the caller read",
    request: {
      body: jsonContent(
        z.strictObject({
          up_to_id: z.number().int().min(1).optional().describe("Only those with this id or lower: what the client has shown"),
        }),
      ),
    },
    responses: {
      "200": jsonResponse(
        "What was marked, and how many stay unread",
        z.object({ marked: z.array(z.number().int()), unread: z.number().int() }).meta({ id: "NotificationsMarked" }),
      ),
    },
  };

  async run({ env, caller }: SessionContext) {
    const { body } = await this.getValidatedData<typeof this.schema>();
    return markAllNotificationsRead(env, caller.user.id, body.up_to_id ?? null);
  }
}

export class SendTestNotification extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["notifications"],
    summary: "Send the caller a test notification",
    description:
      "A `notification.test` notification to the caller, on the same path as every other (queue, the user's object, " +
      "their sockets): for a client to check that it receives notifications. Its payload is this request's id.",
    responses: { "202": jsonResponse("Queued", z.object({ request_id: z.string() }).meta({ id: "TestNotificationQueued" })) },
  };

  async run({ request, env, caller }: SessionContext) {
    const { requestId } = requestState(request);
    await sendTestNotification(env, caller.user.id, requestId);
    return json({ request_id: requestId }, 202);
  }
}

export class CreateNotificationTicket extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["notifications"],
    summary: "The caller's notification socket, and a browser ticket for it",
    description:
      "Browsers cannot send Authorization on a WebSocket: they get a ticket here with their Bearer token and open " +
      "`ws_url?ticket=…` (add `&after_id=` to catch up). A ticket is for one socket, of its caller, once, within 60 s.",
    responses: {
      "201": jsonResponse(
        "The socket address and its ticket",
        z.object({ ws_url: z.string(), ws_ticket: z.string(), ws_ticket_expires_at: z.string() }).meta({ id: "NotificationTicket" }),
      ),
    },
  };

  async run({ request, env, caller }: SessionContext) {
    const ticket = await mintWsTicket(env.URL_SIGNING_SECRET, caller.viewer, ticketResource(caller.user.id), NOTIFICATION_LIMITS.ticketSeconds);
    return json(
      { ws_url: socketUrl(request, `/api/v1/notifications/ws/${caller.user.id}`), ws_ticket: ticket.ticket, ws_ticket_expires_at: ticket.expiresAt },
      201,
      { "Cache-Control": "no-store" },
    );
  }
}

export class WatchNotifications extends SocketEndpoint {
  schema = {
    tags: ["notifications"],
    summary: "WebSocket: the caller's notifications as they happen",
    description:
      "Upgrade with `Authorization: Bearer <session JWT>`, or from a browser with `?ticket=` (POST /notifications/ws-ticket). " +
      "Only the user themself may connect (403 before any socket is opened). The server sends `hello` " +
      "`{user_id, last_id, unread, gap}`, then `{type: \"notification\", notification}` for every stored notification after " +
      "`after_id` and for each new one, and `{type: \"read\", ids, unread}` when some are marked read. `gap: true` says " +
      "notifications after `after_id` were dropped from storage. Send `{\"type\":\"ping\"}` to keep the socket alive " +
      '(`{"type":"pong"}` answers). See docs/api.md, "Notifications".',
    request: {
      params: UserIdParam,
      query: z.object({
        after_id: z.coerce.number().int().min(0).optional().describe("The last id the client has seen: what came after is sent first"),
        ticket: z.string().optional().describe("Browser ticket instead of the Authorization header"),
      }),
    },
    responses: {
      "101": { description: "Switching to the WebSocket protocol" },
      "403": jsonResponse("Not the caller's own notifications", ErrorSchema),
      "426": jsonResponse("Not a WebSocket upgrade request", ErrorSchema),
      "429": jsonResponse("Too many sockets open for this user, or rate limited", ErrorSchema),
    },
  };

  protected resource(request: IRequest): string {
    return ticketResource(String(request.params?.user_id ?? ""));
  }

  async run({ env, credential }: SocketContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    if (credential.viewer.userId !== params.user_id) throw HttpError.forbidden("These are another user's notifications");
    return socketAnswer(await openNotificationSocket(env, params.user_id, credential.ticket, query.after_id));
  }
}

export const notificationRoutes: RouteTable = [
  ["GET", "/notifications", ListNotifications],
  ["POST", "/notifications/read-all", MarkAllNotificationsRead],
  ["POST", "/notifications/ws-ticket", CreateNotificationTicket],
  ["POST", "/notifications/test", SendTestNotification],
  ["GET", "/notifications/ws/:user_id", WatchNotifications],
  ["POST", "/notifications/:notification_id/read", MarkNotificationRead],
];
