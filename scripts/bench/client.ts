// The HTTP side the API benches share: timed requests from rotating client IPs (so the per-IP
// rate limits are evaluated on every request without capping the load) and the demo task.

import { mintLocalToken } from "../lib/local-token";

const READY_TIMEOUT_MS = Number(process.env.BENCH_READY_TIMEOUT_S ?? 600) * 1000;
const DEMO_PULL = "assay-demo/slugify-js/pull/1";

export interface BenchResponse {
  status: number;
  body: Record<string, unknown>;
  ms: number;
}

/** A bench's client; `subnet` (the second octet of 10.x.y.z) keeps benches' client IPs apart. */
export function benchClient(subnet: number) {
  let requests = 0;

  async function api(base: string, method: string, path: string, token: string, body?: unknown): Promise<BenchResponse> {
    requests += 1;
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      "cf-connecting-ip": `10.${subnet}.${(requests >> 8) & 255}.${requests & 255}`,
    };
    if (body !== undefined) headers["content-type"] = "application/json";
    const started = performance.now();
    const res = await fetch(`${base}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    const ms = performance.now() - started;
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, ms };
  }

  async function expectStatus(what: string, status: number, call: Promise<BenchResponse>): Promise<BenchResponse> {
    const res = await call;
    if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return res;
  }

  /** Imports the demo pull request as a PUBLIC task of `bench-org` and waits until it is READY; its id. */
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

  return { api, expectStatus, readyTask };
}

/** A two-hour session token of the local stack for a bench user. */
export function benchToken(sub: string, role: string, org?: string): Promise<string> {
  return mintLocalToken({ sub, email: `${sub}@example.test`, role, org, ttl: "2h" });
}
