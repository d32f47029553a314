import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { waitUntil } from "../../../scripts/lib/wait";
import type { RunnerConfigInput } from "../../src/config";
import type { Callback } from "../../../protocol/callback";
import { livePidsOwnedBy } from "../../src/process-tree";
import { startRunner, type RunningRunner } from "../../src/server";
import { signedHeaders } from "../../../protocol/signing";
import { FakeWorker } from "./fake-worker";
import { snapshot } from "./tarball";

export const SECRET = "test-secret-0123456789abcdef";

export type TestJob = Record<string, unknown> & { job_id: string };

export interface Harness {
  runner: RunningRunner;
  worker: FakeWorker;
  workDir: string;
  logs: Array<Record<string, unknown>>;
  /** Resolves with the first log event (past or future) that matches. */
  waitForLog(match: (event: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  /** Submits a job and waits for its callback. */
  run(job: Record<string, unknown>): Promise<Callback>;
  submit(job: unknown, headers?: Record<string, string>): Promise<{ status: number; body: unknown }>;
  /** POSTs `body` as JSON to the runner, signed unless `headers` are given. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: unknown }>;
  job(id: string, files: Record<string, string>, extra?: Record<string, unknown>): TestJob;
  /** A prepare job: its log at uploads `${id}/log.txt`, its environment at `${id}/env.tar.gz`; a minute's wall clock. */
  prepareJob(id: string, files: Record<string, string>, extra?: Record<string, unknown>): TestJob;
  close(): Promise<void>;
}

let counter = 0;
export const jobId = (label: string) => `job_${label}_${process.pid}_${++counter}_${Date.now().toString(36)}`;

/** Small limits keep hostile cases quick; individual jobs raise them where needed. */
export const TEST_LIMITS = { wall_ms: 20_000, cpu_ms: 20_000, memory_mb: 1024, processes: 128, output_bytes: 64 * 1024, workspace_mb: 64 };

/**
 * A runner on a work dir of its own. Test files run two at a time and count or kill the
 * processes of their sandbox uids, so each file's `sandboxUidBase` (and the pool above it)
 * must be one no other file uses.
 */
export async function startHarness(overrides: Partial<RunnerConfigInput> = {}): Promise<Harness> {
  const workDir = overrides.workDir ?? (await mkdtemp(join(tmpdir(), "assay-runner-test-")));
  const logs: Array<Record<string, unknown>> = [];
  const logWaiters: Array<{ match: (e: Record<string, unknown>) => boolean; resolve: (e: Record<string, unknown>) => void }> = [];
  const onLog = (line: string) => {
    const event = JSON.parse(line) as Record<string, unknown>;
    logs.push(event);
    for (const w of logWaiters.filter((x) => x.match(event))) {
      logWaiters.splice(logWaiters.indexOf(w), 1);
      w.resolve(event);
    }
  };
  const worker = await new FakeWorker(SECRET).start();
  const runner = await startRunner({
    secret: SECRET,
    port: 0,
    workDir,
    poolSize: 2,
    // Room for every job a test submits at once; tests of backpressure give their own.
    backlog: 64,
    // A shutdown stops running jobs at once, unless a test of draining says otherwise.
    drainMs: 0,
    callbackRetry: { attempts: 5, baseDelayMs: 20, maxDelayMs: 100 },
    logSink: onLog,
    ...overrides,
  });

  const post = async (path: string, payload: unknown, headers?: Record<string, string>) => {
    const body = JSON.stringify(payload);
    const response = await fetch(`${runner.url}${path}`, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", ...(headers ?? (await signedHeaders(SECRET, body))) },
    });
    return { status: response.status, body: (await response.json()) as unknown };
  };
  const submit = (job: unknown, headers?: Record<string, string>) => post("/jobs", job, headers);

  const job = (id: string, files: Record<string, string>, extra: Record<string, unknown> = {}): TestJob => ({
    job_id: id,
    kind: "test",
    snapshot: worker.blob(`${id}.tar.gz`, snapshot(files)),
    environment: null,
    files: [],
    patches: [],
    test: { framework: "auto", command: null, coverage: false },
    limits: TEST_LIMITS,
    uploads: { junit: `${worker.url}/uploads/${id}/junit.xml`, log: `${worker.url}/uploads/${id}/log.txt` },
    callback_url: `${worker.url}/callback`,
    ...extra,
  });
  const prepareJob = (id: string, files: Record<string, string>, extra: Record<string, unknown> = {}): TestJob =>
    job(id, files, {
      kind: "prepare",
      limits: { ...TEST_LIMITS, wall_ms: 60_000 },
      uploads: { junit: `${worker.url}/uploads/${id}/junit.xml`, log: `${worker.url}/uploads/${id}/log.txt`, environment: `${worker.url}/uploads/${id}/env.tar.gz` },
      ...extra,
    });

  return {
    runner,
    worker,
    workDir,
    logs,
    waitForLog: (match) => {
      const seen = logs.find(match);
      return seen ? Promise.resolve(seen) : new Promise((resolve) => logWaiters.push({ match, resolve }));
    },
    submit,
    post,
    job,
    prepareJob,
    async run(j) {
      const answer = await submit(j);
      if (answer.status !== 202) throw new Error(`job not accepted: ${answer.status} ${JSON.stringify(answer.body)}`);
      return worker.callback(j.job_id as string);
    },
    async close() {
      await runner.close();
      await worker.stop();
      if (!overrides.workDir) await rm(workDir, { recursive: true, force: true });
    },
  };
}

/** Pids of live (non-zombie) processes owned by the given uids (the sandbox users of one harness). */
export async function processesOwnedBy(uids: number[]): Promise<number[]> {
  return (await Promise.all(uids.map(livePidsOwnedBy))).flat();
}

/**
 * That no process of `uids` is left once a job has ended. A killed process leaves its control
 * group (and so lets the job end) before the kernel is done tearing it down, and on a loaded
 * machine /proc shows it for a moment more; one that was never killed is still there after
 * the few seconds allowed, and the expectation names it.
 */
export async function expectNoProcessesLeft(uids: number[]): Promise<void> {
  const deadline = Date.now() + 5_000;
  let left = await processesOwnedBy(uids);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    left = await processesOwnedBy(uids);
  }
  expect(left).toEqual([]);
}

/** The number of read(2) on this machine, as /proc/<pid>/syscall shows it. */
const READ_SYSCALL = process.arch === "arm64" ? 63 : 0;

/**
 * Resolves once a process of `uid` is blocked reading `fd`: for a sandbox opened and not yet
 * started, bwrap waiting on its --block-fd, with the sandbox set up and the command held.
 */
export async function blockedReading(uid: number, fd: number): Promise<void> {
  const { readFile } = await import("node:fs/promises");
  const readingFd = async (pid: number) => {
    const [nr, arg0] = (await readFile(`/proc/${pid}/syscall`, "utf8").catch(() => "")).split(" ");
    return Number(nr) === READ_SYSCALL && Number(arg0) === fd;
  };
  await waitUntil(
    `a process of uid ${uid} to wait on fd ${fd}`,
    async () => (await Promise.all((await livePidsOwnedBy(uid)).map(readingFd))).some(Boolean),
    { timeoutMs: 20_000, intervalMs: 5 },
  );
}
