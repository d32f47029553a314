// Task import: seconds from POST /tasks/import-pr to READY for each demo pull request, split
// into its phases (snapshot and split, environment preparation, validation runs) from the
// task's own timestamps, against the local stack (BENCH_API_URL, else one started for it).
// Then one row per real-project fixture (scripts/dev-repohost/fixtures/): import to READY
// with an empty cache and again with the environment cached (BENCH_IMPORT_FIXTURES=0 skips
// them; a comma-separated list of names picks some).
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

/**
 * Each fixture twice, in an organization of its own that no earlier run used: the first import
 * meets an empty package cache (caches are per organization), the second finds the first's.
 * A fixture that does not reach READY gets a row saying why instead of ending the bench.
 */
async function fixtureRows(emit: Emit, api: string, repohost: string): Promise<void> {
  const run = Date.now().toString(36);
  const wanted = FIXTURES === "all" ? null : new Set(FIXTURES.split(",").map((n) => n.trim()));
  for (const fixture of fixtureSpecs()) {
    if (wanted && !wanted.has(fixture.name)) continue;
    const prUrl = `${repohost}/${fixture.repo}/pull/${fixture.pull.number}`;
    const details = { repo: fixture.repo, framework: fixture.framework, lockfile: fixture.lockfile };
    const org = `bench-import-${run}-${fixture.name}`;
    // Tokens name one organization, and each fixture has its own.
    const token = await mintLocalToken({ sub: "bench-importer", email: "bench-importer@example.test", role: "interviewer", org, ttl: "1h" });
    for (const cache of ["empty", "cached"] as const) {
      console.error(`[bench] import ${fixture.repo}, ${cache} cache`);
      const { task, observed } = await importOnce(api, token, prUrl, org, FIXTURE_TIMEOUT_MS, 250);
      if (task.status !== "READY" || !task.ready_at) {
        emit({ metric: `import_fixture_${fixture.name}_${cache}_cache_s`, value: Number.NaN, unit: "s", ...details, status: task.status, failure_reason: task.failure_reason });
        break;
      }
      const prepare = task.phases?.preparing_at && task.phases.validating_at ? seconds(task.phases.preparing_at, task.phases.validating_at) : null;
      emit({
        metric: `import_fixture_${fixture.name}_${cache}_cache_s`,
        value: Number(seconds(task.created_at, task.ready_at).toFixed(2)),
        unit: "s",
        ...details,
        prepare_s: prepare === null ? null : Number(prepare.toFixed(2)),
        client_observed_s: Number(observed.toFixed(2)),
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
