import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { ArtifactCache, CacheLease } from "./cache";
import { chownTree, createJobDirs, type Mount, mountEnvironment, placeArtifacts, reasonOf, removeTree } from "./job-execution";
import type { Artifact, Limits } from "../../protocol/jobs";
import { requireRelativePath, UnsafeInputError } from "./safe-path";
import { type Launch, type Sandbox, SANDBOX_PATHS, type SandboxExit } from "./sandbox";
import { deleteWorkspacePath, writeWorkspaceFile } from "./workspace-fs";

/**
 * Interactive executions, runner side (docs/runner-protocol.md, "Interactive executions"):
 * one candidate program in the same sandbox as a test job, stdin fed as it arrives and
 * stdout/stderr handed on as the pipes deliver them. Transport-free: the Durable Object
 * dial-in (execution-session.ts) sits on `write`/`terminate` and the callbacks.
 */

/** Largest single stdin write; a terminal line or a pasted snippet, not a file upload. */
export const STDIN_WRITE_MAX_BYTES = 64 * 1024;
/** Stdin over the whole execution; it bounds what the runner may hold for a program that never reads. */
export const STDIN_TOTAL_MAX_BYTES = 1024 * 1024;

export const INTERACTIVE_LANGUAGES = ["node", "python"] as const;
export type InteractiveLanguage = (typeof INTERACTIVE_LANGUAGES)[number];

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
  /** Where snapshots and environments come from, downloaded and verified as for test jobs. */
  cache: ArtifactCache;
}

export interface InteractiveRequest {
  /** Extracted first (its top-level folder stripped), as a test job's snapshot; none when absent. */
  snapshot?: Artifact | null;
  /** A prepared environment, mounted read-only as for a test job; none when absent. */
  environment?: Artifact | null;
  /** Written over the snapshot, in order; `content: null` deletes the path (an attempt's overlay deletion). */
  files: Array<{ path: string; content: Buffer | string | null }>;
  command: InteractiveCommand;
  limits: Limits;
  /** Pool slot the caller holds until `onExit`; it picks the sandbox uid. */
  slot: number;
  /** Input the caller took before it could start the execution (while it waited for a slot); a fresh queue otherwise. */
  stdin?: StdinQueue;
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
  /** Once, when the program has been spawned, before its first output; never for one that did not start. */
  onStart?(started: { setupMs: number }): void;
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

/**
 * A program's stdin, before and while it runs: writes are checked against the limits, kept in
 * order and piped into the program once it exists.
 */
export class StdinQueue {
  /** What was written, in order; the program reads from it. */
  readonly stream = new PassThrough();
  private open = true;
  private total = 0;

  write(data: Buffer | string): StdinWrite {
    if (!this.open) return { ok: false, reason: "closed" };
    const bytes = typeof data === "string" ? Buffer.from(data) : data;
    if (bytes.length > STDIN_WRITE_MAX_BYTES) return { ok: false, reason: "too_large" };
    if (this.total + bytes.length > STDIN_TOTAL_MAX_BYTES) return { ok: false, reason: "stdin_limit" };
    this.total += bytes.length;
    this.stream.write(bytes);
    return { ok: true };
  }

  /** End of input: the program reads EOF once what was written is read. */
  close(): void {
    if (!this.open) return;
    this.open = false;
    this.stream.end();
  }

  /** The program is gone: what it did not read is dropped and later writes are `closed`. */
  discard(): void {
    this.open = false;
    this.stream.destroy();
  }
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
  const files = request.files.map((f) => ({ path: requireRelativePath(f.path, "workspace file"), content: f.content === null ? null : Buffer.from(f.content) }));
  const fileBytes = files.reduce((sum, f) => sum + (f.content?.length ?? 0), 0);
  if (fileBytes > request.limits.workspace_mb * 1024 * 1024) throw new UnsafeInputError(`workspace files: ${fileBytes} bytes exceed the workspace limit of ${request.limits.workspace_mb} MB`);

  const requestedAt = performance.now();
  const limit = request.limits.output_bytes;
  const abort = new AbortController();
  // Buffers stdin written before the process exists; piped into it once it does.
  const input = request.stdin ?? new StdinQueue();
  let stopCause: "terminated" | "output_limit" | null = null;
  let over = false;
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
    const leases: CacheLease[] = [];
    // Started now so that joining the control groups overlaps building the workspace.
    let launch: Launch | null = ctx.sandbox.launch(request.slot, request.limits, true);
    try {
      const { workspace, output } = await createJobDirs(jobDir);
      const { tree, placed } = await placeArtifacts(ctx.cache, workspace, request.snapshot ?? null, request.environment ?? null, leases);
      for (const f of files) {
        if (f.content === null) await deleteWorkspacePath(workspace, f.path);
        else await writeWorkspaceFile(workspace, f.path, f.content);
      }
      const unsafe = ctx.sandbox.unsafe;
      await mountEnvironment(workspace, placed, unsafe);
      const owner = ctx.sandbox.ownerFor(request.slot);
      if (owner) await chownTree([workspace, output], owner);
      if (abort.signal.aborted) return null;
      setupMs = Math.round(performance.now() - requestedAt);
      const launched = launch;
      launch = null;
      const env = interactiveEnv(placed.mounts, unsafe ? workspace : SANDBOX_PATHS.workspace);
      const started = await ctx.sandbox.start(
        {
          workspace, output, reportsDir: null, readOnlyMounts: unsafe ? [] : placed.mounts, egressSocket: null,
          command, env, limits: request.limits, slot: request.slot, signal: abort.signal, stdin: true,
        },
        launched,
      );
      if (started.stdout) callbacks.onStart?.({ setupMs });
      if (tree) void ctx.cache.copyAhead(tree);
      started.stdout?.on("data", forward("stdout"));
      started.stderr?.on("data", forward("stderr"));
      if (started.stdin) input.stream.pipe(started.stdin);
      return await started.done;
    } finally {
      await launch?.cancel();
      for (const lease of leases) lease.release();
      await removeTree(jobDir);
    }
  };

  void execute()
    .then((exit) => outcome(exit, stopCause), (err: unknown) => failure(err))
    .then((result) => {
      over = true;
      input.discard();
      if (result.status === "error") setupMs = Math.round(performance.now() - requestedAt);
      callbacks.onExit({ ...result, truncated, timings: { setupMs, runMs: result.runMs, totalMs: Math.round(performance.now() - requestedAt) } });
    });

  return {
    write: (data) => input.write(data),
    closeStdin: () => input.close(),
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
  return { status: "error", cause: null, code: null, signal: null, error: reasonOf(err), runMs: 0 };
}

/**
 * A fixed environment: interpreters only from the system and the runner's Node, and Python
 * unbuffered so a prompt shows before the program waits for input. The workspace's own files
 * are never on PATH; a prepared environment's `.venv` comes first when there is one (its
 * read-only mount, not the workspace), so `python3` sees its packages as in a test job.
 */
function interactiveEnv(mounts: Mount[], insideWorkspace: string): Record<string, string> {
  const venv = mounts.some((m) => m.inside === ".venv") ? `${insideWorkspace}/.venv/bin:` : "";
  return {
    PATH: `${venv}${SANDBOX_PATHS.nodeBinDir}:/usr/bin:/bin`,
    HOME: "/tmp",
    TMPDIR: "/tmp",
    LANG: "C.UTF-8",
    NO_COLOR: "1",
    PYTHONDONTWRITEBYTECODE: "1",
    PYTHONUNBUFFERED: "1",
  };
}
