import { afterEach, describe, expect, it, vi } from "vitest";
import pkg from "../../package.json";
import { call, sessionToken, uniqueSubject } from "../support/worker/client";

describe("GET /health", () => {
  it("reports status, version and the database", async () => {
    const res = await call("/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok", version: pkg.version, checks: { database: "ok" } });
  });
});

describe("OpenAPI document and docs pages", () => {
  it("openapi.json is 3.1 and documents routes with their schemas and errors", async () => {
    const res = await call("/api/v1/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown }>> };
    expect(doc.openapi).toMatch(/^3\.1/);
    const me = doc.paths["/api/v1/me"]?.get;
    expect(me?.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(me?.responses ?? {})).toEqual(expect.arrayContaining(["200", "401", "403", "429", "500"]));
    const patch = doc.paths["/api/v1/organizations/{org_id}"]?.patch;
    expect(Object.keys(patch?.responses ?? {})).toEqual(expect.arrayContaining(["400", "413", "415", "422"]));
    expect(doc.paths["/health"]?.get?.security).toBeUndefined();
  });

  it.each(["/api/v1/docs", "/api/v1/redoc"])("%s loads only same-origin assets", async (path) => {
    const res = await call(path);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
    const html = await res.text();
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls) expect(url).toMatch(/^\/api\/v1\//);
  });

  it("serves the vendored assets and refuses unknown ones", async () => {
    const bundle = await call("/api/v1/docs/assets/swagger-ui-bundle.js");
    expect(bundle.status).toBe(200);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    expect((await call("/api/v1/docs/assets/../../wrangler.toml")).status).toBe(404);
    expect((await call("/api/v1/docs/assets/package.json")).status).toBe(404);
  });
});

describe("request ids and logs", () => {
  afterEach(() => vi.restoreAllMocks());

  it("echoes a client's X-Request-Id and generates one otherwise", async () => {
    const given = await call("/health", { headers: { "x-request-id": "client-abc.123" } });
    expect(given.headers.get("x-request-id")).toBe("client-abc.123");
    const generated = await call("/health", { headers: { "x-request-id": "bad id with spaces" } });
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("takes Cloudflare's Ray ID as the request id when the client sends none", async () => {
    const res = await call("/health", { headers: { "cf-ray": "8e2f1a3b4c5d6e7f-FRA" } });
    expect(res.headers.get("x-request-id")).toBe("8e2f1a3b4c5d6e7f-FRA");
    const client = await call("/health", { headers: { "cf-ray": "8e2f1a3b4c5d6e7f-FRA", "x-request-id": "client-1" } });
    expect(client.headers.get("x-request-id")).toBe("client-1");
  });

  it("a structured log line for a write, with route template and user, never the token", async () => {
    const logs = vi.spyOn(console, "log").mockImplementation(() => {});
    const token = await sessionToken({ sub: uniqueSubject(), role: "interviewer", org_id: "org-log" });
    const res = await call("/api/v1/notifications/read-all", { method: "POST", token, headers: { "x-request-id": "log-test-1" }, body: {} });
    expect(res.status).toBe(200);
    const lines = requestLines(logs, "log-test-1");
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({
      level: "info",
      method: "POST",
      route: "/api/v1/notifications/read-all",
      status: 200,
      user_id: expect.stringMatching(/^usr_/),
    });
    expect(line.duration_ms).toBeGreaterThanOrEqual(0);
    expect(lines[0]).not.toContain(token);
  });

  it("a line for a refused read, none for a successful one", async () => {
    const logs = vi.spyOn(console, "log").mockImplementation(() => {});
    const token = await sessionToken({ sub: uniqueSubject(), role: "interviewer", org_id: "org-log" });
    expect((await call("/api/v1/organizations/org-log/members", { token, headers: { "x-request-id": "log-test-2" } })).status).toBe(200);
    expect(requestLines(logs, "log-test-2")).toHaveLength(0);
    expect((await call("/api/v1/organizations/org-other/members", { token, headers: { "x-request-id": "log-test-3" } })).status).toBe(403);
    expect(JSON.parse(requestLines(logs, "log-test-3")[0]!)).toMatchObject({ method: "GET", status: 403, route: "/api/v1/organizations/:org_id/members" });
  });
});

function requestLines(logs: { mock: { calls: unknown[][] } }, requestId: string): string[] {
  return logs.mock.calls.map((c) => String(c[0])).filter((l) => l.includes(requestId) && l.includes('"msg":"request"'));
}

describe("CORS", () => {
  it("allows configured origins only", async () => {
    const ok = await call("/health", { headers: { origin: "https://app.example.test" } });
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example.test");
    expect(ok.headers.get("access-control-expose-headers")).toContain("X-Request-Id");
    const other = await call("/health", { headers: { origin: "https://evil.example" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("answers preflights", async () => {
    const res = await call("/api/v1/me", {
      method: "OPTIONS",
      headers: { origin: "https://app.example.test", "access-control-request-method": "GET" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-headers")).toContain("Authorization");
  });
});
