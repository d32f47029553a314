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

/** A client's X-Request-Id is kept when it is a sane token; otherwise one is generated. */
export function requestIdFor(request: Request): string {
  const given = request.headers.get("x-request-id");
  return given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
}
