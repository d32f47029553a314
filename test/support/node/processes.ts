import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { inject } from "vitest";
import { waitUntil } from "../../../scripts/lib/wait";

/** The IPv4 sockets on a local TCP port, as the fields of their /proc/net/tcp lines (3: state, 4: queues, 9: inode). */
function socketsAt(port: number): string[][] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  return readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[1]?.endsWith(`:${hexPort}`));
}

/** The process listening on a local TCP port (the runner itself, not the npm and tsx wrappers around it). */
export function listeningPid(port: number): number {
  const socket = socketsAt(port).find((f) => f[3] === "0A");
  if (!socket) throw new Error(`nothing listens on port ${port}`);
  const target = `socket:[${socket[9]}]`;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (readdirSync(`/proc/${pid}/fd`).some((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`) === target)) return Number(pid);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  throw new Error(`no process holds the socket of port ${port}`);
}

/** Polls `ready` until it holds, as a client waits for something it can see. */
const until = (what: string, ready: () => boolean) => waitUntil(what, ready, { timeoutMs: 60_000 });

/** The processes whose parent is `pid`, with their command names and states (/proc/<pid>/stat). */
function childrenOf(pid: number): { comm: string; state: string }[] {
  const children: { comm: string; state: string }[] = [];
  for (const name of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const match = /^\d+ \((.*)\) (\S) (\d+)/.exec(readFileSync(`/proc/${name}/stat`, "utf8"));
      if (match && Number(match[3]) === pid) children.push({ comm: match[1] as string, state: match[2] as string });
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** Bytes that connections accepted on a local port hold unread (the rx_queue column of /proc/net/tcp). */
function unreadBytesAt(port: number): number {
  return socketsAt(port)
    .filter((f) => f[3] === "01")
    .reduce((sum, f) => sum + parseInt(f[4]?.split(":")[1] ?? "0", 16), 0);
}

const runnerPort = () => Number(new URL(inject("runnerUrl")).port);
/** A job's sandbox is the runner's child: its gate becomes bwrap; idle spare gates stay bash. */
const sandboxes = (pid: number) => childrenOf(pid).filter((c) => c.comm === "bwrap");

/** Resolves once the stack's runner has a job's sandbox running. */
export async function runnerSandboxRunning(): Promise<void> {
  const pid = listeningPid(runnerPort());
  await until("a sandbox of the runner's", () => sandboxes(pid).some((c) => c.state !== "Z"));
}

/** What a test can see of the frozen runner from outside. */
export interface FrozenRunner {
  /** Resolves once a request (a job handed over, say) has come and waits unread. */
  requestWaiting(): Promise<void>;
  /** Resolves once the sandboxes it had started have ended, their exits unseen by it. */
  sandboxesEnded(): Promise<void>;
}

/**
 * Freezes the stack's runner while `during` runs: it answers nothing and reports nothing, as a
 * runner that is down or hung. `npm start` stops the whole stack when a part exits, so a
 * stop signal stands in for a crash here; a result that never comes is the sweep's, tested in
 * test/integration/runs.test.ts.
 */
export async function withRunnerDown(during: (runner: FrozenRunner) => Promise<void>): Promise<void> {
  const port = runnerPort();
  const pid = listeningPid(port);
  process.kill(pid, "SIGSTOP");
  try {
    await during({
      requestWaiting: () => until("a request to wait at the frozen runner", () => unreadBytesAt(port) > 0),
      sandboxesEnded: () => until("the frozen runner's sandboxes to end", () => sandboxes(pid).every((c) => c.state === "Z")),
    });
  } finally {
    process.kill(pid, "SIGCONT");
  }
}
