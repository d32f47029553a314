import { handleFetch } from "./app";
import type { Env } from "./env";
import { handleQueue } from "./queues";

export { AttemptDO } from "./durable/attempt/object";
export { ExecutionDO } from "./durable/execution/object";
export { NotificationDO } from "./durable/notification/object";

export default {
  fetch: handleFetch,
  queue: handleQueue,
} satisfies ExportedHandler<Env>;
