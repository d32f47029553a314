import { readFileSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";
import { createAssayClient } from "../../client/src/index";
import { CLIENT_SCHEMA_FILE, clientSchema } from "../../scripts/lib/client-schema";
import { devToken, freshIp } from "../support/node/http-client";

/** The client as an API user builds it, each test's requests from a client IP of their own. */
function client(token?: string) {
  const ip = freshIp();
  return createAssayClient({ baseUrl: inject("apiUrl"), token, headers: { "cf-connecting-ip": ip } });
}

describe("the typed API client (client/)", () => {
  it("is generated from the API's OpenAPI document as it is now (else: npm run client:generate)", async () => {
    const document = await (await fetch(`${inject("apiUrl")}/api/v1/openapi.json`)).json();
    expect(readFileSync(CLIENT_SCHEMA_FILE, "utf8")).toBe(await clientSchema(document));
  });

  it("sends the token as Bearer and reads typed bodies; an error is the spec's {detail}", async () => {
    const token = await devToken({ sub: "client-user", role: "interviewer", org: "client-org" });
    const me = await client(token).GET("/api/v1/me");
    expect(me.response.status).toBe(200);
    expect(me.data?.email).toBe("client-user@example.test");
    expect(me.data?.memberships).toEqual([expect.objectContaining({ organization_id: "client-org", role: "interviewer" })]);

    const anonymous = await client().GET("/api/v1/me");
    expect(anonymous.response.status).toBe(401);
    expect(anonymous.error).toEqual({ detail: expect.any(String) });

    const missing = await client(token).GET("/api/v1/tasks/{task_id}", { params: { path: { task_id: "task_none" } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.detail).toMatch(/task_none/);
  });

  it("asks a token function before each request, so a refreshed token is used at once", async () => {
    let current = await devToken({ sub: "client-first", role: "candidate" });
    const refreshing = createAssayClient({ baseUrl: inject("apiUrl"), token: () => current, headers: { "cf-connecting-ip": freshIp() } });
    expect((await refreshing.GET("/api/v1/me")).data?.email).toBe("client-first@example.test");
    current = await devToken({ sub: "client-second", role: "candidate" });
    expect((await refreshing.GET("/api/v1/me")).data?.email).toBe("client-second@example.test");
  });
});
