import { existsSync, readFileSync } from "node:fs";
import { access, constants, mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Per-job control groups: the memory limit is a limit on resident memory (page cache and
 * tmpfs pages the job writes included) for the whole process tree, and the process limit is
 * the job's own, whatever uid it runs as. Two layouts are supported, whichever the runner can
 * write: cgroup v2 (a delegated subtree of the runner's own group, as in a container with
 * cgroupns and a writable /sys/fs/cgroup) and cgroup v1 (writable `memory` and `pids`
 * hierarchies, as on these build machines). docs/limits.md says which is used where.
 */
export interface JobCgroup {
  /**
   * The files a process writes "0" into to move itself into the job's groups. In v1 a process
   * moving itself through `tasks` skips the lock that moving another process takes, whose RCU
   * grace period (10-20 ms) would otherwise delay every job; v2 has only `cgroup.procs`.
   */
  readonly joinFiles: string[];
  /** Whether the kernel killed a process of the job for exceeding its memory limit. */
  memoryKilled(): Promise<boolean>;
  /** Peak memory charged to the job, in bytes; null when the kernel does not say. */
  memoryPeak(): Promise<number | null>;
  /** Kills every process left in the job's groups and removes them. */
  destroy(): Promise<void>;
}

export interface CgroupLimits {
  memoryBytes: number;
  processes: number;
}

export interface Cgroups {
  readonly version: "v1" | "v2";
  create(name: string, limits: CgroupLimits): Promise<JobCgroup>;
  /** Removes the runner's parent groups at shutdown, once every job group is gone. */
  close(): Promise<void>;
}

interface Layout {
  version: "v1" | "v2";
  /** v2: the one parent; v1: the memory and pids parents. */
  memory: string;
  pids: string;
}

const ROOT = "/sys/fs/cgroup";

/**
 * Finds a place the runner may create job groups in, creates its own parent there
 * (`assay-runner-<pid>`) and returns the controller, or null when there is none (then
 * limits fall back to rlimits and the monitor: see sandbox.ts). `root` is for tests.
 */
export async function detectCgroups(root = ROOT, selfCgroup = "/proc/self/cgroup"): Promise<Cgroups | null> {
  const own = existsSync(selfCgroup) ? parseProcCgroup(readFileSync(selfCgroup, "utf8")) : new Map<string, string>();
  const parentName = `assay-runner-${process.pid}`;
  const v2Own = own.get("");
  if (existsSync(join(root, "cgroup.controllers")) && v2Own !== undefined) {
    const parent = await v2Parent(join(root, v2Own), parentName);
    if (parent) return new CgroupController({ version: "v2", memory: parent, pids: parent });
  }
  const memory = own.get("memory");
  const pids = own.get("pids");
  if (memory === undefined || pids === undefined) return null;
  const memoryParent = join(root, "memory", memory, parentName);
  const pidsParent = join(root, "pids", pids, parentName);
  try {
    await mkdir(memoryParent, { recursive: true });
    await mkdir(pidsParent, { recursive: true });
    await access(join(memoryParent, "memory.limit_in_bytes"), constants.W_OK);
    await access(join(pidsParent, "pids.max"), constants.W_OK);
  } catch {
    await rmdir(memoryParent).catch(() => undefined);
    await rmdir(pidsParent).catch(() => undefined);
    return null;
  }
  return new CgroupController({ version: "v1", memory: memoryParent, pids: pidsParent });
}

/**
 * In v2 a group with processes may not hand controllers to its children, so the runner's
 * group gets a `runner` leaf for the runner itself and a sibling parent for the jobs.
 */
async function v2Parent(own: string, name: string): Promise<string | null> {
  try {
    const controllers = (await readFile(join(own, "cgroup.controllers"), "utf8")).split(/\s+/);
    if (!controllers.includes("memory") || !controllers.includes("pids")) return null;
    const leaf = join(own, "runner");
    await mkdir(leaf, { recursive: true });
    await writeFile(join(leaf, "cgroup.procs"), String(process.pid));
    await writeFile(join(own, "cgroup.subtree_control"), "+memory +pids");
    const parent = join(own, name);
    await mkdir(parent, { recursive: true });
    await writeFile(join(parent, "cgroup.subtree_control"), "+memory +pids");
    return parent;
  } catch {
    return null;
  }
}

/** `hierarchy-id:controllers:path` lines; v2's line has empty controllers and maps to "". */
export function parseProcCgroup(text: string): Map<string, string> {
  const paths = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line.trim());
    if (!match) continue;
    for (const controller of (match[1] as string).split(",")) paths.set(controller, match[2] as string);
  }
  return paths;
}

class CgroupController implements Cgroups {
  readonly version: "v1" | "v2";

  constructor(private readonly layout: Layout) {
    this.version = layout.version;
  }

  async create(name: string, limits: CgroupLimits): Promise<JobCgroup> {
    const { version } = this.layout;
    const memory = join(this.layout.memory, name);
    const pids = join(this.layout.pids, name);
    const dirs = version === "v2" ? [memory] : [memory, pids];
    // Independent steps are asked at once: each one waits on the kernel's cgroup lock.
    try {
      await settled(dirs.map((dir) => mkdir(dir)));
      if (version === "v2") {
        await settled([
          writeFile(join(memory, "memory.max"), String(limits.memoryBytes)),
          writeFile(join(memory, "memory.swap.max"), "0").catch(() => undefined),
          writeFile(join(memory, "pids.max"), String(limits.processes)),
        ]);
      } else {
        const memoryLimits = async () => {
          await writeFile(join(memory, "memory.limit_in_bytes"), String(limits.memoryBytes));
          // Without this a job could page out to swap past its limit, where the host has swap.
          if (existsSync(join(memory, "memory.memsw.limit_in_bytes"))) {
            await writeFile(join(memory, "memory.memsw.limit_in_bytes"), String(limits.memoryBytes));
          }
        };
        await settled([memoryLimits(), writeFile(join(pids, "pids.max"), String(limits.processes))]);
      }
    } catch (err) {
      for (const dir of dirs) await rmdir(dir).catch(() => undefined);
      throw err;
    }
    return new Group(version, memory, dirs);
  }

  async close(): Promise<void> {
    for (const dir of new Set([this.layout.memory, this.layout.pids])) await rmdir(dir).catch(() => undefined);
  }
}

class Group implements JobCgroup {
  readonly joinFiles: string[];

  constructor(
    private readonly version: "v1" | "v2",
    private readonly memoryDir: string,
    private readonly dirs: string[],
  ) {
    this.joinFiles = dirs.map((dir) => join(dir, version === "v2" ? "cgroup.procs" : "tasks"));
  }

  async memoryKilled(): Promise<boolean> {
    const file = this.version === "v2" ? "memory.events" : "memory.oom_control";
    const text = await readFile(join(this.memoryDir, file), "utf8").catch(() => "");
    return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0) > 0;
  }

  async memoryPeak(): Promise<number | null> {
    const file = this.version === "v2" ? "memory.peak" : "memory.max_usage_in_bytes";
    const value = Number((await readFile(join(this.memoryDir, file), "utf8").catch(() => "")).trim());
    return Number.isFinite(value) && value > 0 ? value : null;
  }

  async destroy(): Promise<void> {
    for (let i = 0; i < 1000; i++) {
      // rmdir succeeds once the last process has exited (EBUSY until then), as it usually has.
      const removed = await Promise.all(this.dirs.map((d) => rmdir(d).then(() => true, (e: NodeJS.ErrnoException) => e.code === "ENOENT")));
      if (removed.every(Boolean)) return;
      for (const pid of new Set((await Promise.all(this.dirs.map(pidsIn))).flat())) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      // Killed processes take a moment to exit; every wait here delays the job's report.
      await new Promise((r) => setTimeout(r, 2));
    }
    throw new Error(`job cgroup ${this.memoryDir} could not be removed: processes are left in it`);
  }
}

/** Like Promise.all, but settles only once every step has ended, so a cleanup never races one. */
async function settled(steps: Array<Promise<unknown>>): Promise<void> {
  const failed = (await Promise.allSettled(steps)).find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
}

async function pidsIn(dir: string): Promise<number[]> {
  const text = await readFile(join(dir, "cgroup.procs"), "utf8").catch(() => "");
  return text.split("\n").filter((l) => l.trim()).map(Number);
}
