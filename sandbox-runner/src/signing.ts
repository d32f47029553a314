import { createHmac, type Hmac, timingSafeEqual } from "node:crypto";

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

/**
 * What can be checked before a byte of the body is read: both headers present, the
 * signature well-formed, the timestamp inside the window. Returns the timestamp to sign with.
 */
export function checkHeaders(
  timestampHeader: string | undefined,
  signatureHeader: string | undefined,
  now = Date.now(),
): { ok: true; timestamp: number } | { ok: false; reason: string } {
  if (!timestampHeader || !signatureHeader) return { ok: false, reason: "missing signature headers" };
  if (!/^\d{1,12}$/.test(timestampHeader)) return { ok: false, reason: "malformed timestamp" };
  if (!/^v1=[0-9a-f]{64}$/.test(signatureHeader)) return { ok: false, reason: "malformed signature" };
  const timestamp = Number(timestampHeader);
  if (Math.abs(now / 1000 - timestamp) > MAX_SKEW_SECONDS) return { ok: false, reason: "stale or future timestamp" };
  return { ok: true, timestamp };
}

/** The body's HMAC, computed chunk by chunk as the body arrives. */
export class BodyVerifier {
  private readonly mac: Hmac;

  constructor(secret: string, timestamp: number) {
    this.mac = createHmac("sha256", secret);
    this.mac.update(`${timestamp}.`);
  }

  update(chunk: Buffer): void {
    this.mac.update(chunk);
  }

  matches(signatureHeader: string): boolean {
    const expected = Buffer.from(`v1=${this.mac.digest("hex")}`);
    const given = Buffer.from(signatureHeader);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

export function verify(
  secret: string,
  timestampHeader: string | undefined,
  signatureHeader: string | undefined,
  body: Buffer,
  now = Date.now(),
): Verdict {
  const headers = checkHeaders(timestampHeader, signatureHeader, now);
  if (!headers.ok) return headers;
  const verifier = new BodyVerifier(secret, headers.timestamp);
  verifier.update(body);
  return verifier.matches(signatureHeader as string) ? { ok: true } : { ok: false, reason: "bad signature" };
}
