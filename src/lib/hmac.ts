import { toHex } from "./digest";
const encoder = new TextEncoder();

// Importing a key costs more than the HMAC itself; secrets are few and live as long as the isolate.
const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  // An unset secret must fail loudly, not sign with the empty string.
  if (!secret) throw new Error("an HMAC secret (RUNNER_SECRET or URL_SIGNING_SECRET) is not configured");
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keys.set(secret, key);
  }
  return key;
}

/** Lowercase hex HMAC-SHA256 of `message`'s bytes (of its UTF-8 for a string). */
export async function hmacSha256Hex(secret: string, message: string | Uint8Array): Promise<string> {
  const bytes = typeof message === "string" ? encoder.encode(message) : message;
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret), bytes);
  return toHex(mac);
}

/** String equality whose time does not depend on where the strings differ (only on their length). */
export function constantTimeEqual(expected: string, given: string): boolean {
  const a = encoder.encode(expected);
  const b = encoder.encode(given);
  return a.byteLength === b.byteLength && crypto.subtle.timingSafeEqual(a, b);
}
