import { AwsClient } from "aws4fetch";
import { attachmentDisposition } from "../../domain/storage-keys";
import type { UrlSigner } from "./signer";

export interface S3Config {
  accessKeyId: string;
  secretAccessKey: string;
  /** The bucket's S3 URL, path style: `https://<account>.r2.cloudflarestorage.com/<bucket>`. */
  endpoint: string;
}

/** S3's presigned-URL lifetime cap (SigV4 refuses longer ones). */
export const S3_MAX_TTL_SECONDS = 7 * 24 * 3600;

/**
 * SigV4 query-signed URLs for R2's S3 API (aws4fetch). Only `host` is signed: S3 presigning
 * cannot bind Content-Length, so an upload's size limit is not enforced on this path. Download
 * URLs carry signed `response-content-*` overrides, so they serve attachments only.
 */
export function s3UrlSigner(config: S3Config): UrlSigner {
  const client = new AwsClient({
    accessKeyId: config.accessKeyId,
    secretAccessKey: config.secretAccessKey,
    service: "s3",
    region: "auto",
  });
  const base = config.endpoint.replace(/\/+$/, "");
  return {
    async presign({ method, key, ttlSeconds, now }) {
      if (ttlSeconds > S3_MAX_TTL_SECONDS) throw new RangeError(`S3 presigned URLs live at most ${S3_MAX_TTL_SECONDS} s`);
      const url = new URL(`${base}/${key}`);
      if (method === "GET") {
        // R2 cannot add nosniff or a CSP, but S3 lets a signed URL fix the answer's type and
        // disposition: a download that is never rendered, whatever type the uploader gave it.
        url.searchParams.set("response-content-disposition", attachmentDisposition(key));
        url.searchParams.set("response-content-type", "application/octet-stream");
      }
      url.searchParams.set("X-Amz-Expires", String(ttlSeconds));
      const datetime = new Date(now).toISOString().replace(/[:-]|\.\d{3}/g, "");
      const signed = await client.sign(url, { method, aws: { signQuery: true, datetime } });
      return signed.url;
    },
  };
}
