// Task import: seconds from POST /tasks/import-pr to READY for each demo pull request, split
// into its phases (snapshot and split, environment preparation, validation runs) from the
// task's own timestamps, against the local stack (BENCH_API_URL, else one started for it).
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

const seconds = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000;
let ip = 0;
const headers = (token: string) => ({
  authorization: `Bearer ${token}`,
  "content-type": "application/json",
  "cf-connecting-ip": `10.210.0.${++ip % 250}`,
});

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
        const started = performance.now();
        const res = await fetch(`${api}/api/v1/tasks/import-pr`, {
          method: "POST",
          headers: headers(token),
          body: JSON.stringify({ pr_url: `${repohost}/${demo.repo}/pull/1`, visibility: "PRIVATE_ORG", organization_id: "bench-import", tags: [] }),
        });
        if (res.status !== 202) throw new Error(`import-pr answered ${res.status}: ${await res.text()}`);
        const { task_id } = (await res.json()) as { task_id: string };
        let task: TaskTimes;
        for (;;) {
          task = (await (await fetch(`${api}/api/v1/tasks/${task_id}`, { headers: headers(token) })).json()) as TaskTimes;
          if (task.status === "READY" || task.status === "FAILED") break;
          await new Promise((r) => setTimeout(r, 50));
        }
        if (task.status !== "READY" || !task.ready_at || !task.phases?.preparing_at || !task.phases.validating_at) {
          throw new Error(`${demo.repo} ended ${task.status}: ${task.failure_reason}`);
        }
        phases.observed.push((performance.now() - started) / 1000);
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
  } finally {
    await stack?.stop();
  }
}
