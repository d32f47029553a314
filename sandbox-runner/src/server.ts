import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { defaultConfig, type RunnerConfigInput } from "./config";
import { jobSchema } from "./job-schema";
import { createLogger } from "./log";
import { RunnerService } from "./runner-service";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verify } from "./signing";

const MAX_BODY_BYTES = 256 * 1024 * 1024;

export interface RunningRunner {
  url: string;
  /** Graceful: stops intake, reports unfinished jobs as ERROR, then closes the listener. */
  close(): Promise<void>;
  health(): ReturnType<RunnerService["health"]>;
}

class BodyTooLarge extends Error {}

export async function startRunner(input: RunnerConfigInput): Promise<RunningRunner> {
  const config = defaultConfig(input);
  const log = createLogger(config.logSink);
  const service = new RunnerService(config, log);
  await service.init();

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log("request_error", { method: req.method, path: req.url, error: err instanceof Error ? err.message : String(err) });
      if (!res.headersSent) send(res, err instanceof BodyTooLarge ? 413 : 500, { detail: err instanceof BodyTooLarge ? "body too large" : "internal error" });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://runner").pathname;
    if (path === "/health" && req.method === "GET") return send(res, 200, service.health());
    if (path !== "/jobs") return send(res, 404, { detail: "not found" });
    if (req.method !== "POST") return send(res, 405, { detail: "method not allowed" });

    const body = await readBody(req);
    const verdict = verify(config.secret, header(req, TIMESTAMP_HEADER), header(req, SIGNATURE_HEADER), body);
    if (!verdict.ok) {
      log("job_refused", { reason: verdict.reason, remote: req.socket.remoteAddress });
      return send(res, 401, { detail: verdict.reason });
    }
    let json: unknown;
    try {
      json = JSON.parse(body.toString("utf8"));
    } catch {
      return send(res, 422, { detail: [{ loc: ["body"], msg: "body is not valid JSON", type: "json_invalid" }] });
    }
    const parsed = jobSchema.safeParse(json);
    if (!parsed.success) {
      const detail = parsed.error.issues.map((i) => ({ loc: ["body", ...i.path.map((p) => (typeof p === "number" ? p : String(p)))], msg: i.message, type: i.code }));
      return send(res, 422, { detail });
    }
    const outcome = await service.submit(parsed.data);
    if (outcome.status === 503) return send(res, 503, { detail: "runner is shutting down" });
    return send(res, outcome.status, { job_id: parsed.data.job_id, status: outcome.state });
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  log("runner_listening", { url, pool_size: config.poolSize, work_dir: config.workDir, sandbox: service.health().sandbox.isolation });

  let closing: Promise<void> | null = null;
  return {
    url,
    health: () => service.health(),
    close: () => {
      closing ??= (async () => {
        await service.shutdown();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
