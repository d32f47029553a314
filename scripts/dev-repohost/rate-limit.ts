const WINDOW_SECONDS = 3600;

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Epoch seconds when the window restarts. */
  reset: number;
  used: number;
}

/**
 * GitHub's core rate limit: a budget of requests per hour for each caller (token, or
 * address when anonymous). The budget is enforced, so an adapter that waits when
 * x-ratelimit-remaining reaches 0 sees the same numbers it would on GitHub.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { used: number; reset: number }>();

  constructor(private readonly limit: number) {}

  private window(caller: string) {
    const nowSeconds = Math.floor(Date.now() / 1000);
    let window = this.windows.get(caller);
    if (!window || window.reset <= nowSeconds) {
      window = { used: 0, reset: nowSeconds + WINDOW_SECONDS };
      this.windows.set(caller, window);
    }
    return window;
  }

  /** The caller's state without spending a request (GET /rate_limit is free on GitHub too). */
  peek(caller: string): RateLimitState {
    const { used, reset } = this.window(caller);
    return { limit: this.limit, remaining: Math.max(0, this.limit - used), reset, used };
  }

  /** Spends one request; `allowed` is false once the budget is gone. */
  spend(caller: string): RateLimitState & { allowed: boolean } {
    const window = this.window(caller);
    const allowed = window.used < this.limit;
    if (allowed) window.used += 1;
    return { ...this.peek(caller), allowed };
  }
}

export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    "x-ratelimit-limit": String(state.limit),
    "x-ratelimit-remaining": String(state.remaining),
    "x-ratelimit-reset": String(state.reset),
    "x-ratelimit-used": String(state.used),
    "x-ratelimit-resource": "core",
  };
}
