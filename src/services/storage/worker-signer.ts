import { constantTimeEqual, hmacSha256Hex } from "../../lib/hmac";
import type { SignedMethod, UrlSigner } from "./signer";

/** Path of the route that serves Worker-signed URLs; the object key follows, as one encoded segment. */
export const STORAGE_PATH = "/api/v1/storage/";

export interface SignedUrlParams {
  method: SignedMethod;
  key: string;
  /** Unix time in seconds after which the URL is refused. */
  expires: number;
  maxBytes?: number;
}

// Newline-separated fields cannot run into each other: keys, numbers and methods hold no newline.
function canonical(p: SignedUrlParams): string {
  return ["assay-storage-v1", p.method, p.key, String(p.expires), p.maxBytes === undefined ? "" : String(p.maxBytes)].join("\n");
}

export async function signStorageUrl(baseUrl: string, secret: string, params: SignedUrlParams): Promise<string> {
  const url = new URL(`${STORAGE_PATH}${encodeURIComponent(params.key)}`, baseUrl);
  url.searchParams.set("expires", String(params.expires));
  if (params.maxBytes !== undefined) url.searchParams.set("max", String(params.maxBytes));
  url.searchParams.set("sig", await hmacSha256Hex(secret, canonical(params)));
  return url.toString();
}

/** URLs to the Worker's own storage route, signed with URL_SIGNING_SECRET (HMAC-SHA256, expiry). */
export function workerUrlSigner(baseUrl: string, secret: string): UrlSigner {
  return {
    presign: ({ method, key, ttlSeconds, now, maxBytes }) =>
      signStorageUrl(baseUrl, secret, { method, key, expires: Math.floor(now / 1000) + ttlSeconds, maxBytes }),
  };
}

/**
 * Why a signed URL is refused, or undefined when its signature matches and it has not
 * expired. The signature is checked first, so a URL with an edited expiry says "signature",
 * never "expired".
 */
export async function storageUrlProblem(secret: string, params: SignedUrlParams, sig: string, now = Date.now()): Promise<string | undefined> {
  if (!constantTimeEqual(await hmacSha256Hex(secret, canonical(params)), sig)) {
    return "The URL's signature does not match; use the URL exactly as it was issued";
  }
  if (now / 1000 > params.expires) return `The URL expired at ${new Date(params.expires * 1000).toISOString()}; ask for a new one`;
  return undefined;
}
