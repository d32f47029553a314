import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { database } from "../../../src/db/client";
import { insertRunnerJob } from "../../../src/db/runner-jobs";
import type { RunnerCallback } from "../../../src/domain/runner-callback";
import { newRunnerJobId, RUNNER_JOB_OWNER_TYPES, runnerJobKeys, type RunnerJobSpec } from "../../../src/domain/runner-jobs";
import { onRunnerJobFinished, type FinishedRunnerJob } from "../../../src/services/runner/completion";
import { call } from "./client";

/** Every completion-handler call, by job id; handlers are registered for every owner type. */
export const notified = new Map<string, FinishedRunnerJob[]>();
/** Owner ids whose handler throws once, then succeeds. */
export const failOnce = new Set<string>();
for (const ownerType of RUNNER_JOB_OWNER_TYPES) {
  onRunnerJobFinished(ownerType, async (_env, job) => {
    if (failOnce.delete(job.owner.owner_id)) throw new Error("handler failed on purpose");
    notified.set(job.id, [...(notified.get(job.id) ?? []), job]);
  });
}

// Written from docs/runner-protocol.md, independently of src/, so a mistake there shows here.
async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(message));
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The runner's signature headers for `body`, as the runner sends them. */
export async function runnerHeaders(body: string, opts: { now?: number; secret?: string } = {}): Promise<Record<string, string>> {
  const timestamp = Math.floor((opts.now ?? Date.now()) / 1000);
  return {
    "content-type": "application/json",
    "x-assay-timestamp": String(timestamp),
    "x-assay-signature": `v1=${await hmacHex(opts.secret ?? env.RUNNER_SECRET, `${timestamp}.${body}`)}`,
  };
}

/** True when a request to the runner carries a valid signature over its body. */
export async function hasRunnerSignature(request: Request, body: string): Promise<boolean> {
  const timestamp = request.headers.get("x-assay-timestamp") ?? "";
  const expected = `v1=${await hmacHex(env.RUNNER_SECRET, `${timestamp}.${body}`)}`;
  return Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300 && request.headers.get("x-assay-signature") === expected;
}

export async function postCallback(body: string, headers?: Record<string, string>): Promise<Response> {
  return call("/api/v1/internal/runner/callback", { method: "POST", rawBody: body, headers: headers ?? (await runnerHeaders(body)) });
}

export function callbackFor(jobId: string, overrides: Partial<RunnerCallback> = {}): RunnerCallback {
  return {
    job_id: jobId,
    kind: "test",
    status: "SUCCEEDED",
    reason: null,
    exit_code: 1,
    timings: { queued_ms: 3, setup_ms: 40, run_ms: 900, total_ms: 950 },
    counts: { total: 2, passed: 1, failed: 1, skipped: 0, errored: 0 },
    tests: [
      { name: "adds", classname: "math", file: "test/math.test.js", status: "passed", duration_ms: 2, message: null },
      { name: "divides", classname: "math", file: "test/math.test.js", status: "failed", duration_ms: 3, message: "expected 2, got 3" },
    ],
    log_tail: "# tests 2\n# pass 1\n# fail 1\n",
    log_truncated: false,
    framework: "node-test",
    command: ["node", "--test"],
    environment: null,
    artifacts: { junit: true, log: true },
    ...overrides,
  };
}


/** A queued job with its spec in R2, as enqueueRunnerJob leaves it, but with no queue message. */
export async function createJob(spec: Partial<RunnerJobSpec> = {}): Promise<{ id: string; spec: RunnerJobSpec }> {
  const id = newRunnerJobId();
  const snapshotKey = `test-snapshots/${id}.tar.gz`;
  await env.BUCKET.put(snapshotKey, "snapshot bytes");
  const full: RunnerJobSpec = {
    kind: "test",
    test: { framework: "node-test" },
    owner: { owner_type: "run", owner_id: `run_${id}` },
    snapshot: { key: snapshotKey, sha256: "a".repeat(64) },
    ...spec,
  };
  await env.BUCKET.put(runnerJobKeys(id).spec, JSON.stringify(full));
  await insertRunnerJob(database(env.DB), id, full.kind, full.owner);
  return { id, spec: full };
}

export interface FakeRunnerCall {
  body: Record<string, unknown>;
  signed: boolean;
}

/**
 * Answers the Worker's requests to RUNNER_URL (the only outbound HTTP the tests fake; our
 * own storage and database are real). `answer` gets each job body.
 */
export function fakeRunner(answer: (job: Record<string, unknown>) => Response | Promise<Response>) {
  const calls: FakeRunnerCall[] = [];
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    if (!request.url.startsWith(env.RUNNER_URL)) throw new Error(`unexpected outbound request to ${request.url}`);
    const text = await request.text();
    const body = JSON.parse(text) as Record<string, unknown>;
    calls.push({ body, signed: request.url === `${env.RUNNER_URL}/jobs` && (await hasRunnerSignature(request, text)) });
    return answer(body);
  });
  return { calls, restore: () => spy.mockRestore() };
}

export const accepted = (job: Record<string, unknown>) => Response.json({ job_id: job.job_id, status: "accepted" }, { status: 202 });

/** Polls until `probe` returns a value (real queue deliveries arrive within about a second). */
export async function eventually<T>(probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`nothing after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
