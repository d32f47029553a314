// The local fleet's front door (`RUNNERS=N npm start`): one address for the Worker, N runner
// processes behind it, as a load balancer would put them in production. A job goes to the
// next runner in turn; one that is full, draining or gone passes it to the one after, so the
// Worker hears "full" only when every runner is. Bodies pass through byte for byte, with the
// Worker's signature headers, so each runner checks the signature itself.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Backend {
  name: string;
  url: string;
  /** Its process group, which /health lists so a test can stop one runner. */
  pid: number | undefined;
}

const FORWARDED = ["content-type", "x-assay-timestamp", "x-assay-signature"];
const MAX_BODY_BYTES = 256 * 1024 * 1024;

export interface Balancer {
  url: string;
  close(): Promise<void>;
}

export async function startBalancer(host: string, port: number, backends: () => Backend[]): Promise<Balancer> {
  let next = 0;

  async function forward(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) return reply(res, 413, { detail: "body too large" });
      chunks.push(chunk as Buffer);
    }
    const body = Buffer.concat(chunks);
    const headers = Object.fromEntries(FORWARDED.flatMap((h) => (typeof req.headers[h] === "string" ? [[h, req.headers[h]]] : [])));
    const all = backends();
    const start = next++;
    let busy: { status: number; retryAfter: string | null; text: string } | null = null;
    for (let i = 0; i < all.length; i++) {
      const backend = all[(start + i) % all.length]!;
      let answer: Response;
      try {
        answer = await fetch(`${backend.url}${path}`, { method: "POST", body, headers, signal: AbortSignal.timeout(25_000) });
      } catch {
        continue;
      }
      const text = await answer.text();
      if (answer.status === 503) {
        busy = { status: 503, retryAfter: answer.headers.get("retry-after"), text };
        continue;
      }
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
      return void res.end(text);
    }
    if (busy) {
      res.writeHead(503, { "content-type": "application/json", ...(busy.retryAfter && { "retry-after": busy.retryAfter }) });
      return void res.end(busy.text);
    }
    reply(res, 502, { detail: "no sandbox runner is reachable" });
  }

  async function health(res: ServerResponse): Promise<void> {
    const runners = await Promise.all(
      backends().map(async (b) => {
        try {
          const r = await fetch(`${b.url}/health`, { signal: AbortSignal.timeout(5000) });
          return { name: b.name, url: b.url, pid: b.pid, ...((await r.json()) as Record<string, unknown>) };
        } catch (e) {
          return { name: b.name, url: b.url, pid: b.pid, status: "unreachable", problem: e instanceof Error ? e.message : String(e) };
        }
      }),
    );
    const live = runners.filter((r) => r.status === "ok" || r.status === "degraded");
    reply(res, live.length > 0 ? 200 : 503, { status: live.length > 0 ? "ok" : "unavailable", runners });
  }

  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://balancer").pathname;
    const work = req.method === "GET" && path === "/health" ? health(res) : req.method === "POST" ? forward(req, res, path) : Promise.resolve(reply(res, 405, { detail: "method not allowed" }));
    work.catch((e: unknown) => {
      if (!res.headersSent) reply(res, 500, { detail: e instanceof Error ? e.message : String(e) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
