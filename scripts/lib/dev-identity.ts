import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from "jose";

export const DEV_ISSUER = "http://127.0.0.1/dev-idp";
export const DEV_AUDIENCE = "assay-api";
/**
 * The resource indicator (RFC 8707) the web app names to get an access token for the API from
 * the dev OpenID provider (scripts/dev-idp); `npm start` sets OIDC_RESOURCE to it.
 */
export const DEV_RESOURCE = "urn:assay:api";
const ALG = "ES256";

/** A fresh key pair for the dev identity provider: the public JWKS and the private JWK. */
export async function generateDevIdentity(): Promise<{ jwks: string; privateJwk: string }> {
  const { publicKey, privateKey } = await generateKeyPair(ALG, { extractable: true });
  const kid = `dev-${crypto.randomUUID()}`;
  const pub = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: "sig" };
  const priv = { ...(await exportJWK(privateKey)), kid, alg: ALG };
  return { jwks: JSON.stringify({ keys: [pub] }), privateJwk: JSON.stringify(priv) };
}

export interface TokenClaims {
  sub: string;
  email: string;
  role: string;
  org?: string;
  /**
   * The dev identity provider signs users in with verified addresses and says so (default true),
   * as the Worker accepts invitations only for addresses the token says are verified.
   */
  emailVerified?: boolean;
  /** Lifetime like 1h, 30m, 2d, or seconds. */
  ttl?: string;
  issuer?: string;
  audience?: string;
}

/** Mints a session JWT the dev identity provider's key set verifies. */
export async function mintDevToken(privateJwk: string, claims: TokenClaims): Promise<string> {
  const jwk = JSON.parse(privateJwk) as JWK;
  const key = await importJWK(jwk, ALG);
  return new SignJWT({
    email: claims.email,
    email_verified: claims.emailVerified ?? true,
    role: claims.role,
    ...(claims.org && { org_id: claims.org }),
  })
    .setProtectedHeader({ alg: ALG, kid: jwk.kid, typ: "JWT" })
    .setSubject(claims.sub)
    .setIssuer(claims.issuer ?? DEV_ISSUER)
    .setAudience(claims.audience ?? DEV_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(claims.ttl ?? "1h")
    .sign(key);
}

