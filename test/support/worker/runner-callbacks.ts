import { env } from "cloudflare:workers";
import type { RunnerCallback } from "../../../src/domain/runner-callback";
import { call } from "./client";

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
