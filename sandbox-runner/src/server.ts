import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { z } from "zod";
import { jobSchema } from "../../protocol/jobs";
import { checkSignatureHeaders, SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyBody } from "../../protocol/signing";
import { defaultConfig, type RunnerConfigInput } from "./config";
import { executionSchema } from "./execution-schema";
import { createLogger } from "./log";
import { type Busy, RunnerService } from "./runner-service";

const MAX_BODY_BYTES = 256 * 1024 * 1024;

export interface RunningRunner {
  url: string;
  /** Graceful: stops intake, drains (hands back or reports what it cannot finish), then closes the listener. */
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
      if (!res.headersSent) send(res, 500, { detail: "internal error" });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://runner").pathname;
    if (path === "/health" && req.method === "GET") return send(res, 200, service.health());
    const what = path === "/jobs" ? "job" : path === "/executions" ? "execution" : null;
    if (!what) return send(res, 404, { detail: "not found" });
    if (req.method !== "POST") return send(res, 405, { detail: "method not allowed" });
    const body = await readSigned(req, res, what);
    if (!body) return;
    return what === "job" ? submitJob(res, body.json) : submitExecution(res, body.json);
  }

  async function submitJob(res: ServerResponse, json: unknown): Promise<void> {
    const job = validate(jobSchema, json, res);
    if (!job) return;
    const outcome = await service.submit(job);
    if (outcome.status === 503) return busy(res, outcome);
    return send(res, outcome.status, { job_id: job.job_id, status: outcome.state, runner_id: service.runnerId });
  }

  async function submitExecution(res: ServerResponse, json: unknown): Promise<void> {
    const execution = validate(executionSchema, json, res);
    if (!execution) return;
    const outcome = await service.startExecution(execution);
    if (outcome.status === 503) return busy(res, outcome);
    return send(res, outcome.status, { execution_id: execution.execution_id, status: "accepted" });
  }

  /**
   * The signed body, parsed, or null once a refusal was answered. Nothing of an
   * unauthenticated body is read: the headers are checked first, a declared size over the cap
   * is refused at once, and the connection is closed on every refusal.
   */
  async function readSigned(req: IncomingMessage, res: ServerResponse, what: "job" | "execution"): Promise<{ json: unknown } | null> {
    // The clock is read once, before the body: a body that is slow to arrive is not judged later.
    const headers = checkSignatureHeaders(header(req, TIMESTAMP_HEADER), header(req, SIGNATURE_HEADER));
    if (!headers.ok) return refuse(req, res, what, 401, headers.reason);
    if (Number(req.headers["content-length"] ?? 0) > MAX_BODY_BYTES) return refuse(req, res, what, 413, "body too large");
    let body: Buffer;
    try {
      body = await readBody(req);
    } catch (err) {
      if (err instanceof BodyTooLarge) return refuse(req, res, what, 413, "body too large");
      throw err;
    }
    const verdict = await verifyBody(config.secret, headers, body);
    if (!verdict.ok) return refuse(req, res, what, 401, verdict.reason);
    try {
      return { json: JSON.parse(body.toString("utf8")) as unknown };
    } catch {
      send(res, 422, { detail: [{ loc: ["body"], msg: "body is not valid JSON", type: "json_invalid" }] });
      return null;
    }
  }

  function refuse(req: IncomingMessage, res: ServerResponse, what: "job" | "execution", status: 401 | 413, reason: string): null {
    log(`${what}_refused`, { reason, remote: req.socket.remoteAddress });
    send(res, status, { detail: reason }, true);
    // What the client still sends is dropped with the connection, not read.
    res.on("finish", () => req.socket.destroy());
    return null;
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  const { isolation, limits } = service.health().sandbox;
  log("runner_listening", { url, pool_size: service.health().pool.capacity, work_dir: config.workDir, sandbox: isolation, limits });

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

/** "Not now": the Worker's queue offers the job again after `Retry-After`, to this runner or another. */
function busy(res: ServerResponse, outcome: Busy): void {
  const detail = outcome.reason === "full" ? "runner is full" : "runner is shutting down";
  send(res, 503, { detail, reason: outcome.reason }, false, { "retry-after": String(outcome.retryAfterSeconds) });
}

/** The parsed body, or null once the 422 is answered. */
function validate<S extends z.ZodType>(schema: S, json: unknown, res: ServerResponse): z.output<S> | null {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const detail = parsed.error.issues.map((i) => ({ loc: ["body", ...i.path.map((p) => (typeof p === "number" ? p : String(p)))], msg: i.message, type: i.code }));
  send(res, 422, { detail });
  return null;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** Reads the body under the cap; its signature is checked once it is all there. */
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

function send(res: ServerResponse, status: number, body: unknown, close = false, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...(close && { connection: "close" }), ...headers });
  res.end(text);
}
