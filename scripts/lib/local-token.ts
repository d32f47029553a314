import { mintDevToken, type TokenClaims } from "./dev-identity";
import { readDevVars } from "./dev-vars";
import { DEV_VARS } from "./paths";

/**
 * A session JWT the local stack accepts: signed with the dev identity provider's key from
 * .dev.vars, with the issuer and audience the Worker reads there.
 */
export async function mintLocalToken(claims: TokenClaims): Promise<string> {
  const vars = readDevVars(DEV_VARS);
  if (!vars.DEV_IDP_PRIVATE_JWK) throw new Error("no dev identity in .dev.vars; run npm start or npm run setup first");
  return mintDevToken(vars.DEV_IDP_PRIVATE_JWK, { issuer: vars.AUTH_ISSUER, audience: vars.AUTH_AUDIENCE, ...claims });
}
