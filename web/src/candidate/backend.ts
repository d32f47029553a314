// The API as the candidate's pieces use it: the typed client and a call() that turns failures
// into an ApiError. The workspace uses the signed-in session (a 401 goes through sign-in); the
// IDE session page its own client with the IDE session token, where a 401 is the token's end
// and is shown as it is, never a sign-in.
import type { AssayClient } from "../../../client/src/index";
import { api, call } from "../lib/data";
import { apiError } from "../lib/errors";

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

export interface Backend {
  client: AssayClient;
  call: <T>(request: Promise<Answer<T>>) => Promise<T>;
}

export const sessionBackend: Backend = { client: api, call };

/** Like api.ts's call(), without starting a sign-in on a 401. */
export async function callQuietly<T>(request: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await request;
  } catch {
    throw apiError(0, undefined);
  }
  if (answer.response.ok) return answer.data as T;
  throw apiError(answer.response.status, answer.error, answer.response.headers.get("retry-after"));
}
