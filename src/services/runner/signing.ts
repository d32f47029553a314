import { constantTimeEqual, hmacSha256Hex } from "../../lib/hmac";
import { connectTokenMessage } from "../../domain/executions";

// The runner's names and window (sandbox-runner/src/signing.ts); both directions sign alike.
export const TIMESTAMP_HEADER = "X-Assay-Timestamp";
export const SIGNATURE_HEADER = "X-Assay-Signature";
export const MAX_SKEW_SECONDS = 300;

const SIGNATURE_FORMAT = /^v1=[0-9a-f]{64}$/;
const encoder = new TextEncoder();

async function signature(secret: string, timestamp: number, body: Uint8Array): Promise<string> {
  const prefix = encoder.encode(`${timestamp}.`);
  const message = new Uint8Array(prefix.byteLength + body.byteLength);
  message.set(prefix);
  message.set(body, prefix.byteLength);
  return `v1=${await hmacSha256Hex(secret, message)}`;
}

/** Headers that sign `body` for the runner: `v1=` hex HMAC-SHA256 of `<timestamp>.<body>`. */
export async function signedHeaders(secret: string, body: string, now = Date.now()): Promise<Record<string, string>> {
  const timestamp = Math.floor(now / 1000);
  return { [TIMESTAMP_HEADER]: String(timestamp), [SIGNATURE_HEADER]: await signature(secret, timestamp, encoder.encode(body)) };
}

/**
 * The part of signatureProblem that needs no body, so a request whose headers could sign no
 * body (missing, malformed, outside the window) is refused before any of its body is read.
 */
export function signatureHeaderProblem(headers: Headers, now = Date.now()): string | undefined {
  const timestampHeader = headers.get(TIMESTAMP_HEADER);
  const signatureHeader = headers.get(SIGNATURE_HEADER);
  if (!timestampHeader || !signatureHeader) return `missing ${TIMESTAMP_HEADER} or ${SIGNATURE_HEADER}`;
  if (!/^\d{1,12}$/.test(timestampHeader)) return `malformed ${TIMESTAMP_HEADER}`;
  if (!SIGNATURE_FORMAT.test(signatureHeader)) return `malformed ${SIGNATURE_HEADER} (expected v1= and 64 lowercase hex digits)`;
  if (Math.abs(now / 1000 - Number(timestampHeader)) > MAX_SKEW_SECONDS) {
    return `stale or future ${TIMESTAMP_HEADER} (more than ${MAX_SKEW_SECONDS} s from the server's clock)`;
  }
  return undefined;
}

/** Why a signed request is refused, or undefined when its headers are good and sign `body`'s raw bytes. */
export async function signatureProblem(secret: string, headers: Headers, body: Uint8Array, now = Date.now()): Promise<string | undefined> {
  const problem = signatureHeaderProblem(headers, now);
  if (problem) return problem;
  const expected = await signature(secret, Number(headers.get(TIMESTAMP_HEADER)), body);
  if (!constantTimeEqual(expected, headers.get(SIGNATURE_HEADER) ?? "")) return "bad signature";
  return undefined;
}

/**
 * The credential a runner dials in to an execution's object with (docs/runner-protocol.md,
 * "The runner's dial-in"): `<expiry>.<nonce>.<hex HMAC>` over the execution, the nonce and
 * the expiry. The signature lets the Worker refuse a forgery without waking the object; the
 * object holds the nonce and takes it once.
 */
export async function executionConnectToken(secret: string, executionId: string, nonce: string, expiresAtSeconds: number): Promise<string> {
  return `${expiresAtSeconds}.${nonce}.${await hmacSha256Hex(secret, connectTokenMessage(executionId, nonce, expiresAtSeconds))}`;
}

/** The nonce of a good, unexpired connect token of this execution; why it is refused otherwise. */
export async function checkExecutionConnectToken(
  secret: string,
  executionId: string,
  token: string,
  now = Date.now(),
): Promise<{ ok: true; nonce: string } | { ok: false; reason: string }> {
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{16,64})\.([0-9a-f]{64})$/.exec(token);
  if (!match) return { ok: false, reason: "malformed connect token" };
  const [, expiry, nonce, mac] = match as unknown as [string, string, string, string];
  const expected = await hmacSha256Hex(secret, connectTokenMessage(executionId, nonce, Number(expiry)));
  if (!constantTimeEqual(expected, mac)) return { ok: false, reason: "bad connect token signature" };
  if (Number(expiry) * 1000 <= now) return { ok: false, reason: "expired connect token" };
  return { ok: true, nonce };
}
