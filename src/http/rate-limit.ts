import type { Env } from "../env";
import { HttpError } from "./errors";

/**
 * Rate-limit scopes of the spec's section 8, per client IP. Every request counts against
 * the burst limit; API requests also against the general one; the routes below also against
 * their scope. PATCH .../changes (the IDE's save) is deliberately not an upload, so an IDE
 * saving at a normal pace only meets the general and burst limits. docs/limits.md lists them.
 */
const AUTH_ROUTES: RegExp[] = [
  /^POST \/api\/v1\/attempts\/[^/]+\/ide-session$/,
  /^DELETE \/api\/v1\/attempts\/[^/]+\/ide-session\/[^/]+$/,
  /^POST \/api\/v1\/invites\/accept$/,
  /^(POST|GET|DELETE) \/api\/v1\/repohost\/user-token$/,
];
const UPLOAD_ROUTES: RegExp[] = [
  /^POST \/api\/v1\/tasks\/import-pr$/,
  /^POST \/api\/v1\/task-drafts$/,
  /^POST \/api\/v1\/attempts\/[^/]+\/submit$/,
];

export type RateScope = "burst" | "general" | "auth" | "upload";

const LIMITS: Record<RateScope, { binding: keyof Env; period: number; what: string }> = {
  burst: { binding: "RL_BURST", period: 10, what: "20 requests per 10 seconds" },
  general: { binding: "RL_GENERAL", period: 60, what: "60 requests per minute" },
  auth: { binding: "RL_AUTH", period: 60, what: "10 requests per minute on authentication routes" },
  upload: { binding: "RL_UPLOAD", period: 60, what: "5 uploads per minute" },
};

export function rateScopes(method: string, pathname: string): RateScope[] {
  const key = `${method} ${pathname}`;
  const scopes: RateScope[] = ["burst"];
  if (!pathname.startsWith("/api/v1/")) return scopes;
  scopes.push("general");
  if (AUTH_ROUTES.some((r) => r.test(key))) scopes.push("auth");
  if (UPLOAD_ROUTES.some((r) => r.test(key))) scopes.push("upload");
  return scopes;
}

/** Cloudflare sets CF-Connecting-IP at the edge; a client cannot override it there. */
export function clientIp(request: Request): string {
  return request.headers.get("cf-connecting-ip") ?? "unknown";
}

export async function enforceRateLimits(request: Request, env: Env, pathname: string): Promise<void> {
  const ip = clientIp(request);
  for (const scope of rateScopes(request.method, pathname)) {
    const { binding, period, what } = LIMITS[scope];
    const { success } = await (env[binding] as RateLimit).limit({ key: `${scope}:${ip}` });
    if (!success) {
      throw new HttpError(429, `Rate limit exceeded (${what}); retry after ${period} seconds with exponential backoff`, {
        "Retry-After": String(period),
      });
    }
  }
}
