import { storageKeyProblem } from "../../domain/storage-keys";
import type { Env } from "../../env";
import { S3_MAX_TTL_SECONDS, s3UrlSigner } from "./s3-signer";
import type { SignedMethod, UrlSigner } from "./signer";
import { workerUrlSigner } from "./worker-signer";
import { toHex } from "../../lib/digest";

export interface PresignedUrl {
  url: string;
  /** ISO 8601 UTC. */
  expires_at: string;
}

export interface StoredObject {
  key: string;
  size: number;
  /** Lowercase hex, as the runner's `snapshot.sha256` and `environment.sha256` want it. */
  sha256: string;
}

export interface PutOptions {
  contentType?: string;
  /** A stream's length when known; a stream without one is stored as a multipart upload. */
  size?: number;
}

/** R2 wants every part but the last of one size, at least 5 MiB. */
const MULTIPART_PART_BYTES = 8 * 1024 * 1024;

/**
 * The artifact store: R2 through the `BUCKET` binding, and presigned URLs for clients and
 * the runner. Both signers address the same bucket, so an object written through one path
 * is read through the other.
 */
export interface ArtifactStorage {
  presignGet(key: string, ttlSeconds: number): Promise<PresignedUrl>;
  presignPut(key: string, ttlSeconds: number, opts?: { maxBytes?: number }): Promise<PresignedUrl>;
  put(key: string, body: ReadableStream<Uint8Array> | ArrayBuffer | ArrayBufferView | string, opts?: PutOptions): Promise<StoredObject>;
  get(key: string): Promise<R2ObjectBody | null>;
}

/** R2's S3 API when its credentials are configured; otherwise the Worker signs and serves URLs itself. */
export function urlSigner(env: Env): UrlSigner {
  if (env.R2_ACCESS_KEY_ID && env.R2_SECRET_ACCESS_KEY && env.R2_S3_ENDPOINT) {
    return s3UrlSigner({
      accessKeyId: env.R2_ACCESS_KEY_ID,
      secretAccessKey: env.R2_SECRET_ACCESS_KEY,
      endpoint: env.R2_S3_ENDPOINT,
    });
  }
  return workerUrlSigner(env.APP_BASE_URL, env.URL_SIGNING_SECRET);
}

function checkKey(key: string): void {
  const problem = storageKeyProblem(key);
  if (problem) throw new Error(`invalid object key ${JSON.stringify(key)}: ${problem}`);
}


export function artifactStorage(env: Env): ArtifactStorage {
  const signer = urlSigner(env);

  async function presign(method: SignedMethod, key: string, ttlSeconds: number, maxBytes?: number): Promise<PresignedUrl> {
    checkKey(key);
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > S3_MAX_TTL_SECONDS) {
      throw new RangeError(`a presigned URL lives 1–${S3_MAX_TTL_SECONDS} s, not ${ttlSeconds}`);
    }
    const now = Date.now();
    const url = await signer.presign({ method, key, ttlSeconds, now, maxBytes });
    return { url, expires_at: new Date(Math.floor(now / 1000) * 1000 + ttlSeconds * 1000).toISOString() };
  }

  return {
    presignGet: (key, ttlSeconds) => presign("GET", key, ttlSeconds),
    presignPut: (key, ttlSeconds, opts = {}) => presign("PUT", key, ttlSeconds, opts.maxBytes),

    async put(key, body, opts = {}) {
      checkKey(key);
      const httpMetadata = opts.contentType ? { contentType: opts.contentType } : undefined;
      if (body instanceof ReadableStream) {
        if (opts.size === undefined) return putUnsized(env.BUCKET, key, body, httpMetadata);
        // One pass over the stream: one branch is hashed while the other is stored.
        const digest = new crypto.DigestStream("SHA-256");
        const sized = new FixedLengthStream(opts.size);
        const [toDigest, toBucket] = body.tee();
        const [object] = await Promise.all([
          env.BUCKET.put(key, sized.readable, { httpMetadata }),
          toBucket.pipeTo(sized.writable),
          toDigest.pipeTo(digest),
        ]);
        return { key, size: object.size, sha256: toHex(await digest.digest) };
      }
      const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
      const sha256 = toHex(await crypto.subtle.digest("SHA-256", bytes));
      // R2 verifies the digest it is given, so a corrupted write fails instead of being stored.
      const object = await env.BUCKET.put(key, bytes, { httpMetadata, sha256 });
      return { key, size: object.size, sha256 };
    },

    get(key) {
      checkKey(key);
      return env.BUCKET.get(key);
    },
  };
}

/**
 * Stores a stream of unknown length (a repo host's tarball is sent chunked): as one object
 * when it is small, else as a multipart upload of equal parts, hashing as it goes. Memory
 * use stays at one part whatever the size.
 */
async function putUnsized(
  bucket: R2Bucket,
  key: string,
  body: ReadableStream<Uint8Array>,
  httpMetadata: R2HTTPMetadata | undefined,
): Promise<StoredObject> {
  const digest = new crypto.DigestStream("SHA-256");
  const writer = digest.getWriter();
  const reader = body.getReader();
  let part = new Uint8Array(MULTIPART_PART_BYTES);
  let filled = 0;
  let size = 0;
  let upload: R2MultipartUpload | undefined;
  const parts: R2UploadedPart[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      await writer.write(value);
      size += value.byteLength;
      let offset = 0;
      while (offset < value.byteLength) {
        const n = Math.min(value.byteLength - offset, MULTIPART_PART_BYTES - filled);
        part.set(value.subarray(offset, offset + n), filled);
        filled += n;
        offset += n;
        if (filled === MULTIPART_PART_BYTES) {
          upload ??= await bucket.createMultipartUpload(key, { httpMetadata });
          parts.push(await upload.uploadPart(parts.length + 1, part));
          part = new Uint8Array(MULTIPART_PART_BYTES);
          filled = 0;
        }
      }
    }
    await writer.close();
    if (!upload) {
      await bucket.put(key, part.subarray(0, filled), { httpMetadata });
    } else {
      if (filled > 0) parts.push(await upload.uploadPart(parts.length + 1, part.subarray(0, filled)));
      await upload.complete(parts);
    }
  } catch (e) {
    await upload?.abort().catch(() => undefined);
    throw e;
  }
  return { key, size, sha256: toHex(await digest.digest) };
}
