import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { artifactStorage } from "../../src/services/storage/artifact-storage";
import { signStorageUrl } from "../../src/services/storage/worker-signer";
import { call, errorBody, freshIp } from "../support/worker/client";
import { callPresigned } from "../support/worker/presigned";

const storage = () => artifactStorage(env);
let counter = 0;
const uniqueKey = (name = "object.bin") => `test/${crypto.randomUUID()}-${++counter}/${name}`;

function withParam(url: string, name: string, value: string): string {
  const u = new URL(url);
  u.searchParams.set(name, value);
  return u.toString();
}

describe("presigned URLs signed by the Worker", () => {
  it("round trip: PUT through one URL, GET through another, same bytes and type", async () => {
    const key = uniqueKey("junit.xml");
    const put = await storage().presignPut(key, 600, { maxBytes: 1024 });
    expect(put.url).toMatch(/^https:\/\/assay\.test\/api\/v1\/storage\/test%2F/);
    expect(new URL(put.url).searchParams.get("max")).toBe("1024");
    expect(Date.parse(put.expires_at) - Date.now()).toBeGreaterThan(590_000);

    const body = '<?xml version="1.0"?><testsuites/>';
    const uploaded = await callPresigned(put.url, { method: "PUT", body, headers: { "content-type": "application/xml" } });
    expect(uploaded.status).toBe(200);
    expect(await uploaded.json()).toEqual({ key, size: body.length });

    const get = await storage().presignGet(key, 600);
    const downloaded = await callPresigned(get.url);
    expect(downloaded.status).toBe(200);
    expect(downloaded.headers.get("content-type")).toBe("application/xml");
    expect(downloaded.headers.get("content-length")).toBe(String(body.length));
    expect(await downloaded.text()).toBe(body);
  });

  it("serves a JUnit file that carries script as a sandboxed attachment, whatever type it was uploaded with", async () => {
    const body = '<?xml version="1.0"?><testsuites><script xmlns="http://www.w3.org/1999/xhtml">alert(document.cookie)</script></testsuites>';
    for (const type of ["application/xml", "text/html"]) {
      const key = uniqueKey("junit.xml");
      const put = await storage().presignPut(key, 600, { maxBytes: 1024 });
      expect((await callPresigned(put.url, { method: "PUT", body, headers: { "content-type": type } })).status).toBe(200);
      const res = await callPresigned((await storage().presignGet(key, 600)).url);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-disposition")).toBe('attachment; filename="junit.xml"');
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("content-security-policy")).toBe("sandbox; default-src 'none'");
      expect(await res.text()).toBe(body);
    }
  });

  it("streams a larger binary body both ways unchanged", async () => {
    const key = uniqueKey("environment.tar.gz");
    const big = new Uint8Array(3 * 1024 * 1024 + 7);
    for (let i = 0; i < big.length; i += 65_536) crypto.getRandomValues(big.subarray(i, i + 65_536));
    const put = await storage().presignPut(key, 600, { maxBytes: big.length });
    expect((await callPresigned(put.url, { method: "PUT", body: big })).status).toBe(200);
    const got = await callPresigned((await storage().presignGet(key, 600)).url);
    expect(new Uint8Array(await got.arrayBuffer())).toEqual(big);
  });

  it("an expired URL: 403, for GET and PUT", async () => {
    const key = uniqueKey();
    await storage().put(key, "old");
    const past = Math.floor(Date.now() / 1000) - 1;
    const get = await signStorageUrl(env.APP_BASE_URL, env.URL_SIGNING_SECRET, { method: "GET", key, expires: past });
    const res = await callPresigned(get);
    expect(res.status).toBe(403);
    expect((await errorBody(res)).detail).toMatch(/expired/);

    const put = await signStorageUrl(env.APP_BASE_URL, env.URL_SIGNING_SECRET, { method: "PUT", key, expires: past });
    expect((await callPresigned(put, { method: "PUT", body: "new" })).status).toBe(403);
    expect(await (await storage().get(key))?.text()).toBe("old");
  });

  it("a tampered key, expiry, size limit, method or signature: 403", async () => {
    const key = uniqueKey();
    const other = uniqueKey();
    await storage().put(key, "secret");
    await storage().put(other, "other secret");
    const get = (await storage().presignGet(key, 600)).url;
    const put = (await storage().presignPut(key, 600, { maxBytes: 10 })).url;
    const otherPath = `/api/v1/storage/${encodeURIComponent(other)}`;

    const tampered = [
      callPresigned(get.replace(new URL(get).pathname, otherPath)),
      callPresigned(withParam(get, "expires", String(Math.floor(Date.now() / 1000) + 86_400))),
      callPresigned(withParam(get, "sig", "0".repeat(64))),
      callPresigned(withParam(get, "sig", "abc")),
      callPresigned(get, { method: "PUT", body: "overwrite" }),
      callPresigned(withParam(put, "max", "1000000"), { method: "PUT", body: "0123456789abc" }),
    ];
    for (const res of await Promise.all(tampered)) {
      expect(res.status).toBe(403);
      expect((await errorBody(res)).detail).toMatch(/signature/);
    }
    expect(await (await storage().get(key))?.text()).toBe("secret");
  });

  it("a PUT over the URL's size limit: 413, nothing stored", async () => {
    const key = uniqueKey();
    const put = await storage().presignPut(key, 600, { maxBytes: 8 });
    const res = await callPresigned(put.url, { method: "PUT", body: "123456789" });
    expect(res.status).toBe(413);
    expect((await errorBody(res)).detail).toMatch(/at most 8/);
    expect(await storage().get(key)).toBeNull();
    expect((await callPresigned(put.url, { method: "PUT", body: "12345678" })).status).toBe(200);
  });

  it("a PUT without Content-Length (a stream of unknown length): 411", async () => {
    const put = await storage().presignPut(uniqueKey(), 600);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("chunk"));
        controller.close();
      },
    });
    expect((await callPresigned(put.url, { method: "PUT", body: stream })).status).toBe(411);
  });

  it("keys are validated: '..' segments and other characters are a 422, never a lookup", async () => {
    const expires = String(Math.floor(Date.now() / 1000) + 60);
    for (const raw of ["a%2F..%2Fb", "..%2Fsecret", "a%2F%2Fb", "a%20b", "%E0%A4%A"]) {
      const res = await call(`/api/v1/storage/${raw}?expires=${expires}&sig=${"0".repeat(64)}`);
      expect(res.status, raw).toBe(422);
      expect(((await errorBody(res)).detail as { loc: unknown[] }[])[0]?.loc).toEqual(["path", "key"]);
    }
    await expect(storage().presignGet("a/../b", 60)).rejects.toThrow(/invalid object key/);
  });

  it("a missing object behind a valid URL: 404", async () => {
    const res = await callPresigned((await storage().presignGet(uniqueKey(), 60)).url);
    expect(res.status).toBe(404);
  });

  it("signed storage URLs are not counted against the per-IP limits", async () => {
    const key = uniqueKey();
    await storage().put(key, "x");
    const { pathname, search } = new URL((await storage().presignGet(key, 600)).url);
    const ip = freshIp();
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await call(`${pathname}${search}`, { ip })).status);
    expect(statuses.every((s) => s === 200)).toBe(true);
  });

  it("the storage routes are in the OpenAPI document, with required signature parameters and no 429", async () => {
    type Op = { parameters: { name: string; required: boolean }[]; responses: Record<string, unknown> };
    const doc = (await (await call("/api/v1/openapi.json")).json()) as { paths: Record<string, Record<string, Op>> };
    const ops = doc.paths["/api/v1/storage/{key}"] ?? {};
    expect(Object.keys(ops).sort()).toEqual(["get", "put"]);
    for (const op of Object.values(ops)) {
      const required = op.parameters.filter((p) => p.required).map((p) => p.name);
      expect(required.sort()).toEqual(["expires", "key", "sig"]);
      expect(op.responses).toHaveProperty("403");
      expect(op.responses).not.toHaveProperty("429");
    }
  });
});

describe("direct storage through the R2 binding", () => {
  it("put returns size and sha256, R2 holds the bytes and type", async () => {
    const key = uniqueKey("spec.json");
    const stored = await storage().put(key, '{"a":1}', { contentType: "application/json" });
    const expected = [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode('{"a":1}')))]
      .map((b) => b.toString(16).padStart(2, "0"))
      .join("");
    expect(stored).toEqual({ key, size: 7, sha256: expected });
    const object = await env.BUCKET.get(key);
    expect(object?.httpMetadata?.contentType).toBe("application/json");
    expect(await object?.text()).toBe('{"a":1}');
  });

  it("a stream of known size is stored and hashed in one pass", async () => {
    const key = uniqueKey("snapshot.tar.gz");
    const parts = ["hello ", "streamed ", "world"].map((p) => new TextEncoder().encode(p));
    const size = parts.reduce((n, p) => n + p.byteLength, 0);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const p of parts) controller.enqueue(p);
        controller.close();
      },
    });
    const stored = await storage().put(key, stream, { size, contentType: "application/gzip" });
    expect(stored.size).toBe(size);
    expect(stored.sha256).toBe((await storage().put(uniqueKey(), "hello streamed world")).sha256);
    expect(await (await storage().get(key))?.text()).toBe("hello streamed world");
  });

  it.each([
    ["a small stream of unknown size is stored whole", 100_000],
    ["a large stream of unknown size is stored as a multipart upload", 8 * 1024 * 1024 * 2 + 12_345],
  ])("%s, with its sha256", async (_what, total) => {
    const chunk = crypto.getRandomValues(new Uint8Array(65_536));
    const expected = new Uint8Array(total);
    for (let at = 0; at < total; at += chunk.byteLength) expected.set(chunk.subarray(0, Math.min(chunk.byteLength, total - at)), at);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= total) return controller.close();
        const n = Math.min(chunk.byteLength, total - sent);
        controller.enqueue(chunk.slice(0, n));
        sent += n;
      },
    });
    const key = uniqueKey("unsized.bin");
    const stored = await storage().put(key, stream);
    expect(stored.size).toBe(total);
    const digest = [...new Uint8Array(await crypto.subtle.digest("SHA-256", expected))].map((b) => b.toString(16).padStart(2, "0")).join("");
    expect(stored.sha256).toBe(digest);
    const back = new Uint8Array(await (await storage().get(key))!.arrayBuffer());
    expect(back.byteLength).toBe(total);
    expect(back.every((b, i) => b === expected[i])).toBe(true);
  });
});
