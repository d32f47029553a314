import type { Notification, NotificationEvent } from "../domain/notifications";
import type { NotificationMessage } from "../domain/queue-messages";
import { notificationObject } from "../durable/notification/notification-object";
import type { Env } from "../env";
import { log } from "../lib/log";

const SEND_TRIES = 3;
const BATCH = 100;

/**
 * Hands notifications to the queue (docs/api.md, "Notifications"). It never throws: a
 * notification is a side effect, and the action that caused it has happened either way. A
 * refused send is tried again at once, up to SEND_TRIES times, then logged with its keys.
 * Who is told what is decided by the flows that call it; objects never notify.
 */
export async function notify(env: Env, events: readonly NotificationEvent[]): Promise<void> {
  const createdAt = new Date().toISOString();
  for (let i = 0; i < events.length; i += BATCH) {
    const messages = events.slice(i, i + BATCH).map((e) => ({
      body: { user_id: e.userId, type: e.type, payload: e.payload, key: e.key, created_at: createdAt } satisfies NotificationMessage,
    }));
    for (let tries = 1; ; tries++) {
      try {
        await env.NOTIFICATION_EVENTS.sendBatch(messages);
        break;
      } catch (e) {
        if (tries < SEND_TRIES) continue;
        log("error", "notifications: could not be queued", { keys: messages.map((m) => m.body.key), error: String(e) });
        break;
      }
    }
  }
}

/** The consumer's step: the notification into its user's object, which skips a key it has stored. */
export async function deliverNotification(env: Env, message: NotificationMessage): Promise<Notification[]> {
  return notificationObject(env, message.user_id).deliver(message.user_id, [
    { key: message.key, type: message.type, payload: message.payload, createdMs: Date.parse(message.created_at) },
  ]);
}
