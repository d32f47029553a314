import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unstable_startWorker } from "wrangler";
import { S3_MAX_TTL_SECONDS, s3UrlSigner } from "../../src/services/storage/s3-signer";

const CREDENTIALS = { accessKeyId: "assay-test-key", secretAccessKey: "assay-test-secret" };

// A Worker whose R2 bucket wrangler also serves through its local S3-compatible endpoint
// (`local_dev.experimental_s3_credentials`), which checks SigV4 signatures and expiry like
// R2 does. The Worker reads objects through its binding to show both paths share one bucket.
const WRANGLER_TOML = `
name = "assay-s3-signer-test"
main = "worker.js"
compatibility_date = "2026-11-01"
[[r2_buckets]]
binding = "BUCKET"
bucket_name = "assay-artifacts"
local_dev = { experimental_s3_credentials = { accessKeyId = "${CREDENTIALS.accessKeyId}", secretAccessKey = "${CREDENTIALS.secretAccessKey}" } }
`;
const WORKER = `export default {
  async fetch(request, env) {
    const object = await env.BUCKET.get(new URL(request.url).pathname.slice(1));
    return object ? new Response(object.body, { headers: { "content-type": object.httpMetadata?.contentType ?? "" } }) : new Response("none", { status: 404 });
  },
};`;

describe("the S3 signer (aws4fetch) against wrangler's local R2 S3 endpoint", () => {
  let dir: string;
  let worker: Awaited<ReturnType<typeof unstable_startWorker>>;
  let origin: URL;
  let signer: ReturnType<typeof s3UrlSigner>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-s3-"));
    writeFileSync(join(dir, "wrangler.toml"), WRANGLER_TOML);
    writeFileSync(join(dir, "worker.js"), WORKER);
    worker = await unstable_startWorker({
      config: join(dir, "wrangler.toml"),
      dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, persist: false, watch: false, logLevel: "error" },
    });
    origin = await worker.url;
    signer = s3UrlSigner({ ...CREDENTIALS, endpoint: new URL("/cdn-cgi/local/r2/s3/assay-artifacts/", origin).href });
  }, 120_000);

  afterAll(async () => {
    await worker?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it("signs a path-style URL with SigV4 query parameters and the requested lifetime", async () => {
    const now = Date.UTC(2026, 10, 21, 8, 30, 0);
    const url = new URL(await signer.presign({ method: "GET", key: "runner-jobs/job_1/junit.xml", ttlSeconds: 600, now }));
    expect(url.pathname).toBe("/cdn-cgi/local/r2/s3/assay-artifacts/runner-jobs/job_1/junit.xml");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      "response-content-disposition": 'attachment; filename="junit.xml"',
      "response-content-type": "application/octet-stream",
      "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
      "X-Amz-Credential": `${CREDENTIALS.accessKeyId}/20261121/auto/s3/aws4_request`,
      "X-Amz-Date": "20261121T083000Z",
      "X-Amz-Expires": "600",
      "X-Amz-SignedHeaders": "host",
      "X-Amz-Signature": expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  // R2 answers a GET with these overrides' values. Wrangler's local endpoint checks that they
  // are signed but does not apply them, so this test checks the signing, not the answer.
  it("download URLs carry signed overrides of the answer's type and disposition, which cannot be edited out", async () => {
    const key = `runner-jobs/job_${Date.now()}/junit.xml`;
    const put = new URL(await signer.presign({ method: "PUT", key, ttlSeconds: 60, now: Date.now() }));
    expect(put.searchParams.has("response-content-disposition")).toBe(false);
    expect(put.searchParams.has("response-content-type")).toBe(false);
    const script = '<testsuites><script xmlns="http://www.w3.org/1999/xhtml">alert(1)</script></testsuites>';
    expect((await fetch(put, { method: "PUT", body: script, headers: { "content-type": "text/html" } })).status).toBe(200);

    const get = new URL(await signer.presign({ method: "GET", key, ttlSeconds: 60, now: Date.now() }));
    expect(get.searchParams.get("response-content-disposition")).toBe('attachment; filename="junit.xml"');
    expect(get.searchParams.get("response-content-type")).toBe("application/octet-stream");
    const res = await fetch(get);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(script);

    for (const name of ["response-content-disposition", "response-content-type"]) {
      const edited = new URL(get);
      edited.searchParams.delete(name);
      expect((await fetch(edited)).status).toBe(403);
    }
  });

  it("PUT then GET through presigned URLs; the Worker's binding reads the same object", async () => {
    const key = `runner-jobs/job_${Date.now()}/log.txt`;
    const put = await signer.presign({ method: "PUT", key, ttlSeconds: 60, now: Date.now() });
    const uploaded = await fetch(put, { method: "PUT", body: "the log", headers: { "content-type": "text/plain" } });
    expect(uploaded.status).toBe(200);

    const get = await signer.presign({ method: "GET", key, ttlSeconds: 60, now: Date.now() });
    const downloaded = await fetch(get);
    expect(downloaded.status).toBe(200);
    expect(await downloaded.text()).toBe("the log");

    const viaBinding = await fetch(new URL(`/${key}`, origin));
    expect(await viaBinding.text()).toBe("the log");
    expect(viaBinding.headers.get("content-type")).toBe("text/plain");
  });

  it("a tampered, re-targeted or expired URL is refused with 403", async () => {
    const key = `runner-jobs/job_${Date.now()}/junit.xml`;
    await fetch(await signer.presign({ method: "PUT", key, ttlSeconds: 60, now: Date.now() }), { method: "PUT", body: "x" });
    const good = new URL(await signer.presign({ method: "GET", key, ttlSeconds: 60, now: Date.now() }));

    const forged = new URL(good);
    forged.searchParams.set("X-Amz-Signature", "0".repeat(64));
    const longer = new URL(good);
    longer.searchParams.set("X-Amz-Expires", "3600");
    const otherKey = new URL(good);
    otherKey.pathname = otherKey.pathname.replace("junit.xml", "log.txt");
    const expired = await signer.presign({ method: "GET", key, ttlSeconds: 1, now: Date.now() - 10_000 });

    for (const url of [forged, longer, otherKey, expired]) {
      expect((await fetch(url)).status).toBe(403);
    }
    expect((await fetch(good, { method: "PUT", body: "overwrite" })).status).toBe(403);
  });

  it("refuses lifetimes SigV4 does not allow", async () => {
    await expect(signer.presign({ method: "GET", key: "a", ttlSeconds: S3_MAX_TTL_SECONDS + 1, now: Date.now() })).rejects.toThrow(RangeError);
  });
});
