import { setTimeout as pause } from "node:timers/promises";
import { type Execution, type RunnerCommand, runnerCommandSchema, type RunnerMessage } from "../../protocol/execution-messages";
import {
  type InteractiveContext, type InteractiveExecution, type InteractiveExit, type InteractiveStatus, type OutputChunk, StdinQueue, startInteractive,
} from "./interactive";
import { reasonOf } from "./job-execution";
import type { Logger } from "./log";
import type { SlotPool } from "./pool";

/**
 * One interactive execution's transport (docs/runner-protocol.md, "Interactive executions: the
 * transport"): the runner dials the execution's Durable Object, waits for a slot, runs the
 * program with `startInteractive` and relays stdin, output and the exit over that socket.
 */

/** Pauses before the second and the third dial when a dial does not open. */
const DIAL_RETRY_DELAYS_MS = [250, 1000];
/** A dial that has not opened by then counts as failed: an object that never answers must not hold the execution. */
const DIAL_TIMEOUT_MS = 10_000;
/** How long the runner waits for the object to answer its close before letting the socket go. */
const CLOSE_TIMEOUT_MS = 5_000;

export const QUEUED_SHUTDOWN_ERROR = "runner shutting down: the execution was still queued and never started";

/** How a session ended: the program's exit status, or `not_connected` when no dial opened (nothing ran). */
export type ExecutionOutcome = InteractiveStatus | "not_connected";

export interface SessionDeps {
  ctx: InteractiveContext;
  pool: Pick<SlotPool, "acquire" | "release">;
  log: Logger;
}

/** Who ended the execution early: the object's `terminate`, its socket going away, or the runner's shutdown. */
type StopReason = "terminated" | "gone" | "shutdown";

// Node's WebSocket (undici) takes request headers in its second argument; the DOM typing knows only protocols.
type DialingWebSocket = new (url: string, init: { headers: Record<string, string> }) => WebSocket;

export class ExecutionSession {
  private socket: WebSocket | null = null;
  private connected = false;
  private exec: InteractiveExecution | null = null;
  private stopReason: StopReason | null = null;
  private exitSent = false;
  /** Withdraws the dial, then the wait for a slot. */
  private readonly waiting = new AbortController();
  /** Stdin the object sends while the execution still waits is kept for the program, in order. */
  private readonly stdin = new StdinQueue();
  private readonly decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  private readonly closed: Promise<void>;
  private markClosed: () => void = () => undefined;

  constructor(
    private readonly execution: Execution,
    private readonly deps: SessionDeps,
  ) {
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
  }

  /** Runs the execution to its end; resolves once its exit was sent and the socket closed (or nothing could be sent). */
  async run(): Promise<ExecutionOutcome> {
    if (!(await this.dial())) {
      this.stdin.discard();
      this.log("execution_finished", { status: "not_connected", stopped_by: this.stopReason });
      return "not_connected";
    }
    this.send({ type: "queued" });
    const exit = await this.execute();
    this.stdin.discard();
    this.report(exit);
    await this.close();
    return exit.status;
  }

  /** Runner shutdown: ends the execution (a queued one never starts) and still sends its exit. */
  shutdown(): void {
    this.stop("shutdown");
  }

  /** True once a socket is open and attached. */
  private async dial(): Promise<boolean> {
    const signal = this.waiting.signal;
    const pauses = [0, ...DIAL_RETRY_DELAYS_MS];
    for (const [attempt, ms] of pauses.entries()) {
      if (ms > 0 && !(await pause(ms, undefined, { signal }).then(() => true, () => false))) return false;
      if (await openSocket(this.execution.connect, signal, (socket) => this.attach(socket))) return true;
      if (signal.aborted) return false;
      if (attempt < pauses.length - 1) this.log("execution_dial_retry", { attempt: attempt + 1 });
    }
    this.log("execution_dial_failed", { attempts: pauses.length });
    return false;
  }

  private attach(socket: WebSocket): void {
    this.socket = socket;
    this.connected = true;
    socket.addEventListener("message", (event) => this.receive(event.data));
    socket.addEventListener("error", () => this.lost());
    socket.addEventListener("close", () => this.lost());
  }

  private lost(): void {
    if (!this.connected) return;
    this.connected = false;
    this.markClosed();
    // The object went away, was reset or gave the execution up: nobody is left to run it for.
    if (!this.exitSent) this.stop("gone");
  }

  private async execute(): Promise<InteractiveExit> {
    const queuedAt = performance.now();
    const { priority, attempt_id: attemptId, org_id: orgId } = this.execution.schedule;
    const slot = await this.deps.pool.acquire({ priority, attemptId, orgId }, this.waiting.signal).catch(() => null);
    if (slot === null) {
      const shutdown = (this.stopReason ?? "shutdown") === "shutdown";
      return shutdown ? notRun("error", QUEUED_SHUTDOWN_ERROR, queuedAt) : notRun("killed", null, queuedAt);
    }
    try {
      return await this.runProgram(slot);
    } finally {
      this.deps.pool.release(slot);
    }
  }

  private runProgram(slot: number): Promise<InteractiveExit> {
    const { command, workspace, limits } = this.execution;
    const startedAt = performance.now();
    return new Promise((resolve) => {
      try {
        this.exec = startInteractive(
          this.deps.ctx,
          {
            snapshot: workspace.snapshot,
            environment: workspace.environment,
            files: workspace.files.map((f) => ({ path: f.path, content: f.delete ? null : Buffer.from(f.content_b64, "base64") })),
            command, limits, slot, stdin: this.stdin,
          },
          {
            onStart: ({ setupMs }) => {
              this.log("execution_started", { slot, setup_ms: setupMs });
              this.send({ type: "started", setup_ms: setupMs });
            },
            onOutput: ({ stream, data }) => this.output(stream, this.decoders[stream].decode(data, { stream: true })),
            onExit: resolve,
          },
        );
      } catch (err) {
        // Refused before anything ran: no usable sandbox, or files larger than the workspace.
        resolve(notRun("error", reasonOf(err), startedAt));
        return;
      }
      // Stopped while the slot was being handed over.
      if (this.stopReason) this.exec.terminate();
    });
  }

  private receive(data: unknown): void {
    if (this.exitSent) return;
    const message = parseMessage(data);
    if (!message.ok) return this.log("execution_message_ignored", { reason: message.reason });
    const { value } = message;
    if (value.type === "terminate") return this.stop("terminated");
    if ("eof" in value) return this.stdin.close();
    const written = this.stdin.write(value.data);
    if (!written.ok) this.send({ type: "stdin_refused", reason: written.reason });
  }

  private stop(reason: StopReason): void {
    if (this.exitSent) return;
    this.stopReason ??= reason;
    this.waiting.abort();
    this.exec?.terminate();
  }

  private output(stream: OutputChunk["stream"], data: string): void {
    if (data) this.send({ type: "output", stream, data });
  }

  private report(exit: InteractiveExit): void {
    // What the decoders still hold is an incomplete character: it goes out as U+FFFD.
    for (const stream of ["stdout", "stderr"] as const) this.output(stream, this.decoders[stream].decode());
    const { status, cause, code, signal, truncated, error, timings } = exit;
    const snake = { setup_ms: timings.setupMs, run_ms: timings.runMs, total_ms: timings.totalMs };
    this.send({ type: "exit", status, cause, code, signal, truncated, error, timings: snake });
    this.exitSent = true;
    this.log("execution_finished", { status, cause, code, signal, truncated, error, timings: snake, stopped_by: this.stopReason, delivered: this.connected });
  }

  private async close(): Promise<void> {
    if (!this.connected) return;
    this.socket?.close(1000);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS)))]);
    clearTimeout(timer);
  }

  private send(message: RunnerMessage): void {
    if (this.connected) this.socket?.send(JSON.stringify(message));
  }

  private log(event: string, fields: Record<string, unknown> = {}): void {
    this.deps.log(event, { execution_id: this.execution.execution_id, ...fields });
  }
}

/**
 * One dial: true once the socket is open, false when it did not open. Node's WebSocket reports a
 * refused upgrade (any non-101 answer) and a connection that failed alike, with an error event
 * and no status. `onOpen` runs inside the open event, so no message the object sends at once is
 * dispatched before the session listens.
 */
function openSocket(connect: Execution["connect"], signal: AbortSignal, onOpen: (socket: WebSocket) => void): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new (WebSocket as unknown as DialingWebSocket)(connect.url, { headers: { authorization: `Bearer ${connect.token}` } });
    let settled = false;
    const settle = (open: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", abandon);
      if (open) onOpen(socket);
      resolve(open);
    };
    // Closing a socket that is still connecting fails it; the error events that follow have no listener left.
    const abandon = () => {
      settle(false);
      socket.close();
    };
    const timer = setTimeout(abandon, DIAL_TIMEOUT_MS);
    signal.addEventListener("abort", abandon, { once: true });
    socket.addEventListener("error", () => settle(false), { once: true });
    socket.addEventListener("open", () => settle(true), { once: true });
  });
}

function parseMessage(data: unknown): { ok: true; value: RunnerCommand } | { ok: false; reason: string } {
  if (typeof data !== "string") return { ok: false, reason: "binary frame" };
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return { ok: false, reason: "not JSON" };
  }
  const parsed = runnerCommandSchema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  // The type alone: stdin payloads are the candidate's and stay out of the logs.
  const type = (json as { type?: unknown } | null)?.type;
  return { ok: false, reason: `not a known message (type ${typeof type === "string" ? JSON.stringify(type.slice(0, 64)) : "missing"})` };
}

/** The exit of an execution that never ran: killed before it started, or refused. */
function notRun(status: "killed" | "error", error: string | null, since: number): InteractiveExit {
  const ms = Math.round(performance.now() - since);
  return {
    status, cause: status === "killed" ? "terminated" : null, code: null, signal: null, truncated: false, error,
    timings: { setupMs: ms, runMs: 0, totalMs: ms },
  };
}
