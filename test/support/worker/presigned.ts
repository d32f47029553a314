import { call } from "./client";

/** Calls a presigned URL as its holder would; only the path and query reach the Worker. */
export function callPresigned(url: string, init: { method?: string; body?: BodyInit; headers?: Record<string, string> } = {}) {
  const { pathname, search } = new URL(url);
  return call(`${pathname}${search}`, { method: init.method ?? "GET", rawBody: init.body, headers: init.headers });
}
