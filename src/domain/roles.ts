import { ROLES, type Role } from "../../protocol/assessment-rules";

/** The roles carried in session tokens, lowest first (protocol/assessment-rules.ts: the web app reads them too). */
export { ROLES };
export type { Role };

export function roleRank(role: Role): number {
  return ROLES.indexOf(role);
}

export function hasRole(actual: Role, required: Role): boolean {
  return roleRank(actual) >= roleRank(required);
}

/**
 * How a membership row came to be. `token`: recorded from a session token naming the
 * organization, a record of what the identity provider once said. `invitation`: made by the
 * service itself when the user accepted an invitation there.
 */
export const MEMBERSHIP_SOURCES = ["token", "invitation"] as const;
export type MembershipSource = (typeof MEMBERSHIP_SOURCES)[number];

/** Who is asking, and what their current session token asserts (db/ and http/ both read it). */
export interface Viewer {
  userId: string;
  role: Role;
  /** The organization the token names, if any. */
  orgId: string | undefined;
}

/** The part of a viewer that rights follow from: what the token asserts, whoever holds it. */
type Rights = Pick<Viewer, "role" | "orgId">;

/**
 * The viewer's role in an organization, or null for none. Rights come from the current token:
 * its role in the organization it names (a platform admin's everywhere). Tokens for other
 * organizations seen earlier grant nothing, so a user who moved on (an interviewer of A now
 * signing in for B) keeps no rights in A. The one grant the service makes itself, accepting an
 * invitation, lasts and is worth a candidate, whatever the token says.
 * `membership` is the source of the viewer's stored membership in the organization, if any.
 */
export function roleIn(viewer: Rights, organizationId: string, membership: MembershipSource | null): Role | null {
  if (viewer.role === "admin") return "admin";
  if (viewer.orgId === organizationId) return viewer.role;
  return membership === "invitation" ? "candidate" : null;
}

/** Interviewer or above in the organization: the token alone decides, a membership adds at most a candidate's rights. */
export function isStaffIn(viewer: Rights, organizationId: string): boolean {
  return viewer.role === "admin" || (viewer.orgId === organizationId && hasRole(viewer.role, "interviewer"));
}

/** The organizations whose staff the viewer is: every one for a platform admin, else at most the token's. */
export function staffOrganizations(viewer: Rights): "all" | string[] {
  if (viewer.role === "admin") return "all";
  return viewer.orgId !== undefined && hasRole(viewer.role, "interviewer") ? [viewer.orgId] : [];
}
