/**
 * Signing of every request between the Worker and the runner, both directions
 * (docs/runner-protocol.md, "Signing"): `X-Assay-Signature: v1=<hex HMAC-SHA256 of
 * "<timestamp>.<raw body>">` with the Unix time in `X-Assay-Timestamp`, accepted within
 * MAX_SKEW_SECONDS of the receiver's clock. Web Crypto only, so workerd and Node run the same code.
 */
export const TIMESTAMP_HEADER = "X-Assay-Timestamp";
export const SIGNATURE_HEADER = "X-Assay-Signature";
export const MAX_SKEW_SECONDS = 300;

const SIGNATURE_FORMAT = /^v1=[0-9a-f]{64}$/;
const TIMESTAMP_FORMAT = /^\d{1,12}$/;
const encoder = new TextEncoder();

// Importing a key costs more than the HMAC itself; a process signs with one or two secrets.
const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  // An unset secret must fail loudly, not sign with the empty string.
  if (!secret) throw new Error("the runner's shared secret (RUNNER_SECRET) is not configured");
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    keys.set(secret, key);
  }
  return key;
}

function signedBytes(timestamp: number, body: string | Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(`${timestamp}.`);
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  const message = new Uint8Array(prefix.byteLength + bytes.byteLength);
  message.set(prefix);
  message.set(bytes, prefix.byteLength);
  return message;
}

/** The `X-Assay-Signature` value for `body` (its UTF-8 for a string) signed at `timestamp`. */
export async function sign(secret: string, timestamp: number, body: string | Uint8Array): Promise<string> {
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(secret), signedBytes(timestamp, body)));
  return `v1=${Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Both headers that sign `body` now. */
export async function signedHeaders(secret: string, body: string, now = Date.now()): Promise<Record<string, string>> {
  const timestamp = Math.floor(now / 1000);
  return { [TIMESTAMP_HEADER]: String(timestamp), [SIGNATURE_HEADER]: await sign(secret, timestamp, body) };
}

export type SignatureVerdict = { ok: true } | { ok: false; reason: string };

/** Headers that passed `checkSignatureHeaders`: the time the body was signed at and the HMAC it carries. */
export interface CheckedSignature {
  ok: true;
  timestamp: number;
  mac: Uint8Array<ArrayBuffer>;
}

/**
 * What can be checked before a byte of the body is read: both headers present, both
 * well-formed, the timestamp inside the window. Gives what `verifyBody` then checks the body against.
 */
export function checkSignatureHeaders(
  timestampHeader: string | null | undefined,
  signatureHeader: string | null | undefined,
  now = Date.now(),
): CheckedSignature | { ok: false; reason: string } {
  if (!timestampHeader || !signatureHeader) return { ok: false, reason: "missing signature headers" };
  if (!TIMESTAMP_FORMAT.test(timestampHeader)) return { ok: false, reason: `malformed ${TIMESTAMP_HEADER}` };
  if (!SIGNATURE_FORMAT.test(signatureHeader)) {
    return { ok: false, reason: `malformed ${SIGNATURE_HEADER} (expected v1= and 64 lowercase hex digits)` };
  }
  const timestamp = Number(timestampHeader);
  if (Math.abs(now / 1000 - timestamp) > MAX_SKEW_SECONDS) {
    return { ok: false, reason: `stale or future ${TIMESTAMP_HEADER} (more than ${MAX_SKEW_SECONDS} s from the server's clock)` };
  }
  const hex = signatureHeader.slice("v1=".length);
  const mac = new Uint8Array(hex.length / 2);
  for (let i = 0; i < mac.length; i++) mac[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return { ok: true, timestamp, mac };
}

/** Whether checked headers sign exactly `body`'s bytes; the HMAC is compared in constant time. */
export async function verifyBody(secret: string, checked: CheckedSignature, body: string | Uint8Array): Promise<SignatureVerdict> {
  const good = await crypto.subtle.verify("HMAC", await hmacKey(secret), checked.mac, signedBytes(checked.timestamp, body));
  return good ? { ok: true } : { ok: false, reason: "bad signature" };
}

/** Both steps at once, for a body already in hand. */
export async function verifySignature(
  secret: string,
  timestampHeader: string | null | undefined,
  signatureHeader: string | null | undefined,
  body: string | Uint8Array,
  now = Date.now(),
): Promise<SignatureVerdict> {
  const checked = checkSignatureHeaders(timestampHeader, signatureHeader, now);
  return checked.ok ? verifyBody(secret, checked, body) : checked;
}
