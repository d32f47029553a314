import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { type RawData, type WebSocket as WsSocket, WebSocketServer } from "ws";
import { Changes } from "../../../scripts/lib/wait";
import type { RunnerCommand as ObjectMessage, RunnerMessage } from "../../../protocol/execution-messages";

export const EVENT_TIMEOUT_MS = 20_000;

type ExitMessage = Extract<RunnerMessage, { type: "exit" }>;

/** The object's end of one runner socket: what the runner sent, and waits on it. */
export class RunnerSocket {
  readonly messages: RunnerMessage[] = [];
  /** The close code once the socket is closed (1005 when the runner sent none). */
  readonly closed: Promise<number>;
  private readonly changes = new Changes();
  private over = false;

  constructor(readonly socket: WsSocket) {
    socket.on("message", (data: RawData, binary: boolean) => {
      if (!binary) this.messages.push(JSON.parse(String(data)) as RunnerMessage);
      this.changes.notify();
    });
    this.closed = new Promise((resolve) =>
      socket.on("close", (code: number) => {
        this.over = true;
        this.changes.notify();
        resolve(code);
      }),
    );
  }

  send(message: ObjectMessage): void {
    this.socket.send(JSON.stringify(message));
  }

  /** What the program wrote to `stream` (or both), as the runner decoded it. */
  text(stream?: "stdout" | "stderr"): string {
    return this.outputs(stream).map((m) => m.data).join("");
  }

  outputs(stream?: "stdout" | "stderr"): Array<Extract<RunnerMessage, { type: "output" }>> {
    return this.messages.flatMap((m) => (m.type === "output" && (!stream || m.stream === stream) ? [m] : []));
  }

  /** The first message that matches; fails when the socket closes first or it takes too long. */
  waitFor(what: string, match: (m: RunnerMessage) => boolean): Promise<RunnerMessage> {
    return this.changes.until(() => this.messages.find(match), {
      timeoutMs: EVENT_TIMEOUT_MS,
      ended: () => this.over,
      failure: (closed) => `${closed ? "socket closed before" : "timed out waiting for"} ${what}; messages so far: ${JSON.stringify(this.messages).slice(-2000)}`,
    });
  }

  /** Resolves once the program's output contains `text`. */
  async waitForOutput(text: string, stream?: "stdout" | "stderr"): Promise<void> {
    await this.waitFor(`output ${JSON.stringify(text)}`, () => this.text(stream).includes(text));
  }

  async exit(): Promise<ExitMessage> {
    return (await this.waitFor("exit", (m) => m.type === "exit")) as ExitMessage;
  }
}

interface Expected {
  token: string;
  used: boolean;
  /** Answer every upgrade with this status instead of 101. */
  refuseWith: number | null;
  /** Sent the moment the runner's socket is accepted, as the object sends stdin typed before the runner came. */
  pending: ObjectMessage[];
}

/**
 * Stands in for the executions' Durable Objects: accepts each execution's runner socket at
 * `/executions/<id>/ws` once, with its bearer token (a replayed token is refused 409, a wrong
 * one 401), and counts the upgrade attempts it saw.
 */
export class FakeExecutionObject {
  readonly attempts = new Map<string, number>();
  url = "";
  private readonly expected = new Map<string, Expected>();
  private readonly sockets = new Map<string, RunnerSocket>();
  private readonly waiters = new Map<string, Array<(socket: RunnerSocket) => void>>();
  private readonly server = new WebSocketServer({ port: 0, host: "127.0.0.1", verifyClient: (info, done) => done(...this.verify(info.req)) });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.once("listening", () => resolve()));
    this.url = `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.server.on("connection", (socket, req) => {
      const id = executionOf(req) as string;
      const runner = new RunnerSocket(socket);
      for (const message of this.expected.get(id)?.pending ?? []) runner.send(message);
      this.sockets.set(id, runner);
      for (const w of this.waiters.get(id) ?? []) w(runner);
      this.waiters.delete(id);
    });
    return this;
  }

  async stop(): Promise<void> {
    for (const client of this.server.clients) client.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The `connect` field of an execution, with a fresh single-use token. */
  connect(executionId: string, options: { refuseWith?: number; pending?: ObjectMessage[] } = {}): { url: string; token: string } {
    const token = randomBytes(16).toString("hex");
    this.expected.set(executionId, { token, used: false, refuseWith: options.refuseWith ?? null, pending: options.pending ?? [] });
    return { url: `${this.url}/executions/${executionId}/ws`, token };
  }

  /** The runner's socket for the execution, once it has dialed in. */
  connection(executionId: string): Promise<RunnerSocket> {
    const socket = this.sockets.get(executionId);
    if (socket) return Promise.resolve(socket);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the runner never dialed in for ${executionId}`)), EVENT_TIMEOUT_MS);
      this.waiters.set(executionId, [
        ...(this.waiters.get(executionId) ?? []),
        (s) => {
          clearTimeout(timer);
          resolve(s);
        },
      ]);
    });
  }

  private verify(req: IncomingMessage): [boolean, number?] {
    const id = executionOf(req);
    if (id === null) return [false, 404];
    this.attempts.set(id, (this.attempts.get(id) ?? 0) + 1);
    const expected = this.expected.get(id);
    if (!expected) return [false, 404];
    if (expected.refuseWith !== null) return [false, expected.refuseWith];
    if (req.headers.authorization !== `Bearer ${expected.token}`) return [false, 401];
    if (expected.used) return [false, 409];
    expected.used = true;
    return [true];
  }
}

function executionOf(req: IncomingMessage): string | null {
  return /^\/executions\/([A-Za-z0-9_-]+)\/ws$/.exec(req.url ?? "")?.[1] ?? null;
}
