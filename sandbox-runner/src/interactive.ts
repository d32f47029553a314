import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { chownTree, removeTree } from "./job-execution";
import type { Limits } from "./job-schema";
import { requireRelativePath, UnsafeInputError } from "./safe-path";
import { type Launch, type Sandbox, SANDBOX_PATHS, type SandboxExit } from "./sandbox";
import { writeWorkspaceFile } from "./workspace-fs";

/**
 * Interactive executions, runner side (docs/runner-protocol.md, "Interactive executions"):
 * one candidate program in the same sandbox as a test job, stdin fed as it arrives and
 * stdout/stderr handed on as the pipes deliver them. Transport-free: whatever carries the
 * session (the Durable Object dial-in, later) sits on `write`/`terminate` and the callbacks.
 */

/** Largest single stdin write; a terminal line or a pasted snippet, not a file upload. */
export const STDIN_WRITE_MAX_BYTES = 64 * 1024;
/** Stdin over the whole execution; it bounds what the runner may hold for a program that never reads. */
export const STDIN_TOTAL_MAX_BYTES = 1024 * 1024;

export type InteractiveLanguage = "node" | "python";

export interface InteractiveCommand {
  language: InteractiveLanguage;
  /** Workspace-relative path of the program to run. */
  file: string;
}

const RUNTIMES = new Map<string, { program: string; extensions: string[] }>([
  ["node", { program: "node", extensions: [".js", ".mjs", ".cjs"] }],
  ["python", { program: "python3", extensions: [".py"] }],
]);

/**
 * The only commands an interactive execution runs: `node <file>` or `python3 <file>`, as an
 * argv (never a shell string). The file must be a plain workspace-relative path that cannot
 * be read as an option by the interpreter.
 */
export function interactiveArgv(command: InteractiveCommand): string[] {
  const runtime = RUNTIMES.get(command.language);
  if (!runtime) throw new UnsafeInputError(`interactive command: unsupported language ${JSON.stringify(command.language)}`);
  if (typeof command.file !== "string") throw new UnsafeInputError("interactive command: file must be a string");
  const file = requireRelativePath(command.file, "interactive command file");
  if (file.startsWith("-")) throw new UnsafeInputError(`interactive command file: ${JSON.stringify(file)} would be read as an option`);
  if (!runtime.extensions.some((ext) => file.endsWith(ext))) {
    throw new UnsafeInputError(`interactive command file: a ${command.language} program must end in ${runtime.extensions.join(", ")}`);
  }
  return [runtime.program, file];
}

export interface InteractiveContext {
  sandbox: Sandbox;
  /** Why the sandbox cannot be used, or null; interactive code is never run without it. */
  sandboxProblem: string | null;
  /** The runner's work dir; the execution's workspace lives under `jobs/` and is removed at the end. */
  workDir: string;
}

export interface InteractiveRequest {
  files: Array<{ path: string; content: Buffer | string }>;
  command: InteractiveCommand;
  limits: Limits;
  /** Pool slot the caller holds until `onExit`; it picks the sandbox uid. */
  slot: number;
}

export interface OutputChunk {
  stream: "stdout" | "stderr";
  /** 0, 1, 2, … per chunk across both streams, in the order the runner read them. */
  seq: number;
  /** Raw bytes as the pipe gave them: a chunk may end inside a UTF-8 character. */
  data: Buffer;
}

export type InteractiveStatus = "exited" | "killed" | "timed_out" | "error";
export type InteractiveCause = "terminated" | "output_limit" | "wall" | "cpu" | "memory" | "workspace";

export interface InteractiveExit {
  /** `exited`: the program ended by itself (`code`, or `signal` it died of); `error`: it never ran. */
  status: InteractiveStatus;
  /** Why the runner killed it; null when it exited by itself or never ran. */
  cause: InteractiveCause | null;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Output went past `limits.output_bytes`: the rest was dropped and the notice chunk sent. */
  truncated: boolean;
  error: string | null;
  timings: { setupMs: number; runMs: number; totalMs: number };
}

export interface InteractiveCallbacks {
  onOutput(chunk: OutputChunk): void;
  /** Exactly once, after the last chunk, once no process of the execution is left. */
  onExit(exit: InteractiveExit): void;
}

export type StdinWrite = { ok: true } | { ok: false; reason: "closed" | "too_large" | "stdin_limit" };

export interface InteractiveExecution {
  /** Queues bytes for the program's stdin; refused past the limits, ignored once closed or over. */
  write(data: Buffer | string): StdinWrite;
  /** End of input for the program (it reads EOF once what was written is read). */
  closeStdin(): void;
  /** Kills the whole process tree (SIGKILL, no grace period); `onExit` confirms. Idempotent. */
  terminate(): void;
}

export const truncationNotice = (limit: number) => `\n[assay-runner] output limit of ${limit} bytes reached; the rest was discarded and the program was stopped\n`;

/**
 * Starts an interactive execution. Refusals (no sandbox, a command outside the allowed
 * forms, a bad file path, files larger than the workspace limit) throw `UnsafeInputError`
 * before anything runs; every later failure is reported through `onExit`.
 */
export function startInteractive(ctx: InteractiveContext, request: InteractiveRequest, callbacks: InteractiveCallbacks): InteractiveExecution {
  if (ctx.sandboxProblem) throw new UnsafeInputError(`${ctx.sandboxProblem}; refusing to run untrusted code without the sandbox`);
  const command = interactiveArgv(request.command);
  const files = request.files.map((f) => ({ path: requireRelativePath(f.path, "workspace file"), content: Buffer.from(f.content) }));
  const fileBytes = files.reduce((sum, f) => sum + f.content.length, 0);
  if (fileBytes > request.limits.workspace_mb * 1024 * 1024) throw new UnsafeInputError(`workspace files: ${fileBytes} bytes exceed the workspace limit of ${request.limits.workspace_mb} MB`);

  const requestedAt = performance.now();
  const limit = request.limits.output_bytes;
  const abort = new AbortController();
  // Buffers stdin written before the process exists; piped into it once it does.
  const input = new PassThrough();
  let stopCause: "terminated" | "output_limit" | null = null;
  let over = false;
  let stdinOpen = true;
  let stdinBytes = 0;
  let seq = 0;
  let forwarded = 0;
  let truncated = false;
  let setupMs = 0;

  const stop = (cause: "terminated" | "output_limit") => {
    if (over) return;
    stopCause ??= cause;
    abort.abort();
  };
  const emit = (stream: OutputChunk["stream"], data: Buffer) => callbacks.onOutput({ stream, seq: seq++, data });
  const forward = (stream: OutputChunk["stream"]) => (chunk: Buffer) => {
    // Past the cap the pipes are still drained, so a dying tree never blocks on a full pipe.
    if (truncated) return;
    const room = limit - forwarded;
    if (chunk.length <= room) {
      forwarded += chunk.length;
      emit(stream, chunk);
      return;
    }
    if (room > 0) emit(stream, chunk.subarray(0, room));
    forwarded = limit;
    truncated = true;
    emit("stderr", Buffer.from(truncationNotice(limit)));
    stop("output_limit");
  };

  const execute = async (): Promise<SandboxExit | null> => {
    const jobDir = join(ctx.workDir, "jobs", `interactive-${randomUUID()}`);
    // Started now so that joining the control groups overlaps writing the workspace.
    let launch: Launch | null = ctx.sandbox.launch(request.slot, request.limits, true);
    try {
      const workspace = join(jobDir, "ws");
      const output = join(jobDir, "out");
      await mkdir(workspace, { recursive: true, mode: 0o755 });
      await mkdir(output, { mode: 0o755 });
      for (const f of files) await writeWorkspaceFile(workspace, f.path, f.content);
      const owner = ctx.sandbox.ownerFor(request.slot);
      if (owner) await chownTree([workspace, output], owner);
      if (abort.signal.aborted) return null;
      setupMs = Math.round(performance.now() - requestedAt);
      const launched = launch;
      launch = null;
      const started = await ctx.sandbox.start(
        {
          workspace, output, reportsDir: null, readOnlyMounts: [], egressSocket: null,
          command, env: interactiveEnv(), limits: request.limits, slot: request.slot, signal: abort.signal, stdin: true,
        },
        launched,
      );
      started.stdout?.on("data", forward("stdout"));
      started.stderr?.on("data", forward("stderr"));
      if (started.stdin) input.pipe(started.stdin);
      return await started.done;
    } finally {
      await launch?.cancel();
      await removeTree(jobDir);
    }
  };

  void execute()
    .then((exit) => outcome(exit, stopCause), (err: unknown) => failure(err))
    .then((result) => {
      over = true;
      stdinOpen = false;
      input.destroy();
      if (result.status === "error") setupMs = Math.round(performance.now() - requestedAt);
      callbacks.onExit({ ...result, truncated, timings: { setupMs, runMs: result.runMs, totalMs: Math.round(performance.now() - requestedAt) } });
    });

  return {
    write(data) {
      if (!stdinOpen) return { ok: false, reason: "closed" };
      const bytes = typeof data === "string" ? Buffer.from(data) : data;
      if (bytes.length > STDIN_WRITE_MAX_BYTES) return { ok: false, reason: "too_large" };
      if (stdinBytes + bytes.length > STDIN_TOTAL_MAX_BYTES) return { ok: false, reason: "stdin_limit" };
      stdinBytes += bytes.length;
      input.write(bytes);
      return { ok: true };
    },
    closeStdin() {
      if (!stdinOpen) return;
      stdinOpen = false;
      input.end();
    },
    terminate() {
      stop("terminated");
    },
  };
}

type Outcome = Omit<InteractiveExit, "truncated" | "timings"> & { runMs: number };

function outcome(exit: SandboxExit | null, stopCause: "terminated" | "output_limit" | null): Outcome {
  const base = { code: null, signal: null, error: null, runMs: 0 };
  // Terminated while the workspace was being written: the command never started.
  if (exit === null) return { ...base, status: "killed", cause: "terminated" };
  const ran = { ...base, code: exit.exitCode, signal: exit.signal, runMs: exit.runMs };
  if (exit.spawnError) return { ...ran, status: "error", cause: null, error: `could not start the sandbox: ${exit.spawnError}` };
  if (exit.killedFor === "wall") return { ...ran, status: "timed_out", cause: "wall" };
  if (exit.killedFor === "aborted") return { ...ran, status: "killed", cause: stopCause ?? "terminated" };
  if (exit.killedFor) return { ...ran, status: "killed", cause: exit.killedFor };
  return { ...ran, status: "exited", cause: null };
}

function failure(err: unknown): Outcome {
  const error = err instanceof UnsafeInputError ? err.message : `internal error: ${err instanceof Error ? err.message : String(err)}`;
  return { status: "error", cause: null, code: null, signal: null, error, runMs: 0 };
}

/**
 * A fixed environment: interpreters only from the system and the runner's Node (never the
 * workspace), and Python unbuffered so a prompt shows before the program waits for input.
 */
function interactiveEnv(): Record<string, string> {
  return {
    PATH: `${SANDBOX_PATHS.nodeBinDir}:/usr/bin:/bin`,
    HOME: "/tmp",
    TMPDIR: "/tmp",
    LANG: "C.UTF-8",
    NO_COLOR: "1",
    PYTHONDONTWRITEBYTECODE: "1",
    PYTHONUNBUFFERED: "1",
  };
}
