import { spawnSync } from "node:child_process";
import { describe, expect, inject, it } from "vitest";
import pkg from "../../package.json";
import { ROOT } from "../../scripts/lib/paths";
import { poll } from "../../scripts/lib/wait";
import { api, devToken, freshIp } from "../support/node/http-client";

describe("the running API (npm start)", () => {
  it("serves /health with the package version", async () => {
    const res = await api("/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok", version: pkg.version, checks: { database: "ok" } });
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  it("accepts a token printed by `npm run --silent token` on /api/v1/me", () => {
    const r = spawnSync(
      "npm",
      ["run", "--silent", "token", "--", "--sub", "e2e-cli", "--email", "cli@example.test", "--role", "interviewer", "--org", "e2e-org", "--ttl", "10m"],
      { cwd: ROOT, encoding: "utf8" },
    );
    expect(r.status).toBe(0);
    const lines = r.stdout.split("\n").filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    return api("/api/v1/me", { token: lines[0] }).then(async (res) => {
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        email: "cli@example.test",
        role: "interviewer",
        memberships: [expect.objectContaining({ organization_id: "e2e-org", role: "interviewer" })],
      });
    });
  });

  it("the token command refuses bad arguments without printing a token", () => {
    const r = spawnSync("npm", ["run", "--silent", "token", "--", "--sub", "x", "--email", "nope", "--role", "boss"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(r.status).not.toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/--email/);
    expect(r.stderr).toMatch(/--role/);
  });

  it("gives every error status the spec's shape over real HTTP", async () => {
    const candidate = await devToken({ sub: "e2e-cand", role: "candidate", org: "e2e-org2" });
    const expired = await devToken({ sub: "e2e-exp", role: "candidate", ttl: "-1m" });
    const cases: [Promise<Response>, number][] = [
      [api("/api/v1/me"), 401],
      [api("/api/v1/me", { token: expired }), 401],
      [api("/api/v1/organizations/e2e-org2/members", { token: candidate }), 403],
      [api("/api/v1/nothing-here"), 404],
      [api("/api/v1/me", { method: "PUT" }), 405],
      [api("/api/v1/organizations/e2e-org2/members?limit=0", { token: candidate }), 403],
    ];
    for (const [pending, status] of cases) {
      const res = await pending;
      expect(res.status).toBe(status);
      expect(typeof ((await res.json()) as { detail: unknown }).detail).toBe("string");
    }
    const admin = await devToken({ sub: "e2e-admin", role: "orgadmin", org: "e2e-org3" });
    const invalid = await api("/api/v1/organizations/e2e-org3/members?limit=0", { token: admin });
    expect(invalid.status).toBe(422);
    expect(((await invalid.json()) as { detail: unknown[] }).detail[0]).toMatchObject({ loc: ["query", "limit"] });
  });

  it("rate limits give 429 with Retry-After, then recover", async () => {
    const ip = freshIp();
    let limited: Response | undefined;
    // Fixed windows: a run straddling a boundary may pass up to two windows' worth (40).
    for (let i = 0; i < 41 && !limited; i++) {
      const res = await api("/health", { ip });
      if (res.status === 429) limited = res;
    }
    expect(limited?.status).toBe(429);
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThan(0);
    const status = await poll(
      "the limit to lift",
      async () => {
        const { status } = await api("/health", { ip });
        return status === 429 ? undefined : status;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(status).toBe(200);
  }, 60_000);

  it("the runner and the dev repo host are up beside the API", async () => {
    expect((await fetch(`${inject("runnerUrl")}/health`)).status).toBe(200);
    const repo = await fetch(`${inject("repohostUrl")}/api/v3/repos/assay-demo/slugify-js/pulls/1`);
    expect(repo.status).toBe(200);
  });
});
