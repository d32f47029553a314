// Candidate runs: seconds from POST /attempts/{id}/runs to SUCCEEDED for the demo task
// (slugify-js PR 1 at its base commit, through the real sandbox runner), BENCH_RUNS (20) runs
// one after another, each read with `Prefer: wait` (answered at its end; a server that does not
// say `Preference-Applied`, an older commit's in `bench compare`, is polled every 50 ms
// instead); beside them the runner's own account of each run and
// the bare test command run directly on this machine against the same files. Against the local
// stack (BENCH_API_URL with BENCH_REPOHOST_URL, else a stack of its own started with `npm start`).
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { slugifyDemo } from "../dev-repohost/demo/slugify-js";
import { mintLocalToken } from "../lib/local-token";
import { launchStack } from "../lib/stack";
import { percentile, type Emit } from "./metrics";

const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const READY_TIMEOUT_MS = Number(process.env.BENCH_READY_TIMEOUT_S ?? 600) * 1000;
const RUN_TIMEOUT_MS = 300_000;
const POLL_MS = 50;
const ORG = "bench-runs";
const SCORED_ATTEMPTS = 5;

/** A started attempt of a new candidate on the task. */
async function newStartedAttempt(base: string, taskId: string): Promise<{ id: string; token: string }> {
  const sub = `bench-scoring-${crypto.randomUUID().slice(0, 8)}`;
  const token = await mintLocalToken({ sub, email: `${sub}@example.test`, role: "candidate", ttl: "2h" });
  const attempt = await expectStatus("create an attempt", 201, api(base, "POST", "/attempts", token, { task_id: taskId }));
  await expectStatus("start", 200, api(base, "POST", `/attempts/${String(attempt.id)}/start`, token));
  return { id: String(attempt.id), token };
}

let requests = 0;

/** One API call; client IPs rotate so polling every 50 ms meets no per-IP rate limit. */
async function api(base: string, method: string, path: string, token: string, body?: unknown, extra: Record<string, string> = {}) {
  requests += 1;
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    "cf-connecting-ip": `10.220.${(requests >> 8) & 255}.${requests & 255}`,
    ...extra,
  };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${base}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, waited: res.headers.has("preference-applied") };
}

async function expectStatus(what: string, status: number, call: ReturnType<typeof api>) {
  const res = await call;
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Imports the demo pull request as a PUBLIC task, waits until it is READY, and returns it. */
async function readyTask(base: string, repohost: string, token: string): Promise<Record<string, unknown>> {
  const imported = await expectStatus(
    "import the demo pull request",
    202,
    api(base, "POST", "/tasks/import-pr", token, {
      pr_url: `${repohost}/assay-demo/slugify-js/pull/1`,
      visibility: "PUBLIC",
      organization_id: ORG,
      tags: ["bench"],
    }),
  );
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (let delay = 500; ; delay = Math.min(delay * 2, 5000)) {
    const task = await expectStatus("read the task", 200, api(base, "GET", `/tasks/${String(imported.task_id)}`, token));
    if (task.status === "READY") return task;
    if (task.status === "FAILED") throw new Error(`the demo task could not be made READY: ${String(task.failure_reason)}`);
    if (Date.now() > deadline) throw new Error(`the demo task is still ${String(task.status)} after ${READY_TIMEOUT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, delay));
  }
}

/** Seconds from POST to a final status, and the run as it ended. */
async function timedRun(base: string, token: string, attemptId: string): Promise<{ seconds: number; run: Record<string, unknown> }> {
  const started = performance.now();
  const created = await expectStatus("queue a run", 202, api(base, "POST", `/attempts/${attemptId}/runs`, token, { changed_files: [] }));
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  for (;;) {
    const read = await api(base, "GET", `/attempts/${attemptId}/runs/${String(created.id)}`, token, undefined, { prefer: "wait=20" });
    if (read.status !== 200) throw new Error(`read the run: expected 200, got ${read.status} ${JSON.stringify(read.body)}`);
    const run = read.body;
    if (run.status !== "queued" && run.status !== "RUNNING") return { seconds: (performance.now() - started) / 1000, run };
    if (Date.now() > deadline) throw new Error(`run ${String(created.id)} is still ${String(run.status)}`);
    if (!read.waited) await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** The demo repository at its base commit in a directory, and its test command run there directly, timed. */
async function bareCommand(workDir: string, command: string[]): Promise<() => Promise<number>> {
  for (const [path, content] of Object.entries(slugifyDemo("assay-demo", "slugify-js").files)) {
    await mkdir(dirname(join(workDir, path)), { recursive: true });
    await writeFile(join(workDir, path), content);
  }
  const [program, ...args] = command;
  const executable = program === "node" ? process.execPath : program!;
  return () =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const child = spawn(executable, args, { cwd: workDir, stdio: "ignore", env: { PATH: process.env.PATH ?? "" } });
      child.on("error", reject);
      child.on("close", (code) => (code === 0 ? resolve((performance.now() - started) / 1000) : reject(new Error(`${command.join(" ")} exited ${code}`))));
    });
}

export default async function runsBench(emit: Emit): Promise<void> {
  const given = process.env.BENCH_API_URL;
  const stack = given ? undefined : await launchStack();
  const base = given ?? stack!.apiUrl;
  const repohost = given ? (process.env.BENCH_REPOHOST_URL ?? "http://127.0.0.1:8790") : stack!.repohostUrl;
  const workDir = await mkdtemp(join(tmpdir(), "assay-runs-bench-"));
  try {
    const interviewer = await mintLocalToken({ sub: "bench-runs-interviewer", email: "bench-runs-interviewer@example.test", role: "interviewer", org: ORG, ttl: "2h" });
    const task = await readyTask(base, repohost, interviewer);
    const sub = `bench-runs-candidate-${crypto.randomUUID().slice(0, 8)}`;
    const candidate = await mintLocalToken({ sub, email: `${sub}@example.test`, role: "candidate", ttl: "2h" });
    const attempt = await expectStatus("create an attempt", 201, api(base, "POST", "/attempts", candidate, { task_id: task.task_id }));
    const attemptId = String(attempt.id);
    await expectStatus("start", 200, api(base, "POST", `/attempts/${attemptId}/start`, candidate));

    // The first run fills the runner's caches of the snapshot and environment, as the task's validation already did.
    await timedRun(base, candidate, attemptId);
    const endToEnd: number[] = [];
    const inRunner: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const { seconds, run } = await timedRun(base, candidate, attemptId);
      if (run.status !== "SUCCEEDED") throw new Error(`run ended ${String(run.status)}: ${String(run.reason)}`);
      endToEnd.push(seconds);
      inRunner.push(Number((run.timings as { total_ms: number }).total_ms) / 1000);
      console.error(`[bench] run ${i + 1}/${RUNS}: ${seconds.toFixed(2)} s`);
    }
    const bare = await bareCommand(workDir, (task.test_command as string[] | null) ?? ["node", "--test"]);
    await bare();
    const direct: number[] = [];
    for (let i = 0; i < RUNS; i++) direct.push(await bare());

    // Submit → score report: the attempt is submitted as it stands (the base code), then a few
    // more attempts, each scored through the hidden-test run and the workspace run.
    const scoring: number[] = [];
    for (let i = 0; i < SCORED_ATTEMPTS; i++) {
      const { id, token } = i === 0 ? { id: attemptId, token: candidate } : await newStartedAttempt(base, String(task.task_id));
      const started = performance.now();
      await expectStatus("submit", 202, api(base, "POST", `/attempts/${id}/submit`, token, {}));
      for (;;) {
        const report = await api(base, "GET", `/attempts/${id}/score-report`, token);
        if (report.status === 200) break;
        if (performance.now() - started > RUN_TIMEOUT_MS) throw new Error(`no score report for ${id}`);
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      scoring.push((performance.now() - started) / 1000);
    }
    emit({ metric: "scoring_submit_to_report_p50_s", value: Number(percentile(scoring, 50).toFixed(3)), unit: "s", attempts: SCORED_ATTEMPTS });

    const detail = { runs: RUNS, task: "assay-demo/slugify-js PR 1 at base", command: task.test_command };
    const series: [string, number[]][] = [
      ["runs_post_to_succeeded", endToEnd],
      ["runs_in_runner", inRunner],
      ["runs_bare_test_command", direct],
    ];
    for (const [name, values] of series) {
      for (const p of [50, 95]) {
        emit({ metric: `${name}_p${p}_s`, value: Number(percentile(values, p).toFixed(3)), unit: "s", ...detail });
      }
    }
  } finally {
    await rm(workDir, { recursive: true, force: true });
    await stack?.stop();
  }
}
