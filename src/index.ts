import { handleFetch } from "./app";
import type { Env } from "./env";
import { handleQueue } from "./queues";
import { handleScheduled } from "./scheduled";

export { AttemptDO } from "./durable/attempt/object";
export { ExecutionDO } from "./durable/execution/object";
export { NotificationDO } from "./durable/notification/object";

export default {
  fetch: handleFetch,
  queue: handleQueue,
  scheduled: handleScheduled,
} satisfies ExportedHandler<Env>;
