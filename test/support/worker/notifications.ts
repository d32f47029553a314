import { expect } from "vitest";
import { NOTIFICATION_PAYLOADS, type NotificationType } from "../../../src/domain/notifications";
import { call, eventually } from "./client";

export interface NotificationJson {
  id: number;
  type: NotificationType;
  created_at: string;
  read_at: string | null;
  payload: Record<string, unknown>;
}

export async function notificationsOf(token: string, query = ""): Promise<{ items: NotificationJson[]; pagination: { total: number } }> {
  const res = await call(`/api/v1/notifications${query}`, { token });
  expect(res.status).toBe(200);
  return (await res.json()) as { items: NotificationJson[]; pagination: { total: number } };
}

/**
 * Waits for the user's notification of `type` whose payload has `match`'s fields (queue
 * deliveries take about a second), and checks its payload against the catalogue's schema.
 */
export async function notified(token: string, type: NotificationType, match: Record<string, unknown>): Promise<NotificationJson> {
  const found = await eventually(async () =>
    (await notificationsOf(token, "?limit=100")).items.find(
      (n) => n.type === type && Object.entries(match).every(([k, v]) => n.payload[k] === v),
    ),
  );
  expect(NOTIFICATION_PAYLOADS[type].safeParse(found.payload).success).toBe(true);
  return found;
}

/**
 * Sends the user a test notification and waits until it is stored: every notification queued
 * before it has been processed by then, so a test can check that none it must not cause came.
 */
export async function afterQueuedNotifications(token: string): Promise<void> {
  const res = await call("/api/v1/notifications/test", { method: "POST", token });
  expect(res.status).toBe(202);
  const { request_id } = (await res.json()) as { request_id: string };
  await notified(token, "notification.test", { request_id });
}
