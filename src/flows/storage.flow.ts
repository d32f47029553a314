import { accept, refuse, type Outcome } from "../domain/outcome";
import type { Env } from "../env";

/** The object at a key of the bucket, to stream. */
export async function storedObject(env: Env, key: string): Promise<Outcome<R2ObjectBody>> {
  const object = await env.BUCKET.get(key);
  return object ? accept(object) : refuse("not_found", `No object at ${key}`);
}

export interface Upload {
  /** The body's length as declared; the runtime holds the body to it, so R2 gets a stream of known length. */
  size: number;
  body: ReadableStream | null;
  contentType: string;
  /** The largest body the URL admits, when it limits one. */
  maxBytes: number | undefined;
}

/** Stores an upload as it streams in, refused when it is larger than its URL admits. */
export async function storeObject(env: Env, key: string, upload: Upload): Promise<Outcome<R2Object>> {
  if (upload.maxBytes !== undefined && upload.size > upload.maxBytes) {
    return refuse("too_large", `The upload is ${upload.size} bytes; this URL admits at most ${upload.maxBytes}`);
  }
  return accept(await env.BUCKET.put(key, upload.body ?? new Uint8Array(), { httpMetadata: { contentType: upload.contentType } }));
}
