import { DEV_AUDIENCE, DEV_ISSUER, generateDevIdentity } from "../../../scripts/lib/dev-identity.ts";

/**
 * A dev identity provider for the integration suite: fresh keys per run, handed to the
 * Worker as bindings through the same JWKS verification path as `npm start`.
 */
export async function testIdentity() {
  const { jwks, privateJwk } = await generateDevIdentity();
  return {
    privateJwk,
    bindings: {
      DEV_AUTH: "true",
      DEV_IDP_JWKS: jwks,
      AUTH_ISSUER: DEV_ISSUER,
      AUTH_AUDIENCE: DEV_AUDIENCE,
      CORS_ORIGINS: "https://app.example.test",
    },
  };
}
