import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";

/** Output of a git command is buffered up to this size; larger output is an error. */
const MAX_OUTPUT_BYTES = 256 * 1024 * 1024;

export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args.join(" ")} failed (exit ${exitCode ?? "signal"}): ${stderr.trim()}`);
    this.name = "GitError";
  }
}

/**
 * The caller's git configuration and GIT_* variables must not change what the host serves
 * or what the builder writes (a user's diff.noprefix would change every diff, a GIT_DIR
 * inherited from a hook would redirect every command), so git runs with none of them.
 * Repository-local config is still read: it carries the assay.* settings.
 */
function isolatedEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith("GIT_")) env[key] = value;
  }
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    ...extra,
  };
}

export interface GitOptions {
  /** Bytes written to the command's stdin. */
  input?: Buffer | string;
  /** Extra environment variables. */
  env?: Record<string, string>;
}

/** Starts git on a repository; arguments are passed as an array, never through a shell. */
export function spawnGit(gitDir: string, args: readonly string[], options: GitOptions = {}): ChildProcessWithoutNullStreams {
  return spawn("git", [`--git-dir=${gitDir}`, ...args], {
    env: isolatedEnv(options.env ?? {}),
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/** Runs git on a repository and resolves with its stdout; rejects with GitError on a non-zero exit. */
export function runGit(gitDir: string, args: readonly string[], options: GitOptions = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(gitDir, args, options);
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let size = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) {
        child.kill();
        reject(new GitError(args, null, `output exceeds ${MAX_OUTPUT_BYTES} bytes`));
        return;
      }
      stdout.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(Buffer.concat(stdout));
      else reject(new GitError(args, code, Buffer.concat(stderr).toString("utf8")));
    });
    // A command that exits before reading all of its input closes the pipe; its exit code says why.
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input ?? "");
  });
}

/** Runs git and returns its stdout as text without the final newline. */
export async function gitText(gitDir: string, args: readonly string[], options: GitOptions = {}): Promise<string> {
  return (await runGit(gitDir, args, options)).toString("utf8").replace(/\n$/, "");
}

/** Runs git for a yes/no question: exit 0 is an answer, exit 1 is "no", anything else is an error. */
export async function gitTextOrNull(gitDir: string, args: readonly string[]): Promise<string | null> {
  try {
    return await gitText(gitDir, args);
  } catch (error) {
    if (error instanceof GitError && error.exitCode === 1) return null;
    throw error;
  }
}

/** Runs git without a repository (git init). */
export function runGitNoRepo(args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", [...args], { env: isolatedEnv({}), stdio: ["ignore", "ignore", "pipe"] });
    const stderr: Buffer[] = [];
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve() : reject(new GitError(args, code, Buffer.concat(stderr).toString("utf8"))),
    );
  });
}
