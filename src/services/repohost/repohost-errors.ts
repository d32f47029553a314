/**
 * Failures of the repo host, classified so that the pipeline can tell the user what to do
 * and the queue consumer can tell what to retry (docs/tasks-from-prs.md, "Repo host errors").
 */

export type RepoHostErrorKind =
  /** The pull request, commit or (with a token) repository does not exist for this caller. */
  | "not_found"
  /** Anonymous caller and the repository is not visible: it is private or does not exist. */
  | "private_needs_token"
  /** The stored token was refused (401). */
  | "bad_credentials"
  /** Refused for another reason than rate limits: SSO enforcement, a token without the scope. */
  | "forbidden"
  | "rate_limited"
  | "server_error"
  /** No answer: connection refused or reset, DNS, timeout. */
  | "network_error"
  /** GitHub's 406 too_large for diffs, or more than the caller's bound. */
  | "too_large"
  /** An answer that is not what the GitHub API documents. */
  | "invalid_response";

const RETRYABLE = new Set<RepoHostErrorKind>(["rate_limited", "server_error", "network_error"]);

export class RepoHostError extends Error {
  readonly retryable: boolean;

  constructor(
    readonly kind: RepoHostErrorKind,
    message: string,
    readonly details: { status?: number; retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.name = "RepoHostError";
    this.retryable = RETRYABLE.has(kind);
  }

  get status(): number | undefined {
    return this.details.status;
  }

  /** Seconds the host asked to wait (retry-after, or until x-ratelimit-reset), when it said. */
  get retryAfterSeconds(): number | undefined {
    return this.details.retryAfterSeconds;
  }
}

/** GitHub asks for at least a minute after a secondary rate limit that names no time. */
const DEFAULT_RATE_LIMIT_WAIT_SECONDS = 60;

/** What the host said to wait: retry-after in seconds, else until x-ratelimit-reset. */
export function retryAfterOf(headers: Headers, nowMs: number): number | undefined {
  const retryAfter = headers.get("retry-after");
  if (retryAfter !== null && /^\d+$/.test(retryAfter.trim())) return Number(retryAfter.trim());
  const reset = headers.get("x-ratelimit-reset");
  if (headers.get("x-ratelimit-remaining") === "0" && reset !== null && /^\d+$/.test(reset.trim())) {
    return Math.max(1, Number(reset.trim()) - Math.floor(nowMs / 1000));
  }
  return undefined;
}

/** GitHub's error body is {"message": ..., "errors": [{"code": ...}]}; anything else reads as no message. */
export function githubMessage(body: unknown): { message: string; codes: string[] } {
  if (typeof body !== "object" || body === null) return { message: "", codes: [] };
  const { message, errors } = body as { message?: unknown; errors?: unknown };
  const codes = Array.isArray(errors)
    ? errors.map((e: unknown) => (typeof e === "object" && e !== null ? (e as { code?: unknown }).code : undefined)).filter((c): c is string => typeof c === "string")
    : [];
  return { message: typeof message === "string" ? message.slice(0, 300) : "", codes };
}

export function isRateLimited(status: number, headers: Headers, message: string): boolean {
  if (status !== 403 && status !== 429) return false;
  return status === 429 || headers.get("x-ratelimit-remaining") === "0" || headers.has("retry-after") || /rate limit/i.test(message);
}

export function rateLimitedError(status: number, headers: Headers, host: string, nowMs: number): RepoHostError {
  const wait = retryAfterOf(headers, nowMs) ?? DEFAULT_RATE_LIMIT_WAIT_SECONDS;
  return new RepoHostError("rate_limited", `${host} is rate limiting requests; try again in ${wait} seconds.`, {
    status,
    retryAfterSeconds: wait,
  });
}
