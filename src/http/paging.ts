import { z } from "zod";
import { pageInfo, pageOffset, type PageInfo } from "../domain/pagination";

/**
 * Query schema for a list endpoint: `page` (1-based) and `limit` with that endpoint's
 * default and maximum. Out-of-range values are a 422; a page past the end is an empty page.
 */
export function paginationQuery(opts: { defaultLimit: number; maxLimit: number }) {
  return z.object({
    page: z.coerce.number().int().min(1).max(1_000_000).default(1).describe("1-based page number"),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(opts.maxLimit)
      .default(opts.defaultLimit)
      .describe(`Items per page (default ${opts.defaultLimit}, maximum ${opts.maxLimit})`),
  });
}

export const PaginationSchema = z
  .object({ total: z.number().int(), pages: z.number().int(), current: z.number().int(), limit: z.number().int() })
  .meta({ id: "Pagination" });

export function pageEnvelope<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), pagination: PaginationSchema });
}

export interface Page<T> {
  items: T[];
  pagination: PageInfo;
}

/** Runs the count and the page query of a list endpoint and wraps them in the envelope. */
export async function paginate<T>(
  page: { page: number; limit: number },
  count: () => Promise<number>,
  fetchPage: (limit: number, offset: number) => Promise<T[]>,
): Promise<Page<T>> {
  const [total, items] = await Promise.all([count(), fetchPage(page.limit, pageOffset(page.page, page.limit))]);
  return { items, pagination: pageInfo(total, page.page, page.limit) };
}
