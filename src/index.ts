import { handleFetch } from "./app";
import type { Env } from "./env";
import { handleQueue } from "./queues/handle-queue";
import { handleScheduled } from "./scheduled";

export { AttemptDO } from "./durable/attempt/attempt-object";
export { ExecutionDO } from "./durable/execution/execution-object";
export { NotificationDO } from "./durable/notification/notification-object";

export default {
  fetch: handleFetch,
  queue: handleQueue,
  scheduled: handleScheduled,
} satisfies ExportedHandler<Env>;
