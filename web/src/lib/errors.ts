// Every API error in words: the spec's `{detail}` is a string, or for 422 a list of
// `{loc, msg, type}`; other bodies (a proxy's HTML page, nothing at all) get a sentence of ours.

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type?: string;
}

/** A failed API call: its status and a message a person can read. */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    message: string,
    readonly issues: ValidationIssue[] = [],
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

function isIssue(value: unknown): value is ValidationIssue {
  return typeof value === "object" && value !== null && Array.isArray((value as ValidationIssue).loc) && typeof (value as ValidationIssue).msg === "string";
}

/** Where a validation issue points, without the `body` prefix a person did not type. */
export function issueField(issue: ValidationIssue): string {
  const loc = issue.loc[0] === "body" || issue.loc[0] === "query" || issue.loc[0] === "path" ? issue.loc.slice(1) : issue.loc;
  return loc.join(".");
}

const FALLBACK: Record<number, string> = {
  401: "Your session has ended; sign in again.",
  403: "You are not allowed to do this.",
  404: "Not found.",
  409: "This conflicts with the current state; reload and try again.",
  410: "This is no longer available.",
  413: "This is too large.",
  429: "Too many requests; wait a moment and try again.",
};

/** The error a response and its parsed body (or undefined) amount to. */
export function apiError(status: number, body: unknown, retryAfter: string | null = null): ApiError {
  const retry = retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined;
  const detail = typeof body === "object" && body !== null ? (body as { detail?: unknown }).detail : undefined;
  if (typeof detail === "string" && detail.trim() !== "") return new ApiError(status, detail, [], retry);
  if (Array.isArray(detail) && detail.every(isIssue)) {
    const issues = detail;
    const text = issues.map((i) => (issueField(i) ? `${issueField(i)}: ${i.msg}` : i.msg)).join("; ");
    return new ApiError(status, text || "The request was not valid.", issues, retry);
  }
  if (status === 0) return new ApiError(0, "The service cannot be reached; check your connection.", [], retry);
  const fallback = FALLBACK[status] ?? (status >= 500 ? `The service failed (${status}); try again in a moment.` : `The request failed (${status}).`);
  return new ApiError(status, retry !== undefined && status === 429 ? `${fallback.replace(/\.$/, "")} (in ${retry} s).` : fallback, [], retry);
}

/** A message for anything thrown: an ApiError's own, else a generic one. */
export function describe(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof TypeError) return "The service cannot be reached; check your connection.";
  return error instanceof Error ? error.message : String(error);
}

/**
 * Whether loading again may help: after a dropped connection, a conflict, a rate limit or a
 * failure of the service, yes; not when the API answered that the thing is not there, not the
 * caller's, or the request is wrong, which stays so however often it is asked.
 */
export function retryable(status: number | undefined): boolean {
  return status === undefined || status === 0 || status === 408 || status === 409 || status === 429 || status >= 500;
}

/** A 404 in words: what was asked for is not there, for one of the reasons the API gives none. */
export function notFoundText(what: string): string {
  return `${what} was not found: it may have been deleted, or the link may be wrong.`;
}
