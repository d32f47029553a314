import { createHash } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { Callback } from "../../../protocol/callback";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifySignature } from "../../../protocol/signing";

interface Waiter {
  resolve: (cb: Callback) => void;
}

/**
 * Stands in for the Worker: serves blobs, takes PUT uploads, and records signed callbacks.
 * Callbacks with a bad signature are answered 401 and not recorded.
 */
export class FakeWorker {
  readonly blobs = new Map<string, Buffer>();
  readonly uploads = new Map<string, Buffer>();
  readonly callbacks = new Map<string, Callback[]>();
  readonly downloads = new Map<string, number>();
  /** Answer this many callbacks with 503 before accepting, to exercise retries. */
  failCallbacks = 0;
  /** Refuse callbacks whose status is not ERROR with 422, as the Worker refuses a result its schema does not take. */
  refuseResults = false;
  callbackAttempts = 0;
  /** Signed heartbeats and hand-backs received at /leases, in order. */
  readonly heartbeats: { runner_id: string; held: string[]; released: string[] }[] = [];
  /** Held jobs the heartbeats' answers call lost (no longer the runner's). */
  readonly lostJobs = new Set<string>();
  private readonly waiters = new Map<string, Waiter[]>();
  private readonly releaseWaiters = new Map<string, () => void>();
  private server = createServer((req, res) => void this.handle(req).then(([status, body]) => res.writeHead(status).end(body)));
  url = "";

  constructor(private readonly secret: string) {}

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  /** Serves `body` and returns its URL and digest, as a job's snapshot/environment field. */
  blob(name: string, body: Buffer): { url: string; sha256: string } {
    this.blobs.set(name, body);
    return { url: `${this.url}/blobs/${name}`, sha256: createHash("sha256").update(body).digest("hex") };
  }

  callback(jobId: string): Promise<Callback> {
    const done = this.callbacks.get(jobId)?.[0];
    if (done) return Promise.resolve(done);
    return new Promise((resolve) => this.waiters.set(jobId, [...(this.waiters.get(jobId) ?? []), { resolve }]));
  }

  /** The job's lease URL and a heartbeat interval, for a job that can be handed back. */
  lease(intervalMs = 200): { url: string; interval_ms: number } {
    return { url: `${this.url}/leases`, interval_ms: intervalMs };
  }

  /** Resolves once the runner has handed the job back. */
  released(jobId: string): Promise<void> {
    if (this.heartbeats.some((h) => h.released.includes(jobId))) return Promise.resolve();
    return new Promise((resolve) => this.releaseWaiters.set(jobId, resolve));
  }

  private async handle(req: IncomingMessage): Promise<[number, string | Buffer]> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const path = req.url ?? "/";
    if (req.method === "GET" && path.startsWith("/blobs/")) {
      const name = path.slice(7);
      this.downloads.set(name, (this.downloads.get(name) ?? 0) + 1);
      return this.blobs.has(name) ? [200, this.blobs.get(name) as Buffer] : [404, "missing"];
    }
    if (req.method === "PUT" && path.startsWith("/uploads/")) {
      this.uploads.set(path.slice(9), body);
      return [200, ""];
    }
    if (req.method === "POST" && path === "/callback") {
      this.callbackAttempts++;
      const ts = req.headers[TIMESTAMP_HEADER.toLowerCase()] as string | undefined;
      const sig = req.headers[SIGNATURE_HEADER.toLowerCase()] as string | undefined;
      if (!(await verifySignature(this.secret, ts, sig, body)).ok) return [401, "bad signature"];
      if (this.failCallbacks > 0) {
        this.failCallbacks--;
        return [503, "try later"];
      }
      const cb = JSON.parse(body.toString("utf8")) as Callback;
      if (this.refuseResults && cb.status !== "ERROR") {
        return [422, JSON.stringify({ detail: [{ loc: ["body", "coverage", "percent"], msg: "Too big: expected number to be <=100", type: "too_big" }] })];
      }
      this.callbacks.set(cb.job_id, [...(this.callbacks.get(cb.job_id) ?? []), cb]);
      for (const w of this.waiters.get(cb.job_id) ?? []) w.resolve(cb);
      this.waiters.delete(cb.job_id);
      return [200, "{}"];
    }
    if (req.method === "POST" && path === "/leases") {
      const ts = req.headers[TIMESTAMP_HEADER.toLowerCase()] as string | undefined;
      const sig = req.headers[SIGNATURE_HEADER.toLowerCase()] as string | undefined;
      if (!(await verifySignature(this.secret, ts, sig, body)).ok) {
        return [401, "bad signature"];
      }
      const beat = JSON.parse(body.toString("utf8")) as (typeof this.heartbeats)[number];
      this.heartbeats.push(beat);
      for (const id of beat.released) this.releaseWaiters.get(id)?.();
      const lost = beat.held.filter((id) => this.lostJobs.has(id));
      return [200, JSON.stringify({ renewed: beat.held.filter((id) => !lost.includes(id)), lost })];
    }
    return [404, "not found"];
  }
}
