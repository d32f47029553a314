import { createHmac, timingSafeEqual } from "node:crypto";

export const TIMESTAMP_HEADER = "x-assay-timestamp";
export const SIGNATURE_HEADER = "x-assay-signature";
export const MAX_SKEW_SECONDS = 300;

export function sign(secret: string, timestamp: number, body: string | Buffer): string {
  const mac = createHmac("sha256", secret);
  mac.update(`${timestamp}.`);
  mac.update(body);
  return `v1=${mac.digest("hex")}`;
}

export function signedHeaders(secret: string, body: string, now = Date.now()): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return {
    "X-Assay-Timestamp": String(timestamp),
    "X-Assay-Signature": sign(secret, timestamp, body),
  };
}

export type Verdict = { ok: true } | { ok: false; reason: string };

export function verify(
  secret: string,
  timestampHeader: string | undefined,
  signatureHeader: string | undefined,
  body: Buffer,
  now = Date.now(),
): Verdict {
  if (!timestampHeader || !signatureHeader) return { ok: false, reason: "missing signature headers" };
  if (!/^\d{1,12}$/.test(timestampHeader)) return { ok: false, reason: "malformed timestamp" };
  const timestamp = Number(timestampHeader);
  if (Math.abs(now / 1000 - timestamp) > MAX_SKEW_SECONDS) return { ok: false, reason: "stale or future timestamp" };
  const expected = Buffer.from(sign(secret, timestamp, body));
  const given = Buffer.from(signatureHeader);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    return { ok: false, reason: "bad signature" };
  }
  return { ok: true };
}
