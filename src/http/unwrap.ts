import type { Outcome } from "../domain/outcome";
import { HttpError } from "./errors";

/** The value of a domain operation, or its refusal as the HTTP error the API answers it with. */
export function unwrap<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.value;
  const refusal = outcome.refusal;
  switch (refusal.kind) {
    case "unauthenticated":
      throw HttpError.unauthorized(refusal.detail);
    case "invalid":
      throw HttpError.invalid(refusal.detail);
    case "rate_limited":
      throw new HttpError(429, refusal.detail, { "Retry-After": String(refusal.retryAfterSeconds) });
    case "forbidden":
      throw HttpError.forbidden(refusal.detail);
    case "not_found":
      throw HttpError.notFound(refusal.detail);
    case "conflict":
      throw HttpError.conflict(refusal.detail);
    case "gone":
      throw HttpError.gone(refusal.detail);
    case "too_large":
      throw new HttpError(413, refusal.detail);
  }
}
