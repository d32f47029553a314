import type { IncomingMessage, ServerResponse } from "node:http";

export type Headers = Record<string, string>;

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Headers = {}): void {
  const payload = Buffer.from(JSON.stringify(body, null, 2));
  res.writeHead(status, { ...headers, "content-type": "application/json; charset=utf-8", "content-length": String(payload.length) });
  res.end(payload);
}

export function sendBytes(res: ServerResponse, status: number, contentType: string, body: Buffer | string, headers: Headers = {}): void {
  const payload = typeof body === "string" ? Buffer.from(body) : body;
  res.writeHead(status, { ...headers, "content-type": contentType, "content-length": String(payload.length) });
  res.end(payload);
}

/** Reads a request body up to a limit; null when it is larger. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * The path's segments, percent-decoded one by one so that an encoded "/" stays inside its
 * segment (and then fails name validation) instead of becoming a separator. Null when a
 * segment is not valid percent-encoding.
 */
export function pathSegments(pathname: string): string[] | null {
  try {
    return pathname.split("/").slice(1).map((segment) => decodeURIComponent(segment));
  } catch {
    return null;
  }
}

/** Credentials of `Authorization: token X` or `Bearer X`; an unreadable header is a credential no repository accepts. */
export type Credentials = { kind: "anonymous" } | { kind: "token"; token: string };

export function readCredentials(req: IncomingMessage): Credentials {
  const header = req.headers.authorization;
  if (header === undefined) return { kind: "anonymous" };
  const match = /^(?:token|bearer)\s+(\S+)\s*$/i.exec(header);
  return { kind: "token", token: match?.[1] ?? "" };
}
