/** What every page gets: the parameters of its address pattern and the query string. */
export type PageProps = { params: Record<string, string>; query: URLSearchParams };
