import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { access, constants, mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Per-job control groups: the memory limit is a limit on resident memory (page cache and
 * tmpfs pages the job writes included) for the whole process tree, and the process limit is
 * the job's own, whatever uid it runs as. Two layouts are supported, whichever the runner can
 * write: cgroup v2 (a delegated subtree of the runner's own group, as in a container with
 * cgroupns and a writable /sys/fs/cgroup) and cgroup v1 (writable `memory` and `pids`
 * hierarchies, as on these build machines). docs/limits.md says which is used where.
 *
 * A job's groups are made, read and removed with synchronous calls: the control group file
 * system is the kernel's own and never waits on a disk, so each call takes tens of
 * microseconds, less than a trip through the thread pool, which a job's set-up keeps busy.
 */
export interface JobCgroup {
  /**
   * The files a process writes "0" into to move itself into the job's groups. In v1 a process
   * moving itself through `tasks` skips the lock that moving another process takes, whose RCU
   * grace period (10-20 ms) would otherwise delay every job; v2 has only `cgroup.procs`.
   */
  readonly joinFiles: string[];
  /** Whether the kernel killed a process of the job for exceeding its memory limit. */
  memoryKilled(): boolean;
  /** Peak memory charged to the job, in bytes; null when the kernel does not say. */
  memoryPeak(): number | null;
  /** Kills every process in the job's groups, however it was started; the groups stay. */
  killAll(): Promise<void>;
  /** Kills every process left in the job's groups and removes them. */
  destroy(): Promise<void>;
}

export interface CgroupLimits {
  memoryBytes: number;
  processes: number;
}

export interface Cgroups {
  readonly version: "v1" | "v2";
  create(name: string, limits: CgroupLimits): JobCgroup;
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

  create(name: string, limits: CgroupLimits): JobCgroup {
    const { version } = this.layout;
    const memory = join(this.layout.memory, name);
    const pids = join(this.layout.pids, name);
    const dirs = version === "v2" ? [memory] : [memory, pids];
    const made: string[] = [];
    try {
      for (const dir of dirs) {
        mkdirSync(dir);
        made.push(dir);
      }
      if (version === "v2") {
        writeFileSync(join(memory, "memory.max"), String(limits.memoryBytes));
        try {
          writeFileSync(join(memory, "memory.swap.max"), "0");
        } catch {
          // No swap accounting here: nothing to limit.
        }
        writeFileSync(join(memory, "pids.max"), String(limits.processes));
      } else {
        writeFileSync(join(memory, "memory.limit_in_bytes"), String(limits.memoryBytes));
        // Without this a job could page out to swap past its limit, where the host has swap.
        if (existsSync(join(memory, "memory.memsw.limit_in_bytes"))) {
          writeFileSync(join(memory, "memory.memsw.limit_in_bytes"), String(limits.memoryBytes));
        }
        writeFileSync(join(pids, "pids.max"), String(limits.processes));
      }
    } catch (err) {
      for (const dir of made) removeGroup(dir);
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

  memoryKilled(): boolean {
    const file = this.version === "v2" ? "memory.events" : "memory.oom_control";
    return Number(/^oom_kill (\d+)$/m.exec(readGroupFile(join(this.memoryDir, file)))?.[1] ?? 0) > 0;
  }

  memoryPeak(): number | null {
    const file = this.version === "v2" ? "memory.peak" : "memory.max_usage_in_bytes";
    const value = Number(readGroupFile(join(this.memoryDir, file)).trim());
    return Number.isFinite(value) && value > 0 ? value : null;
  }

  async killAll(): Promise<void> {
    // v2 kills the whole group at once, forks in flight included; v1 needs passes until it is empty.
    if (this.version === "v2" && existsSync(join(this.memoryDir, "cgroup.kill"))) {
      writeFileSync(join(this.memoryDir, "cgroup.kill"), "1");
      return;
    }
    for (let i = 0; i < 1000 && this.signalAll() > 0; i++) await new Promise((r) => setTimeout(r, 2));
  }

  async destroy(): Promise<void> {
    for (let i = 0; i < 1000; i++) {
      // rmdir succeeds once the last process has exited (EBUSY until then), as it usually has.
      if (this.dirs.map(removeGroup).every(Boolean)) return;
      this.signalAll();
      // Killed processes take a moment to exit; every wait here delays the job's report.
      await new Promise((r) => setTimeout(r, 2));
    }
    throw new Error(`job cgroup ${this.memoryDir} could not be removed: processes are left in it`);
  }

  /** Sends SIGKILL to every process in the job's groups; how many there were. */
  private signalAll(): number {
    const pids = new Set(this.dirs.flatMap(pidsIn));
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    return pids.size;
  }
}

/** Whether the group is gone: false while processes are left in it. */
function removeGroup(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT";
  }
}

function readGroupFile(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

function pidsIn(dir: string): number[] {
  return readGroupFile(join(dir, "cgroup.procs")).split("\n").filter((l) => l.trim()).map(Number);
}
