import { readWsTicket } from "./ws-tickets";
import type { Viewer } from "../domain/roles";
import type { Env } from "../env";
import { authenticate, Caller, signedIn } from "./auth";
import { HttpError } from "./errors";

export interface SocketCredential {
  viewer: Viewer;
  /** The browser ticket the socket came with: the object behind it takes each id once. */
  ticket: { id: string; expiresMs: number } | null;
}

/**
 * Who opens a WebSocket (docs/api.md, "WebSocket authentication"): a browser ticket for this
 * socket's `resource` in `?ticket=`, or else the session JWT as for every other route.
 */
export async function authenticateSocket(request: Request, env: Env, resource: string): Promise<SocketCredential> {
  const ticket = new URL(request.url).searchParams.get("ticket");
  if (ticket !== null) {
    const read = await readWsTicket(env.URL_SIGNING_SECRET, ticket, resource);
    if (!read.ok) throw HttpError.unauthorized(read.reason);
    return { viewer: read.claims.viewer, ticket: { id: read.claims.id, expiresMs: read.claims.expiresAt * 1000 } };
  }
  const caller = await authenticate(request, env, signedIn("candidate"));
  if (!(caller instanceof Caller)) throw new Error("socket route without caller");
  return { viewer: caller.viewer, ticket: null };
}

/** 426 unless the request asks for a WebSocket. */
export function requireUpgrade(request: Request): void {
  if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") {
    throw new HttpError(426, "This is a WebSocket endpoint: send an upgrade request", { Upgrade: "websocket" });
  }
}

/** A Durable Object's answer to a socket handed to it: its 101, or its refusal as the API's error. */
export async function socketAnswer(response: Response): Promise<Response> {
  if (response.status === 101) return response;
  const { detail } = (await response.json()) as { detail: string };
  throw new HttpError(response.status, detail);
}

/** The `ws:`/`wss:` address of a socket route `path` on the host the request came to. */
export function socketUrl(request: Request, path: string): string {
  const url = new URL(path, request.url);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.toString();
}
