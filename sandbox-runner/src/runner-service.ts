import { randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import { chmod, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ArtifactCache, type CacheStats } from "./cache";
import { type Cgroups, detectCgroups } from "./cgroups";
import type { RunnerConfig } from "./config";
import type { Execution } from "../../protocol/execution-messages";
import { type ExecutionOutcome, ExecutionSession } from "./execution-session";
import { InstallCache } from "./install-cache";
import { emptyCallback, type ExecutionContext, executeJob, SHUTDOWN_REASON } from "./job-execution";
import { JobRegistry, type JobState } from "./job-registry";
import { LeaseKeeper } from "./leases";
import type { Callback } from "../../protocol/callback";
import type { Job } from "../../protocol/jobs";
import type { Logger } from "./log";
import { SlotPool } from "./pool";
import { egressTargets } from "./egress-proxy";
import { createEmptyGitDir } from "./patches";
import { Sandbox } from "./sandbox";
import { leaseUidBlock, type UidLease } from "./uid-lease";
import { postSigned } from "./transfer";

export interface Health {
  status: "ok" | "degraded" | "shutting_down";
  /** This process: a restarted runner is a new one, holding none of the old one's jobs. */
  runner_id: string;
  pool: { running: number; queued: number; capacity: number; backlog: number };
  cache: CacheStats;
  sandbox: {
    isolation: "bubblewrap" | "none (unsafe dev mode)" | "unavailable";
    problem: string | null;
    /** What enforces memory and process limits per job: "cgroup v2", "cgroup v1" or "rlimits". */
    limits: string;
  };
}

/** 503: not now, come back in `retryAfterSeconds` (full, or draining for shutdown); not a failure. */
export type Busy = { status: 503; reason: "full" | "shutting_down"; retryAfterSeconds: number };
export type Submission = { status: 202; state: "accepted" } | { status: 200; state: JobState } | Busy;
/** 200: the id was taken before, and nothing starts again. */
export type ExecutionSubmission = { status: 202 | 200 } | Busy;

export const QUEUED_SHUTDOWN_REASON = "runner shutting down: the job was still queued and never started";

/** Offered again by the Worker's queue after this long; another runner may well have room now. */
const FULL_RETRY_AFTER_SECONDS = 1;

/**
 * Accepts jobs, runs them in a bounded pool and reports every one of them exactly once; runs
 * interactive executions in the same pool over their Durable Objects' sockets.
 */
export class RunnerService {
  private pool: SlotPool;
  private cgroups: Cgroups | null = null;
  private readonly registry: JobRegistry;
  private readonly executionIds: JobRegistry<ExecutionOutcome>;
  private readonly cache: ArtifactCache;
  private readonly inflight = new Set<Promise<void>>();
  private readonly aborts = new Map<string, AbortController>();
  private readonly sessions = new Set<ExecutionSession>();
  private context: ExecutionContext | null = null;
  private closing = false;
  private uidLease: UidLease | null = null;
  /** Jobs stopped because they are no longer this runner's, or handed back while draining: no result is sent. */
  private readonly unfinished = new Map<string, "lost" | "handed_back">();
  private readonly leases: LeaseKeeper;

  constructor(
    private readonly config: RunnerConfig,
    private readonly log: Logger,
  ) {
    this.pool = new SlotPool(config.poolSize);
    this.registry = new JobRegistry(join(config.workDir, "state"), config.jobMemoryMs);
    this.executionIds = new JobRegistry(join(config.workDir, "execution-state"), config.jobMemoryMs);
    this.cache = new ArtifactCache(join(config.workDir, "cache"), config.cacheMaxBytes, config.maxDownloadBytes, log);
    this.leases = new LeaseKeeper(`rnr_${randomUUID().replaceAll("-", "")}`, config.secret, config.callbackRetry, log, (ids) => this.lost(ids));
  }

  get runnerId(): string {
    return this.leases.runnerId;
  }

  async init(): Promise<void> {
    // Sandboxed uids must traverse the work dir to reach their bind sources, never list it.
    for (const dir of [this.config.workDir, join(this.config.workDir, "jobs")]) {
      await mkdir(dir, { recursive: true });
      await chmod(dir, 0o711);
    }
    const closed = this.config.unsafeNoSandbox || process.getuid?.() !== 0 ? null : closedAncestor(this.config.workDir);
    if (closed) {
      throw new Error(
        `RUNNER_WORK_DIR ${this.config.workDir} is inside ${closed}, which the sandbox users cannot enter; ` +
          `choose a work dir whose parents are world-traversable (chmod o+x), such as the default under /var/tmp`,
      );
    }
    await this.registry.init();
    await this.executionIds.init();
    await this.cache.init();
    const root = process.getuid?.() === 0;
    const needsUids = !this.config.unsafeNoSandbox && root;
    this.uidLease = needsUids ? leaseUidBlock(this.config.sandboxUidBase) : null;
    this.cgroups = this.config.cgroups === "auto" && !this.config.unsafeNoSandbox ? await detectCgroups() : null;
    // Without control groups and without a uid per slot, every job would share one process
    // limit (RLIMIT_NPROC is per uid): one job's fork storm would fail another's run.
    if (!this.cgroups && !root && this.config.poolSize > 1) {
      this.log("pool_narrowed", { pool_size: 1, configured: this.config.poolSize, reason: "no control groups and no per-slot uids: one job at a time" });
      this.pool = new SlotPool(1);
    }
    const emptyGitDir = join(this.config.workDir, "empty.git");
    await createEmptyGitDir(emptyGitDir);
    const options = {
      bwrapPath: this.config.bwrapPath,
      nodeBinary: this.config.nodeBinary,
      extraNodeBinaries: this.config.extraNodeBinaries,
      extraCaCerts: this.config.extraCaCerts,
      workDir: this.config.workDir,
      sandboxUidBase: this.uidLease?.base ?? this.config.sandboxUidBase,
      lintModules: this.config.lintModules,
      cgroups: this.cgroups,
    };
    let sandbox = new Sandbox({ ...options, unsafe: false });
    await sandbox.prepare();
    const probe = sandbox.probe();
    let problem: string | null = null;
    if (!probe.ok) {
      if (this.config.unsafeNoSandbox) {
        sandbox = new Sandbox({ ...options, unsafe: true });
        await sandbox.prepare();
      } else problem = `sandbox unavailable: ${probe.reason}`;
      this.log("sandbox_refused", { reason: probe.reason, unsafe_mode: this.config.unsafeNoSandbox });
    }
    if (sandbox.eslintProblem) this.log("eslint_unavailable", { reason: sandbox.eslintProblem });
    const egress = egressTargets([this.config.npmRegistry, this.config.pipIndexUrl], this.config.egressExtraHosts);
    const installCache = new InstallCache(join(this.config.workDir, "install-cache"), this.config.cacheMaxBytes);
    this.context = { config: this.config, egress, emptyGitDir, sandbox, sandboxProblem: problem, cache: this.cache, installCache, log: this.log };
  }

  health(): Health {
    const ctx = this.context;
    const isolation = ctx?.sandboxProblem ? "unavailable" : ctx?.sandbox.unsafe ? "none (unsafe dev mode)" : "bubblewrap";
    return {
      status: this.closing ? "shutting_down" : isolation === "bubblewrap" ? "ok" : "degraded",
      runner_id: this.runnerId,
      pool: { running: this.pool.running, queued: this.pool.queued, capacity: this.pool.capacity, backlog: this.config.backlog },
      cache: this.cache.stats(),
      sandbox: { isolation, problem: ctx?.sandboxProblem ?? null, limits: this.cgroups ? `cgroup ${this.cgroups.version}` : "rlimits" },
    };
  }

  /**
   * Takes a job when it has room for it (docs/runner-protocol.md, "Backpressure"): a free
   * slot or a backlog place the pool's shares allow. Otherwise it is "full", and the Worker's
   * queue keeps the job. A job id seen before is answered with its state, whatever the load.
   */
  async submit(job: Job): Promise<Submission> {
    const known = this.registry.get(job.job_id);
    if (known) {
      this.log("job_replayed", { job_id: job.job_id });
      return { status: 200, state: known };
    }
    if (this.closing) return { status: 503, reason: "shutting_down", retryAfterSeconds: FULL_RETRY_AFTER_SECONDS };
    const { priority, attempt_id: attemptId, org_id: orgId } = job.schedule;
    if (!this.pool.admits({ priority, attemptId, orgId }, this.config.backlog)) {
      this.log("job_full", { job_id: job.job_id, priority, queued: this.pool.queued, running: this.pool.running });
      return { status: 503, reason: "full", retryAfterSeconds: FULL_RETRY_AFTER_SECONDS };
    }
    if (!(await this.registry.claim(job.job_id))) {
      this.log("job_replayed", { job_id: job.job_id });
      return { status: 200, state: this.registry.get(job.job_id) ?? "queued" };
    }
    this.log("job_accepted", { job_id: job.job_id, kind: job.kind, priority, queued: this.pool.queued, running: this.pool.running });
    const task = this.process(job, performance.now()).finally(() => this.inflight.delete(task));
    this.inflight.add(task);
    return { status: 202, state: "accepted" };
  }

  /**
   * Dials the execution's object at once and runs it there (execution-session.ts); the answer
   * comes before any download or start.
   */
  async startExecution(execution: Execution): Promise<ExecutionSubmission> {
    const id = execution.execution_id;
    if (this.closing) return { status: 503, reason: "shutting_down", retryAfterSeconds: FULL_RETRY_AFTER_SECONDS };
    if (!(await this.executionIds.claim(id))) {
      this.log("execution_replayed", { execution_id: id });
      return { status: 200 };
    }
    const { language } = execution.command;
    this.log("execution_accepted", {
      execution_id: id, language, priority: execution.schedule.priority, snapshot: execution.workspace.snapshot !== null,
      queued: this.pool.queued, running: this.pool.running,
    });
    const { sandbox, sandboxProblem } = this.context as ExecutionContext;
    const ctx = { sandbox, sandboxProblem, workDir: this.config.workDir, cache: this.cache };
    const session = new ExecutionSession(execution, { ctx, pool: this.pool, log: this.log });
    this.sessions.add(session);
    const task = session
      .run()
      .then((outcome) => this.executionIds.set(id, outcome))
      .catch((err: unknown) => this.log("execution_error", { execution_id: id, error: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        this.sessions.delete(session);
        this.inflight.delete(task);
      });
    this.inflight.add(task);
    return { status: 202 };
  }

  /**
   * Drains: stops intake; hands back the jobs still waiting for a slot; lets running jobs
   * finish for up to `drainMs`, then stops them and hands them back too. A job without a
   * lease (its Worker cannot take it back) is reported ERROR instead. Ends live executions
   * and waits until their exits are sent.
   */
  async shutdown(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.log("runner_stopping", { running: this.pool.running, queued: this.pool.queued, drain_ms: this.config.drainMs });
    // Before the waiting slots are refused, so a queued execution knows why it never started.
    for (const session of this.sessions) session.shutdown();
    this.pool.rejectWaiting(new Error(QUEUED_SHUTDOWN_REASON));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.config.drainMs)));
    await Promise.race([Promise.allSettled([...this.inflight]), deadline]);
    clearTimeout(timer);
    for (const [jobId, controller] of this.aborts) {
      if (!this.unfinished.has(jobId)) this.unfinished.set(jobId, "handed_back");
      controller.abort();
    }
    await Promise.allSettled([...this.inflight]);
    this.leases.stop();
    await this.cgroups?.close();
    this.uidLease?.release();
    this.log("runner_stopped");
  }

  /** Jobs the Worker says are no longer this runner's: stopped, and their results not sent. */
  private lost(jobIds: string[]): void {
    for (const jobId of jobIds) {
      const controller = this.aborts.get(jobId);
      if (!controller || this.unfinished.has(jobId)) continue;
      this.log("job_lost", { job_id: jobId });
      this.unfinished.set(jobId, "lost");
      controller.abort();
    }
  }

  private async process(job: Job, acceptedAt: number): Promise<void> {
    const controller = new AbortController();
    this.aborts.set(job.job_id, controller);
    if (job.lease) this.leases.hold(job.job_id, job.lease);
    let callback: Callback;
    let removeFiles: () => Promise<void> = async () => undefined;
    const { priority, attempt_id: attemptId, org_id: orgId } = job.schedule;
    const slot = await this.pool.acquire({ priority, attemptId, orgId }, controller.signal).catch(() => null);
    try {
      if (slot === null || this.closing) {
        if (job.lease && !this.unfinished.has(job.job_id)) this.unfinished.set(job.job_id, "handed_back");
        callback = emptyCallback(job);
        callback.reason = slot === null ? QUEUED_SHUTDOWN_REASON : SHUTDOWN_REASON;
        callback.timings.queued_ms = callback.timings.total_ms = Math.round(performance.now() - acceptedAt);
      } else {
        await this.registry.set(job.job_id, "running");
        this.log("job_started", { job_id: job.job_id, slot });
        ({ callback, removeFiles } = await executeJob(job, this.context as ExecutionContext, slot, controller.signal, { acceptedAt, startedAt: performance.now() }));
      }
    } finally {
      if (slot !== null) this.pool.release(slot);
      this.aborts.delete(job.job_id);
    }
    try {
      await this.report(job, callback);
    } finally {
      await removeFiles();
    }
  }

  private async report(job: Job, callback: Callback): Promise<void> {
    const unfinished = this.unfinished.get(job.job_id);
    this.unfinished.delete(job.job_id);
    if (unfinished && job.lease) {
      // Another runner takes it over; were it offered here again, it must run.
      this.registry.forget(job.job_id);
      if (unfinished === "handed_back") await this.leases.release(job.job_id, callback.reason ?? SHUTDOWN_REASON);
      else this.leases.drop(job.job_id);
      return;
    }
    // The state is set at once (a replay is answered with it); only its file is written meanwhile.
    const recorded = this.registry.set(job.job_id, callback.status);
    this.log("job_finished", {
      job_id: job.job_id,
      kind: job.kind,
      status: callback.status,
      reason: callback.reason,
      exit_code: callback.exit_code,
      counts: callback.counts,
      timings: callback.timings,
    });
    const [posted] = await Promise.all([
      postSigned(job.callback_url, callback, this.config.secret, this.config.callbackRetry, this.log, { job_id: job.job_id }),
      recorded,
    ]);
    let delivered = posted.ok;
    if (!posted.ok && posted.refusal && callback.status !== "ERROR") {
      // A result the Worker refuses would otherwise be lost and the job requeued until it gives up
      // with no reason; an ERROR that carries the refusal ends it at once, saying what went wrong.
      const refused = emptyCallback(job);
      refused.reason = `the service refused the runner's result (${posted.refusal}); the job's ${callback.status} result was not recorded`;
      refused.timings = callback.timings;
      delivered = (await postSigned(job.callback_url, refused, this.config.secret, this.config.callbackRetry, this.log, { job_id: job.job_id })).ok;
      if (delivered) this.log("callback_refused_reported", { job_id: job.job_id, refusal: posted.refusal });
    }
    this.leases.drop(job.job_id);
    if (delivered) this.log("callback_delivered", { job_id: job.job_id, status: callback.status });
  }
}

/** The first ancestor of `dir` that others may not traverse, if any. */
function closedAncestor(dir: string): string | null {
  for (let d = dirname(dir); ; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) return d;
    if (d === dirname(d)) return null;
  }
}
