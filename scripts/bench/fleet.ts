// The runner fleet: BENCH_FLEET_RUNS (200) candidate runs of the demo task queued at once
// (two per attempt, within the per-attempt in-flight cap), through 1 and then 2 local runners
// (`RUNNERS=N npm start`), and once more through 2 runners of which one is killed (SIGKILL,
// its whole process group) once a quarter of the runs have ended. Each scenario gets a stack
// of its own, with RUNNER_LEASE_SECONDS=10. Figures per scenario:
// - fleet_jobs_per_minute: runs ended per minute, from the first POST to the last result;
// - fleet_queue_wait_p95_ms: a run's created_at to its started_at (when the runner that ran it
//   took it, so a killed runner's runs count their whole wait);
// - fleet_lost_results: runs that did not end SUCCEEDED (every run of this code passes);
// - fleet_duplicated_results: job ids whose result some runner delivered more than once, or
//   that more than one runner delivered (from the runners' `callback_delivered` log lines).
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { launchStack, type Stack } from "../lib/stack";
import { benchClient, benchToken } from "./client";
import { percentile, type Emit } from "./metrics";

const RUNS = Number(process.env.BENCH_FLEET_RUNS ?? 200);
const RUNS_PER_ATTEMPT = 2;
const LEASE_SECONDS = 10;
const DEADLINE_MS = 15 * 60_000;
const REPO = "assay-demo/slugify-js";

interface Run {
  id: string;
  status: string;
  reason: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

const { api, expectStatus, readyTask } = benchClient(230);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function scenario(emit: Emit, runners: number, kill: boolean): Promise<void> {
  const name = `${runners}_runner${runners > 1 ? "s" : ""}${kill ? "_one_killed" : ""}`;
  console.error(`[bench] fleet: ${name}`);
  const stack = await launchStack({ RUNNERS: String(runners), RUNNER_LEASE_SECONDS: String(LEASE_SECONDS) });
  try {
    const taskId = await readyTask(stack.apiUrl, stack.repohostUrl, await benchToken("bench-fleet-staff", "interviewer", "bench-org"));
    const solution = execFileSync("git", ["-C", join(stack.repohostRoot, REPO), "show", "refs/pull/1/head:src/slugify.js"], { encoding: "utf8" });
    const changes = { "src/slugify.js": { op: "upsert", content_b64: Buffer.from(solution).toString("base64") } };
    const attempts = await Promise.all(
      Array.from({ length: Math.ceil(RUNS / RUNS_PER_ATTEMPT) }, async (_, i) => {
        const token = await benchToken(`bench-fleet-${name}-${i}`, "candidate");
        const { body } = await expectStatus("create an attempt", 201, api(stack.apiUrl, "POST", "/attempts", token, { task_id: taskId }));
        const id = String(body.id);
        await expectStatus("start", 200, api(stack.apiUrl, "POST", `/attempts/${id}/start`, token));
        await expectStatus("save", 200, api(stack.apiUrl, "PATCH", `/attempts/${id}/changes`, token, { changes }));
        return { id, token };
      }),
    );

    const started = performance.now();
    const runs: { attempt: (typeof attempts)[number]; id: string }[] = await Promise.all(
      Array.from({ length: RUNS }, async (_, i) => {
        const attempt = attempts[Math.floor(i / RUNS_PER_ATTEMPT)]!;
        const { body } = await expectStatus("queue a run", 202, api(stack.apiUrl, "POST", `/attempts/${attempt.id}/runs`, attempt.token, { changed_files: ["src/slugify.js"] }));
        return { attempt, id: String(body.id) };
      }),
    );
    const final = new Map<string, Run>();
    let killed = !kill;
    while (final.size < runs.length && performance.now() - started < DEADLINE_MS) {
      // The figures come from the server's timestamps; polling more often would only load the Worker it measures.
      await sleep(5000);
      // One list per attempt with a run still open, rather than one GET per run.
      const open = [...new Set(runs.filter((r) => !final.has(r.id)).map((r) => r.attempt))];
      await Promise.all(
        open.map(async (attempt) => {
          const { body } = await expectStatus("list runs", 200, api(stack.apiUrl, "GET", `/attempts/${attempt.id}/runs`, attempt.token));
          for (const run of body.items as Run[]) if (run.status !== "queued" && run.status !== "RUNNING") final.set(run.id, run);
        }),
      );
      if (!killed && final.size >= runs.length / 4) killed = await killBusyRunner(stack);
    }
    const ended = [...final.values()];
    // Server times: from the first run queued to the last one finished.
    const first = Math.min(...ended.map((r) => Date.parse(r.created_at)));
    const last = Math.max(...ended.map((r) => Date.parse(r.finished_at ?? r.created_at)));
    const minutes = Math.max(last - first, 1) / 60_000;
    const waits = ended.filter((r) => r.started_at).map((r) => Date.parse(r.started_at!) - Date.parse(r.created_at));
    const lost = runs.length - ended.filter((r) => r.status === "SUCCEEDED").length;
    const delivered = [...stack.output().matchAll(/"event":"callback_delivered".*?"job_id":"(job_[0-9a-f]+)"/g)].map((m) => m[1]);
    const duplicated = delivered.length - new Set(delivered).size;
    const detail = { scenario: name, runners, runs: RUNS, lease_s: LEASE_SECONDS, pool_size_per_runner: 2 };
    emit({ metric: "fleet_jobs_per_minute", value: Math.round((ended.length / minutes) * 10) / 10, unit: "jobs/min", ...detail });
    emit({ metric: "fleet_queue_wait_p95_ms", value: Math.round(percentile(waits, 95)), unit: "ms", ...detail, p50_ms: Math.round(percentile(waits, 50)) });
    emit({ metric: "fleet_lost_results", value: lost, unit: "count", ...detail, statuses: tally(ended.map((r) => r.status)), reasons: tally(ended.flatMap((r) => (r.status === "SUCCEEDED" ? [] : [r.reason ?? "none"]))) });
    emit({ metric: "fleet_duplicated_results", value: duplicated, unit: "count", ...detail, results_delivered: delivered.length });
  } finally {
    await stack.stop();
  }
}

/** Kills the first runner seen running a job, with its whole process group; false if none is busy. */
async function killBusyRunner(stack: Stack): Promise<boolean> {
  const { runners } = (await (await fetch(`${stack.runnerUrl}/health`)).json()) as { runners: { name: string; pid: number; pool: { running: number } }[] };
  const victim = runners.find((r) => r.pool.running > 0);
  if (!victim) return false;
  console.error(`[bench] fleet: killing ${victim.name} (${victim.pool.running} running)`);
  process.kill(-victim.pid, "SIGKILL");
  return true;
}

function tally(values: string[]): Record<string, number> {
  return values.reduce<Record<string, number>>((t, v) => ({ ...t, [v]: (t[v] ?? 0) + 1 }), {});
}

export default async function fleetBench(emit: Emit): Promise<void> {
  await scenario(emit, 1, false);
  await scenario(emit, 2, false);
  await scenario(emit, 2, true);
}
