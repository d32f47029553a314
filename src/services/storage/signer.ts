export type SignedMethod = "GET" | "PUT";

export interface PresignRequest {
  method: SignedMethod;
  key: string;
  ttlSeconds: number;
  /** Signing time in milliseconds since the epoch. */
  now: number;
  /** Largest upload the URL admits; only the Worker signer can enforce it (see docs/api.md). */
  maxBytes?: number;
}

/** Turns an object key into a time-limited URL: R2's S3 API, or the Worker's own storage route. */
export interface UrlSigner {
  presign(request: PresignRequest): Promise<string>;
}
