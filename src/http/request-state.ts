/** What the middleware learns about a request for its log line. */
export interface RequestState {
  requestId: string;
  userId?: string;
}

const states = new WeakMap<Request, RequestState>();

export function requestState(request: Request): RequestState {
  let state = states.get(request);
  if (!state) {
    state = { requestId: "" };
    states.set(request, state);
  }
  return state;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A client's X-Request-Id is kept when it is a sane token; otherwise the request's Ray ID, which
 * Cloudflare sets at its edge and Workers Logs records with the invocation, so that the id a
 * client quotes finds the request there; otherwise (no Cloudflare in front) one is generated.
 */
export function requestIdFor(request: Request): string {
  for (const header of ["x-request-id", "cf-ray"]) {
    const value = request.headers.get(header);
    if (value && REQUEST_ID.test(value)) return value;
  }
  return crypto.randomUUID();
}
