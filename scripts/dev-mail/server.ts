import { mkdir, rename, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { outboxFileName, OutboxRecordSchema } from "../../src/domain/outbox.js";
import { readBody, sendJson } from "../dev-repohost/http-io.js";

export interface DevMailSinkOptions {
  /** Address to listen on; 127.0.0.1 unless given. */
  host?: string;
  /** Port to listen on; 0 picks a free one (see `url`). */
  port: number;
  /** Directory the messages are written to. */
  outboxDir: string;
}

export interface DevMailSink {
  url: string;
  close(): Promise<void>;
}

const BODY_LIMIT = 1024 * 1024;

/**
 * The dev mail sink: `POST /_dev/outbox` with an outbox record (src/domain/outbox.ts) writes
 * it as `<outboxDir>/<timestamp>-<id>.json`; `GET /health` answers once it listens. The
 * Worker's outbox adapter is its only client; it cannot write files itself.
 */
export async function startDevMailSink(options: DevMailSinkOptions): Promise<DevMailSink> {
  const outboxDir = path.resolve(options.outboxDir);
  await mkdir(outboxDir, { recursive: true });
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      console.error(`dev-mail: ${req.method} ${req.url} failed:`, error);
      if (!res.headersSent) sendJson(res, 500, { detail: "the message could not be written" });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = (req.url ?? "/").split("?")[0];
    if (url === "/health" && req.method === "GET") return sendJson(res, 200, { status: "ok", outbox: outboxDir });
    if (url !== "/_dev/outbox") return sendJson(res, 404, { detail: "not found" });
    if (req.method !== "POST") return sendJson(res, 405, { detail: "POST only" }, { allow: "POST" });
    const body = await readBody(req, BODY_LIMIT);
    if (body === null) return sendJson(res, 413, { detail: `the message is larger than ${BODY_LIMIT} bytes` });
    let json: unknown;
    try {
      json = JSON.parse(body.toString("utf8"));
    } catch {
      return sendJson(res, 400, { detail: "the body is not JSON" });
    }
    const record = OutboxRecordSchema.safeParse(json);
    if (!record.success) {
      return sendJson(res, 422, { detail: record.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`) });
    }
    const file = path.join(outboxDir, outboxFileName(record.data));
    // Written whole, then renamed, so a reader never sees half a message.
    const partial = `${file}.partial`;
    await writeFile(partial, `${JSON.stringify(record.data, null, 2)}\n`);
    await rename(partial, file);
    sendJson(res, 201, { file });
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
