import { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from "jose";
import { SessionClaimsSchema, type SessionClaims } from "../domain/identity";
import type { Env } from "../env";
import { ExpiringCache } from "../lib/expiring-cache";

/**
 * Asymmetric algorithms only: a symmetric algorithm would let anyone holding the public
 * key forge tokens, and `none` is never accepted by jwtVerify.
 */
export const SESSION_TOKEN_ALGORITHMS = ["RS256", "PS256", "ES256", "EdDSA"];

/** A session token that proves nothing: expired, badly signed, or with claims that do not fit. */
export class InvalidSessionToken extends Error {
  override name = "InvalidSessionToken";
}

// The remote key set caches keys and rate-limits refetches itself; keep one per isolate.
let remote: { url: string; keys: JWTVerifyGetKey } | undefined;
let local: { jwks: string; keys: JWTVerifyGetKey } | undefined;

/**
 * The key set session tokens are verified against: the identity provider's JWKS, or, in
 * local development only (DEV_AUTH=true), the dev identity provider's public JWKS. Both go
 * through the same jwtVerify call with the same checks.
 */
function keySet(env: Env): JWTVerifyGetKey {
  if (env.DEV_AUTH === "true" && env.DEV_IDP_JWKS) {
    if (local?.jwks !== env.DEV_IDP_JWKS) {
      local = { jwks: env.DEV_IDP_JWKS, keys: createLocalJWKSet(JSON.parse(env.DEV_IDP_JWKS)) };
    }
    return local.keys;
  }
  if (remote?.url !== env.AUTH_JWKS_URL) {
    remote = { url: env.AUTH_JWKS_URL, keys: createRemoteJWKSet(new URL(env.AUTH_JWKS_URL)) };
  }
  return remote.keys;
}

/**
 * AUTH_ISSUER; in local development also the dev OpenID provider's issuer (it signs with the
 * same dev keys as `npm run token`, under the address it is served at).
 */
function trustedIssuers(env: Env): string[] {
  return env.DEV_AUTH === "true" && env.DEV_IDP_ISSUER ? [env.AUTH_ISSUER, env.DEV_IDP_ISSUER] : [env.AUTH_ISSUER];
}

/**
 * Tokens this isolate has verified, until their `exp`: a session token is not revocable before
 * then, so verifying its signature again on each request of a session proves nothing new. Keyed
 * by the whole token, so any change to it is a miss. Only the same key set is trusted: a change
 * of JWKS configuration drops what was verified under the old one.
 */
const verified = new ExpiringCache<string, SessionClaims>(2000);
let verifiedUnder: string | undefined;

export async function verifySessionToken(token: string, env: Env): Promise<SessionClaims> {
  const trust = `${env.DEV_AUTH === "true" ? env.DEV_IDP_JWKS : env.AUTH_JWKS_URL}|${trustedIssuers(env).join(",")}|${env.AUTH_AUDIENCE}`;
  if (verifiedUnder !== trust) {
    verified.clear();
    verifiedUnder = trust;
  }
  const hit = verified.get(token, Date.now());
  if (hit) return hit;
  const { claims, expiresAt } = await verifyAgainstKeys(token, env);
  verified.set(token, claims, expiresAt);
  return claims;
}

async function verifyAgainstKeys(token: string, env: Env): Promise<{ claims: SessionClaims; expiresAt: number }> {
  let payload: { exp?: number };
  try {
    ({ payload } = await jwtVerify(token, keySet(env), {
      issuer: trustedIssuers(env),
      audience: env.AUTH_AUDIENCE,
      algorithms: SESSION_TOKEN_ALGORITHMS,
      requiredClaims: ["sub", "exp"],
    }));
  } catch (e) {
    if (e instanceof errors.JWTExpired) throw new InvalidSessionToken("The session token has expired; sign in again");
    if (e instanceof errors.JOSEError) throw new InvalidSessionToken("The session token is invalid");
    throw e;
  }
  const claims = SessionClaimsSchema.safeParse(payload);
  if (!claims.success) {
    const fields = [...new Set(claims.error.issues.map((i) => i.path.join(".")))].join(", ");
    throw new InvalidSessionToken(`The session token's claims are invalid (${fields})`);
  }
  // jwtVerify required `exp`, so it is there and in the future.
  return { claims: claims.data, expiresAt: (payload.exp ?? 0) * 1000 };
}
