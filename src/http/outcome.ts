import type { Outcome } from "../domain/attempts";
import { HttpError } from "./errors";

/** The value of an attempt object's operation, or its refusal as the HttpError it stands for. */
export function unwrap<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.value;
  const refusal = outcome.refusal;
  switch (refusal.status) {
    case 401:
      throw HttpError.unauthorized(refusal.detail);
    case 422:
      throw HttpError.invalid(refusal.detail);
    case 429:
      throw new HttpError(429, refusal.detail, { "Retry-After": String(refusal.retryAfterSeconds) });
    default:
      throw new HttpError(refusal.status, refusal.detail);
  }
}
