import type { Env } from "../../env";
import { httpMailer } from "./http-provider";
import { outboxMailer } from "./mail-outbox";
import type { Mailer } from "./mail-types";

/**
 * `http` (production): a transactional-mail provider's JSON API. `outbox` (development and
 * tests, set only in `.dev.vars` and the test config): every message kept in R2 and handed
 * to the dev mail sink, which writes it into `.dev/outbox/`.
 */
export function mailer(env: Env): Mailer {
  switch (env.EMAIL_PROVIDER) {
    case "http":
      return httpMailer(env);
    case "outbox":
      return outboxMailer(env);
    default:
      throw new Error(`EMAIL_PROVIDER must be "http" or "outbox", not ${JSON.stringify(env.EMAIL_PROVIDER)}`);
  }
}
