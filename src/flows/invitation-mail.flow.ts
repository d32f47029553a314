import { database } from "../db/client";
import { countDeliveryAttempt, findInvitation, recordDelivery } from "../db/invitations.queries";
import { renderInvitationEmail } from "../domain/invitation-email";
import { acceptanceLink, hashInviteToken, invitationStatus } from "../domain/invitations";
import type { Env } from "../env";
import type { EmailQueueMessage } from "../domain/queue-messages";
import { mailer } from "../services/email/mailer";
import type { SendResult } from "../services/email/mail-types";

/**
 * Queues the e-mail of an invitation's current token. The token travels in the message
 * because the database keeps only its hash; nothing else ever stores it. If the queue
 * itself refuses, the invitation stays and shows the failed delivery (a resend retries).
 */
export async function queueInvitationEmail(env: Env, invitationId: string, token: string): Promise<void> {
  try {
    await env.EMAIL.send({ type: "invitation", invitation_id: invitationId, token });
  } catch (e) {
    const error = `the e-mail could not be queued (${e instanceof Error ? e.message : String(e)}); resend the invitation`;
    const now = new Date().toISOString();
    await recordDelivery(database(env.DB), invitationId, await hashInviteToken(token), { status: "failed", error }, now);
  }
}

export type InvitationSendOutcome = { state: "skipped"; why: string } | ({ state: SendResult["verdict"] } & Pick<SendResult, "detail">);

/**
 * One try at sending an invitation's e-mail. Skipped, without sending, when the message's
 * token is no longer the invitation's (a resend replaced it: its own message sends the new
 * link), when the e-mail already has a final delivery state (a redelivered message), or when
 * the invitation can no longer be accepted. A refused send is final; a retry is the caller's.
 */
export async function sendInvitationEmail(env: Env, message: EmailQueueMessage, now: Date): Promise<InvitationSendOutcome> {
  const db = database(env.DB);
  const invitation = await findInvitation(db, message.invitation_id);
  if (!invitation) return { state: "skipped", why: "no such invitation" };
  const tokenHash = await hashInviteToken(message.token);
  if (invitation.tokenHash !== tokenHash) return { state: "skipped", why: "a newer token replaced this one" };
  if (invitation.deliveryStatus !== "queued") return { state: "skipped", why: `already ${invitation.deliveryStatus}` };
  const status = invitationStatus(invitation, now);
  if (status !== "unused") {
    const error = `not sent: the invitation was ${status} before its e-mail could be sent`;
    await recordDelivery(db, invitation.id, tokenHash, { status: "failed", error }, now.toISOString());
    return { state: "skipped", why: error };
  }

  const rendered = renderInvitationEmail({
    taskTitle: invitation.taskTitle,
    organizationName: invitation.organizationName,
    inviterEmail: invitation.inviterEmail,
    expiresAt: invitation.expiresAt,
    acceptUrl: acceptanceLink(env.APP_BASE_URL, message.token),
  });
  await countDeliveryAttempt(db, invitation.id, tokenHash);
  const result = await mailer(env).send({
    id: `${invitation.id}.v${invitation.tokenVersion}`,
    createdAt: invitation.issuedAt,
    from: env.EMAIL_FROM,
    to: invitation.email,
    ...rendered,
  });
  const at = new Date().toISOString();
  if (result.verdict === "sent") await recordDelivery(db, invitation.id, tokenHash, { status: "sent", error: null }, at);
  else if (result.verdict === "refused") {
    await recordDelivery(db, invitation.id, tokenHash, { status: "failed", error: `the mail provider refused the e-mail: ${result.detail}` }, at);
  } else await recordDelivery(db, invitation.id, tokenHash, { status: "queued", error: result.detail }, at);
  return { state: result.verdict, detail: result.detail };
}

/** Ends an e-mail's delivery as failed, unless it was sent or replaced meanwhile. */
export async function giveUpInvitationEmail(env: Env, message: EmailQueueMessage, error: string): Promise<void> {
  const tokenHash = await hashInviteToken(message.token);
  await recordDelivery(database(env.DB), message.invitation_id, tokenHash, { status: "failed", error }, new Date().toISOString());
}
