import { readdir, readFile } from "node:fs/promises";

/** Kernel USER_HZ and page size on every Linux the runner targets (x86-64, arm64). */
const TICK_MS = 10;
const PAGE_BYTES = 4096;

export interface TreeUsage {
  processes: number;
  cpuMs: number;
  rssBytes: number;
}

/**
 * Sums CPU time and resident memory over a process and all its descendants. CPU includes
 * the reaped children's time (cutime/cstime), so work done by short-lived processes of a
 * fork storm still counts: orphans in the sandbox are reparented to its PID-namespace init,
 * which belongs to the tree and reaps them.
 */
export async function treeUsage(rootPid: number): Promise<TreeUsage> {
  const usage: TreeUsage = { processes: 0, cpuMs: 0, rssBytes: 0 };
  const pending = [rootPid];
  const seen = new Set<number>();
  while (pending.length > 0 && seen.size < 100_000) {
    const pid = pending.pop() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
    if (stat === null) continue;
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const num = (i: number) => Number(fields[i - 3] ?? 0);
    usage.processes++;
    usage.cpuMs += (num(14) + num(15) + num(16) + num(17)) * TICK_MS;
    usage.rssBytes += num(24) * PAGE_BYTES;
    pending.push(...(await childrenOf(pid)));
  }
  return usage;
}

async function childrenOf(pid: number): Promise<number[]> {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  const children: number[] = [];
  for (const tid of tasks) {
    const list = await readFile(`/proc/${pid}/task/${tid}/children`, "utf8").catch(() => "");
    for (const c of list.split(" ")) if (c.trim()) children.push(Number(c));
  }
  return children;
}

/** The processes running as `uid`, zombies left out (they are dead already). */
export async function livePidsOwnedBy(uid: number): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const status = await readFile(`/proc/${name}/status`, "utf8").catch(() => "");
    if (/^State:\s+Z/m.test(status)) continue;
    if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? -1) === uid) pids.push(Number(name));
  }
  return pids;
}

/**
 * Kills whatever still runs as a slot's sandbox uid and waits until it has gone, so a
 * process that is still tearing down (or was missed) never outlives its job's report.
 */
export async function killAllOwnedBy(uid: number, attempts = 100): Promise<number> {
  let killed = 0;
  for (let i = 0; i < attempts; i++) {
    const pids = await livePidsOwnedBy(uid);
    if (pids.length === 0) return killed;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
        killed++;
      } catch {
        // Already gone.
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return killed;
}
