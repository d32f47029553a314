import { backoffSeconds } from "../domain/backoff";
import type { Env } from "../env";
import { deliverNotification } from "../flows/notify.flow";
import { log } from "../lib/log";
import { consumeEach } from "./consume";
import type { NotificationQueueMessage } from "../domain/queue-messages";

export const NOTIFICATION_QUEUE = "notification-events";
export const NOTIFICATION_DEAD_LETTERS = "notification-events-dlq";

const common = {
  subject: "notification",
  fields: (body: NotificationQueueMessage) => ({ user_id: body.user_id, key: body.key }),
  retryDelaySeconds: (attempts: number) => backoffSeconds(attempts, 2, 120),
};

/** Consumer of `notification-events`: each notification into its user's NotificationDO. */
export function consumeNotifications(batch: MessageBatch<NotificationQueueMessage>, env: Env): Promise<void> {
  return consumeEach(batch, {
    ...common,
    async handle(message) {
      await deliverNotification(env, message.body);
      message.ack();
    },
  });
}

/**
 * Consumer of `notification-events-dlq`: notifications whose object stayed unreachable past
 * the main queue's retries, tried again later and slower; when these run out too the log
 * names what was lost.
 */
export function consumeNotificationDeadLetters(batch: MessageBatch<NotificationQueueMessage>, env: Env): Promise<void> {
  return consumeEach(batch, {
    ...common,
    retryDelaySeconds: () => 60,
    async handle(message) {
      log("warn", "notification: dead letter, delivering late", { user_id: message.body.user_id, key: message.body.key, attempts: message.attempts });
      await deliverNotification(env, message.body);
      message.ack();
    },
  });
}
