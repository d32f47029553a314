import { z } from "zod";
import { ROLES } from "./roles";

/** What a session token must assert; anything else in it is ignored. */
export const SessionClaimsSchema = z.object({
  sub: z.string().min(1).max(255),
  email: z.email().max(320),
  /** Absent means unknown: unverified unless the issuer vouches for its addresses (`emailVerified`). */
  email_verified: z.boolean().optional(),
  role: z.enum(ROLES),
  org_id: z.string().min(1).max(128).optional(),
});
export type SessionClaims = z.infer<typeof SessionClaimsSchema>;

/**
 * Whether a session token's e-mail address counts as verified. The `email_verified` claim
 * decides when present. A token without it says nothing, so the address is unverified, unless
 * the token's issuer is one of `vouchingIssuers` (AUTH_EMAIL_VERIFIED_ISSUERS, comma-separated):
 * identity providers that sign in only users with verified addresses and leave the claim out.
 */
export function emailVerified(claim: boolean | undefined, issuer: string, vouchingIssuers: string | undefined): boolean {
  if (claim !== undefined) return claim;
  return (vouchingIssuers ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .some((entry) => entry !== "" && entry === issuer);
}
