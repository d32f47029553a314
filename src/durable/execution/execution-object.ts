import { DurableObject } from "cloudflare:workers";
import { PING, PONG } from "../../../protocol/socket-messages";
import { database } from "../../db/client";
import { endExecution } from "../../db/executions.queries";
import {
  CLOSE_CODES,
  clientEffect,
  EXECUTION_LIMITS,
  exitByObject,
  exitFromRunner,
  isFinalExecutionStatus,
  parseRunnerMessage,
  type ExecutionExit,
  type ExecutionStatus,
  type RunnerCommand,
  type RunnerMessage,
  type ServerMessage,
  type WatcherRole,
} from "../../domain/executions";
import type { Env } from "../../env";
import { log } from "../../lib/log";
import { appendChunk, chunksAfter, exitOf, nextSeq, readExecution, SCHEMA, type ExecutionRowData } from "./execution-storage";
import { takeTicketHeader, TICKET_HEADER } from "../socket-tickets";

/** The ExecutionDO of an execution: one per execution id. */
export function executionObject(env: Env, executionId: string): DurableObjectStub<ExecutionDO> {
  return env.EXECUTIONS.get(env.EXECUTIONS.idFromName(executionId)) as unknown as DurableObjectStub<ExecutionDO>;
}

/** How the Worker hands a socket to the object: who is on the other end, checked by the Worker. */
export const SOCKET_HEADERS = {
  /** "owner" or "staff" for a client socket. */
  role: "X-Assay-Role",
  /** `<ticket id>:<expiry ms>` when the client came with a browser ticket. */
  ticket: TICKET_HEADER,
  /** The nonce of the runner's connect token. */
  nonce: "X-Assay-Nonce",
} as const;

export interface ExecutionInit {
  id: string;
  timeoutSeconds: number;
  connectNonce: string;
}

export interface ExecutionSummary {
  status: ExecutionStatus;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  next_seq: number;
  output_bytes: number;
  exit: ExecutionExit | null;
}

type Attachment = { kind: "client"; role: WatcherRole } | { kind: "runner" };

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const utf8Bytes = (text: string) => new TextEncoder().encode(text).byteLength;

/**
 * Brokers one live execution (docs/api.md, "Live code execution"): the clients' sockets on
 * one side, the runner's dial-in socket on the other, both accepted with the Hibernation API
 * so the object sleeps between messages. Everything it needs after waking is in its SQLite:
 * the state, the output for replay, stdin sent before the runner came, used tickets.
 * Alarms: the runner's arrival, the deadline's backstop, and forgetting after retention.
 */
export class ExecutionDO extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(SCHEMA);
    // Keep-alives answered without waking the object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PING, PONG));
  }

  /** Sets the execution up to wait for its runner; answers the state it starts in, so the caller need not ask for it. */
  async init(init: ExecutionInit): Promise<ExecutionSummary> {
    if (readExecution(this.sql)) throw new Error(`execution ${init.id} exists already`);
    const now = Date.now();
    this.sql.exec(
      "INSERT INTO execution (id, status, timeout_seconds, created_ms, connect_nonce) VALUES (?, 'starting', ?, ?, ?)",
      init.id,
      init.timeoutSeconds,
      now,
      init.connectNonce,
    );
    await this.ctx.storage.setAlarm(now + EXECUTION_LIMITS.connectSeconds * 1000);
    return { status: "starting", created_at: new Date(now).toISOString(), started_at: null, ended_at: null, next_seq: 0, output_bytes: 0, exit: null };
  }

  async summary(): Promise<ExecutionSummary | null> {
    const row = readExecution(this.sql);
    if (!row) return null;
    return {
      status: row.status,
      created_at: new Date(row.created_ms).toISOString(),
      started_at: iso(row.started_ms),
      ended_at: iso(row.ended_ms),
      next_seq: nextSeq(this.sql),
      output_bytes: row.output_bytes,
      exit: exitOf(row),
    };
  }

  /** Ends an execution the runner never took (the dispatch failed): `error`, with the reason. */
  async abandon(detail: string): Promise<void> {
    const row = readExecution(this.sql);
    if (!row || isFinalExecutionStatus(row.status)) return;
    await this.finish(row, { ...exitByObject("runner_missing", Date.now() - row.created_ms), detail });
  }

  override async fetch(request: Request): Promise<Response> {
    const row = readExecution(this.sql);
    if (!row) return text(404, "No such execution");
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return text(426, "Expected a WebSocket upgrade");
    const path = new URL(request.url).pathname;
    if (path === "/runner") return this.acceptRunner(row, request.headers.get(SOCKET_HEADERS.nonce) ?? "");
    if (path === "/client") return this.acceptClient(row, request);
    return text(404, "No such socket");
  }

  private acceptRunner(row: ExecutionRowData, nonce: string): Response {
    if (nonce !== row.connect_nonce) return text(401, "Not this execution's connect token");
    if (row.runner_joined) return text(409, "A runner has already joined this execution: connect tokens are single-use");
    if (isFinalExecutionStatus(row.status)) return text(410, `The execution has ended (${row.status}); run nothing`);
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server, ["runner"]);
    server.serializeAttachment({ kind: "runner" } satisfies Attachment);
    this.sql.exec("UPDATE execution SET runner_joined = 1");
    // What the owner typed before the runner came goes first, in order.
    for (const { message } of this.sql.exec<{ message: string }>("SELECT message FROM pending ORDER BY n").toArray()) server.send(message);
    this.sql.exec("DELETE FROM pending");
    return new Response(null, { status: 101, webSocket: client });
  }

  private acceptClient(row: ExecutionRowData, request: Request): Response {
    const role: WatcherRole = request.headers.get(SOCKET_HEADERS.role) === "owner" ? "owner" : "staff";
    if (!takeTicketHeader(this.sql, request.headers.get(SOCKET_HEADERS.ticket), Date.now())) {
      return text(401, "This ticket has been used already; ask for a new one");
    }
    if (this.ctx.getWebSockets("client").length >= EXECUTION_LIMITS.sockets) {
      return text(429, `At most ${EXECUTION_LIMITS.sockets} sockets may watch one execution`);
    }
    const afterSeq = Number(new URL(request.url).searchParams.get("after_seq") ?? "-1");
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    const exit = exitOf(row);
    // A socket to an ended execution only replays and closes: nothing to hibernate through. The
    // runtime keeps the connection of a hibernatable socket closed before its upgrade response
    // about 10 s past the close handshake (docs/api.md); a standard one ends with the handshake.
    if (exit) server.accept();
    else {
      this.ctx.acceptWebSocket(server, ["client"]);
      server.serializeAttachment({ kind: "client", role } satisfies Attachment);
    }
    send(server, { type: "hello", execution_id: row.id, status: row.status, role, next_seq: nextSeq(this.sql), replay_from: afterSeq + 1 });
    for (const chunk of chunksAfter(this.sql, afterSeq)) send(server, { type: chunk.stream, seq: chunk.seq, data: chunk.data });
    if (exit) {
      send(server, { type: "exit", ...exit });
      server.close(CLOSE_CODES.ended, "execution ended");
    }
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const row = readExecution(this.sql);
    const attachment = ws.deserializeAttachment() as Attachment | null;
    if (!row || !attachment) return;
    if (attachment.kind === "runner") return this.fromRunner(row, message);
    const effect = clientEffect(message, attachment.role, row.status);
    if (effect.kind === "error") return send(ws, { type: "error", detail: effect.detail });
    if (effect.messages.some((m) => m.type === "terminate") && !row.runner_joined) {
      // Nothing runs yet: the runner that dials in later is refused and starts nothing.
      return this.finish(row, exitByObject("terminated", Date.now() - row.created_ms));
    }
    for (const command of effect.messages) this.toRunner(ws, command);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    await this.socketGone(ws);
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, reason);
    } catch {
      // Already closed on our side.
    }
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    await this.socketGone(ws);
  }

  /** The runner's arrival, the deadline's backstop, the D1 end's retry, and forgetting after retention. */
  override async alarm(): Promise<void> {
    const row = readExecution(this.sql);
    if (!row) return;
    const now = Date.now();
    if (!isFinalExecutionStatus(row.status)) {
      const cause = row.started_ms === null ? "runner_missing" : "wall";
      const due = this.deadline(row);
      if (now >= due) return this.finish(row, exitByObject(cause, now - row.created_ms));
      return this.ctx.storage.setAlarm(due);
    }
    if (!row.ended_synced) await this.syncEnd(row);
    const forgetAt = (row.ended_ms ?? now) + EXECUTION_LIMITS.retainSeconds * 1000;
    if (now < forgetAt) return this.ctx.storage.setAlarm(readExecution(this.sql)?.ended_synced ? forgetAt : now + 30_000);
    for (const ws of this.ctx.getWebSockets()) ws.close(CLOSE_CODES.ended, "execution ended");
    await this.ctx.storage.deleteAll();
    // Empty tables again, so a late call on this instance finds no execution rather than no table.
    this.sql.exec(SCHEMA);
  }

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  /** Until the runner starts the program: the connect window; then the program's limit and the grace for its kill. */
  private deadline(row: ExecutionRowData): number {
    if (row.started_ms === null) return row.created_ms + EXECUTION_LIMITS.connectSeconds * 1000;
    return row.started_ms + (row.timeout_seconds + EXECUTION_LIMITS.graceSeconds) * 1000;
  }

  private async fromRunner(row: ExecutionRowData, raw: string | ArrayBuffer): Promise<void> {
    const message = parseRunnerMessage(raw);
    if (!message) {
      log("warn", "execution_runner_message_ignored", { execution_id: row.id });
      return;
    }
    if (isFinalExecutionStatus(row.status)) return;
    switch (message.type) {
      case "queued":
        if (row.status !== "starting") return;
        this.sql.exec("UPDATE execution SET status = 'queued'");
        return this.broadcast({ type: "status", status: "queued" });
      case "started": {
        if (row.started_ms !== null) return;
        const now = Date.now();
        this.sql.exec("UPDATE execution SET status = 'running', started_ms = ?", now);
        await this.ctx.storage.setAlarm(this.deadline({ ...row, started_ms: now }));
        return this.broadcast({ type: "status", status: "running" });
      }
      case "output":
        return this.output(row, message);
      case "stdin_refused":
        return this.broadcast({ type: "error", detail: `stdin refused by the runner: ${message.reason}` }, "owner");
      case "exit":
        return this.finish(row, exitFromRunner(message, Date.now() - row.created_ms));
    }
  }

  private output(row: ExecutionRowData, message: Extract<RunnerMessage, { type: "output" }>): void {
    const bytes = utf8Bytes(message.data);
    // The runner caps output itself; this bound holds even against a runner that does not.
    const room = EXECUTION_LIMITS.outputBytes + 64 * 1024 - row.output_bytes;
    if (bytes > room) {
      if (!row.output_dropped) {
        this.sql.exec("UPDATE execution SET output_dropped = 1");
        this.toRunner(null, { type: "terminate" });
      }
      return;
    }
    const seq = appendChunk(this.sql, message.stream, message.data, bytes);
    this.broadcast({ type: message.stream, seq, data: message.data });
  }

  private toRunner(from: WebSocket | null, command: RunnerCommand): void {
    const runner = this.ctx.getWebSockets("runner")[0];
    if (runner) {
      try {
        runner.send(JSON.stringify(command));
      } catch {
        // The runner's socket is closing: its close handler ends the execution.
      }
      return;
    }
    const bytes = "data" in command ? utf8Bytes(command.data) : 0;
    const { held } = this.sql.exec<{ held: number }>("SELECT COALESCE(SUM(bytes), 0) AS held FROM pending").one();
    if (held + bytes > EXECUTION_LIMITS.stdinTotalBytes) {
      if (from) send(from, { type: "error", detail: `More than ${EXECUTION_LIMITS.stdinTotalBytes} bytes of stdin before the program started; nothing was written` });
      return;
    }
    this.sql.exec("INSERT INTO pending (message, bytes) VALUES (?, ?)", JSON.stringify(command), bytes);
  }

  private async socketGone(ws: WebSocket): Promise<void> {
    const attachment = ws.deserializeAttachment() as Attachment | null;
    if (attachment?.kind !== "runner") return;
    const row = readExecution(this.sql);
    if (row && !isFinalExecutionStatus(row.status)) await this.finish(row, exitByObject("runner_lost", Date.now() - row.created_ms));
  }

  /** The one end of an execution: stored, told to every watcher, sockets closed, D1 written. */
  private async finish(row: ExecutionRowData, exit: ExecutionExit): Promise<void> {
    const now = Date.now();
    this.sql.exec("UPDATE execution SET status = ?, exit = ?, ended_ms = ?", exit.status, JSON.stringify(exit), now);
    this.broadcast({ type: "exit", ...exit });
    for (const ws of this.ctx.getWebSockets()) {
      try {
        ws.close(CLOSE_CODES.ended, "execution ended");
      } catch {
        // Closed by its other end meanwhile.
      }
    }
    const ended = { ...row, status: exit.status, exit: JSON.stringify(exit), ended_ms: now };
    await this.syncEnd(ended);
    await this.ctx.storage.setAlarm(ended.ended_synced ? now + EXECUTION_LIMITS.retainSeconds * 1000 : now + 30_000);
  }

  private async syncEnd(row: ExecutionRowData): Promise<void> {
    const exit = exitOf(row);
    if (!exit || row.ended_ms === null) return;
    try {
      await endExecution(database(this.env.DB), row.id, exit.status, new Date(row.ended_ms).toISOString(), exit.code);
      this.sql.exec("UPDATE execution SET ended_synced = 1");
      row.ended_synced = 1;
    } catch (e) {
      log("warn", "execution_end_sync_failed", { execution_id: row.id, error: String(e) });
    }
  }

  private broadcast(message: ServerMessage, only?: WatcherRole): void {
    for (const ws of this.ctx.getWebSockets("client")) {
      const attachment = ws.deserializeAttachment() as Attachment | null;
      if (!only || (attachment?.kind === "client" && attachment.role === only)) send(ws, message);
    }
  }
}

function send(ws: WebSocket, message: ServerMessage): void {
  try {
    ws.send(JSON.stringify(message));
  } catch {
    // A socket closing meanwhile misses it; a reconnect replays output from its seq.
  }
}

function text(status: number, detail: string): Response {
  return Response.json({ detail }, { status });
}
