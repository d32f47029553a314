/**
 * Browser tickets for WebSocket routes (docs/api.md, "WebSocket authentication"). A browser
 * cannot set `Authorization` on a WebSocket, so it first asks for a ticket over HTTPS with its
 * Bearer token and puts the ticket in the socket URL (`?ticket=`). A ticket names one user (as
 * the token that minted it saw them), one socket resource, lives a minute, and is taken once:
 * the Durable Object behind the resource keeps the ids it has accepted until they expire.
 */
import { constantTimeEqual, hmacSha256Hex } from "../lib/hmac";
import type { Role, Viewer } from "../domain/roles";

const WS_TICKET_PREFIX = "wst_";

export interface WsTicketClaims {
  viewer: Viewer;
  /** The socket the ticket opens, e.g. `code-execution:exe_…`. */
  resource: string;
  /** Unix seconds. */
  expiresAt: number;
  /** The ticket's id: the object refuses a second socket with it. */
  id: string;
}

interface Payload {
  sub: string;
  role: Role;
  org: string | null;
  res: string;
  exp: number;
  jti: string;
}

const toBase64Url = (text: string) =>
  btoa(String.fromCharCode(...new TextEncoder().encode(text))).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
const fromBase64Url = (text: string) =>
  new TextDecoder().decode(Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0)));
const macOf = (secret: string, body: string) => hmacSha256Hex(secret, `assay-ws-ticket\n${body}`);

export async function mintWsTicket(secret: string, viewer: Viewer, resource: string, lifetimeSeconds: number, nowMs = Date.now()) {
  const payload: Payload = {
    sub: viewer.userId,
    role: viewer.role,
    org: viewer.orgId ?? null,
    res: resource,
    exp: Math.floor(nowMs / 1000) + lifetimeSeconds,
    jti: crypto.randomUUID(),
  };
  const body = toBase64Url(JSON.stringify(payload));
  return { ticket: `${WS_TICKET_PREFIX}${body}.${await macOf(secret, body)}`, expiresAt: new Date(payload.exp * 1000).toISOString() };
}

/** The claims of a good ticket for `resource`; the reason it is refused otherwise. */
export async function readWsTicket(
  secret: string,
  ticket: string,
  resource: string,
  nowMs = Date.now(),
): Promise<{ ok: true; claims: WsTicketClaims } | { ok: false; reason: string }> {
  const match = /^wst_([A-Za-z0-9_-]{1,2048})\.([0-9a-f]{64})$/.exec(ticket);
  if (!match) return { ok: false, reason: "Malformed ticket" };
  const [, body, mac] = match as unknown as [string, string, string];
  if (!constantTimeEqual(await macOf(secret, body), mac)) return { ok: false, reason: "Invalid ticket" };
  const payload = JSON.parse(fromBase64Url(body)) as Payload;
  if (payload.res !== resource) return { ok: false, reason: "This ticket is for another socket" };
  if (payload.exp * 1000 <= nowMs) return { ok: false, reason: "The ticket has expired; ask for a new one" };
  return {
    ok: true,
    claims: {
      viewer: { userId: payload.sub, role: payload.role, orgId: payload.org ?? undefined },
      resource: payload.res,
      expiresAt: payload.exp,
      id: payload.jti,
    },
  };
}
