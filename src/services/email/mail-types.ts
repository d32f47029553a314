import type { sendVerdict } from "../../domain/invitations";

/** The contract between the mail workflow and the mail providers (one per EMAIL_PROVIDER). */

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
