import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { lchown, mkdir, readdir, readFile, rename, rmdir, stat, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { ArchivePolicy } from "./archive";
import { createArchive, inspectArchive } from "./archive";
import type { ArtifactCache, CacheLease } from "./cache";
import { EGRESS_SOCKET_NAME_LENGTH, egressSocketPath, type RunnerConfig } from "./config";
import { type CanaryPlan, checkCanaries, placeCanaries } from "./canaries";
import { describeNamedTests, describeReach, frameworkReach, namedHiddenTests, RUNNER_INTERNALS } from "./framework-reach";
import { HARNESS_GLOBS, INTERNALS, planTests, type TestPlan } from "./frameworks";
import { buildFailure, describeBuildFailure } from "./frameworks/build";
import { taskHarness } from "./harness-files";
import { chooseNode, explainInstallFailure, installEnv, type InstallStep, planInstall, readRepoFacts, type NodeChoice, SKIP_DOWNLOADS } from "./install";
import type { InstallCache } from "./install-cache";
import { EgressProxy, type EgressTarget } from "./egress-proxy";
import type { Callback, InstallReport, LintReport, TestResult } from "../../protocol/callback";
import type { Artifact, Job } from "../../protocol/jobs";
import type { Logger } from "./log";
import { tail } from "./output-capture";
import { applyPatch, patchPaths } from "./patches";
import { LINT_LIMITS, type LintInput, runLint, stageLintFiles } from "./lint";
import { countResults, parseLcov, parseTestReport, ReportError, toJUnit } from "./reports";
import { ReportChannel } from "./report-channel";
import { runTool } from "./run-tool";
import { UnsafeInputError } from "./safe-path";
import {
  CA_BUNDLE_FILE, EGRESS_SOCKET, EXTRA_CA_FILE, type KillCause, type Launch, NODE_MODULES_SCRATCH, type OpenRun, PACKAGE_CACHE_DIR, REPORTS_DIR, type Sandbox,
  SANDBOX_PATHS, type SandboxPaths, type SandboxResult,
} from "./sandbox";
import { TransferError, upload } from "./transfer";
import { copyInstallOutput, environmentLayout, installOutput, listOwnTree } from "./environment";
import { deleteWorkspacePath, ensureWorkspaceDirectory, writeWorkspaceFile, writeWorkspaceLink } from "./workspace-fs";

export interface ExecutionContext {
  config: RunnerConfig;
  /** An empty bare repository: the only git directory host-side git ever reads (patches.ts). */
  emptyGitDir: string;
  /** Hosts and ports a prepare job may reach through its egress proxy. */
  egress: EgressTarget[];
  sandbox: Sandbox;
  /** Why the sandbox cannot be used, or null when it can (or unsafe mode is on). */
  sandboxProblem: string | null;
  cache: ArtifactCache;
  /** Environments of earlier installs, by what decided them (install-cache.ts). */
  installCache: InstallCache;
  log: Logger;
}

export interface ExecutionTimes {
  acceptedAt: number;
  startedAt: number;
}

export interface JobOutcome {
  callback: Callback;
  /** Removes the job's directory; nothing in the callback depends on it, so it may come after. */
  removeFiles(): Promise<void>;
}

const SNAPSHOT_POLICY: ArchivePolicy = { stripTopLevel: true, maxBytes: 2 * 1024 ** 3, maxEntries: 200_000, systemLinkPrefixes: [], packedByRunner: false };
const ENVIRONMENT_POLICY: ArchivePolicy = { stripTopLevel: false, maxBytes: 8 * 1024 ** 3, maxEntries: 1_000_000, systemLinkPrefixes: ["/usr/"], packedByRunner: true };
const REPORT_MAX_BYTES = 64 * 1024 * 1024;
const LOG_TAIL_BYTES = 8192;
/** The port the egress bridge listens on inside a prepare job's sandbox (its own loopback). */
const PROXY_PORT = 3128;

const KILL_REASONS: Record<Exclude<KillCause, "wall" | "aborted">, (job: Job) => string> = {
  cpu: (j) => `CPU time limit of ${j.limits.cpu_ms} ms exceeded; the process tree was killed`,
  memory: (j) => `memory limit of ${j.limits.memory_mb} MB exceeded; the process tree was killed`,
  workspace: (j) => `workspace grew past ${j.limits.workspace_mb} MB; the process tree was killed`,
};

export const SHUTDOWN_REASON = "runner shutting down: the job was interrupted before it finished";

/** Runs one job from download to uploads and returns the callback body; never throws. */
export async function executeJob(job: Job, ctx: ExecutionContext, slot: number, signal: AbortSignal, times: ExecutionTimes): Promise<JobOutcome> {
  const result = emptyCallback(job);
  const jobDir = join(ctx.config.workDir, "jobs", `${job.job_id}-${Math.random().toString(36).slice(2, 8)}`);
  const leases: CacheLease[] = [];
  let reports: ReportChannel | null = null;
  let launch: Launch | null = null;
  let opened: OpenRun | null = null;
  /** Artifact uploads still in flight; the callback waits for them (see finally). */
  const uploads: Array<Promise<void>> = [];
  const runStart = { at: 0 };
  const outcome: JobOutcome = { callback: result, removeFiles: () => removeTree(jobDir) };
  try {
    if (ctx.sandboxProblem) {
      throw new UnsafeInputError(`${ctx.sandboxProblem}; refusing to run untrusted code without the sandbox (RUNNER_UNSAFE_NO_SANDBOX=1 allows it for local development only)`);
    }
    // A slot's own, kept from job to job (see ReportChannel.open).
    const reportsDir = job.kind === "test" ? join(ctx.config.workDir, "reports", `slot${slot}`) : null;
    const dirs = Promise.all([createJobDirs(jobDir), reportsDir && mkdir(reportsDir, { recursive: true, mode: 0o755 })]);
    // Started now so that joining its control groups overlaps the set-up below; a prepare job's
    // steps are sandbox runs of their own (runInstall).
    launch = job.kind === "test" ? ctx.sandbox.launch(slot, job.limits) : null;
    const [{ workspace, output }] = await dirs;
    const { tree, placed } = await placeArtifacts(ctx.cache, workspace, job.snapshot, job.kind === "test" ? job.environment : null, leases);
    // A hidden-test run keeps the task's harness: which overlay paths are harness is read from the task's version, before the overlay is written.
    const hiddenRun = job.kind === "test" && job.test.canaries;
    const applySection = (section: string, i: number) =>
      applyPatch(workspace, section, jobDir, 1000 + i, ctx.emptyGitDir).then(
        () => true,
        (err: unknown) => {
          ctx.log("harness_patch_skipped", { job_id: job.job_id, error: reasonOf(err) });
          return false;
        },
      );
    const pinned = hiddenRun ? await taskHarness(workspace, job.files.map((f) => f.path), HARNESS_GLOBS, job.test.harness_patch, applySection) : new Set<string>();
    const written = job.files.filter((f) => !pinned.has(f.path));
    const reach = hiddenRun ? await frameworkReach(workspace, written, [...INTERNALS, ...RUNNER_INTERNALS]) : { found: [], base: new Map() };
    for (const file of written) {
      if (file.delete === true) await deleteWorkspacePath(workspace, file.path);
      else await writeWorkspaceFile(workspace, file.path, Buffer.from(file.content_b64, "base64"));
    }
    for (const [i, diff] of job.patches.entries()) await applyPatch(workspace, diff, jobDir, i, ctx.emptyGitDir);
    if (signal.aborted) throw new UnsafeInputError(SHUTDOWN_REASON);
    const lintInput = job.kind === "test" && job.lint ? await stageLintFiles(workspace, job.lint.files, join(jobDir, "lint-ws")) : null;

    const unsafe = ctx.sandbox.unsafe;
    const inside: SandboxPaths = unsafe ? { workspace, output, nodeBinDir: dirname(ctx.config.nodeBinary), toolsDir: ctx.sandbox.toolsDir } : SANDBOX_PATHS;
    await mountEnvironment(workspace, placed, unsafe);
    const reportsInside = unsafe ? (reportsDir ?? "") : REPORTS_DIR;
    const reportPaths = {
      junit: `${reportsInside}/junit`,
      lcov: `${reportsInside}/lcov`,
      coverageConfig: `${inside.toolsDir}/coveragerc`,
      node: `${inside.nodeBinDir}/node`,
      tools: inside.toolsDir,
    };
    // Which workspace package holds the tests: the files named, else those the test patch touches.
    const testFiles = job.test.files ?? job.patches.flatMap((diff) => patchPaths(diff));
    const plan = await planTests(workspace, job.test, reportPaths, job.coverage_files, testFiles).catch((err: unknown) => {
      if (job.kind === "prepare" && err instanceof UnsafeInputError) return null;
      throw err;
    });
    result.framework = plan?.framework ?? null;
    result.command = plan?.command ?? null;

    const facts = await readRepoFacts(workspace);
    const node = chooseNode(facts.nodeRange, ctx.sandbox.nodeVersions, job.runtime.node, job.runtime.node_reason);
    if (job.kind === "prepare") {
      const owner = ctx.sandbox.ownerFor(slot);
      if (owner) await chownTree([workspace, output], owner);
      result.timings.setup_ms = Math.round(performance.now() - times.startedAt);
      runStart.at = performance.now();
      const steps = planInstall(facts, job.install.command);
      const installKey = await ctx.installCache.keyOf(workspace, job.schedule.org_id, facts, steps, node, ctx.sandbox.pythonVersion);
      const reused = installKey ? await ctx.installCache.find(installKey) : null;
      if (reused && (await tryUpload(job.uploads.environment as string, await readFile(reused.archive), "application/gzip", ctx, job))) {
        const log = Buffer.from(`# ${node.note}\n# the environment of an identical earlier install (same steps, Node, manifests and lockfiles) was reused\n`);
        // The same steps on the same Node, but this job's reasons for that Node.
        const install = { ...reused.report, node_note: node.note, node_candidates: node.candidates };
        [result.status, result.environment, result.install] = ["SUCCEEDED", { sha256: reused.sha256, size: reused.size }, install];
        result.log_tail = log.toString();
        uploads.push(tryUpload(job.uploads.log, log, "text/plain; charset=utf-8", ctx, job).then((ok) => {
          result.artifacts.log = ok;
        }));
        return outcome;
      }
      const before = await listOwnTree(workspace);
      const installed = await runInstall(job, ctx, { workspace, output, jobDir, slot, signal, inside, node, times, steps });
      result.timings.run_ms = Math.round(performance.now() - runStart.at);
      result.install = installed.report;
      result.exit_code = installed.exitCode;
      result.log_tail = tail(installed.log, LOG_TAIL_BYTES);
      uploads.push(tryUpload(job.uploads.log, installed.log, "text/plain; charset=utf-8", ctx, job).then((ok) => {
        result.artifacts.log = ok;
      }));
      await finishPrepare(job, ctx, installed, { workspace, before }, jobDir, result, installKey);
      return outcome;
    }
    const env = { ...plan?.env, ...sandboxEnv(ctx.config, job, inside, reportPaths, false) };
    // A package's own node_modules/.bin comes before the root's, as its package manager runs it.
    if (plan?.cwd) env.PATH = `${inside.workspace}/${plan.cwd}/node_modules/.bin:${env.PATH}`;
    const command = (plan as TestPlan).argv;
    // The sandbox sets itself up while the steps below finish the workspace; the command waits for `run`.
    opened = await ctx.sandbox.open(
      {
        workspace, output, reportsDir, readOnlyMounts: unsafe ? [] : placed.mounts,
        egressSocket: null, command, env, limits: job.limits, slot, signal, nodeVersion: node.version,
      },
      launch,
    );
    launch = null;
    if (reportsDir) reports = await ReportChannel.open(reportsDir, REPORT_MAX_BYTES);
    const canaries = plan && job.test.canaries && job.test.files ? await placeCanaries(workspace, plan.framework, job.test.files) : null;
    // What in the candidate's code voids the run whatever the tests report (framework-reach.ts).
    const named = canaries ? namedHiddenTests(written, canaries.tests, reach.base) : [];
    const voids = [...(reach.found.length > 0 ? [describeReach(reach.found)] : []), ...(named.length > 0 ? [describeNamedTests(named)] : [])];
    const owner = ctx.sandbox.ownerFor(slot);
    if (owner) await chownTree([workspace, output], owner);
    result.timings.setup_ms = Math.round(performance.now() - times.startedAt);
    runStart.at = performance.now();
    const sandboxed = opened;
    opened = null;
    const run = sandboxed
      ? await sandboxed.run(() => {
          if (tree) void ctx.cache.copyAhead(tree);
        })
      : null;
    if (run) {
      result.timings.run_ms = run.runMs;
      result.exit_code = run.exitCode;
      result.log_truncated = run.logTruncated;
      result.log_tail = tail(run.log, LOG_TAIL_BYTES);
    }
    const finishing = finishTest(job, ctx, run as SandboxResult, reports as ReportChannel, inside.workspace, plan as TestPlan, canaries, { pinned: [...pinned], voids }, result, uploads);
    // After finishTest has asked for the reports, so that their reading and this upload overlap.
    const log = run ? run.log : Buffer.alloc(0);
    uploads.push(tryUpload(job.uploads.log, log, "text/plain; charset=utf-8", ctx, job).then((ok) => {
      result.artifacts.log = ok;
    }));
    await finishing;
    if (lintInput && job.lint) {
      const finished = run && run.killedFor !== "aborted" && !run.spawnError;
      result.lint = finished
        ? await lintStaged(job.lint.files, lintInput, ctx, jobDir, slot, signal).catch((err: unknown) => {
            ctx.log("lint_failed", { job_id: job.job_id, error: reasonOf(err) });
            return null;
          })
        : null;
      if (signal.aborted) throw new UnsafeInputError(SHUTDOWN_REASON);
      if (result.lint?.error) ctx.log("lint_failed", { job_id: job.job_id, error: result.lint.error });
    }
  } catch (err) {
    result.status = "ERROR";
    result.reason = reasonOf(err);
    if (!(err instanceof UnsafeInputError || err instanceof TransferError)) ctx.log("job_error", { job_id: job.job_id, error: String(err) });
  } finally {
    await opened?.cancel();
    await launch?.cancel();
    await reports?.close();
    for (const lease of leases) lease.release();
    await Promise.all(uploads);
    if (runStart.at === 0) result.timings.setup_ms = Math.round(performance.now() - times.startedAt);
    result.timings.queued_ms = Math.round(times.startedAt - times.acceptedAt);
    result.timings.total_ms = Math.round(performance.now() - times.acceptedAt);
  }
  return outcome;
}

async function finishTest(
  job: Job, ctx: ExecutionContext, run: SandboxResult, channel: ReportChannel, insideWorkspace: string, plan: TestPlan,
  canaries: CanaryPlan | null, overlay: { pinned: string[]; voids: string[] }, result: Callback, uploads: Array<Promise<void>>,
): Promise<void> {
  const reports = await channel.read();
  const junit = reports.junit.bytes;
  let tests: TestResult[] = [];
  let reportProblem: string | null = reports.junit.overflow ? `the JUnit report is larger than ${REPORT_MAX_BYTES} bytes` : null;
  // A failed build step ends the run before any test, leaving its record where the report goes.
  const buildFailed = plan.build.length > 0 && junit ? buildFailure(junit.toString("utf8")) : null;
  if (junit && !buildFailed) {
    try {
      tests = parseTestReport(plan.report, junit.toString("utf8"), insideWorkspace, plan.cwd);
    } catch (err) {
      if (!(err instanceof ReportError)) throw err;
      reportProblem = err.message;
    }
    // The driver's per-file JSON is kept as JUnit, like every other framework's report; one
    // that could not be read is kept as it was written.
    const artifact = plan.report === "per-file" && !reportProblem ? Buffer.from(toJUnit(tests)) : junit;
    uploads.push(tryUpload(job.uploads.junit, artifact, "application/xml", ctx, job).then((ok) => {
      result.artifacts.junit = ok;
    }));
  }
  if (canaries) {
    const checked = checkCanaries(canaries, tests);
    tests = checked.tests;
    result.integrity = { ...checked.integrity, pinned_files: overlay.pinned };
    // Only sandboxed code adds to a report the reporter wrote whole, and only a process that was
    // killed (or killed the reporter) ends a canary run without its own exit code.
    const foreign = reportProblem ?? (tests.length > 0 && run.exitCode === null && !run.killedFor ? `the test process ended by ${run.signal ?? "a signal"}` : null);
    if (foreign && !checked.integrity.tampered) {
      result.integrity = { ...result.integrity, tampered: true, reason: `the report cannot be trusted: ${foreign}` };
    }
    if (overlay.voids.length > 0) {
      const reason = overlay.voids.join("; ");
      result.integrity = { ...result.integrity, tampered: true, reason: result.integrity.tampered ? `${result.integrity.reason ?? ""}; ${reason}` : reason };
    }
  }
  result.tests = tests;
  result.counts = countResults(tests);
  if (job.test.coverage) {
    const lcov = reports.lcov.bytes;
    try {
      result.coverage = lcov ? parseLcov(lcov.toString("utf8"), insideWorkspace, plan.coverage) : null;
    } catch (err) {
      if (!(err instanceof ReportError)) throw err;
      ctx.log("coverage_rejected", { job_id: job.job_id, error: err.message });
      result.coverage = null;
    }
  }
  const exit = run.exitCode === null ? `signal ${run.signal ?? "unknown"}` : `exit code ${run.exitCode}`;
  if (run.killedFor === "aborted") [result.status, result.reason] = ["ERROR", SHUTDOWN_REASON];
  else if (run.killedFor === "wall") [result.status, result.reason] = ["TIMED_OUT", `wall-clock limit of ${job.limits.wall_ms} ms reached; the process tree was killed`];
  else if (run.spawnError) [result.status, result.reason] = ["ERROR", `could not start the sandbox: ${run.spawnError}`];
  else if (run.killedFor) [result.status, result.reason] = ["FAILED", KILL_REASONS[run.killedFor](job)];
  else if (buildFailed) [result.status, result.reason] = ["FAILED", describeBuildFailure(buildFailed)];
  else if (reportProblem) [result.status, result.reason] = ["FAILED", `${reportProblem} (${exit})`];
  else if (tests.length === 0) {
    result.status = "FAILED";
    result.reason = junit ? `the JUnit report lists no tests (${exit})` : `the test command produced no JUnit report (${exit})`;
  } else [result.status, result.reason] = ["SUCCEEDED", null];
}

/**
 * The environment as the install left it, failed steps and all: the validation runs decide
 * whether the tests can run in it, and the task's reason names the failed step when they cannot.
 * Only a job stopped as a whole (shutdown, its time limit) ends here.
 */
async function finishPrepare(
  job: Job, ctx: ExecutionContext, installed: Installed, tree: { workspace: string; before: Set<string> }, jobDir: string, result: Callback, installKey: string | null,
): Promise<void> {
  const { workspace } = tree;
  if (installed.stopped === "aborted") throw new UnsafeInputError(SHUTDOWN_REASON);
  if (installed.stopped === "wall") {
    const step = installed.report.steps.at(-1)?.name ?? "the install";
    [result.status, result.reason] = ["TIMED_OUT", `${step} ran past the prepare job's time limit of ${Math.round(job.limits.wall_ms / 1000)} s and was stopped`];
    return;
  }
  if (installed.spawnError) throw new UnsafeInputError(`could not start the sandbox: ${installed.spawnError}`);

  const entries = await installOutput(workspace, tree.before);
  if (entries.length === 0) {
    result.status = "SUCCEEDED";
    return;
  }
  for (const entry of entries.filter(isNodeModules)) {
    for (const dir of NODE_MODULES_SCRATCH) await ensureWorkspaceDirectory(workspace, `${entry}/${dir}`);
  }
  const archive = join(jobDir, "environment.tar.gz");
  await createArchive(workspace, entries, archive);
  // Test jobs refuse an environment with a link out of the workspace: said here, with the link named.
  await inspectArchive(archive, ENVIRONMENT_POLICY).catch((err: unknown) => {
    throw err instanceof UnsafeInputError ? new UnsafeInputError(`the install left what no test run may use: ${err.message}`) : err;
  });
  result.status = "SUCCEEDED";
  const sha256 = await sha256File(archive);
  const size = (await stat(archive)).size;
  if (!(await tryUpload(job.uploads.environment as string, await readFile(archive), "application/gzip", ctx, job))) {
    throw new TransferError("could not upload the environment archive");
  }
  await ctx.cache.adopt("environment", sha256, async (dir) => {
    for (const name of entries) {
      await mkdir(dirname(join(dir, name)), { recursive: true });
      await rename(join(workspace, name), join(dir, name));
    }
  });
  result.environment = { sha256, size };
  if (installKey) await ctx.installCache.store(installKey, archive, { sha256, size, report: installed.report });
}

interface Installed {
  report: InstallReport;
  log: Buffer;
  exitCode: number | null;
  /** Set when the job as a whole was stopped during a step: no later step ran. */
  stopped: "wall" | "aborted" | null;
  spawnError: string | null;
}

interface InstallPlace {
  workspace: string;
  output: string;
  jobDir: string;
  slot: number;
  signal: AbortSignal;
  inside: SandboxPaths;
  node: NodeChoice;
  times: ExecutionTimes;
  steps: InstallStep[];
}

/**
 * Runs the install steps (install.ts) one sandbox run each, all through one egress proxy and
 * within the job's one wall-clock limit. A failed step is logged, explained and, where it has
 * one, followed by its fallback; the steps after it still run.
 */
async function runInstall(job: Job, ctx: ExecutionContext, place: InstallPlace): Promise<Installed> {
  const { node, inside, steps } = place;
  const python = ctx.sandbox.pythonVersion;
  const report: InstallReport = { steps: [], failure: null, node: node.version, node_note: node.note, node_candidates: node.candidates, python: steps.some((s) => s.argv[0]?.includes("python")) ? python : null };
  const log: Buffer[] = [Buffer.from(`# ${node.note}\n`)];
  const installed: Installed = { report, log: Buffer.alloc(0), exitCode: null, stopped: null, spawnError: null };
  if (job.runtime.python && python && !python.startsWith(`${job.runtime.python}.`) && python !== job.runtime.python) {
    report.failure = `Python ${job.runtime.python} was stated, but the runner has Python ${python} only: state ${python.split(".").slice(0, 2).join(".")} or leave the version out`;
    log.push(Buffer.from(`# ${report.failure}\n`));
  }
  if (steps.length === 0) log.push(Buffer.from("# nothing to install: no dependencies declared\n"));
  const unsafe = ctx.sandbox.unsafe;
  const proxy = steps.length > 0 && !unsafe ? await EgressProxy.start(await newEgressSocketPath(ctx.config.workDir), ctx.egress, ctx.log, { job_id: job.job_id }) : null;
  const cacheHost = steps.length > 0 ? await packageCache(ctx, job, place.slot) : null;
  // Unsafe dev mode has no network namespace, so no bridge and no proxy either.
  const env = sandboxEnv(ctx.config, job, inside, null, proxy !== null);
  if (cacheHost) Object.assign(env, packageCacheEnv(unsafe ? cacheHost : PACKAGE_CACHE_DIR));
  if (ctx.sandbox.hasExtraCaCerts) Object.assign(env, caEnv(inside.toolsDir));
  const deadline = place.times.startedAt + job.limits.wall_ms;
  try {
    for (const step of steps) {
      const first = await runStep(step.name, step.argv);
      if (first === "stop") break;
      if (first.ok) continue;
      let hint = first.hint;
      if (step.fallback && !installed.stopped) {
        log.push(Buffer.from(`# ${step.fallback.note}\n`));
        const again = await runStep(step.fallback.name, step.fallback.argv);
        if (again === "stop") break;
        if (again.ok) hint = null;
      }
      report.failure ??= hint;
    }
  } finally {
    await proxy?.close();
  }
  installed.log = Buffer.concat(log);
  return installed;

  async function runStep(name: string, argv: string[]): Promise<{ ok: boolean; hint: string | null } | "stop"> {
    const remaining = Math.max(100, Math.round(deadline - performance.now()));
    const command = proxy ? [`${inside.nodeBinDir}/node`, `${inside.toolsDir}/egress-bridge.mjs`, EGRESS_SOCKET, String(PROXY_PORT), ...argv] : argv;
    log.push(Buffer.from(`\n==> ${name}\n`));
    const started = performance.now();
    const refusedBefore = proxy?.refusals.length ?? 0;
    const run = await ctx.sandbox.run({
      workspace: place.workspace, output: place.output, reportsDir: null, readOnlyMounts: [], egressSocket: proxy?.socketPath ?? null,
      command, env, limits: { ...job.limits, wall_ms: remaining }, slot: place.slot, signal: place.signal, nodeVersion: node.version,
      packageCache: unsafe ? null : cacheHost,
    });
    log.push(run.log);
    installed.exitCode = run.exitCode;
    const ok = run.exitCode === 0 && !run.killedFor && !run.spawnError;
    const text = tail(run.log, LOG_TAIL_BYTES);
    const hint = ok
      ? null
      : run.killedFor && run.killedFor !== "wall" && run.killedFor !== "aborted"
        ? `${name} failed: ${KILL_REASONS[run.killedFor](job)}`
        : explainInstallFailure(name, run.exitCode, text, proxy?.refusals.slice(refusedBefore));
    report.steps.push({ name, exit_code: run.exitCode, ok, duration_ms: Math.round(performance.now() - started), hint });
    if (!ok) log.push(Buffer.from(`# ${hint}\n`));
    if (run.spawnError) installed.spawnError = run.spawnError;
    if (run.killedFor === "wall" || run.killedFor === "aborted") installed.stopped = run.killedFor;
    return installed.stopped || run.spawnError ? "stop" : { ok, hint };
  }
}

/**
 * The organization's package caches for this slot: kept across prepare jobs so a second
 * install of the same packages downloads nothing. One per organization, so no tenant's install
 * script can plant a package another tenant's install would take from the cache; one per slot,
 * so each belongs to the one sandbox user that writes it.
 */
async function packageCache(ctx: ExecutionContext, job: Job, slot: number): Promise<string> {
  const org = createHash("sha256").update(job.schedule.org_id ?? "").digest("hex").slice(0, 16);
  const dir = join(ctx.config.packageCacheDir, org, `slot${slot}`);
  // The sandbox users pass through the parents (0711) into their own slot's directory only.
  await mkdir(dirname(dir), { recursive: true, mode: 0o711 });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const owner = ctx.sandbox.ownerFor(slot);
  // A cache kept from a runner that had other sandbox uids is handed over whole, once.
  if (owner && (await stat(dir)).uid !== owner.uid) await chownTree([dir], owner);
  return dir;
}

function packageCacheEnv(dir: string): Record<string, string> {
  return {
    npm_config_cache: `${dir}/npm`,
    // pnpm keeps its store and metadata under the XDG directories (npm would warn of a store-dir setting).
    XDG_DATA_HOME: `${dir}/xdg-data`,
    XDG_CACHE_HOME: `${dir}/xdg-cache`,
    YARN_CACHE_FOLDER: `${dir}/yarn`,
    PIP_CACHE_DIR: `${dir}/pip`,
  };
}

/** The extra CA certificates (sandbox.ts, prepareCaFiles) for Node, npm, pip and OpenSSL. */
function caEnv(toolsDir: string): Record<string, string> {
  const bundle = `${toolsDir}/${CA_BUNDLE_FILE}`;
  return { NODE_EXTRA_CA_CERTS: `${toolsDir}/${EXTRA_CA_FILE}`, PIP_CERT: bundle, SSL_CERT_FILE: bundle, REQUESTS_CA_BUNDLE: bundle };
}

/** Lints the copies staged before the tests, in a sandbox run of its own (no network, fixed limits). */
async function lintStaged(order: string[], input: LintInput, ctx: ExecutionContext, jobDir: string, slot: number, signal: AbortSignal): Promise<LintReport> {
  const output = join(jobDir, "lint-out");
  await mkdir(output, { mode: 0o755 });
  const owner = ctx.sandbox.ownerFor(slot);
  if (owner) await chownTree([output], owner);
  const unsafe = ctx.sandbox.unsafe;
  const inside = unsafe ? { output, nodeBinDir: dirname(ctx.config.nodeBinary), toolsDir: ctx.sandbox.toolsDir } : SANDBOX_PATHS;
  return runLint(input, order, inside, output, ctx.sandbox.eslintProblem, (command, env) =>
    ctx.sandbox.run({ workspace: input.dir, output, reportsDir: null, readOnlyMounts: [], egressSocket: null, command, env, limits: LINT_LIMITS, slot, signal }),
  );
}

/** A job's sandbox environment: a test job's report paths, or a prepare job's registries (through the proxy when `viaProxy`). */
function sandboxEnv(config: RunnerConfig, job: Job, inside: SandboxPaths, reports: { junit: string; lcov: string } | null, viaProxy: boolean): Record<string, string> {
  const env: Record<string, string> = {
    PATH: `${inside.workspace}/.venv/bin:${inside.workspace}/node_modules/.bin:${inside.nodeBinDir}:/usr/bin:/bin:/usr/local/bin`,
    HOME: "/tmp",
    TMPDIR: "/tmp",
    LANG: "C.UTF-8",
    CI: "1",
    NO_COLOR: "1",
    PYTHONDONTWRITEBYTECODE: "1",
    PYTHONUNBUFFERED: "1",
    ASSAY_WORKSPACE: inside.workspace,
  };
  if (reports) Object.assign(env, { ASSAY_JUNIT_PATH: reports.junit, ASSAY_LCOV_PATH: reports.lcov });
  if (job.kind === "prepare") {
    Object.assign(env, installEnv({ npm: config.npmRegistry, pip: config.pipIndexUrl }, viaProxy ? `http://127.0.0.1:${PROXY_PORT}` : null), SKIP_DOWNLOADS);
  }
  return env;
}

/** A prepared environment's dependency directory (node_modules, .venv), mounted read-only at `inside` in the workspace. */
export interface Mount {
  host: string;
  inside: string;
}

/** A prepared environment as a test job places it: its dependency directories, and its own files (environment.ts). */
export interface PlacedEnvironment {
  mounts: Mount[];
  /** The environment's directory in the cache, and its entries copied into the workspace. */
  copies: { from: string; paths: string[] };
}

/** A job's directory: the workspace and the scratch output, both bound writable into the sandbox. */
/** A fresh path for a job's egress socket (config.ts: never in the job's folder, whose path can be too long for a socket). */
async function newEgressSocketPath(workDir: string): Promise<string> {
  const path = egressSocketPath(workDir, randomBytes(EGRESS_SOCKET_NAME_LENGTH / 2).toString("hex"));
  await mkdir(dirname(path), { recursive: true, mode: 0o711 });
  return path;
}

export async function createJobDirs(jobDir: string): Promise<{ workspace: string; output: string }> {
  const workspace = join(jobDir, "ws");
  const output = join(jobDir, "out");
  await Promise.all([mkdir(workspace, { recursive: true, mode: 0o755 }), mkdir(output, { recursive: true, mode: 0o755 })]);
  return { workspace, output };
}

/**
 * The cached part of a workspace: the snapshot's tree copied in (`tree`, its lease, for
 * `ArtifactCache.copyAhead`), and the environment for `mountEnvironment` (placed after the
 * overlay, so the environment wins). Each lease is pushed as soon as it is taken: the caller
 * releases them even when this throws.
 */
export async function placeArtifacts(
  cache: ArtifactCache, workspace: string, snapshot: Artifact | null, environment: Artifact | null, leases: CacheLease[],
): Promise<{ tree: CacheLease | null; placed: PlacedEnvironment }> {
  const tree = snapshot && (await cache.acquire("snapshot", snapshot.sha256, snapshot.url, SNAPSHOT_POLICY));
  if (tree) {
    leases.push(tree);
    await cache.placeCopy(tree, workspace);
  }
  if (!environment) return { tree, placed: { mounts: [], copies: { from: "", paths: [] } } };
  const env = await cache.acquire("environment", environment.sha256, environment.url, ENVIRONMENT_POLICY);
  leases.push(env);
  const layout = await environmentLayout(env.path);
  return {
    tree,
    placed: { mounts: layout.mounts.map((inside) => ({ host: join(env.path, inside), inside })), copies: { from: env.path, paths: layout.copies } },
  };
}

/**
 * The environment's own files copied in, and a mount point for each dependency directory. In
 * unsafe mode there are no mounts, so dependency directories are linked in instead.
 */
export async function mountEnvironment(workspace: string, placed: PlacedEnvironment, unsafe: boolean): Promise<void> {
  await copyInstallOutput(placed.copies.from, workspace, placed.copies.paths);
  for (const m of placed.mounts) {
    await deleteWorkspacePath(workspace, m.inside);
    if (unsafe) await writeWorkspaceLink(workspace, m.inside, m.host);
    else await ensureWorkspaceDirectory(workspace, m.inside);
  }
}

/**
 * Like `chown -R -P`: links are changed themselves, never followed. Each level's entries at
 * once, in this process: spawning chown costs a job more than walking a workspace does.
 */
export async function chownTree(paths: string[], owner: { uid: number; gid: number }): Promise<void> {
  await Promise.all(paths.map((path) => chownDirectory(path, owner)));
}

async function chownDirectory(dir: string, owner: { uid: number; gid: number }): Promise<void> {
  await lchown(dir, owner.uid, owner.gid);
  const entries = await readdir(dir, { withFileTypes: true });
  await Promise.all(entries.map((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? chownDirectory(path, owner) : lchown(path, owner.uid, owner.gid);
  }));
}

/** Removes a directory the runner made, and everything in it; links are removed, never followed. */
export async function removeTree(path: string): Promise<void> {
  try {
    await removeDirectory(path);
  } catch {
    // Sandboxed code may have left directories without write permission for the owner.
    await runTool("chmod", ["-R", "u+rwX", path]).catch(() => undefined);
    await removeDirectory(path).catch(() => undefined);
  }
}

/**
 * Each level's entries at once, and the directory entry types as read: the callback waits for
 * this, and `fs.rm` takes about twice the round trips through the thread pool.
 */
async function removeDirectory(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(ignoreMissing);
  if (!entries) return;
  await Promise.all(entries.map((entry) => (entry.isDirectory() ? removeDirectory(join(dir, entry.name)) : unlink(join(dir, entry.name)).catch(ignoreMissing))));
  await rmdir(dir).catch(ignoreMissing);
}

function ignoreMissing(err: NodeJS.ErrnoException): undefined {
  if (err.code === "ENOENT") return undefined;
  throw err;
}

async function tryUpload(url: string, body: Buffer, type: string, ctx: ExecutionContext, job: Job): Promise<boolean> {
  try {
    await upload(url, body, type);
    return true;
  } catch (err) {
    ctx.log("upload_failed", { job_id: job.job_id, bytes: body.length, error: reasonOf(err) });
    return false;
  }
}

const isNodeModules = (entry: string) => entry === "node_modules" || entry.endsWith("/node_modules");

async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** A failure as a job's or an execution's reason: refusals and transfer failures say what; anything else is internal. */
export function reasonOf(err: unknown): string {
  if (err instanceof UnsafeInputError || err instanceof TransferError) return err.message;
  return `internal error: ${err instanceof Error ? err.message : String(err)}`;
}

export function emptyCallback(job: Pick<Job, "job_id" | "kind">): Callback {
  return {
    job_id: job.job_id,
    kind: job.kind,
    status: "ERROR",
    reason: null,
    exit_code: null,
    timings: { queued_ms: 0, setup_ms: 0, run_ms: 0, total_ms: 0 },
    counts: { total: 0, passed: 0, failed: 0, skipped: 0, errored: 0 },
    tests: [],
    log_tail: "",
    log_truncated: false,
    framework: null,
    command: null,
    environment: null,
    artifacts: { junit: false, log: false },
  };
}
