// Attempt latencies over HTTP: PATCH .../changes with one 10 KB file, and start + submit,
// spread over BENCH_ATTEMPTS attempts (100) driven BENCH_CONCURRENCY at a time (10), against
// the local server (BENCH_API_URL with BENCH_REPOHOST_URL, else a stack of its own started
// with `npm start`). Everything is made through the API: an interviewer imports the dev repo
// host's demo pull request as a PUBLIC task (so candidates need no invitation) and waits for
// it to be READY; each attempt has its own candidate. Client IPs rotate, as in the api suite,
// so the per-IP rate limits are evaluated on every request without capping the load. A
// GET /api/v1/me per attempt, under the same load, is the baseline of an authenticated request.
import { launchStack } from "../lib/stack";
import { benchClient, benchToken } from "./client";
import { percentile, type Emit } from "./metrics";

const ATTEMPTS = Number(process.env.BENCH_ATTEMPTS ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);
const SAVES_PER_ATTEMPT = 5;
const FILE_BYTES = 10 * 1024;

const { api, expectStatus, readyTask } = benchClient(201);

export default async function attemptsBench(emit: Emit): Promise<void> {
  const given = process.env.BENCH_API_URL;
  const stack = given ? undefined : await launchStack();
  const base = given ?? stack!.apiUrl;
  const repohost = given ? (process.env.BENCH_REPOHOST_URL ?? "http://127.0.0.1:8790") : stack!.repohostUrl;
  try {
    const taskId = await readyTask(base, repohost, await benchToken("bench-interviewer", "interviewer", "bench-org"));
    const run = crypto.randomUUID().slice(0, 8);
    const file = (n: number) => btoa(`// save ${n}\n`.padEnd(FILE_BYTES, "x"));

    const saves: number[] = [];
    const baseline: number[] = [];
    const lifecycles: { start: number; submit: number }[] = [];
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < ATTEMPTS; i = next++) {
        const token = await benchToken(`bench-candidate-${run}-${i}`, "candidate");
        const created = await expectStatus("create an attempt", 201, api(base, "POST", "/attempts", token, { task_id: taskId }));
        const id = String(created.body.id);
        baseline.push((await expectStatus("me", 200, api(base, "GET", "/me", token))).ms);
        const start = (await expectStatus("start", 200, api(base, "POST", `/attempts/${id}/start`, token))).ms;
        for (let s = 0; s < SAVES_PER_ATTEMPT; s++) {
          const changes = { "src/slugify.js": { op: "upsert", content_b64: file(s) } };
          saves.push((await expectStatus("save", 200, api(base, "PATCH", `/attempts/${id}/changes`, token, { changes }))).ms);
        }
        const payload = { tests_passed: 3, tests_total: 4, coverage: 0.8, lint_score: 1, changed_files: ["src/slugify.js"] };
        const submit = (await expectStatus("submit", 202, api(base, "POST", `/attempts/${id}/submit`, token, payload))).ms;
        lifecycles.push({ start, submit });
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));

    const round = (v: number) => Math.round(v * 10) / 10;
    const detail = { attempts: ATTEMPTS, concurrency: CONCURRENCY };
    const series: [string, number[]][] = [
      ["patch_changes_10kb", saves],
      ["start", lifecycles.map((l) => l.start)],
      ["submit", lifecycles.map((l) => l.submit)],
      ["start_plus_submit", lifecycles.map((l) => l.start + l.submit)],
      ["baseline_get_me", baseline],
    ];
    for (const [name, values] of series) {
      for (const p of [50, 99]) {
        emit({ metric: `attempts_${name}_latency_p${p}_ms`, value: round(percentile(values, p)), unit: "ms", samples: values.length, ...detail });
      }
    }
  } finally {
    await stack?.stop();
  }
}
