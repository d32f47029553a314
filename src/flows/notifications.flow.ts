import { notificationsFor, type Notification } from "../domain/notifications";
import { accept, refuse, type Outcome } from "../domain/outcome";
import type { Listing } from "../domain/pagination";
import { NOTIFICATION_SOCKET_HEADERS, notificationObject } from "../durable/notification/notification-object";
import type { Env } from "../env";
import { notify } from "./notify.flow";

// A user's own notifications (docs/api.md, "Notifications"), all kept by the user's object.

/** The user's notifications, newest first, page by page. */
export function notificationList(env: Env, userId: string, unreadOnly: boolean): Listing<Notification> {
  const object = notificationObject(env, userId);
  return { count: () => object.count(userId, unreadOnly), page: (limit, offset) => object.page(userId, unreadOnly, limit, offset) };
}

/** Marks one of the user's notifications read and answers it; not found when the user has no such notification. */
export async function markNotificationRead(env: Env, userId: string, notificationId: number): Promise<Outcome<Notification>> {
  const object = notificationObject(env, userId);
  await object.markRead(userId, { ids: [notificationId] });
  const found = await object.find(userId, notificationId);
  return found ? accept(found) : refuse("not_found", `Notification ${notificationId} not found`);
}

/** Marks the user's notifications read, those up to `upToId` when given: what was marked, and how many stay unread. */
export async function markAllNotificationsRead(env: Env, userId: string, upToId: number | null): Promise<{ marked: number[]; unread: number }> {
  return notificationObject(env, userId).markRead(userId, { upToId });
}

/** Sends the user a `notification.test` carrying the request's id, on the path every notification takes. */
export async function sendTestNotification(env: Env, userId: string, requestId: string): Promise<void> {
  // A client may send the same X-Request-Id twice; each call is still a notification of its own.
  await notify(env, notificationsFor([userId], "notification.test", { request_id: requestId }, crypto.randomUUID()));
}

/**
 * Hands the user's socket to their object, with the browser ticket it came with (taken once
 * by the object) and the last id the client has seen; answers the object's response.
 */
export async function openNotificationSocket(
  env: Env,
  userId: string,
  ticket: { id: string; expiresMs: number } | null,
  afterId: number | undefined,
): Promise<Response> {
  const headers = new Headers({ Upgrade: "websocket", [NOTIFICATION_SOCKET_HEADERS.user]: userId });
  if (ticket) headers.set(NOTIFICATION_SOCKET_HEADERS.ticket, `${ticket.id}:${ticket.expiresMs}`);
  const after = afterId === undefined ? "" : `?after_id=${afterId}`;
  return notificationObject(env, userId).fetch(`https://notifications/socket${after}`, { headers });
}
