import { env, exports } from "cloudflare:workers";
import { importJWK, SignJWT, type JWK } from "jose";
import { DEV_AUDIENCE, DEV_ISSUER } from "../../../scripts/lib/dev-identity";
import { nextClientIp } from "../../../scripts/lib/client-ip";
import { poll, sleep } from "../../../scripts/lib/wait";

/** A client IP of its own per test, so one test's rate limits never reach another. */
export const freshIp = nextClientIp;

/**
 * Returns once at least `needMs` are left before the clock's next minute, waiting for that
 * minute if need be: the rate limits count in windows aligned to it.
 */
export async function clearOfMinuteBoundary(needMs: number): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 60_000 - needMs) await sleep(60_000 - intoMinute + 100);
}

export interface CallOptions {
  method?: string;
  token?: string;
  body?: unknown;
  rawBody?: BodyInit;
  headers?: Record<string, string>;
  ip?: string;
}

/** Calls the Worker's fetch handler as an HTTP client would. */
export async function call(path: string, opts: CallOptions = {}): Promise<Response> {
  const headers = new Headers(opts.headers);
  headers.set("cf-connecting-ip", opts.ip ?? freshIp());
  if (opts.token) headers.set("authorization", `Bearer ${opts.token}`);
  let body: BodyInit | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  return exports.default.fetch(new Request(`https://assay.test${path}`, { method: opts.method ?? "GET", headers, body }));
}

export interface Claims {
  sub: string;
  email?: string;
  role?: string;
  org_id?: string;
  /** True by default, as the dev identity provider mints it; null leaves the claim out. */
  email_verified?: boolean | null;
}

/** A session JWT signed by the test identity provider, with overridable standard claims. */
export async function sessionToken(
  claims: Claims,
  opts: { expiresIn?: string | number; issuer?: string; audience?: string; jwk?: string } = {},
): Promise<string> {
  const jwk = JSON.parse(opts.jwk ?? env.TEST_SIGNING_JWK) as JWK;
  const key = await importJWK(jwk, "ES256");
  const { sub, email_verified = true, ...rest } = claims;
  return new SignJWT({ email: `${sub}@example.test`, role: "candidate", ...rest, ...(email_verified !== null && { email_verified }) })
    .setProtectedHeader({ alg: "ES256", kid: jwk.kid })
    .setSubject(sub)
    .setIssuer(opts.issuer ?? DEV_ISSUER)
    .setAudience(opts.audience ?? DEV_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(opts.expiresIn ?? "10m")
    .sign(key);
}

let subjectCounter = 0;
export function uniqueSubject(prefix = "user"): string {
  subjectCounter += 1;
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}-${subjectCounter}`;
}

/** Body of an error response, asserting the spec's shape on the way. */
export async function errorBody(res: Response): Promise<{ detail: unknown; error_id?: string }> {
  const body = (await res.json()) as { detail: unknown; error_id?: string };
  if (!("detail" in body)) throw new Error(`not an error body: ${JSON.stringify(body)}`);
  return body;
}

/** Polls until `probe` returns a value (real queue deliveries arrive within about a second). */
export function eventually<T>(probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  return poll("a value from the probe", probe, { timeoutMs });
}
