import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, errorBody } from "../support/worker/client";

// The web app's pages are index.html at every address outside /api/ (so a reload or a shared
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
});
