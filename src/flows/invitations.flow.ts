import { database, type Database } from "../db/client";
import {
  acceptInvitation as storeAcceptance,
  countInvitations,
  findInvitation,
  findInvitationByTokenHash,
  findOpenInvitation,
  insertInvitation,
  listInvitations,
  organizationPlan,
  reissueInvitation,
  revokeInvitation as storeRevocation,
  type InvitationDetails,
  type InvitationFilter,
} from "../db/invitations.queries";
import type { TaskRow } from "../db/tasks.queries";
import {
  acceptanceRefusal,
  candidateLimitMessage,
  expiryFrom,
  hashInviteToken,
  invitationStatus,
  newInvitationId,
  newInviteToken,
  normalizeEmail,
} from "../domain/invitations";
import { notificationNames } from "../db/review.queries";
import { notificationsFor } from "../domain/notifications";
import { accept, refuse, type Outcome } from "../domain/outcome";
import type { Listing } from "../domain/pagination";
import { notify } from "./notify.flow";
import type { Env } from "../env";
import { queueInvitationEmail } from "./invitation-mail.flow";

export type { InvitationDetails } from "../db/invitations.queries";

export async function invitation(env: Env, id: string): Promise<Outcome<InvitationDetails>> {
  return current(database(env.DB), id);
}

async function current(db: Database, id: string): Promise<Outcome<InvitationDetails>> {
  const inv = await findInvitation(db, id);
  return inv ? accept(inv) : refuse("not_found", `Invitation ${id} not found`);
}

/** The refusal of an invitation the plan's candidate limit kept from being stored or reopened. */
async function overCandidateLimit(db: Database, organizationId: string): Promise<Outcome<never>> {
  const plan = await organizationPlan(db, organizationId);
  if (plan?.candidateLimit == null) throw new Error(`an invitation of ${organizationId} was refused without a candidate limit`);
  return refuse("forbidden", candidateLimitMessage({ ...plan, candidateLimit: plan.candidateLimit }));
}

export interface InvitationRequest {
  email: string;
  expiresInHours: number;
  invitedBy: string;
}

/**
 * Invites a candidate to a READY, unarchived task within the plan's candidate limit, and
 * queues the e-mail with the link; the link's token is only in that e-mail.
 */
export async function inviteCandidate(env: Env, task: TaskRow, request: InvitationRequest): Promise<Outcome<InvitationDetails>> {
  if (task.archivedAt) return refuse("conflict", `Task ${task.id} is archived; it takes no new invitations`);
  if (task.status !== "READY") return refuse("conflict", `Task ${task.id} is ${task.status}; candidates can be invited once it is READY`);
  const db = database(env.DB);
  const plan = await organizationPlan(db, task.organizationId);
  if (!plan) throw new Error(`task ${task.id} has no organization`);

  const now = new Date();
  const id = newInvitationId();
  const token = newInviteToken();
  const emailNormalized = normalizeEmail(request.email);
  const stored = await insertInvitation(
    db,
    {
      id,
      organizationId: task.organizationId,
      taskId: task.id,
      email: request.email,
      emailNormalized,
      invitedBy: request.invitedBy,
      tokenHash: await hashInviteToken(token),
      validHours: request.expiresInHours,
      expiresAt: expiryFrom(now, request.expiresInHours),
    },
    plan.candidateLimit,
    now.toISOString(),
  );
  if (!stored) {
    const open = await findOpenInvitation(db, task.id, emailNormalized);
    if (open && invitationStatus(open, now) === "unused") {
      return refuse(
        "conflict",
        `${request.email} already has an open invitation to task ${task.id} (${open.id}, expires ${open.expiresAt}); ` +
          `resend it (POST /api/v1/invites/${open.id}/resend) or revoke it first`,
      );
    }
    return overCandidateLimit(db, task.organizationId);
  }
  await queueInvitationEmail(env, id, token);
  return current(db, id);
}

/** An organization's invitations, newest first, with their status as of `now`. */
export function invitationListing(env: Env, filter: InvitationFilter, now: Date): Listing<InvitationDetails> {
  const db = database(env.DB);
  const at = now.toISOString();
  return {
    count: () => countInvitations(db, filter, at),
    page: (limit, offset) => listInvitations(db, filter, at, limit, offset),
  };
}

function resendRefusal(inv: InvitationDetails, now: Date): Outcome<never> | undefined {
  const status = invitationStatus(inv, now);
  if (status === "used" || status === "revoked") {
    return refuse("conflict", `Invitation ${inv.id} is ${status}; only an unused invitation can be resent`);
  }
  if (inv.supersededBy) {
    return refuse("conflict", `Invitation ${inv.id} was superseded by invitation ${inv.supersededBy}; resend that one`);
  }
  return undefined;
}

/** Issues an unused invitation a new link and expiry and queues its e-mail again; the old link stops working. */
export async function resendInvitation(env: Env, inv: InvitationDetails): Promise<Outcome<InvitationDetails>> {
  const db = database(env.DB);
  const now = new Date();
  const refusal = resendRefusal(inv, now);
  if (refusal) return refusal;
  const plan = await organizationPlan(db, inv.organizationId);
  const token = newInviteToken();
  const reissued = await reissueInvitation(
    db,
    inv,
    await hashInviteToken(token),
    expiryFrom(now, inv.validHours),
    plan?.candidateLimit ?? null,
    now.toISOString(),
  );
  if (!reissued) {
    const after = await current(db, inv.id);
    if (!after.ok) return after;
    return resendRefusal(after.value, now) ?? overCandidateLimit(db, inv.organizationId);
  }
  await queueInvitationEmail(env, inv.id, token);
  return current(db, inv.id);
}

/** Revokes an unused invitation; revoking it again changes nothing. */
export async function revokeInvitation(env: Env, inv: InvitationDetails, revokedBy: string): Promise<Outcome<InvitationDetails>> {
  const db = database(env.DB);
  if (!(await storeRevocation(db, inv.id, revokedBy, new Date().toISOString()))) {
    const after = await current(db, inv.id);
    if (!after.ok) return after;
    if (after.value.usedAt) return refuse("conflict", `Invitation ${inv.id} has been used; it can no longer be revoked`);
  }
  return current(db, inv.id);
}

function acceptRefusal(inv: InvitationDetails, now: Date): Outcome<never> | undefined {
  const refusal = acceptanceRefusal(invitationStatus(inv, now));
  if (!refusal) return undefined;
  return refuse(refusal.kind === "used" ? "conflict" : "gone", refusal.detail);
}

export type AcceptedInvitation = InvitationDetails & { usedAt: string };

/** Who accepts: the signed-in user, and whether their identity provider vouches for their e-mail address. */
export interface Acceptor {
  userId: string;
  email: string;
  emailVerified: boolean;
}

/**
 * Accepts an invitation by its link's token for the user it was sent to: they join the
 * organization as a candidate with the task assigned, in one step, and the inviter is told.
 */
export async function acceptInvitation(
  env: Env,
  exec: Pick<ExecutionContext, "waitUntil">,
  token: string,
  acceptor: Acceptor,
): Promise<Outcome<AcceptedInvitation>> {
  const db = database(env.DB);
  const tokenHash = await hashInviteToken(token);
  const inv = await findInvitationByTokenHash(db, tokenHash);
  if (!inv) return refuse("not_found", "No invitation has this token; if the invitation was resent, use the link of the newest e-mail");
  if (!acceptor.emailVerified) {
    return refuse(
      "forbidden",
      "Your e-mail address is not verified: your session token does not say email_verified: true. " +
        "Verify the address with your sign-in provider, sign in again, then accept",
    );
  }
  if (normalizeEmail(acceptor.email) !== inv.emailNormalized) {
    return refuse(
      "forbidden",
      `This invitation was sent to another e-mail address than yours (${acceptor.email}); ` +
        "sign in with the address the invitation was sent to",
    );
  }
  const now = new Date();
  const refusal = acceptRefusal(inv, now);
  if (refusal) return refusal;
  if (!(await storeAcceptance(db, inv.id, tokenHash, acceptor.userId, now.toISOString()))) {
    const after = await current(db, inv.id);
    if (!after.ok) return after;
    return acceptRefusal(after.value, now) ?? refuse("conflict", "This invitation could not be accepted; it changed meanwhile");
  }
  const accepted = await current(db, inv.id);
  if (!accepted.ok) return accepted;
  const { id, taskId, organizationId, invitedBy, usedAt } = accepted.value;
  const told = async () => {
    const names = await notificationNames(db, taskId, null);
    const payload = {
      invitation_id: id,
      task_id: taskId,
      organization_id: organizationId,
      candidate_id: acceptor.userId,
      task_title: names.staffTitle,
      candidate_email: acceptor.email,
    };
    await notify(env, notificationsFor([invitedBy], "invitation.accepted", payload, id));
  };
  exec.waitUntil(told());
  return accept({ ...accepted.value, usedAt: usedAt ?? now.toISOString() });
}
