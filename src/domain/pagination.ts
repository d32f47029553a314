/** Page arithmetic of the spec's pagination envelope (1-based pages). */
export interface PageInfo {
  total: number;
  pages: number;
  current: number;
  limit: number;
}

export function pageInfo(total: number, page: number, limit: number): PageInfo {
  return { total, pages: Math.ceil(total / limit), current: page, limit };
}

export function pageOffset(page: number, limit: number): number {
  return (page - 1) * limit;
}

/** A list a use case offers page by page: how many it holds, and one window of it. */
export interface Listing<T> {
  count: () => Promise<number>;
  page: (limit: number, offset: number) => Promise<T[]>;
}
