import { EMAIL_SEND_ATTEMPTS, emailRetryDelaySeconds } from "../domain/invitations";
import type { Env } from "../env";
import { giveUpInvitationEmail, sendInvitationEmail } from "../services/email/invitation-mail";
import { log } from "../services/log";

export const EMAIL_QUEUE = "email";
export const EMAIL_DEAD_LETTERS = "email-dlq";

/** An invitation's e-mail with the raw token of its link, which only the e-mail may carry on. */
export type EmailQueueMessage = { type: "invitation"; invitation_id: string; token: string };


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

/**
 * Consumer of the `email` queue. Delivery is at least once: a message whose e-mail was
 * already sent, or whose token a resend replaced, is acknowledged without sending. An
 * unexpected error retries with the same backoff, then goes to the dead-letter queue.
 * Never logs the token.
 */
export async function consumeEmail(batch: MessageBatch<EmailQueueMessage>, env: Env): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      try {
        await deliver(message, env);
      } catch (e) {
        log("error", "email: message failed", {
          invitation_id: message.body.invitation_id,
          attempt: message.attempts,
          error: e instanceof Error ? e.message : String(e),
        });
        message.retry({ delaySeconds: emailRetryDelaySeconds(message.attempts) });
      }
    }),
  );
}

/** Consumer of `email-dlq`: e-mails whose handling kept failing end as failed on their invitation. */
export async function consumeEmailDeadLetters(batch: MessageBatch<EmailQueueMessage>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    log("error", "email: dead letter", { invitation_id: message.body.invitation_id, attempts: message.attempts });
    await giveUpInvitationEmail(env, message.body, "the e-mail could not be sent: sending it kept failing inside the service; resend the invitation");
    message.ack();
  }
}
