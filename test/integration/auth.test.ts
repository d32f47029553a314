import { env } from "cloudflare:workers";
import { base64url, exportJWK, generateKeyPair, SignJWT } from "jose";
import { describe, expect, it, vi } from "vitest";
import { call, errorBody, sessionToken, uniqueSubject } from "../support/worker/client";

async function expect401(token: string | undefined, pattern: RegExp, headers: Record<string, string> = {}) {
  const res = await call("/api/v1/me", { token, headers });
  expect(res.status).toBe(401);
  expect(res.headers.get("www-authenticate")).toBe("Bearer");
  expect((await errorBody(res)).detail).toMatch(pattern);
}

describe("session tokens", () => {
  it("a valid token is accepted and creates the user on first use", async () => {
    const sub = uniqueSubject();
    const res = await call("/api/v1/me", { token: await sessionToken({ sub, email: "Ada@Example.test" }) });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: expect.stringMatching(/^usr_/), email: "Ada@Example.test", role: "candidate", memberships: [] });
    const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM users WHERE subject = ?").bind(sub).first<{ n: number }>();
    expect(row?.n).toBe(1);
  });

  it("concurrent first requests create exactly one user", async () => {
    const sub = uniqueSubject("race");
    const token = await sessionToken({ sub, org_id: "org-race", role: "interviewer" });
    const responses = await Promise.all(Array.from({ length: 12 }, () => call("/api/v1/me", { token })));
    expect(responses.map((r) => r.status)).toEqual(Array(12).fill(200));
    const ids = new Set(await Promise.all(responses.map(async (r) => ((await r.json()) as { id: string }).id)));
    expect(ids.size).toBe(1);
    const users = await env.DB.prepare("SELECT COUNT(*) AS n FROM users WHERE subject = ?").bind(sub).first<{ n: number }>();
    const members = await env.DB.prepare("SELECT COUNT(*) AS n FROM memberships WHERE organization_id = 'org-race'").first<{ n: number }>();
    expect(users?.n).toBe(1);
    expect(members?.n).toBe(1);
  });

  it("membership follows the token's organization and role", async () => {
    const sub = uniqueSubject();
    await call("/api/v1/me", { token: await sessionToken({ sub, org_id: "org-sync", role: "candidate" }) });
    const res = await call("/api/v1/me", { token: await sessionToken({ sub, org_id: "org-sync", role: "interviewer" }) });
    const me = (await res.json()) as { role: string; memberships: { organization_id: string; role: string }[] };
    expect(me.role).toBe("interviewer");
    expect(me.memberships).toEqual([expect.objectContaining({ organization_id: "org-sync", role: "interviewer" })]);
  });

  it("missing token, malformed header: 401 with WWW-Authenticate", async () => {
    await expect401(undefined, /Authentication required/);
    await expect401(undefined, /must be 'Bearer <token>'/, { authorization: "Basic dXNlcjpwYXNz" });
  });

  it("expired token: 401 that says so", async () => {
    const token = await sessionToken({ sub: uniqueSubject() }, { expiresIn: Math.floor(Date.now() / 1000) - 60 });
    await expect401(token, /expired/);
  });

  it("a token accepted before is refused once it expires: verified tokens are remembered only until their exp", async () => {
    const now = Date.now();
    const token = await sessionToken({ sub: uniqueSubject() }, { expiresIn: Math.floor(now / 1000) + 60 });
    expect((await call("/api/v1/me", { token })).status).toBe(200);
    expect((await call("/api/v1/me", { token })).status).toBe(200);
    vi.useFakeTimers({ now: now + 61_000, toFake: ["Date"] });
    try {
      await expect401(token, /expired/);
    } finally {
      vi.useRealTimers();
    }
  });

  it("token signed by another key: 401", async () => {
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    const other = JSON.stringify({ ...(await exportJWK(privateKey)), kid: JSON.parse(env.TEST_SIGNING_JWK).kid });
    await expect401(await sessionToken({ sub: uniqueSubject() }, { jwk: other }), /invalid/);
  });

  it("wrong issuer or audience: 401", async () => {
    await expect401(await sessionToken({ sub: uniqueSubject() }, { issuer: "https://evil.example/" }), /invalid/);
    await expect401(await sessionToken({ sub: uniqueSubject() }, { audience: "another-api" }), /invalid/);
  });

  it("alg none: 401", async () => {
    const enc = (o: object) => base64url.encode(JSON.stringify(o));
    const now = Math.floor(Date.now() / 1000);
    const payload = { sub: uniqueSubject(), email: "x@example.test", role: "admin", iss: env.AUTH_ISSUER, aud: env.AUTH_AUDIENCE, iat: now, exp: now + 600 };
    await expect401(`${enc({ alg: "none", typ: "JWT" })}.${enc(payload)}.`, /invalid/);
  });

  it("HS256 forged with the public key as the secret: 401", async () => {
    const publicJwk = (JSON.parse(env.DEV_IDP_JWKS!) as { keys: { kid: string }[] }).keys[0]!;
    const secret = new TextEncoder().encode(JSON.stringify(publicJwk));
    const forged = await new SignJWT({ email: "x@example.test", role: "admin" })
      .setProtectedHeader({ alg: "HS256", kid: publicJwk.kid })
      .setSubject(uniqueSubject())
      .setIssuer(env.AUTH_ISSUER)
      .setAudience(env.AUTH_AUDIENCE)
      .setExpirationTime("5m")
      .sign(secret);
    await expect401(forged, /invalid/);
  });

  it("claims that are missing or wrong: 401 naming them", async () => {
    await expect401(await sessionToken({ sub: uniqueSubject(), role: "superuser" }), /claims are invalid \(role\)/);
    await expect401(await sessionToken({ sub: uniqueSubject(), email: "not-an-email" }), /claims are invalid \(email\)/);
  });

  it("an IDE session token is refused on a session-only route", async () => {
    await expect401(`assay_ide_${"A".repeat(43)}`, /IDE session tokens are not accepted/);
  });
});

describe("roles and membership", () => {
  it("too low a role: 403 naming the role needed", async () => {
    const token = await sessionToken({ sub: uniqueSubject(), role: "candidate", org_id: "org-roles" });
    const res = await call("/api/v1/organizations/org-roles/members", { token });
    expect(res.status).toBe(403);
    expect((await errorBody(res)).detail).toMatch(/needs the interviewer role or higher; your role is candidate/);
  });

  it("not a member of the organization: 403 that says so", async () => {
    const token = await sessionToken({ sub: uniqueSubject(), role: "interviewer", org_id: "org-a" });
    const res = await call("/api/v1/organizations/org-b/members", { token });
    expect(res.status).toBe(403);
    expect((await errorBody(res)).detail).toMatch(/not a member of organization org-b/);
  });

  it("an interviewer of an organization cannot act as orgadmin there", async () => {
    const token = await sessionToken({ sub: uniqueSubject(), role: "interviewer", org_id: "org-c" });
    const res = await call("/api/v1/organizations/org-c", { method: "PATCH", token, body: { name: "Hijacked" } });
    expect(res.status).toBe(403);
  });

  it("a member sees the members list, paginated", async () => {
    const org = `org-page-${crypto.randomUUID().slice(0, 6)}`;
    for (let i = 0; i < 5; i++) await call("/api/v1/me", { token: await sessionToken({ sub: uniqueSubject(), org_id: org }) });
    const token = await sessionToken({ sub: uniqueSubject(), role: "interviewer", org_id: org });
    const first = await call(`/api/v1/organizations/${org}/members?limit=4`, { token });
    expect(first.status).toBe(200);
    const page1 = (await first.json()) as { items: unknown[]; pagination: object };
    expect(page1.items).toHaveLength(4);
    expect(page1.pagination).toEqual({ total: 6, pages: 2, current: 1, limit: 4 });
    const past = (await (await call(`/api/v1/organizations/${org}/members?limit=4&page=9`, { token })).json()) as {
      items: unknown[];
      pagination: object;
    };
    expect(past).toEqual({ items: [], pagination: { total: 6, pages: 2, current: 9, limit: 4 } });
    const filtered = (await (await call(`/api/v1/organizations/${org}/members?role=interviewer`, { token })).json()) as {
      items: { role: string }[];
    };
    expect(filtered.items.map((m) => m.role)).toEqual(["interviewer"]);
  });

  it("a platform admin may act in any organization", async () => {
    await call("/api/v1/me", { token: await sessionToken({ sub: uniqueSubject(), org_id: "org-admin-target" }) });
    const token = await sessionToken({ sub: uniqueSubject(), role: "admin" });
    const res = await call("/api/v1/organizations/org-admin-target/members", { token });
    expect(res.status).toBe(200);
  });
});
