// The app's one way to the API: the typed client generated from the OpenAPI document
// (client/, @assay/api-client), with the session's token, and call() turning every failure into
// an ApiError with words from its `detail`. A 401 sends the user to sign in and back here.
import { createAssayClient } from "../../client/src/index";
import { currentToken, onUnauthorized } from "./auth/session";
import { apiError, ApiError } from "./lib/errors";

export const api = createAssayClient({ baseUrl: typeof window === "undefined" ? "http://localhost" : window.location.origin, token: currentToken });

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The data of an API call, or an ApiError. A 401 also starts sign-in, which comes back to the
 * page the user was on; the error is still thrown, so the page stops what it was doing.
 */
export async function call<T>(request: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await request;
  } catch {
    throw apiError(0, undefined);
  }
  const { data, error, response } = answer;
  if (response.ok) return data as T;
  const failure = apiError(response.status, error, response.headers.get("retry-after"));
  if (response.status === 401) onUnauthorized(failure.message);
  throw failure;
}

export { ApiError };
