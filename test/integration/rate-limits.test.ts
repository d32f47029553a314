import { describe, expect, it } from "vitest";
import { poll } from "../../scripts/lib/wait";
import { call, clearOfMinuteBoundary, errorBody, freshIp, sessionToken, uniqueSubject } from "../support/worker/client";

async function statuses(n: number, path: string, ip: string): Promise<Response[]> {
  const out: Response[] = [];
  for (let i = 0; i < n; i++) out.push(await call(path, { ip }));
  return out;
}

describe("rate limits per client IP", () => {
  it("burst: past 20 requests in a 10 s window a 429 with Retry-After and detail; then it recovers", async () => {
    const ip = freshIp();
    // The binding counts in fixed windows, so a run that straddles a boundary gets up to two
    // windows' worth through; never more, and never fewer than one window's.
    const responses = await statuses(41, "/health", ip);
    const firstLimited = responses.findIndex((r) => r.status === 429);
    expect(firstLimited).toBeGreaterThanOrEqual(20);
    expect(firstLimited).toBeLessThanOrEqual(40);
    const limited = responses[firstLimited]!;
    expect(limited.headers.get("retry-after")).toBe("10");
    expect((await errorBody(limited)).detail).toMatch(/20 requests per 10 seconds/);

    // Recovery is polled, not slept for: the window is the binding's, at most one period.
    const recovered = await poll(
      "the limit to lift",
      async () => {
        const res = await call("/health", { ip });
        return res.status === 429 ? undefined : res;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(recovered.status).toBe(200);
  }, 60_000);

  it("another client IP is not affected by a limited one", async () => {
    const ip = freshIp();
    const responses = await statuses(41, "/health", ip);
    expect(responses.some((r) => r.status === 429)).toBe(true);
    expect((await call("/health", { ip: freshIp() })).status).toBe(200);
  });

  it("spellings of an auth-related path (trailing or doubled slashes, escapes) reach the route and count against its limit", async () => {
    // The limits count in windows aligned to the clock's minute; start clear of a boundary so
    // that all requests fall in one window.
    await clearOfMinuteBoundary(10_000);
    const ip = freshIp();
    const token = await sessionToken({ sub: uniqueSubject() });
    const variants = ["/api/v1/invites/accept/", "//api/v1//invites/accept", "/api/v1/invites/%61ccept", "/api/v1/invites/accept//"];
    const responses: Response[] = [];
    for (let i = 0; i < 11; i++) {
      responses.push(await call(variants[i % variants.length]!, { method: "POST", ip, token, body: { token: "A".repeat(43) } }));
    }
    for (const res of responses.slice(0, 10)) {
      expect(res.status).toBe(404);
      expect((await errorBody(res)).detail).toMatch(/^No invitation has this token/);
    }
    const limited = responses[10]!;
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("60");
    expect((await errorBody(limited)).detail).toMatch(/10 requests per minute on authentication routes/);
    const canonical = await call("/api/v1/invites/accept", { method: "POST", ip, token, body: { token: "A".repeat(43) } });
    expect(canonical.status).toBe(429);
  }, 30_000);
});
