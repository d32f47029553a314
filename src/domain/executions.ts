/**
 * Live code executions (docs/api.md, "Live code execution"): one candidate program run
 * interactively in the sandbox, its stdin and output carried over WebSockets by the
 * execution's ExecutionDO. This file holds the limits, the states and both socket protocols
 * (client ⇄ object, runner ⇄ object) as pure functions of the object's state; the messages
 * themselves are protocol/'s (socket-messages.ts with the clients, execution-messages.ts with the runner).
 */
import { EXECUTION_LANGUAGES, type ReceivedRunnerMessage as RunnerMessage, type RunnerCommand, runnerMessageSchema } from "../../protocol/execution-messages";
import {
  EXECUTION_EXIT_STATUSES,
  EXECUTION_STATUSES,
  EXIT_CAUSES,
  executionClientMessageSchema,
  type ExecutionExit,
  type ExecutionServerMessage,
  type WATCHER_ROLES,
} from "../../protocol/socket-messages";
import type { Refusal } from "./outcome";
import { newId } from "../lib/ids";

export { EXECUTION_LANGUAGES, EXECUTION_STATUSES, EXIT_CAUSES };
export type { ExecutionExit };
export type ExecutionLanguage = (typeof EXECUTION_LANGUAGES)[number];

/** The file endings of each language's programs; the runner runs `node <file>` or `python3 <file>`. */
const EXTENSIONS: Record<ExecutionLanguage, readonly string[]> = {
  node: [".js", ".mjs", ".cjs"],
  python: [".py"],
};

export const EXECUTION_LIMITS = {
  /** Executions not yet ended at once per user, and per attempt. */
  perUser: 3,
  perAttempt: 2,
  /** What a 429 for too many live executions tells the client to wait. */
  retryAfterSeconds: 5,
  /** Wall clock of the program, chosen per execution. */
  timeoutSeconds: { min: 1, max: 300, default: 60 },
  cpuSeconds: 60,
  memoryMb: 512,
  processes: 64,
  /** stdout and stderr together; beyond it the program is stopped with a notice. */
  outputBytes: 1024 * 1024,
  workspaceMb: 256,
  /** A free-standing execution's own files. */
  files: 20,
  filesBytes: 256 * 1024,
  /** One stdin message's data, and stdin over the whole execution (the runner's limits). */
  stdinMessageBytes: 64 * 1024,
  stdinTotalBytes: 1024 * 1024,
  /** How long the object waits for the runner to dial in before it gives the execution up. */
  connectSeconds: 60,
  /** After the deadline: time for the runner to confirm the kill before the object ends it. */
  graceSeconds: 10,
  /** How long an ended execution's output stays for replay. */
  retainSeconds: 3600,
  /** Watchers on one execution at once. */
  sockets: 20,
  /** Lifetime of a browser ticket. */
  ticketSeconds: 60,
} as const;

/** starting → queued → running → exited | killed | timed_out | error (protocol/socket-messages.ts); the last four are final. */
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];
export type FinalExecutionStatus = (typeof EXECUTION_EXIT_STATUSES)[number];
export const isFinalExecutionStatus = (s: ExecutionStatus): s is FinalExecutionStatus =>
  (EXECUTION_EXIT_STATUSES as readonly string[]).includes(s);

export type ExitCause = (typeof EXIT_CAUSES)[number];

export const newExecutionId = () => newId("exe");
export const EXECUTION_ID_PATTERN = /^exe_[0-9a-f]{32}$/;

/** Who watches a socket: the execution's owner may type; staff of its organization only read. */
export type WatcherRole = (typeof WATCHER_ROLES)[number];

/** What the owner may run: `node <file>` or `python3 <file>`, the file's ending matching the language. */
export function commandProblem(language: ExecutionLanguage, file: string): string | undefined {
  const extensions = EXTENSIONS[language];
  if (file.startsWith("-")) return `${JSON.stringify(file)} would be read as an interpreter option`;
  if (!extensions.some((ext) => file.endsWith(ext))) return `a ${language} program must end in ${extensions.join(", ")}`;
  return undefined;
}

export function concurrencyRefusal(scope: "user" | "attempt", active: number): Refusal {
  const limit = scope === "user" ? EXECUTION_LIMITS.perUser : EXECUTION_LIMITS.perAttempt;
  return {
    kind: "rate_limited",
    retryAfterSeconds: EXECUTION_LIMITS.retryAfterSeconds,
    detail:
      `${scope === "user" ? "You have" : "This attempt has"} ${active} live executions; at most ${limit} may run at once. ` +
      "Terminate one (send {\"type\":\"terminate\"} on its socket) or wait for it to end.",
  };
}

/** The runner's limits for an execution of `timeoutSeconds` (docs/limits.md, "Live code execution"). */
export function executionRunnerLimits(timeoutSeconds: number) {
  return {
    wall_ms: timeoutSeconds * 1000,
    cpu_ms: EXECUTION_LIMITS.cpuSeconds * 1000,
    memory_mb: EXECUTION_LIMITS.memoryMb,
    processes: EXECUTION_LIMITS.processes,
    output_bytes: EXECUTION_LIMITS.outputBytes,
    workspace_mb: EXECUTION_LIMITS.workspaceMb,
  };
}

// ---- client ⇄ object (the messages: protocol/socket-messages.ts) ------------------------------

/** What the object sends a client; the pong is the runtime's auto-response, never the object's. */
export type ServerMessage = Exclude<ExecutionServerMessage, { type: "pong" }>;

/** What the object does with a client's text frame: send the runner something, answer an error, or nothing. */
export type ClientEffect = { kind: "runner"; messages: RunnerCommand[] } | { kind: "error"; detail: string };

const describeIssues = (error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }) =>
  error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");

/** The one interpretation of a client's frame, given who sent it and where the execution is. */
export function clientEffect(raw: string | ArrayBuffer, role: WatcherRole, status: ExecutionStatus): ClientEffect {
  if (typeof raw !== "string") return { kind: "error", detail: "Binary frames are not part of this protocol; send JSON text" };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { kind: "error", detail: "The message is not JSON" };
  }
  const parsed = executionClientMessageSchema.safeParse(json);
  if (!parsed.success) {
    const type = typeof json === "object" && json !== null && "type" in json ? (json as { type: unknown }).type : undefined;
    if (type !== "stdin" && type !== "terminate") {
      return { kind: "error", detail: `Unknown message type ${JSON.stringify(type ?? null)}; expected "stdin" or "terminate"` };
    }
    return { kind: "error", detail: `Invalid ${type} message: ${describeIssues(parsed.error)}` };
  }
  const message = parsed.data;
  if (role !== "owner") return { kind: "error", detail: "This socket is read-only: only the execution's owner may send stdin or terminate" };
  if (isFinalExecutionStatus(status)) return { kind: "error", detail: `The execution has ended (${status}); nothing more can be sent` };
  if (message.type === "terminate") return { kind: "runner", messages: [{ type: "terminate" }] };
  const commands: RunnerCommand[] = [];
  if (message.data !== undefined) {
    const bytes = new TextEncoder().encode(message.data).byteLength;
    if (bytes > EXECUTION_LIMITS.stdinMessageBytes) {
      return { kind: "error", detail: `stdin data of ${bytes} bytes is over the ${EXECUTION_LIMITS.stdinMessageBytes}-byte limit per message; nothing was written` };
    }
    commands.push({ type: "stdin", data: message.data });
  }
  if (message.eof) commands.push({ type: "stdin", eof: true });
  return { kind: "runner", messages: commands };
}

// ---- runner ⇄ object (the messages: protocol/execution-messages.ts) --------------------------------

/** The object reads the runner's messages leniently (ReceivedRunnerMessage), so that is its RunnerMessage. */
export type { RunnerCommand, RunnerMessage };

export function parseRunnerMessage(raw: string | ArrayBuffer): RunnerMessage | undefined {
  if (typeof raw !== "string") return undefined;
  try {
    const parsed = runnerMessageSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The runner's `exit`, as the clients see it; a cause the runner names that we do not know is dropped. */
export function exitFromRunner(message: Extract<RunnerMessage, { type: "exit" }>, totalMs: number): ExecutionExit {
  const cause = EXIT_CAUSES.find((c) => c === message.cause) ?? null;
  return {
    status: message.status,
    cause,
    code: message.code ?? null,
    signal: message.signal ?? null,
    truncated: message.truncated ?? false,
    detail: message.error ?? null,
    timings: { setup_ms: message.timings?.setup_ms ?? null, run_ms: message.timings?.run_ms ?? null, total_ms: totalMs },
  };
}

/** An end the object decides itself: the runner never came, went away, or missed the deadline, or the owner stopped it before it ran. */
export function exitByObject(cause: "runner_missing" | "runner_lost" | "wall" | "terminated", totalMs: number): ExecutionExit {
  const detail = {
    terminated: "Terminated before the program started: nothing ran",
    runner_missing: `No sandbox runner started the program within ${EXECUTION_LIMITS.connectSeconds} s (the runners may all be busy); try again`,
    runner_lost: "The sandbox runner went away before the program ended; its processes are stopped",
    wall: "The execution reached its time limit and the runner did not confirm the kill; it is ended",
  }[cause];
  return {
    status: cause === "wall" ? "timed_out" : cause === "terminated" ? "killed" : "error",
    cause,
    code: null,
    signal: null,
    truncated: false,
    detail,
    timings: { setup_ms: null, run_ms: null, total_ms: totalMs },
  };
}

/**
 * WebSocket close codes the object uses (docs/api.md, "Live code execution"). Malformed or
 * refused messages never close a socket: they are answered with an `error` message.
 */
export const CLOSE_CODES = {
  /** The execution ended: its `exit` message was the last one. */
  ended: 1000,
} as const;

// ---- runner connect token ----------------------------------------------------------------

/** The message the runner's connect token signs: execution, single-use nonce and expiry. */
export const connectTokenMessage = (executionId: string, nonce: string, expiresAtSeconds: number) =>
  `assay-execution-connect\n${executionId}\n${nonce}\n${expiresAtSeconds}`;
