// Task import: seconds from POST /tasks/import-pr to READY for each demo pull request, split
// into its phases (snapshot and split, environment preparation, validation runs) from the
// task's own timestamps, against the local stack (BENCH_API_URL, else one started for it).
// Then one row per real-project fixture (scripts/dev-repohost/fixtures/): import to READY
// with an empty cache and again with the environment cached, BENCH_IMPORT_FIXTURE_RUNS times
// (BENCH_IMPORT_FIXTURES=0 skips them; a comma-separated list of names picks some).
import { fixtureSpecs } from "../dev-repohost/demo/fixture-repos";
import { mintLocalToken } from "../lib/local-token";
import { launchStack } from "../lib/stack";
import { percentile, type Emit } from "./metrics";

const RUNS = Number(process.env.BENCH_IMPORT_RUNS ?? 3);
const DEMOS = [
  { name: "js", repo: "assay-demo/slugify-js" },
  { name: "py", repo: "assay-demo/textstats-py" },
];

interface TaskTimes {
  status: string;
  failure_reason: string | null;
  created_at: string;
  ready_at: string | null;
  phases?: { preparing_at: string | null; validating_at: string | null };
}

const FIXTURES = process.env.BENCH_IMPORT_FIXTURES ?? "all";
const FIXTURE_TIMEOUT_MS = Number(process.env.BENCH_READY_TIMEOUT_S ?? 900) * 1000;
/** Runs per fixture row (each an empty-cache and a cached import). */
const FIXTURE_RUNS = Math.max(1, Number(process.env.BENCH_IMPORT_FIXTURE_RUNS ?? 3));

const seconds = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000;
let ip = 0;
const headers = (token: string) => ({
  authorization: `Bearer ${token}`,
  "content-type": "application/json",
  "cf-connecting-ip": `10.210.0.${++ip % 250}`,
});

/** Imports one pull request and polls until it settles; the task and the seconds the client waited. */
async function importOnce(api: string, token: string, prUrl: string, org: string, timeoutMs: number, pollMs: number): Promise<{ task: TaskTimes; observed: number }> {
  const started = performance.now();
  const res = await fetch(`${api}/api/v1/tasks/import-pr`, {
    method: "POST",
    headers: headers(token),
    body: JSON.stringify({ pr_url: prUrl, visibility: "PRIVATE_ORG", organization_id: org, tags: [] }),
  });
  if (res.status !== 202) throw new Error(`import-pr answered ${res.status}: ${await res.text()}`);
  const { task_id } = (await res.json()) as { task_id: string };
  for (;;) {
    const task = (await (await fetch(`${api}/api/v1/tasks/${task_id}`, { headers: headers(token) })).json()) as TaskTimes;
    if (task.status === "READY" || task.status === "FAILED") return { task, observed: (performance.now() - started) / 1000 };
    if (performance.now() - started > timeoutMs) throw new Error(`${prUrl} is still ${task.status} after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** The phases of one import, from the task's own timestamps. */
function phasesOf(task: TaskTimes): Record<"snapshot" | "prepare" | "validate", number> | null {
  const { preparing_at: preparing, validating_at: validating } = task.phases ?? {};
  if (!task.ready_at || !preparing || !validating) return null;
  return { snapshot: seconds(task.created_at, preparing), prepare: seconds(preparing, validating), validate: seconds(validating, task.ready_at) };
}

/**
 * Each fixture FIXTURE_RUNS times, each time in an organization of its own that no earlier run
 * used: the first import there meets an empty environment cache (caches are per organization),
 * the second finds the first's. A row is the p50 of its runs, with the slowest phase of the
 * median run and its share of the total. A fixture that does not reach READY gets a row saying
 * why instead of ending the bench.
 */
async function fixtureRows(emit: Emit, api: string, repohost: string): Promise<void> {
  const run = Date.now().toString(36);
  const wanted = FIXTURES === "all" ? null : new Set(FIXTURES.split(",").map((n) => n.trim()));
  for (const fixture of fixtureSpecs()) {
    if (wanted && !wanted.has(fixture.name)) continue;
    const prUrl = `${repohost}/${fixture.repo}/pull/${fixture.pull.number}`;
    const details = { repo: fixture.repo, framework: fixture.framework, lockfile: fixture.lockfile };
    const samples = { empty: [] as Array<{ total: number; phases: Record<string, number> }>, cached: [] as Array<{ total: number; phases: Record<string, number> }> };
    let failed: TaskTimes | null = null;
    for (let n = 0; n < FIXTURE_RUNS && !failed; n++) {
      const org = `bench-import-${run}-${n}-${fixture.name}`;
      // Tokens name one organization, and each run has its own.
      const token = await mintLocalToken({ sub: "bench-importer", email: "bench-importer@example.test", role: "interviewer", org, ttl: "1h" });
      for (const cache of ["empty", "cached"] as const) {
        console.error(`[bench] import ${fixture.repo}, ${cache} cache (run ${n + 1} of ${FIXTURE_RUNS})`);
        const { task } = await importOnce(api, token, prUrl, org, FIXTURE_TIMEOUT_MS, 250);
        const phases = phasesOf(task);
        if (task.status !== "READY" || !phases) {
          failed = task;
          break;
        }
        samples[cache].push({ total: seconds(task.created_at, task.ready_at as string), phases });
      }
    }
    if (failed) {
      emit({ metric: `import_fixture_${fixture.name}_s`, value: Number.NaN, unit: "s", ...details, status: failed.status, failure_reason: failed.failure_reason });
      continue;
    }
    for (const cache of ["empty", "cached"] as const) {
      const sorted = [...samples[cache]].sort((a, b) => a.total - b.total);
      const median = sorted[Math.floor((sorted.length - 1) / 2)] as (typeof sorted)[number];
      const [slowest, slowestSeconds] = Object.entries(median.phases).sort((a, b) => b[1] - a[1])[0] as [string, number];
      emit({
        metric: `import_fixture_${fixture.name}_${cache}_cache_s`,
        value: Number(percentile(sorted.map((s) => s.total), 50).toFixed(2)),
        unit: "s",
        stat: "p50",
        runs: sorted.length,
        ...details,
        // What this run saw besides its figure: an object, so `bench -- compare` does not take it for part of the figure's name.
        phases: {
          slowest,
          slowest_share: Number((slowestSeconds / median.total).toFixed(2)),
          seconds: Object.fromEntries(Object.entries(median.phases).map(([k, v]) => [k, Number(v.toFixed(2))])),
        },
      });
    }
  }
}

export default async function importBench(emit: Emit): Promise<void> {
  const given = process.env.BENCH_API_URL;
  const stack = given ? undefined : await launchStack();
  const api = given ?? stack!.apiUrl;
  const repohost = process.env.BENCH_REPOHOST_URL ?? stack?.repohostUrl ?? "http://127.0.0.1:8790";
  try {
    const token = await mintLocalToken({
      sub: "bench-importer",
      email: "bench-importer@example.test",
      role: "interviewer",
      org: "bench-import",
      ttl: "1h",
    });
    for (const demo of DEMOS) {
      const phases = { total: [] as number[], snapshot: [] as number[], prepare: [] as number[], validate: [] as number[], observed: [] as number[] };
      for (let run = 0; run < RUNS; run++) {
        const { task, observed } = await importOnce(api, token, `${repohost}/${demo.repo}/pull/1`, "bench-import", FIXTURE_TIMEOUT_MS, 50);
        if (task.status !== "READY" || !task.ready_at || !task.phases?.preparing_at || !task.phases.validating_at) {
          throw new Error(`${demo.repo} ended ${task.status}: ${task.failure_reason}`);
        }
        phases.observed.push(observed);
        phases.total.push(seconds(task.created_at, task.ready_at));
        phases.snapshot.push(seconds(task.created_at, task.phases.preparing_at));
        phases.prepare.push(seconds(task.phases.preparing_at, task.phases.validating_at));
        phases.validate.push(seconds(task.phases.validating_at, task.ready_at));
      }
      for (const [phase, values] of Object.entries(phases)) {
        const metric = phase === "observed" ? `import_${demo.name}_client_observed_s` : `import_${demo.name}_${phase}_s`;
        emit({ metric, value: Number(percentile(values, 50).toFixed(2)), unit: "s", stat: "p50", runs: RUNS, repo: demo.repo });
      }
    }
    if (FIXTURES !== "0") await fixtureRows(emit, api, repohost);
  } finally {
    await stack?.stop();
  }
}
