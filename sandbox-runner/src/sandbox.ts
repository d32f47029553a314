import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { chmod, copyFile, cp, mkdir, readFile, realpath, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import type { Duplex, Readable, Writable } from "node:stream";
import type { Cgroups, JobCgroup } from "./cgroups";
import type { Limits } from "../../protocol/jobs";
import { OutputCapture } from "./output-capture";
import { killAllOwnedBy, treeUsage } from "./process-tree";
import { prepareTools } from "./tools";
import { diskUsage } from "./workspace-fs";

/** Where things are as the sandboxed command sees them. */
export interface SandboxPaths {
  workspace: string;
  output: string;
  nodeBinDir: string;
  /** Lint wrappers, the coverage config and ESLint's packages (see tools.ts), read-only. */
  toolsDir: string;
}

export const SANDBOX_PATHS: SandboxPaths = { workspace: "/workspace", output: "/output", nodeBinDir: "/opt/node/bin", toolsDir: "/opt/assay" };
/** Where a prepare job finds the egress proxy's socket (see egress-proxy.ts). */
export const EGRESS_SOCKET = "/run/assay/egress.sock";
/** Where a test job's report FIFOs are, read-only (report-channel.ts). */
export const REPORTS_DIR = "/run/assay/reports";
/** /dev/shm is a tmpfs of its own: at most this, or a quarter of the memory limit if less. */
export const SHM_MAX_MB = 64;

export interface SandboxRun {
  /** Host directory mounted read-write as the workspace. */
  workspace: string;
  /** Host directory mounted read-write as scratch output (the linters' reports). */
  output: string;
  /** Host directory of the report FIFOs, mounted read-only; null for jobs without reports. */
  reportsDir: string | null;
  /** Host directories mounted read-only inside the workspace (prepared environments). */
  readOnlyMounts: Array<{ host: string; inside: string }>;
  /**
   * Host path of the egress proxy socket, for prepare jobs; null for everything else. There is
   * never a network interface but loopback: the socket is the only way out, and the proxy
   * behind it allows only the package registries.
   */
  egressSocket: string | null;
  command: string[];
  env: Record<string, string>;
  limits: Limits;
  /** Pool slot; picks the uid so concurrent jobs never share a process count. */
  slot: number;
  /** Aborting kills the whole tree (killedFor "aborted"). */
  signal: AbortSignal;
  /** Give the command a stdin pipe (interactive executions); otherwise stdin is /dev/null. */
  stdin?: boolean;
  /** The Node version bound at /opt/node/bin/node (one of `nodeVersions`); the default one when absent. */
  nodeVersion?: string | null;
  /** Host directory bound writable at PACKAGE_CACHE_DIR: a prepare job's package caches. */
  packageCache?: string | null;
}

/** Where a prepare job finds its organization's package caches (npm, pnpm, yarn). */
export const PACKAGE_CACHE_DIR = "/run/assay/package-cache";
/** In the tools directory: the extra CA certificates alone (NODE_EXTRA_CA_CERTS), and with the system's (pip, curl). */
export const EXTRA_CA_FILE = "extra-ca.pem";
export const CA_BUNDLE_FILE = "ca-bundle.pem";
const SYSTEM_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";
/**
 * Directories of node_modules that test tools write to: prepare jobs create them empty in the
 * environment, and test jobs get a writable tmpfs over each (the environment stays read-only).
 */
export const NODE_MODULES_SCRATCH = [".cache", ".vite", ".vite-temp", ".vitest"];
const PYTHON = "/usr/bin/python3";

export type KillCause = "wall" | "cpu" | "memory" | "workspace" | "aborted";

export interface SandboxExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  killedFor: KillCause | null;
  runMs: number;
  spawnError: string | null;
}

export interface SandboxResult extends SandboxExit {
  log: Buffer;
  logTruncated: boolean;
  outputBytes: number;
}

/** A started command: its pipes as they are, and its end. */
export interface SandboxProcess {
  /** Null unless the run asked for stdin; writes after the command exits are dropped. */
  stdin: Writable | null;
  /** Null only when the command could not be started (then `done` says why). */
  stdout: Readable | null;
  stderr: Readable | null;
  /** Settles once every process of the job is gone and its control groups are removed. */
  done: Promise<SandboxExit>;
  /**
   * Settles once the command has been let go (bwrap has read its fd 4) or has ended: what the
   * runner spawns before would compete with the sandbox's set-up for the CPU.
   */
  released: Promise<void>;
}

export interface SandboxOptions {
  bwrapPath: string;
  nodeBinary: string;
  workDir: string;
  sandboxUidBase: number;
  /** node_modules directory ESLint's packages are copied from; null when there is none. */
  lintModules: string | null;
  /** Further Node binaries (RUNNER_NODE_BINARIES); each is copied in beside the default one. */
  extraNodeBinaries?: string[];
  /** PEM file of CA certificates prepare jobs trust besides the system's (RUNNER_EXTRA_CA_CERTS). */
  extraCaCerts?: string | null;
  /** Run without bubblewrap; only ever set by RUNNER_UNSAFE_NO_SANDBOX=1. */
  unsafe: boolean;
  /** Per-job control groups, or null where the runner cannot create them (then rlimits). */
  cgroups: Cgroups | null;
}

const SYSTEM_DIRS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
const ETC_ENTRIES = [
  "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives",
  "ssl", "ca-certificates", "ca-certificates.conf", "mime.types", "protocols", "services",
];
/** Host keys: no sandbox user could read them, and they are not copied out of /etc. */
const ETC_LEFT_OUT = new Set(["ssl/private"]);
const MONITOR_INTERVAL_MS = 100;
const WORKSPACE_CHECK_EVERY = 5;

/**
 * Runs commands under bubblewrap: fresh user, PID, IPC, UTS and network namespaces,
 * read-only system directories, size-capped private /tmp and /dev/shm, only the job's
 * workspace and output directories writable, a clean environment, a control group per job
 * for memory and processes (rlimits where there is none), and a monitor that kills the whole
 * tree at the wall, CPU or workspace limits.
 */
export class Sandbox {
  private readonly etcDir: string;
  /**
   * A copy of the runner's Node inside the work dir: the original may sit in a checkout the
   * sandbox users cannot enter (a clone under /root or a 0700 temp dir), and bwrap resolves
   * bind sources as that user.
   */
  private readonly nodeBinary: string;
  /** Every Node the sandbox offers, by version (`v22.1.0` without the v), the default first; set by prepare(). */
  private nodeCopies = new Map<string, string>();
  /** Host directory bound at SANDBOX_PATHS.toolsDir. */
  readonly toolsDir: string;
  /** Why ESLint cannot run in the sandbox, or null when it can; set by prepare(). */
  eslintProblem: string | null = null;
  /**
   * Gates started while other runs were going, so that a job's start does not wait for a spawn:
   * as many as runs have gone at once, all without stdin (a run with stdin starts its own). An
   * idle one holds no uid, control group or file, and ends with the runner (its fd 3 closes).
   */
  private readonly spareGates: Gate[] = [];
  private running = 0;

  constructor(private readonly options: SandboxOptions) {
    this.etcDir = join(options.workDir, "sandbox-etc");
    this.nodeBinary = join(options.workDir, "sandbox-bin", "node");
    this.toolsDir = join(options.workDir, "sandbox-tools");
  }

  get unsafe(): boolean {
    return this.options.unsafe;
  }

  /** Owner the workspace must belong to so the sandboxed user can write it. */
  ownerFor(slot: number): { uid: number; gid: number } | null {
    if (this.options.unsafe || process.getuid?.() !== 0) return null;
    return { uid: this.options.sandboxUidBase + slot, gid: this.options.sandboxUidBase + slot };
  }

  async prepare(): Promise<void> {
    await this.prepareEtc();
    this.nodeCopies = new Map();
    const binaries = [this.options.nodeBinary, ...(this.options.extraNodeBinaries ?? [])];
    for (const [i, binary] of binaries.entries()) {
      const version = nodeVersionOf(binary);
      if (!version) {
        if (i === 0) throw new Error(`${binary} does not run as Node`);
        continue;
      }
      if (this.nodeCopies.has(version)) continue;
      const copy = i === 0 ? this.nodeBinary : `${this.nodeBinary}-${version}`;
      await copyIfChanged(realpathSync(binary), copy);
      this.nodeCopies.set(version, copy);
    }
    this.eslintProblem = await prepareTools(this.toolsDir, this.options.lintModules);
    await this.prepareCaFiles();
    const python = spawnSync(PYTHON, ["-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"], { encoding: "utf8", timeout: 10_000, env: {} });
    this.pythonVersion = python.status === 0 ? python.stdout.trim() : null;
  }

  /** The version of the system Python that prepare jobs make virtual environments with, or null without one. */
  pythonVersion: string | null = null;

  /** The Node versions a job may ask for, the default first. */
  get nodeVersions(): string[] {
    return [...this.nodeCopies.keys()];
  }

  /** Host path of a Node version's binary; the default one for null or an unknown version. */
  nodeBinaryFor(version: string | null | undefined): string {
    return (version && this.nodeCopies.get(version)) || this.nodeBinary;
  }

  /**
   * The extra CA certificates, checked to be PEM certificates, and a bundle of them with the
   * system's: Node adds NODE_EXTRA_CA_CERTS to its own list, while pip and OpenSSL take one
   * file that replaces theirs. Without extra certificates neither file exists.
   */
  private async prepareCaFiles(): Promise<void> {
    for (const name of [EXTRA_CA_FILE, CA_BUNDLE_FILE]) await rm(join(this.toolsDir, name), { force: true });
    const extra = this.options.extraCaCerts;
    if (!extra) return;
    const pem = await readFile(extra, "utf8").catch((err: unknown) => {
      throw new Error(`RUNNER_EXTRA_CA_CERTS: cannot read ${extra}: ${err instanceof Error ? err.message : String(err)}`);
    });
    const certificates = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    if (certificates.length === 0) throw new Error(`RUNNER_EXTRA_CA_CERTS: ${extra} holds no PEM certificate`);
    const system = await readFile(SYSTEM_CA_BUNDLE, "utf8").catch(() => "");
    await writeFile(join(this.toolsDir, EXTRA_CA_FILE), `${certificates.join("\n")}\n`, { mode: 0o644 });
    await writeFile(join(this.toolsDir, CA_BUNDLE_FILE), `${system.trimEnd()}\n${certificates.join("\n")}\n`, { mode: 0o644 });
  }

  /** Whether prepare jobs are given extra CA certificates (see prepareCaFiles). */
  get hasExtraCaCerts(): boolean {
    return Boolean(this.options.extraCaCerts);
  }

  /**
   * The sandbox's /etc, bound read-only as one directory: what it needs of the host's /etc,
   * copied as a bind would show it (a link given by name is followed, links inside are kept),
   * and users, groups and hosts of its own. One bind instead of one per entry takes a few
   * milliseconds off every sandbox's set-up; the copies are as fresh as the runner's start.
   */
  private async prepareEtc(): Promise<void> {
    await rm(this.etcDir, { recursive: true, force: true });
    await mkdir(this.etcDir, { recursive: true, mode: 0o755 });
    for (const entry of ETC_ENTRIES) {
      const source = await realpath(`/etc/${entry}`).catch(() => null);
      if (!source) continue;
      await cp(source, join(this.etcDir, entry), {
        recursive: true,
        verbatimSymlinks: true,
        filter: (path) => !ETC_LEFT_OUT.has(join(entry, relative(source, path))),
      });
    }
    await writeFile(join(this.etcDir, "passwd"), "root:x:0:0:root:/root:/bin/sh\nsandbox:x:1000:1000:sandbox:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
    await writeFile(join(this.etcDir, "group"), "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n");
    await writeFile(join(this.etcDir, "hosts"), "127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost\n");
    // Names resolve from the hosts file alone. A sandbox has no DNS: a lookup through it fails as
    // EAI_AGAIN, a temporary failure that clients retry, where "not found" (ENOTFOUND) ends at
    // once and names the host. The egress proxy resolves the names a prepare job may reach.
    await writeFile(join(this.etcDir, "nsswitch.conf"), "passwd: files\ngroup: files\nshadow: files\nhosts: files\nnetworks: files\nprotocols: files\nservices: files\n");
  }

  /** Proves bubblewrap can actually create the namespaces here (it may be installed but blocked). */
  probe(): { ok: true } | { ok: false; reason: string } {
    if (!existsSync("/usr/bin/prlimit")) return { ok: false, reason: "prlimit (util-linux) is not installed" };
    const owner = this.ownerFor(0);
    if (owner && !existsSync("/usr/bin/setpriv")) return { ok: false, reason: "setpriv (util-linux) is not installed" };
    const result = spawnSync(this.options.bwrapPath, [...this.baseArgs(64, 64), "--", "/bin/sh", "-c", "exit 0"], {
      env: {},
      timeout: 10_000,
      encoding: "utf8",
      ...(owner ?? {}),
    });
    if (result.error) return { ok: false, reason: `bubblewrap is not available: ${result.error.message}` };
    if (result.status !== 0) return { ok: false, reason: `bubblewrap cannot create a sandbox here: ${result.stderr.trim() || `exit ${result.status}`}` };
    return { ok: true };
  }

  /**
   * The process a job's command will run in, made ready while the job is still being set up:
   * a gate (GATE_SCRIPT) that moves itself into the job's control groups, says so and waits on
   * fd 3 for the command line `open` gives it. Null in unsafe mode. `limits` and `stdin` must
   * be the run's: the groups are made for these limits, and the command inherits this stdin.
   */
  launch(slot: number, limits: Limits, stdin = false): Launch | null {
    if (this.options.unsafe) return null;
    const { child, exited } = (stdin ? null : this.takeSpareGate()) ?? startGate(stdin);
    const gate = child.stdio[3] as Duplex;
    const answer = gateAnswer(gate, exited);
    const placed = (async () => {
      let group: JobCgroup | null;
      try {
        group = this.options.cgroups?.create(`slot${slot}-${randomUUID()}`, { memoryBytes: limits.memory_mb * 1024 * 1024, processes: limits.processes }) ?? null;
      } catch (err) {
        return { group: null, error: `could not create the job's control group: ${(err as Error).message}` };
      }
      if (child.pid === undefined) return { group, error: "the job's process did not start" };
      gate.write(nulSeparated([...(group?.joinFiles ?? []), ""]));
      const problem = await answer;
      return { group, error: problem === null ? null : `could not place the job in its control group: ${problem}` };
    })();
    return {
      child,
      exited,
      placed,
      async cancel() {
        if (child.pid !== undefined) killGroup(child.pid);
        const { group } = await placed;
        await exited;
        await group?.destroy();
      },
    };
  }

  /**
   * Sets the sandbox up for `job`: bwrap creates its namespaces and mounts as soon as the
   * launch is in its control groups, while the caller may still be finishing the workspace
   * (bind sources must exist now; what is in them may change until the start). The command
   * itself runs only at `start`/`run` (bwrap `--block-fd`). Resolves once the gate has its
   * command line. `launched` must have been launched with stdin when `job.stdin` is set.
   */
  async open(job: SandboxRun, launched: Launch | null = null): Promise<OpenRun> {
    const limits = job.limits;
    const launch = launched ?? this.launch(job.slot, limits, job.stdin === true);
    const error = launch && (await launch.placed).error;
    if (launch && !error) {
      const owner = this.ownerFor(job.slot);
      const dropToSlot = owner ? ["/usr/bin/setpriv", `--reuid=${owner.uid}`, `--regid=${owner.gid}`, "--clear-groups", "--"] : [];
      // A shell reads a socket a byte at a time: the gate reads only what it execs, and bwrap
      // reads its options (most of the line) at once from the rest of fd 3 (`--args`), which
      // it closes before it runs anything.
      const gateArgv = [...dropToSlot, ...this.rlimited(limits), this.options.bwrapPath, "--args", "3", "--", ...job.command, ""];
      (launch.child.stdio[3] as Writable).end(Buffer.concat([nulSeparated(gateArgv), nulSeparated(this.jobArgs(job))]));
    }
    const start = () => this.begin(job, launch, error);
    return {
      start,
      async run(whileRunning) {
        const capture = new OutputCapture(limits.output_bytes);
        const started = await start();
        if (started.stdout && whileRunning) void started.released.then(whileRunning);
        started.stdout?.on("data", (c: Buffer) => capture.append(c));
        started.stderr?.on("data", (c: Buffer) => capture.append(c));
        const exit = await started.done;
        return { ...exit, log: capture.render(), logTruncated: capture.truncated, outputBytes: capture.total };
      },
      cancel: async () => {
        await launch?.cancel();
      },
    };
  }

  /** Runs to completion, keeping the first `output_bytes` of stdout and stderr together. */
  async run(job: SandboxRun, launched: Launch | null = null): Promise<SandboxResult> {
    return (await this.open(job, launched)).run();
  }

  /**
   * Starts the command and hands back its pipes unread: the caller must consume stdout and
   * stderr (the process cannot finish while a full pipe blocks it).
   */
  async start(job: SandboxRun, launched: Launch | null = null): Promise<SandboxProcess> {
    return (await this.open(job, launched)).start();
  }

  private get cgroups(): Cgroups | null {
    return this.options.unsafe ? null : this.options.cgroups;
  }

  /** prlimit with a run's limits, to put before the command line it applies to. */
  private rlimited(limits: Limits): string[] {
    const cpuSeconds = Math.ceil(limits.cpu_ms / 1000);
    const rlimits = [`--cpu=${cpuSeconds}:${cpuSeconds + 1}`, `--fsize=${limits.workspace_mb * 1024 * 1024}`, "--core=0", "--nofile=4096"];
    // Without control groups: processes per uid (each slot has its own when the runner is
    // root; otherwise the pool is one job wide, see runner-service.ts) and the data segment as
    // a last resort. Never the address space: WebAssembly and V8 reserve far more than they use.
    if (!this.cgroups) rlimits.push(`--nproc=${limits.processes}`, `--data=${limits.memory_mb * 1024 * 1024}`);
    return ["/usr/bin/prlimit", ...rlimits, "--"];
  }

  private takeSpareGate(): Gate | null {
    for (let gate = this.spareGates.pop(); gate; gate = this.spareGates.pop()) {
      const { child } = gate;
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) return keepsRunnerAlive(gate, true);
    }
    return null;
  }

  /** Called while a run's command runs, once the sandbox is set up. */
  private stockSpareGates(): void {
    while (this.spareGates.length < this.running) this.spareGates.push(keepsRunnerAlive(startGate(false), false));
  }

  private async begin(job: SandboxRun, launch: Launch | null, error: string | null): Promise<SandboxProcess> {
    const owner = this.ownerFor(job.slot);
    let child: ChildProcess;
    let exited: Promise<Exit>;
    let released = Promise.resolve();
    if (launch) {
      if (error) {
        await launch.cancel();
        return { stdin: null, stdout: null, stderr: null, done: Promise.resolve(failedStart(error)), released: Promise.resolve() };
      }
      ({ child, exited } = launch);
      const blockFd = child.stdio[4] as Duplex;
      released = new Promise((resolve) => blockFd.once("close", resolve));
      blockFd.end("\n");
      void released.then(() => this.stockSpareGates());
    } else {
      const argv = [...this.rlimited(job.limits), ...job.command];
      child = spawn(argv[0] as string, argv.slice(1), {
        cwd: job.workspace,
        env: { ...job.env, PATH: `${job.env.PATH ?? ""}:${process.env.PATH ?? ""}` },
        detached: true,
        stdio: [job.stdin ? "pipe" : "ignore", "pipe", "pipe"],
      });
      exited = exitOf(child);
    }
    const started = performance.now();
    this.running++;
    // A command that exits (or closes its stdin) before reading what was written gives EPIPE.
    child.stdin?.on("error", () => undefined);

    let killedFor: KillCause | null = null;
    const group = launch ? (await launch.placed).group : null;
    const kill = (cause: KillCause) => {
      killedFor ??= cause;
      if (child.pid !== undefined) killGroup(child.pid);
      // bwrap's child sets --die-with-parent only after it is forked, in a session of its own:
      // stopped in between (a job given up while its sandbox starts), it would outlive bwrap,
      // run the command and hold the output pipes open. The job's groups (or uid) hold it too.
      if (group) void group.killAll();
      else if (owner) void killAllOwnedBy(owner.uid);
    };
    const onAbort = () => kill("aborted");
    job.signal.addEventListener("abort", onAbort);
    if (job.signal.aborted) onAbort();
    const wallTimer = setTimeout(() => kill("wall"), job.limits.wall_ms);
    const monitor = this.monitor(child.pid, job, kill, this.cgroups === null);

    const done = (async (): Promise<SandboxExit> => {
      const outcome = await exited;
      this.running--;
      clearTimeout(wallTimer);
      job.signal.removeEventListener("abort", onAbort);
      monitor.stop();
      // A job's processes cannot leave its groups (/sys is not in the sandbox and the groups'
      // files are root's), so emptying the groups ends all of them; the uid sweep is for runs
      // without groups.
      if (group) {
        if (group.memoryKilled()) killedFor ??= "memory";
        await group.destroy();
      } else if (owner) await killAllOwnedBy(owner.uid);
      return { exitCode: outcome.code, signal: outcome.signal, killedFor, runMs: Math.round(performance.now() - started), spawnError: outcome.error };
    })();
    return { stdin: child.stdin, stdout: child.stdout, stderr: child.stderr, done, released };
  }

  /** CPU and workspace always; resident memory only where no control group enforces it. */
  private monitor(pid: number | undefined, job: SandboxRun, kill: (cause: KillCause) => void, checkMemory: boolean): { stop(): void } {
    if (pid === undefined) return { stop() {} };
    let ticks = 0;
    let busy = false;
    const workspaceLimit = job.limits.workspace_mb * 1024 * 1024;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      void (async () => {
        const usage = await treeUsage(pid);
        if (usage.cpuMs > job.limits.cpu_ms) kill("cpu");
        else if (checkMemory && usage.rssBytes > job.limits.memory_mb * 1024 * 1024) kill("memory");
        else if (++ticks % WORKSPACE_CHECK_EVERY === 0) {
          const used = (await diskUsage(job.workspace, workspaceLimit)) + (await diskUsage(job.output, workspaceLimit));
          if (used > workspaceLimit) kill("workspace");
        }
      })().finally(() => {
        busy = false;
      });
    }, MONITOR_INTERVAL_MS);
    return { stop: () => clearInterval(timer) };
  }

  private baseArgs(tmpMb: number, shmMb: number, nodeBinary = this.nodeBinary): string[] {
    const args = [
      "--unshare-user", "--uid", "1000", "--gid", "1000", "--disable-userns",
      "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-cgroup-try",
      "--hostname", "sandbox", "--new-session", "--die-with-parent", "--clearenv",
      "--ro-bind", "/usr", "/usr",
    ];
    for (const dir of SYSTEM_DIRS) {
      const stat = lstatSync(dir, { throwIfNoEntry: false });
      if (stat?.isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
      else if (stat?.isDirectory()) args.push("--ro-bind", dir, dir);
    }
    args.push("--ro-bind", this.etcDir, "/etc");
    args.push(
      "--proc", "/proc",
      // bwrap's /dev is a tmpfs as large as half the host's memory; it is made read-only and
      // /dev/shm gets a small tmpfs of its own.
      "--dev", "/dev",
      "--size", String(shmMb * 1024 * 1024), "--tmpfs", "/dev/shm",
      "--remount-ro", "/dev",
      "--size", String(tmpMb * 1024 * 1024), "--tmpfs", "/tmp",
      "--ro-bind", nodeBinary, `${SANDBOX_PATHS.nodeBinDir}/node`,
      "--ro-bind", this.toolsDir, SANDBOX_PATHS.toolsDir,
    );
    return args;
  }

  private jobArgs(job: SandboxRun): string[] {
    const { memory_mb, workspace_mb } = job.limits;
    const args = this.baseArgs(Math.min(workspace_mb, memory_mb), Math.min(SHM_MAX_MB, Math.max(1, Math.floor(memory_mb / 4))), this.nodeBinaryFor(job.nodeVersion));
    args.push("--bind", job.workspace, SANDBOX_PATHS.workspace, "--bind", job.output, SANDBOX_PATHS.output);
    if (job.packageCache) args.push("--bind", job.packageCache, PACKAGE_CACHE_DIR);
    for (const m of job.readOnlyMounts) {
      args.push("--ro-bind", m.host, `${SANDBOX_PATHS.workspace}/${m.inside}`);
      // Tools write their caches inside node_modules (vite's bundled config, ava's and babel's
      // caches): an empty tmpfs of the job's own over each such directory of the read-only environment.
      const nodeModules = m.inside === "node_modules" || m.inside.endsWith("/node_modules");
      for (const dir of nodeModules ? NODE_MODULES_SCRATCH : []) {
        if (existsSync(join(m.host, dir))) args.push("--size", String(Math.min(256, workspace_mb) * 1024 * 1024), "--tmpfs", `${SANDBOX_PATHS.workspace}/${m.inside}/${dir}`);
      }
    }
    if (job.egressSocket) args.push("--bind", job.egressSocket, EGRESS_SOCKET);
    if (job.reportsDir) args.push("--ro-bind", job.reportsDir, REPORTS_DIR);
    for (const [k, v] of Object.entries(job.env)) args.push("--setenv", k, v);
    // The root is bwrap's own tmpfs: without this, /etc or / would take writes (into memory).
    args.push("--remount-ro", "/", "--chdir", SANDBOX_PATHS.workspace, "--block-fd", "4");
    return args;
  }
}

/** `node --version` without its "v", or null when the binary does not run. */
function nodeVersionOf(binary: string): string | null {
  const result = spawnSync(binary, ["--version"], { encoding: "utf8", timeout: 10_000, env: {} });
  const version = /^v(\d+\.\d+\.\d+)\s*$/.exec(result.stdout ?? "")?.[1];
  return result.status === 0 && version ? version : null;
}

async function copyIfChanged(source: string, target: string): Promise<void> {
  if (existsSync(target) && statSync(target).size === statSync(source).size) return;
  await mkdir(dirname(target), { recursive: true, mode: 0o755 });
  await copyFile(source, `${target}.tmp`);
  await chmod(`${target}.tmp`, 0o755);
  await rename(`${target}.tmp`, target);
}

/** A sandbox being set up for one run; its command waits for `start` or `run`. */
export interface OpenRun {
  start(): Promise<SandboxProcess>;
  /** Like `start`, then waits for the end; `whileRunning` is called once the command runs. */
  run(whileRunning?: () => void): Promise<SandboxResult>;
  /** For a run that never starts: kills what was set up and removes its control groups. */
  cancel(): Promise<void>;
}

/**
 * The gate `launch` starts. fd 3 brings the files to write "0" into and then the command to
 * exec (each list ending with an empty item); the gate answers "ok" (or its error) on fd 3 once
 * it is in its groups, and only builtins run before that. The command (setpriv, prlimit,
 * bwrap) then reads the rest of fd 3 as bwrap's options, and bwrap waits on fd 4
 * (`--block-fd`) until the run starts.
 */
export const GATE_SCRIPT = [
  // What the runner itself inherited without close-on-exec (a supervisor's socket, say) would
  // pass on to the command, through bwrap, outside every namespace: only stdio and 3, 4 stay.
  // No redirection on the loop: bash would save fd 2 above 4 for it, and the loop would close that.
  'for f in /proc/self/fd/*; do f=${f##*/}; [ "$f" -gt 4 ] && exec {f}>&-; done',
  'while IFS= read -r -d "" f <&3 || exit; [ -n "$f" ]; do echo 0 2>&3 >"$f" || exit; done',
  "echo ok >&3",
  'argv=(); while IFS= read -r -d "" a <&3 || exit; [ -n "$a" ]; do argv+=("$a"); done',
  'exec "${argv[@]}"',
].join("\n");

/** A gate process and its end. */
interface Gate {
  child: ChildProcess;
  exited: Promise<Exit>;
}

/**
 * As the runner, not the slot's uid: only a process moving itself joins a group without the
 * kernel's slow lock, and only the runner may move a process into one.
 */
function startGate(stdin: boolean): Gate {
  const child = spawn("/bin/bash", ["--norc", "--noprofile", "-c", GATE_SCRIPT], {
    cwd: "/",
    env: {},
    detached: true,
    stdio: [stdin ? "pipe" : "ignore", "pipe", "pipe", "pipe", "pipe"],
  });
  for (const fd of [3, 4]) (child.stdio[fd] as Duplex).on("error", () => undefined);
  return { child, exited: exitOf(child) };
}

/** A spare gate must not keep the runner's process alive; a gate in use must. */
function keepsRunnerAlive(gate: Gate, alive: boolean): Gate {
  for (const handle of [gate.child, ...gate.child.stdio] as Array<{ ref(): void; unref(): void } | null>) {
    if (alive) handle?.ref();
    else handle?.unref();
  }
  return gate;
}

/** Resolves null once the gate says it is in its groups, or with what it said before it ended. */
function gateAnswer(gate: Duplex, exited: Promise<Exit>): Promise<string | null> {
  return new Promise((resolve) => {
    let said = "";
    const listen = (chunk: Buffer) => {
      said += chunk.toString("utf8");
      if (said !== "ok\n") return;
      gate.off("data", listen);
      resolve(null);
    };
    gate.on("data", listen);
    void exited.then((exit) => resolve(said.trim() || exit.error || `it ended (${exit.signal ?? `exit code ${exit.code}`})`));
  });
}

function nulSeparated(items: string[]): Buffer {
  return Buffer.from(items.map((item) => `${item}\0`).join(""));
}

/** A job's process started ahead of its command, moving itself into the job's control groups. */
export interface Launch extends Gate {
  placed: Promise<{ group: JobCgroup | null; error: string | null }>;
  /** For a job that ends before its command runs: kills the process and removes its groups. */
  cancel(): Promise<void>;
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Why the process could not be started, or null. */
  error: string | null;
}

function exitOf(child: ChildProcess): Promise<Exit> {
  return new Promise((resolve) => {
    child.on("error", (err) => resolve({ code: null, signal: null, error: err.message }));
    child.on("close", (code, signal) => resolve({ code, signal, error: null }));
  });
}

/**
 * SIGKILL to the process group: bwrap's PID-namespace init dies with it, and the kernel then
 * kills every process left in the namespace.
 */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

function failedStart(reason: string): SandboxExit {
  return { exitCode: null, signal: null, killedFor: null, runMs: 0, spawnError: reason };
}
