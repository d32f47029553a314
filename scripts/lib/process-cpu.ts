// A stack's processes and their CPU time, from /proc (Linux): how busy the local Worker's runtime is
// under a bench's load. workerd runs the Worker, its Durable Objects and the local D1 on one
// thread, so its CPU over the wall-clock time says how close that thread is to saturation.
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc's CPU times: USER_HZ, 100 on every Linux build that matters here. */
const TICKS_PER_SECOND = 100;

/** User plus system CPU milliseconds of one process, from its /proc/<pid>/stat line. */
export function cpuMsFromStat(stat: string): number {
  // The command name (field 2) may hold spaces and parentheses; the fields after its last ")" do not.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** The pids of the processes named `name` under `rootPid` (every one of that name when none). */
export function processesNamed(name: string, rootPid: number | undefined): number[] {
  const parents = new Map<number, number>();
  const named: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, "utf8");
      parents.set(Number(entry), Number(/^PPid:\s+(\d+)/m.exec(status)?.[1] ?? 0));
      if (/^Name:\s+(.*)$/m.exec(status)?.[1] === name) named.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  const under = (pid: number): boolean => {
    for (let p = pid; p > 1; p = parents.get(p) ?? 0) if (p === rootPid) return true;
    return false;
  };
  return rootPid === undefined ? named : named.filter(under);
}

/** CPU milliseconds used so far by the processes named `name` under `rootPid`. */
export function cpuMsOf(name: string, rootPid: number): number {
  let ms = 0;
  for (const pid of processesNamed(name, rootPid)) {
    try {
      ms += cpuMsFromStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
    } catch {
      // The process ended while we looked.
    }
  }
  return ms;
}
