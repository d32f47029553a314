import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, errorBody, sessionToken, uniqueSubject } from "../support/worker/client";

describe("one error model", () => {
  afterEach(() => vi.restoreAllMocks());

  it("unknown route: 404 with detail", async () => {
    const res = await call("/api/v1/no-such-thing");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect((await errorBody(res)).detail).toMatch(/No route for GET \/api\/v1\/no-such-thing/);
  });

  it("wrong method: 405 with Allow", async () => {
    const res = await call("/api/v1/me", { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET");
    expect((await errorBody(res)).detail).toMatch(/not allowed/);
  });

  it("422 lists every problem with loc starting at path or query", async () => {
    const token = await sessionToken({ sub: uniqueSubject(), role: "interviewer", org_id: "org-errors" });
    const res = await call("/api/v1/organizations/bad%20id!/members?page=0&limit=1000&role=boss", { token });
    expect(res.status).toBe(422);
    const { detail } = await errorBody(res);
    expect(detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ["path", "org_id"], type: "invalid_format" }),
        expect.objectContaining({ loc: ["query", "page"], type: "too_small" }),
        expect.objectContaining({ loc: ["query", "limit"], type: "too_big" }),
        expect.objectContaining({ loc: ["query", "role"], type: "invalid_value" }),
      ]),
    );
    for (const entry of detail as { msg: unknown }[]) expect(typeof entry.msg).toBe("string");
  });

  it("500 carries an error_id that is logged with the stack and leaks nothing", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const token = await sessionToken({ sub: uniqueSubject() });
    await env.DB.exec("ALTER TABLE users RENAME TO users_gone");
    try {
      const res = await call("/api/v1/me", { token });
      expect(res.status).toBe(500);
      const body = await errorBody(res);
      expect(body.error_id).toMatch(/^err_[0-9a-f]{32}$/);
      expect(Object.keys(body).sort()).toEqual(["detail", "error_id"]);
      expect(body.detail).not.toMatch(/users|SQL|D1|stack/i);
      const logged = errors.mock.calls.map((c) => String(c[0])).find((l) => l.includes(body.error_id!));
      expect(logged).toBeDefined();
      expect(JSON.parse(logged!)).toMatchObject({ level: "error", error_id: body.error_id, stack: expect.any(String) });
    } finally {
      await env.DB.exec("ALTER TABLE users_gone RENAME TO users");
    }
  });
});
