import { describe, expect, it } from "vitest";
import { call, errorBody, freshIp } from "../support/worker/client";

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
    let recovered: Response | undefined;
    for (let i = 0; i < 60 && recovered?.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 500));
      recovered = await call("/health", { ip });
    }
    expect(recovered?.status).toBe(200);
  }, 60_000);

  it("another client IP is not affected by a limited one", async () => {
    const ip = freshIp();
    const responses = await statuses(41, "/health", ip);
    expect(responses.some((r) => r.status === 429)).toBe(true);
    expect((await call("/health", { ip: freshIp() })).status).toBe(200);
  });
});
