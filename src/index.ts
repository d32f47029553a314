import { handleFetch } from "./app";
import type { Env } from "./env";
import { handleQueue } from "./queues";

export default {
  fetch: handleFetch,
  queue: handleQueue,
} satisfies ExportedHandler<Env>;
