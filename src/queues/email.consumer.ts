import { EMAIL_SEND_ATTEMPTS, emailRetryDelaySeconds } from "../domain/invitations";
import type { Env } from "../env";
import { giveUpInvitationEmail, sendInvitationEmail } from "../flows/invitation-mail.flow";
import { log } from "../lib/log";
import { consumeEach } from "./consume";
import type { EmailQueueMessage } from "../domain/queue-messages";

export const EMAIL_QUEUE = "email";
export const EMAIL_DEAD_LETTERS = "email-dlq";



async function deliver(message: Message<EmailQueueMessage>, env: Env): Promise<void> {
  const fields = { invitation_id: message.body.invitation_id, attempt: message.attempts };
  const outcome = await sendInvitationEmail(env, message.body, new Date());
  if (outcome.state === "skipped") {
    log("info", "email: not sent", { ...fields, why: outcome.why });
    return message.ack();
  }
  if (outcome.state === "sent") {
    log("info", "email: sent", fields);
    return message.ack();
  }
  if (outcome.state === "refused") {
    log("error", "email: refused by the provider", { ...fields, detail: outcome.detail });
    return message.ack();
  }
  if (message.attempts >= EMAIL_SEND_ATTEMPTS) {
    log("error", "email: provider unreachable, giving up", { ...fields, detail: outcome.detail });
    await giveUpInvitationEmail(env, message.body, `the mail provider could not be reached: ${outcome.detail} (${message.attempts} attempts)`);
    return message.ack();
  }
  const delaySeconds = emailRetryDelaySeconds(message.attempts);
  log("warn", "email: provider unreachable, retrying", { ...fields, detail: outcome.detail, delay_s: delaySeconds });
  message.retry({ delaySeconds });
}

const common = {
  subject: "email",
  fields: (body: EmailQueueMessage) => ({ invitation_id: body.invitation_id }),
  retryDelaySeconds: emailRetryDelaySeconds,
};

/**
 * Consumer of the `email` queue. Delivery is at least once: a message whose e-mail was
 * already sent, or whose token a resend replaced, is acknowledged without sending. An
 * unexpected error retries with the same backoff, then goes to the dead-letter queue.
 * Never logs the token.
 */
export function consumeEmail(batch: MessageBatch<EmailQueueMessage>, env: Env): Promise<void> {
  return consumeEach(batch, { ...common, handle: (message) => deliver(message, env) });
}

/** Consumer of `email-dlq`: e-mails whose handling kept failing end as failed on their invitation. */
export function consumeEmailDeadLetters(batch: MessageBatch<EmailQueueMessage>, env: Env): Promise<void> {
  return consumeEach(batch, {
    ...common,
    async handle(message) {
      log("error", "email: dead letter", { invitation_id: message.body.invitation_id, attempts: message.attempts });
      await giveUpInvitationEmail(env, message.body, "the e-mail could not be sent: sending it kept failing inside the service; resend the invitation");
      message.ack();
    },
  });
}
