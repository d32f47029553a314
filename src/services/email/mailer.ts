import type { sendVerdict } from "../../domain/invitations";
import type { Env } from "../../env";
import { httpMailer } from "./http-provider";
import { outboxMailer } from "./outbox";

export interface EmailMessage {
  /** Stable across redeliveries of the same e-mail: the provider's idempotency key and the outbox file's name. */
  id: string;
  /** ISO 8601 UTC; when the e-mail was first queued. */
  createdAt: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The links the e-mail carries, in order; the outbox shows them so tests and people can follow them. */
  links: string[];
}

export interface SendResult {
  verdict: ReturnType<typeof sendVerdict>;
  /** What happened, for logs and for the delivery error shown on the invitation. */
  detail: string;
}

/** Sends e-mail. Never throws for the provider's sake: a failure is a verdict. */
export interface Mailer {
  send(message: EmailMessage): Promise<SendResult>;
}

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
