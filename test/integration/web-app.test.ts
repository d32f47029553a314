import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, errorBody, sessionToken, uniqueSubject } from "../support/worker/client";

// The web app's pages are index.html at every address but the API's (so a reload or a shared
// link to any page works); its bundles are content-hashed assets. public/app/ is built by set-up.
describe("the web app served by the Worker", () => {
  it("answers index.html with its security headers at any page address, and its settings at /app-config.json", async () => {
    for (const path of ["/", "/attempts/att_123", "/invites/accept?token=abc", "/console/tasks"]) {
      const res = await call(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain(`connect-src 'self' ${new URL(env.OIDC_ISSUER).origin}`);
      const html = await res.text();
      expect(html).toMatch(/<script type="module" src="\/app\/assets\/main-[A-Z0-9]+\.js"><\/script>/);
    }
    const config = await call("/app-config.json");
    expect(await config.json()).toMatchObject({ oidc: { issuer: env.OIDC_ISSUER, client_id: "assay-web", scope: "openid email profile", resource: null } });
  });

  it("serves the hashed bundles as immutable, and 404s one that does not exist", async () => {
    const html = await (await call("/")).text();
    const script = /src="(\/app\/assets\/main-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const res = await call(script!);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await res.text()).toContain("/app-config.json");
    const missing = await call("/app/assets/main-NOPE.js");
    expect(missing.status).toBe(404);
    expect((await errorBody(missing)).detail).toBe("No web app asset at /app/assets/main-NOPE.js");
  });

  it("leaves /api/ to the API: an unknown API path is still the API's JSON 404, and a page takes only GET", async () => {
    const api = await call("/api/v1/no-such-thing");
    expect(api.status).toBe(404);
    expect(api.headers.get("content-type")).toContain("application/json");
    const post = await call("/console/tasks", { method: "POST", body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  // A client that mistypes the API's address must get the API's 404, not a 200 with HTML it
  // would take for success (docs/api.md, "Paths").
  it.each([
    "/API/v1/me",
    "/Api/v1/tasks",
    "/aPi/v1/no-such-thing",
    "/API",
    "/Api",
    "/api",
    "/apiv1",
    "/apiv1/me",
    "/APIv1/me",
    "/api-v1/me",
    "/api/v2/tasks",
    "/api/v1",
    "/api/V1/me",
    "/%41PI/v1/me",
    "/%61piv1/me",
    "//API//v1//me/",
    "/HEALTH",
    "/Health",
  ])("answers %s with the API's JSON 404, never the app's page", async (path) => {
    for (const method of ["GET", "HEAD"]) {
      const res = await call(path, { method });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.headers.get("content-type"), `${method} ${path}`).toContain("application/json");
      expect(res.headers.get("content-security-policy")).toBeNull();
    }
    const body = await errorBody(await call(path));
    expect(body.detail).toMatch(/^No route for GET \//);
    // A signed-in client gets the same answer.
    const token = await sessionToken({ sub: uniqueSubject("case"), role: "interviewer", org_id: "acme" });
    expect((await call(path, { token })).status).toBe(404);
  });

  it("still serves app pages whose first segment only starts like the API's elsewhere", async () => {
    for (const path of ["/console/api", "/attempts/api", "/app-config.json"]) {
      const res = await call(path);
      expect(res.status, path).toBe(200);
    }
  });

  it("sends X-Content-Type-Options: nosniff on every kind of answer", async () => {
    const html = await (await call("/")).text();
    const script = /src="(\/app\/assets\/main-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    const style = /href="(\/app\/assets\/styles-[A-Z0-9]+\.css)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    expect(style).toBeDefined();
    const token = await sessionToken({ sub: uniqueSubject("sniff"), role: "candidate" });
    const answers: [string, Promise<Response>, number][] = [
      ["a page", call("/attempts/att_1"), 200],
      ["a bundle", call(script!), 200],
      ["a stylesheet", call(style!), 200],
      ["a missing bundle", call("/app/assets/main-NOPE.js"), 404],
      ["the app's settings", call("/app-config.json"), 200],
      ["health", call("/health"), 200],
      ["JSON", call("/api/v1/me", { token }), 200],
      ["the OpenAPI document", call("/api/v1/openapi.json"), 200],
      ["the docs page", call("/api/v1/docs"), 200],
      ["401", call("/api/v1/me"), 401],
      ["404", call("/api/v1/no-such-thing"), 404],
      ["405", call("/console/tasks", { method: "POST", body: {} }), 405],
      ["422", call("/api/v1/tasks?limit=0", { token }), 422],
      ["a mistyped API path", call("/API/v1/me"), 404],
      ["a CORS preflight", call("/api/v1/me", { method: "OPTIONS", headers: { origin: "https://elsewhere.example", "access-control-request-method": "GET" } }), -1],
    ];
    for (const [what, pending, status] of answers) {
      const res = await pending;
      if (status !== -1) expect(res.status, what).toBe(status);
      expect(res.headers.get("x-content-type-options"), what).toBe("nosniff");
    }
  });
});
