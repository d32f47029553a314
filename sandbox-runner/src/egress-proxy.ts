import { lookup } from "node:dns/promises";
import { chmod, rm } from "node:fs/promises";
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { BlockList, connect, isIP, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "./log";

/** Host and port a prepare job may reach, from the configured registry URLs. */
export interface EgressTarget {
  host: string;
  port: number;
}

/**
 * Addresses never reached by name: loopback, link-local (cloud metadata), private ranges,
 * carrier-grade NAT, unspecified and multicast. A registry configured by one of these
 * addresses itself (a local registry in development) is reached, but only that host and port.
 */
const INTERNAL = new BlockList();
for (const [net, prefix] of [["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12], ["192.168.0.0", 16], ["224.0.0.0", 3]] as const) {
  INTERNAL.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [["::", 128], ["::1", 128], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8]] as const) {
  INTERNAL.addSubnet(net, prefix, "ipv6");
}

export function isInternalAddress(address: string): boolean {
  // An IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return isInternalAddress(mapped);
  const family = isIP(address);
  if (family === 0) return true;
  return INTERNAL.check(address, family === 4 ? "ipv4" : "ipv6");
}

/** The origins of the registry URLs, plus `extraHosts` (`host` or `host:port`, https by default). */
export function egressTargets(registryUrls: string[], extraHosts: string[]): EgressTarget[] {
  const targets: EgressTarget[] = [];
  const add = (host: string, port: number) => {
    const clean = host.replace(/^\[|\]$/g, "").toLowerCase();
    if (!targets.some((t) => t.host === clean && t.port === port)) targets.push({ host: clean, port });
  };
  for (const raw of registryUrls) {
    const url = new URL(raw);
    add(url.hostname, Number(url.port || (url.protocol === "https:" ? 443 : 80)));
  }
  for (const entry of extraHosts) {
    const url = new URL(`https://${entry}`);
    add(url.hostname, Number(url.port || 443));
  }
  return targets;
}

type Decision = { ok: true; address: string } | { ok: false; reason: string };

/**
 * The one egress a prepare job has: an HTTP proxy (CONNECT for https, absolute-form requests
 * for http) on a Unix socket bound into its sandbox, which has no network interface but
 * loopback. Only the allowed registries' hosts and ports are reached, each at an address
 * resolved here and checked, so a name that resolves to loopback or to cloud metadata does
 * not get through either.
 */
export class EgressProxy {
  private readonly sockets = new Set<Socket | Duplex>();
  /** Every refusal's reason so far, each naming its host, in order: what a failed install tried to reach. */
  readonly refusals: string[] = [];

  private constructor(
    private readonly server: Server,
    readonly socketPath: string,
  ) {}

  static async start(socketPath: string, allowed: EgressTarget[], log: Logger, context: Record<string, unknown>): Promise<EgressProxy> {
    const decide = async (host: string, port: number): Promise<Decision> => {
      const name = host.replace(/^\[|\]$/g, "").toLowerCase();
      if (!allowed.some((t) => t.host === name && t.port === port)) return { ok: false, reason: `${name}:${port} is not an allowed package registry` };
      if (isIP(name) !== 0) return { ok: true, address: name };
      const addresses = await lookup(name, { all: true }).catch(() => []);
      const external = addresses.find((a) => !isInternalAddress(a.address));
      if (name === "localhost" && addresses[0]) return { ok: true, address: addresses[0].address };
      if (!external) return { ok: false, reason: `${name} does not resolve to a public address` };
      return { ok: true, address: external.address };
    };
    const refuse = (what: string, reason: string) => {
      proxy.refusals.push(reason);
      log("egress_refused", { ...context, target: what, reason });
    };

    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      void (async () => {
        let url: URL;
        try {
          url = new URL(req.url ?? "");
          if (url.protocol !== "http:") throw new Error("not http");
        } catch {
          res.writeHead(400).end("absolute http:// URLs only; use CONNECT for https\n");
          return;
        }
        const port = Number(url.port || 80);
        const decision = await decide(url.hostname, port);
        if (!decision.ok) {
          refuse(`${url.hostname}:${port}`, decision.reason);
          res.writeHead(403, { "content-type": "text/plain" }).end(`egress refused: ${decision.reason}\n`);
          return;
        }
        const headers = { ...req.headers };
        delete headers["proxy-connection"];
        delete headers["proxy-authorization"];
        const upstream = httpRequest({ host: decision.address, port, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        upstream.on("error", (err) => {
          if (!res.headersSent) res.writeHead(502).end(`upstream error: ${err.message}\n`);
          else res.destroy();
        });
        req.pipe(upstream);
      })();
    });
    server.on("connect", (req: IncomingMessage, client: Duplex, head: Buffer) => {
      void (async () => {
        client.on("error", () => undefined);
        const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(req.url ?? "");
        if (!match) {
          client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
          return;
        }
        const [host, port] = [match[1] as string, Number(match[2])];
        const decision = await decide(host, port);
        if (!decision.ok) {
          refuse(`${host}:${port}`, decision.reason);
          client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\negress refused: ${decision.reason}\n`);
          return;
        }
        const upstream = connect({ host: decision.address, port }, () => {
          client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
          if (head.length > 0) upstream.write(head);
          upstream.pipe(client);
          client.pipe(upstream);
        });
        upstream.on("error", () => client.destroy());
        client.on("close", () => upstream.destroy());
      })();
    });
    const proxy = new EgressProxy(server, socketPath);
    server.on("connection", (s: Socket) => {
      proxy.sockets.add(s);
      s.on("close", () => proxy.sockets.delete(s));
    });
    await rm(socketPath, { force: true });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => resolve());
    });
    // The sandbox's uid differs from the runner's; the socket is reachable only through the bind.
    await chmod(socketPath, 0o666);
    return proxy;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.socketPath, { force: true });
  }
}
