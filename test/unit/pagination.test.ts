import { describe, expect, it } from "vitest";
import { pageInfo, pageOffset } from "../../src/domain/pagination";
import { paginationQuery } from "../../src/http/paging";

describe("pagination", () => {
  it("counts pages and offsets from 1-based pages", () => {
    expect(pageInfo(0, 1, 10)).toEqual({ total: 0, pages: 0, current: 1, limit: 10 });
    expect(pageInfo(21, 3, 10)).toEqual({ total: 21, pages: 3, current: 3, limit: 10 });
    expect(pageOffset(1, 10)).toBe(0);
    expect(pageOffset(3, 25)).toBe(50);
  });

  it("applies the endpoint's default and maximum", () => {
    const q = paginationQuery({ defaultLimit: 20, maxLimit: 50 });
    expect(q.parse({})).toEqual({ page: 1, limit: 20 });
    expect(q.parse({ page: "2", limit: "50" })).toEqual({ page: 2, limit: 50 });
    expect(q.safeParse({ limit: "51" }).success).toBe(false);
    expect(q.safeParse({ page: "0" }).success).toBe(false);
    expect(q.safeParse({ page: "1.5" }).success).toBe(false);
    expect(q.safeParse({ limit: "abc" }).success).toBe(false);
  });
});
