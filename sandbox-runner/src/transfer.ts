import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { pipeline } from "node:stream/promises";
import { signedHeaders } from "../../protocol/signing";
import type { Logger } from "./log";

export class TransferError extends Error {
  override name = "TransferError";
}

/** Downloads to `dest`, refusing anything larger than `maxBytes` or with another digest. */
export async function downloadVerified(url: string, sha256: string, dest: string, maxBytes: number): Promise<number> {
  const response = await fetch(url, { redirect: "follow", signal: AbortSignal.timeout(300_000) });
  if (!response.ok || !response.body) throw new TransferError(`download failed: HTTP ${response.status}`);
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw new TransferError(`download larger than ${maxBytes} bytes`);
  const hash = createHash("sha256");
  let size = 0;
  const partial = `${dest}.part-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const counted = Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>).map((chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) throw new TransferError(`download larger than ${maxBytes} bytes`);
    hash.update(chunk);
    return chunk;
  });
  try {
    await pipeline(counted, createWriteStream(partial, { mode: 0o600 }));
    const digest = hash.digest("hex");
    if (digest !== sha256) throw new TransferError(`sha256 mismatch: expected ${sha256}, got ${digest}`);
    await rename(partial, dest);
    return size;
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
}

export async function upload(url: string, body: Buffer, contentType: string): Promise<void> {
  const response = await fetch(url, {
    method: "PUT",
    body: new Uint8Array(body),
    headers: { "content-type": contentType },
    signal: AbortSignal.timeout(120_000),
  });
  await response.body?.cancel();
  if (!response.ok) throw new TransferError(`upload failed: HTTP ${response.status}`);
}

export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** A signed POST's end: delivered, or not, with the receiver's refusal when it answered one (a 4xx and its body). */
export type PostResult = { ok: true } | { ok: false; refusal: string | null };

const REFUSAL_MAX_CHARS = 1000;

/**
 * POSTs a signed JSON body, retrying network errors, 408, 429 and 5xx with exponential
 * backoff and jitter; other 4xx answers are final because repeating them cannot help.
 */
export async function postSigned(
  url: string,
  payload: unknown,
  secret: string,
  retry: RetryPolicy,
  log: Logger,
  context: Record<string, unknown>,
): Promise<PostResult> {
  const body = JSON.stringify(payload);
  for (let attempt = 1; attempt <= retry.attempts; attempt++) {
    let outcome: string;
    try {
      const response = await fetch(url, {
        method: "POST",
        body,
        headers: { "content-type": "application/json", ...(await signedHeaders(secret, body)) },
        signal: AbortSignal.timeout(30_000),
      });
      outcome = `HTTP ${response.status}`;
      const retryable = response.status >= 500 || response.status === 408 || response.status === 429;
      if (response.ok || retryable) await response.body?.cancel();
      if (response.ok) return { ok: true };
      if (!retryable) {
        const refusal = `${outcome}: ${(await response.text().catch(() => "")).slice(0, REFUSAL_MAX_CHARS)}`;
        log("callback_failed", { ...context, attempt, outcome, refusal });
        return { ok: false, refusal };
      }
    } catch (err) {
      outcome = err instanceof Error ? err.message : String(err);
    }
    if (attempt === retry.attempts) break;
    const delay = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1)) * (0.75 + Math.random() / 2);
    log("callback_retry", { ...context, attempt, outcome, delay_ms: Math.round(delay) });
    await new Promise((r) => setTimeout(r, delay));
  }
  log("callback_failed", { ...context, attempts: retry.attempts });
  return { ok: false, refusal: null };
}
