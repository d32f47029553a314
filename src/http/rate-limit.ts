import type { Env } from "../env";
import { rateScopes, type RateScope } from "../domain/rate-scopes";
import { HttpError } from "./errors";

const LIMITS: Record<RateScope, { binding: keyof Env; period: number; what: string }> = {
  burst: { binding: "RL_BURST", period: 10, what: "20 requests per 10 seconds" },
  general: { binding: "RL_GENERAL", period: 60, what: "60 requests per minute" },
  auth: { binding: "RL_AUTH", period: 60, what: "10 requests per minute on authentication routes" },
  upload: { binding: "RL_UPLOAD", period: 60, what: "5 uploads per minute" },
};

/** Cloudflare sets CF-Connecting-IP at the edge; a client cannot override it there. */
export function clientIp(request: Request): string {
  return request.headers.get("cf-connecting-ip") ?? "unknown";
}

/**
 * Asks every scope's limiter at once, so a request waits for one round trip to them, not one
 * per scope. A request refused by one scope is thereby counted by the others too: it was sent.
 */
export async function enforceRateLimits(request: Request, env: Env, pathname: string): Promise<void> {
  const ip = clientIp(request);
  const scopes = rateScopes(request.method, pathname);
  const outcomes = await Promise.all(scopes.map((scope) => (env[LIMITS[scope].binding] as RateLimit).limit({ key: `${scope}:${ip}` })));
  const refused = scopes.find((_, i) => !outcomes[i]?.success);
  if (refused) {
    const { period, what } = LIMITS[refused];
    throw new HttpError(429, `Rate limit exceeded (${what}); retry after ${period} seconds with exponential backoff`, {
      "Retry-After": String(period),
    });
  }
}
