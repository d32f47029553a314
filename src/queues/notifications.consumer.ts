import { backoffSeconds } from "../domain/backoff";
import type { NotificationQueueMessage } from "../domain/queue-messages";
import type { Env } from "../env";
import { deliverNotification } from "../flows/notify.flow";
import { runEnded } from "../flows/runs/run-finished.flow";
import { log } from "../lib/log";
import { consumeEach } from "./consume";

export const NOTIFICATION_QUEUE = "notification-events";
export const NOTIFICATION_DEAD_LETTERS = "notification-events-dlq";

const common = {
  subject: "notification",
  fields: (body: NotificationQueueMessage) =>
    body.type === "run_ended" ? { type: body.type, run_id: body.run.run_id } : { user_id: body.user_id, key: body.key },
  retryDelaySeconds: (attempts: number) => backoffSeconds(attempts, 2, 120),
};

/** A notification into its user's object; a swept run's end into the notifications it makes. */
async function handle(env: Env, body: NotificationQueueMessage): Promise<void> {
  if (body.type === "run_ended") await runEnded(env, body.run);
  else await deliverNotification(env, body);
}

/** Consumer of `notification-events`: each notification into its user's NotificationDO, each swept run's end into its notifications. */
export function consumeNotifications(batch: MessageBatch<NotificationQueueMessage>, env: Env): Promise<void> {
  return consumeEach(batch, {
    ...common,
    async handle(message) {
      await handle(env, message.body);
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
      log("warn", "notification: dead letter, delivering late", { ...common.fields(message.body), attempts: message.attempts });
      await handle(env, message.body);
      message.ack();
    },
  });
}
