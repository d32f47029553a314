import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { inject } from "vitest";

/** The process listening on a local TCP port (the runner itself, not the npm and tsx wrappers around it). */
export function listeningPid(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const socket = readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .find((f) => f[1]?.endsWith(`:${hexPort}`) && f[3] === "0A");
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

/**
 * Freezes the stack's runner while `during` runs: it answers nothing and reports nothing, as a
 * runner that is down or hung. `npm start` stops the whole stack when a part exits, so a
 * stop signal stands in for a crash here; a result that never comes is the sweep's, tested in
 * test/integration/runs.test.ts.
 */
export async function withRunnerDown(during: () => Promise<void>): Promise<void> {
  const pid = listeningPid(Number(new URL(inject("runnerUrl")).port));
  process.kill(pid, "SIGSTOP");
  try {
    await during();
  } finally {
    process.kill(pid, "SIGCONT");
  }
}
