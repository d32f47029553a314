// Attempt latencies over HTTP: PATCH .../changes with one 10 KB file, and start + submit,
// spread over BENCH_ATTEMPTS attempts (100) driven BENCH_CONCURRENCY at a time (10), against
// the local server (BENCH_API_URL with BENCH_REPOHOST_URL, else a stack of its own started
// with `npm start`). Everything is made through the API: an interviewer imports the dev repo
// host's demo pull request as a PUBLIC task (so candidates need no invitation) and waits for
// it to be READY; each attempt has its own candidate. Client IPs rotate, as in the api suite,
// so the per-IP rate limits are evaluated on every request without capping the load. A
// GET /api/v1/me per attempt, under the same load, is the baseline of an authenticated request.
import { mintDevToken } from "../lib/dev-identity";
import { readDevVars } from "../lib/dev-vars";
import { DEV_VARS } from "../lib/paths";
import { launchStack } from "../lib/stack";
import { percentile, type Emit } from "./metrics";

const ATTEMPTS = Number(process.env.BENCH_ATTEMPTS ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);
const SAVES_PER_ATTEMPT = 5;
const FILE_BYTES = 10 * 1024;
const READY_TIMEOUT_MS = Number(process.env.BENCH_READY_TIMEOUT_S ?? 600) * 1000;
const DEMO_PULL = "assay-demo/slugify-js/pull/1";

let requests = 0;

async function api(base: string, method: string, path: string, token: string, body?: unknown) {
  requests += 1;
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    "cf-connecting-ip": `10.201.${(requests >> 8) & 255}.${requests & 255}`,
  };
  if (body !== undefined) headers["content-type"] = "application/json";
  const started = performance.now();
  const res = await fetch(`${base}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  const ms = performance.now() - started;
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, ms };
}

async function expectStatus(what: string, status: number, call: ReturnType<typeof api>) {
  const res = await call;
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

/** Imports the demo pull request as a PUBLIC task and waits until it is READY. */
async function readyTask(base: string, repohost: string, token: string): Promise<string> {
  const imported = await expectStatus(
    "import the demo pull request",
    202,
    api(base, "POST", "/tasks/import-pr", token, {
      pr_url: `${repohost}/${DEMO_PULL}`,
      visibility: "PUBLIC",
      organization_id: "bench-org",
      tags: ["bench"],
    }),
  );
  const taskId = String(imported.body.task_id);
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (let delay = 500; ; delay = Math.min(delay * 2, 5000)) {
    const { body } = await expectStatus("read the task", 200, api(base, "GET", `/tasks/${taskId}`, token));
    if (body.status === "READY") return taskId;
    if (body.status === "FAILED") throw new Error(`the demo task could not be made READY: ${String(body.failure_reason)}`);
    if (Date.now() > deadline) throw new Error(`the demo task is still ${String(body.status)} after ${READY_TIMEOUT_MS / 1000} s`);
    console.error(`[bench] task ${taskId} is ${String(body.status)}`);
    await new Promise((r) => setTimeout(r, delay));
  }
}

export default async function attemptsBench(emit: Emit): Promise<void> {
  const given = process.env.BENCH_API_URL;
  const stack = given ? undefined : await launchStack();
  const base = given ?? stack!.apiUrl;
  const repohost = given ? (process.env.BENCH_REPOHOST_URL ?? "http://127.0.0.1:8790") : stack!.repohostUrl;
  try {
    const vars = readDevVars(DEV_VARS);
    const mint = (sub: string, role: string, org?: string) =>
      mintDevToken(vars.DEV_IDP_PRIVATE_JWK!, {
        sub,
        email: `${sub}@example.test`,
        role,
        org,
        ttl: "2h",
        issuer: vars.AUTH_ISSUER,
        audience: vars.AUTH_AUDIENCE,
      });
    const taskId = await readyTask(base, repohost, await mint("bench-interviewer", "interviewer", "bench-org"));
    const run = crypto.randomUUID().slice(0, 8);
    const file = (n: number) => btoa(`// save ${n}\n`.padEnd(FILE_BYTES, "x"));

    const saves: number[] = [];
    const baseline: number[] = [];
    const lifecycles: { start: number; submit: number }[] = [];
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < ATTEMPTS; i = next++) {
        const token = await mint(`bench-candidate-${run}-${i}`, "candidate");
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
