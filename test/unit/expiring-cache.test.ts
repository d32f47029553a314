import { describe, expect, it } from "vitest";
import { ExpiringCache } from "../../src/lib/expiring-cache";

describe("ExpiringCache (per-isolate memo of verified tokens, synced claims, the health check)", () => {
  it("answers until the entry's end and not at or after it", () => {
    const cache = new ExpiringCache<string, number>(10);
    cache.set("token", 1, 1_000);
    expect(cache.get("token", 999)).toBe(1);
    expect(cache.get("token", 1_000)).toBeUndefined();
    expect(cache.get("token", 999)).toBeUndefined();
  });

  it("holds at most its bound, dropping the oldest entry first; setting again makes an entry the newest", () => {
    const cache = new ExpiringCache<string, number>(2);
    cache.set("a", 1, 10);
    cache.set("b", 2, 10);
    cache.set("a", 3, 10);
    cache.set("c", 4, 10);
    expect(cache.get("b", 0)).toBeUndefined();
    expect(cache.get("a", 0)).toBe(3);
    expect(cache.get("c", 0)).toBe(4);
  });

  it("forgets on delete and clear", () => {
    const cache = new ExpiringCache<string, number>(5);
    cache.set("a", 1, 10);
    cache.set("b", 2, 10);
    cache.delete("a");
    expect(cache.get("a", 0)).toBeUndefined();
    cache.clear();
    expect(cache.get("b", 0)).toBeUndefined();
  });
});
