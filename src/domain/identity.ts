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
