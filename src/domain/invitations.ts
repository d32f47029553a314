/**
 * Invitations of candidates to tasks (docs/api.md, "Invitations"): their states, secret
 * tokens, the plan's candidate limit, and the delivery policy of their e-mails. Time is
 * always passed in, so the rules are tested at any instant without waiting.
 */

import { backoffSeconds } from "./backoff";
import { newId } from "../lib/ids";
import { sha256Hex } from "../lib/digest";

/**
 * unused: open, the link works; used: accepted (final); expired: unused past its expiry
 * (a resend reopens it); revoked: withdrawn by the organization (final).
 */
export const INVITATION_STATUSES = ["unused", "used", "expired", "revoked"] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

export const DELIVERY_STATUSES = ["queued", "sent", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const DEFAULT_EXPIRY_HOURS = 7 * 24;
export const MAX_EXPIRY_HOURS = 30 * 24;

export interface InvitationState {
  usedAt: string | null;
  revokedAt: string | null;
  /** ISO 8601 UTC. */
  expiresAt: string;
}

export function invitationStatus(state: InvitationState, now: Date): InvitationStatus {
  if (state.usedAt !== null) return "used";
  if (state.revokedAt !== null) return "revoked";
  return Date.parse(state.expiresAt) <= now.getTime() ? "expired" : "unused";
}

export function expiryFrom(now: Date, hours: number): string {
  return new Date(now.getTime() + hours * 3_600_000).toISOString();
}

/**
 * The form e-mails are compared in: invitations, the one-open-invitation rule, the plan
 * count and acceptance all treat addresses case-insensitively.
 */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function newInvitationId(): string {
  return newId("inv");
}

/** 256 random bits, base64url without padding (43 characters). */
export function newInviteToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** What the database keeps of a token: its SHA-256, hex. The token itself is only in the e-mail. */
export async function hashInviteToken(token: string): Promise<string> {
  return sha256Hex(token);
}

/** The web app's page for a token; it posts the token to POST /api/v1/invites/accept. */
export function acceptanceLink(appBaseUrl: string, token: string): string {
  const url = new URL("/invites/accept", appBaseUrl);
  url.searchParams.set("token", token);
  return url.toString();
}

export interface PlanLimit {
  organizationId: string;
  planName: string;
  candidateLimit: number;
  upgradeUrl: string | null;
}

export function candidateLimitMessage(plan: PlanLimit): string {
  const upgrade = plan.upgradeUrl ? `upgrade at ${plan.upgradeUrl}` : "upgrade the organization's plan";
  return (
    `Organization ${plan.organizationId} has reached the candidate limit of its ${plan.planName} plan ` +
    `(${plan.candidateLimit} candidates). Revoke an open invitation or ${upgrade} to invite more.`
  );
}

/** Why an acceptance is refused, by the invitation's status; undefined when it may be accepted. */
export function acceptanceRefusal(status: InvitationStatus): { kind: "used" | "expired" | "revoked"; detail: string } | undefined {
  switch (status) {
    case "unused":
      return undefined;
    case "used":
      return { kind: "used", detail: "This invitation has already been used" };
    case "expired":
      return { kind: "expired", detail: "This invitation has expired; ask the organization to resend it" };
    case "revoked":
      return { kind: "revoked", detail: "This invitation was revoked by the organization" };
  }
}

/**
 * Deliveries of one e-mail before it is given up as failed: with the delays below, about 45
 * minutes of a mail provider's outage. The queue's own `max_retries` is higher, so its
 * dead-letter queue only receives messages that failed for another reason.
 */
export const EMAIL_SEND_ATTEMPTS = 8;

/** Seconds before delivery `attempt + 1`: 30, 60, 120 ... at most 15 minutes. */
export function emailRetryDelaySeconds(attempt: number): number {
  return backoffSeconds(attempt, 30, 900);
}

/**
 * What a mail provider's answer means: sent, worth retrying (overloaded, rate-limited, a proxy
 * in the way), or refused for good (a bad key or message would be refused again).
 */
export function sendVerdict(status: number): "sent" | "retry" | "refused" {
  if (status >= 200 && status < 300) return "sent";
  if (status >= 500 || status === 408 || status === 429) return "retry";
  return "refused";
}
