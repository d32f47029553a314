// The transport under the app's data layer: the typed client generated from the OpenAPI document
// (client/, @assay/api-client), with the session's token, and call() turning every failure into
// an ApiError with words from its `detail`. A 401 sends the user to sign in and back here.
// Pages import all of this from lib/data.ts, the one module fetching goes through (the view's
// cache, only the newest answer landing); only that module imports this file.
import type { Middleware } from "openapi-fetch";
import { createAssayClient } from "../../client/src/index";
import { currentToken, onUnauthorized } from "./auth/session";
import { apiError, ApiError } from "./lib/errors";

export const api = createAssayClient({ baseUrl: typeof window === "undefined" ? "http://localhost" : window.location.origin, token: currentToken });
api.use(retryThrottled());

/** The longest Retry-After waited out without the user's say: the burst limit's 10-second window. */
const SHORT_WAIT_SECONDS = 10;

/**
 * A request the burst limit refused (429, Retry-After of a few seconds) is sent once more when
 * the window has passed: the limiter refuses before any route runs, so nothing was done, and a
 * person clicking quickly should not see an error for it. Longer waits (the per-minute limits)
 * reach the page as the API's words.
 */
function retryThrottled(): Middleware {
  const copies = new Map<string, Request>();
  return {
    onRequest({ request, id }) {
      copies.set(id, request.clone());
      return request;
    },
    async onResponse({ response, id }) {
      const copy = copies.get(id);
      copies.delete(id);
      const wait = Number(response.headers.get("retry-after"));
      if (response.status !== 429 || !copy || !(wait > 0 && wait <= SHORT_WAIT_SECONDS)) return response;
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      return fetch(copy);
    },
  };
}

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
