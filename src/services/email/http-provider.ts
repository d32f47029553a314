import type { Env } from "../../env";
import type { Mailer } from "./mail-types";
import { postJson } from "./post-json";

/**
 * A transactional-mail provider's JSON API in the usual shape (Resend's `POST /emails`; a
 * provider with another shape goes behind a thin relay): `POST EMAIL_API_URL` with
 * `Authorization: Bearer EMAIL_API_KEY` and `{from, to: [..], subject, text, html}`. The
 * message id goes in `Idempotency-Key`, so a redelivered queue message is not sent twice.
 */
export function httpMailer(env: Env): Mailer {
  return {
    async send(message) {
      if (!env.EMAIL_API_URL || !env.EMAIL_API_KEY) {
        return { verdict: "refused", detail: "the mail provider is not configured (EMAIL_API_URL, EMAIL_API_KEY)" };
      }
      return postJson(
        env.EMAIL_API_URL,
        { from: message.from, to: [message.to], subject: message.subject, text: message.text, html: message.html },
        { authorization: `Bearer ${env.EMAIL_API_KEY}`, "idempotency-key": message.id },
      );
    },
  };
}
