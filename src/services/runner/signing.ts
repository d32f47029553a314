import { constantTimeEqual, hmacSha256Hex } from "../../lib/hmac";

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
