import { inject } from "vitest";
import { mintLocalToken } from "../../../scripts/lib/local-token";
import { nextClientIp } from "../../../scripts/lib/client-ip";

/** A client IP of its own per test, so one test's rate limits never reach another. */
export const freshIp = nextClientIp;

export interface Call {
  method?: string;
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
  ip?: string;
}

/** An HTTP client of the running API, as any API client would use it. */
export async function api(path: string, opts: Call = {}): Promise<Response> {
  const headers: Record<string, string> = { "cf-connecting-ip": opts.ip ?? freshIp(), ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers["content-type"] ??= "application/json";
  return fetch(`${inject("apiUrl")}${path}`, {
    method: opts.method ?? "GET",
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
}

/** A session JWT from the dev identity provider (the same keys `npm run token` uses). */
export async function devToken(claims: { sub: string; email?: string; role: string; org?: string; ttl?: string }) {
  return mintLocalToken({ email: `${claims.sub}@example.test`, ...claims });
}
