// The socket of a live execution (docs/api.md, "Live code execution"): output as it comes,
// stdin and terminate from the owner, and reconnection with a fresh ticket when the connection
// breaks. The server replays every kept chunk after `after_seq`, and chunks carry their `seq`,
// so output already shown is never shown twice. Framework-free: the socket, the ticket and the
// timers are given to it. The messages are protocol/socket-messages.ts's, the Worker's own: every
// frame is parsed with its schema, and one that does not parse is ignored.
import {
  executionServerMessageSchema,
  parseSocketMessage,
  type ExecutionClientMessage,
  type ExecutionExit,
} from "../../../protocol/socket-messages";
import { backoffMs } from "../lib/backoff";
import type { Timers } from "./save-queue";

export type { ExecutionExit };

/** The part of the browser's WebSocket the session uses. */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number): void;
  onopen: ((event: Event) => void) | null;
  onmessage: ((event: MessageEvent) => void) | null;
  onclose: ((event: CloseEvent) => void) | null;
  onerror: ((event: Event) => void) | null;
}

export type ConnectionState = "connecting" | "open" | "reconnecting" | "ended" | "lost";

export interface ExecutionSessionOptions {
  /** The execution's ws_url. */
  wsUrl: string;
  /** The ticket of the execute answer, for the first socket. */
  ticket: string;
  /** A fresh ticket for each reconnection (POST /code-execution/{id}/ws-ticket); throws with `status` when there is none. */
  freshTicket: () => Promise<string>;
  connect: (url: string) => SocketLike;
  timers?: Timers;
  backoff?: (attempt: number) => number;
  /** Reconnections tried in a row before giving up. */
  maxReconnects?: number;
  onOutput: (stream: "stdout" | "stderr", data: string) => void;
  onStatus?: (status: string) => void;
  onExit: (exit: ExecutionExit) => void;
  /** A message the server refused, or why the connection was given up. */
  onError: (detail: string) => void;
  onConnection?: (state: ConnectionState) => void;
}

const OPEN = 1;

const defaultTimers: Timers = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class ExecutionSession {
  /** The seq of the last output chunk shown; -1 before any. */
  private lastSeq = -1;
  private socket: SocketLike | null = null;
  private outbox: string[] = [];
  private ended = false;
  private closed = false;
  private reconnects = 0;
  private timer: unknown;
  private readonly timers: Timers;
  private readonly backoff: (attempt: number) => number;
  private readonly maxReconnects: number;

  constructor(private readonly options: ExecutionSessionOptions) {
    this.timers = options.timers ?? defaultTimers;
    this.backoff = options.backoff ?? backoffMs;
    this.maxReconnects = options.maxReconnects ?? 8;
  }

  start(): void {
    this.open(this.options.ticket, "connecting");
  }

  /** Sends input to the program; kept while reconnecting. `eof` closes its stdin after it. */
  stdin(data: string, eof = false): void {
    const message: ExecutionClientMessage = { type: "stdin" };
    if (data !== "") message.data = data;
    if (eof) message.eof = true;
    if (message.data === undefined && !eof) return;
    this.post(JSON.stringify(message));
  }

  terminate(): void {
    this.post(JSON.stringify({ type: "terminate" } satisfies ExecutionClientMessage));
  }

  /** Closes the socket and stops reconnecting; the execution itself goes on. */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.timers.clear(this.timer);
    const socket = this.socket;
    this.socket = null;
    socket?.close(1000);
  }

  /** The address of the next socket: the ticket, and the last chunk already shown. */
  socketUrl(ticket: string): string {
    const url = new URL(this.options.wsUrl);
    url.searchParams.set("ticket", ticket);
    if (this.lastSeq >= 0) url.searchParams.set("after_seq", String(this.lastSeq));
    else url.searchParams.delete("after_seq");
    return url.href;
  }

  private post(message: string): void {
    if (this.ended || this.closed) return;
    if (this.socket && this.socket.readyState === OPEN) this.socket.send(message);
    else this.outbox.push(message);
  }

  private open(ticket: string, state: ConnectionState): void {
    this.options.onConnection?.(state);
    const socket = this.options.connect(this.socketUrl(ticket));
    this.socket = socket;
    socket.onopen = () => {
      if (this.socket !== socket) return;
      this.reconnects = 0;
      this.options.onConnection?.("open");
      const waiting = this.outbox;
      this.outbox = [];
      for (const message of waiting) socket.send(message);
    };
    socket.onmessage = (event) => {
      if (this.socket === socket) this.receive(String(event.data));
    };
    socket.onerror = () => {};
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.ended || this.closed) return;
      // Only 1000 after `exit` is a verdict; any other close is a broken connection.
      if (event.code === 1000) {
        this.ended = true;
        this.options.onConnection?.("ended");
        return;
      }
      this.reconnect();
    };
  }

  private reconnect(): void {
    this.reconnects += 1;
    if (this.reconnects > this.maxReconnects) {
      this.options.onConnection?.("lost");
      this.options.onError("The connection to the program was lost and could not be restored; it may still be running until its time limit.");
      return;
    }
    this.options.onConnection?.("reconnecting");
    this.timer = this.timers.set(() => {
      this.timer = undefined;
      if (this.closed) return;
      this.options.freshTicket().then(
        (ticket) => {
          if (!this.closed) this.open(ticket, "reconnecting");
        },
        (error: unknown) => {
          if (this.closed) return;
          const status = (error as { status?: number }).status;
          if (status === 404 || status === 403 || status === 401) {
            this.options.onConnection?.("lost");
            this.options.onError(error instanceof Error ? error.message : String(error));
          } else this.reconnect();
        },
      );
    }, this.backoff(this.reconnects));
  }

  private receive(raw: string): void {
    const message = parseSocketMessage(executionServerMessageSchema, raw);
    if (!message) return;
    switch (message.type) {
      case "stdout":
      case "stderr":
        if (message.seq <= this.lastSeq) return;
        this.lastSeq = message.seq;
        this.options.onOutput(message.type, message.data);
        return;
      case "hello":
      case "status":
        this.options.onStatus?.(message.status);
        return;
      case "error":
        this.options.onError(message.detail);
        return;
      case "exit":
        this.ended = true;
        this.outbox = [];
        this.options.onExit(message);
        this.options.onConnection?.("ended");
        return;
    }
  }
}
