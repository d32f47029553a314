import { handleFetch } from "./app";
import type { Env } from "./env";

export default {
  fetch: handleFetch,
} satisfies ExportedHandler<Env>;
