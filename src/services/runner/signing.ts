import { constantTimeEqual, hmacSha256Hex } from "../hmac";

// The runner's names and window (sandbox-runner/src/signing.ts); both directions sign alike.
export const TIMESTAMP_HEADER = "X-Assay-Timestamp";
export const SIGNATURE_HEADER = "X-Assay-Signature";
export const MAX_SKEW_SECONDS = 300;

async function signature(secret: string, timestamp: number, body: string): Promise<string> {
  return `v1=${await hmacSha256Hex(secret, `${timestamp}.${body}`)}`;
}

/** Headers that sign `body` for the runner: `v1=` hex HMAC-SHA256 of `<timestamp>.<body>`. */
export async function signedHeaders(secret: string, body: string, now = Date.now()): Promise<Record<string, string>> {
  const timestamp = Math.floor(now / 1000);
  return { [TIMESTAMP_HEADER]: String(timestamp), [SIGNATURE_HEADER]: await signature(secret, timestamp, body) };
}

/** Why a signed request is refused, or undefined when its signature and timestamp are good. */
export async function signatureProblem(
  secret: string,
  timestampHeader: string | null,
  signatureHeader: string | null,
  body: string,
  now = Date.now(),
): Promise<string | undefined> {
  if (!timestampHeader || !signatureHeader) return `missing ${TIMESTAMP_HEADER} or ${SIGNATURE_HEADER}`;
  if (!/^\d{1,12}$/.test(timestampHeader)) return `malformed ${TIMESTAMP_HEADER}`;
  const timestamp = Number(timestampHeader);
  if (Math.abs(now / 1000 - timestamp) > MAX_SKEW_SECONDS) {
    return `stale or future ${TIMESTAMP_HEADER} (more than ${MAX_SKEW_SECONDS} s from the server's clock)`;
  }
  if (!constantTimeEqual(await signature(secret, timestamp, body), signatureHeader)) return "bad signature";
  return undefined;
}
