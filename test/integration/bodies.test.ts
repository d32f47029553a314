import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, errorBody, sessionToken, uniqueSubject } from "../support/worker/client";

async function orgAdmin(org: string) {
  return sessionToken({ sub: uniqueSubject("admin"), role: "orgadmin", org_id: org });
}

describe("JSON request bodies (PATCH /organizations/{org_id})", () => {
  it("a valid body is applied", async () => {
    const token = await orgAdmin("org-body-ok");
    const res = await call("/api/v1/organizations/org-body-ok", { method: "PATCH", token, body: { name: "Acme Ltd" } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: "org-body-ok", name: "Acme Ltd", plan: { id: "free", candidate_limit: 5 } });
  });

  it("a body that is not JSON: 400 that says so", async () => {
    const token = await orgAdmin("org-body-400");
    const res = await call("/api/v1/organizations/org-body-400", {
      method: "PATCH",
      token,
      rawBody: "{name: nope",
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect((await errorBody(res)).detail).toMatch(/not valid JSON/);
  });

  it("the wrong content type: 415", async () => {
    const token = await orgAdmin("org-body-415");
    const res = await call("/api/v1/organizations/org-body-415", {
      method: "PATCH",
      token,
      rawBody: "name=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(415);
    expect((await errorBody(res)).detail).toMatch(/application\/json/);
  });

  it("a missing body: 400", async () => {
    const token = await orgAdmin("org-body-empty");
    const res = await call("/api/v1/organizations/org-body-empty", { method: "PATCH", token });
    expect(res.status).toBe(400);
  });

  it("over the size limit, declared or streamed: 413", async () => {
    const token = await orgAdmin("org-body-413");
    const limit = Number(env.MAX_BODY_BYTES);
    const big = JSON.stringify({ name: "x".repeat(limit) });
    const declared = await call("/api/v1/organizations/org-body-413", {
      method: "PATCH",
      token,
      rawBody: big,
      headers: { "content-type": "application/json" },
    });
    expect(declared.status).toBe(413);
    expect((await errorBody(declared)).detail).toContain(String(limit));

    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > limit + chunk.byteLength) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const streamed = await call("/api/v1/organizations/org-body-413", {
      method: "PATCH",
      token,
      rawBody: stream,
      headers: { "content-type": "application/json" },
    });
    expect(streamed.status).toBe(413);
  });

  it("schema violations: 422 with loc starting at body", async () => {
    const token = await orgAdmin("org-body-422");
    const res = await call("/api/v1/organizations/org-body-422", {
      method: "PATCH",
      token,
      body: { name: "", plan: "enterprise" },
    });
    expect(res.status).toBe(422);
    const { detail } = await errorBody(res);
    expect(detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ["body", "name"], type: "too_small" }),
        expect.objectContaining({ loc: ["body", "plan"], type: "unrecognized_keys" }),
      ]),
    );
  });

  it("auth comes before validation: no token and a bad body is 401", async () => {
    const res = await call("/api/v1/organizations/org-body-401", { method: "PATCH", rawBody: "nope" });
    expect(res.status).toBe(401);
  });
});
