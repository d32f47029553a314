import { createHmac } from "node:crypto";
import { posix } from "node:path";
import { describe, expect, it } from "vitest";
import { callbackSchema } from "../../protocol/callback";
import { runnerCommandSchema, runnerMessageSchema, type ExecutionBody, type RunnerMessage } from "../../protocol/execution-messages";
import { jobSchema } from "../../protocol/jobs";
import { leasesAnswerSchema, leasesSchema, type LeasesBody } from "../../protocol/leases";
import { checkRelativePath } from "../../protocol/paths";
import { MAX_SKEW_SECONDS, SIGNATURE_HEADER, sign, signedHeaders, TIMESTAMP_HEADER, verifySignature } from "../../protocol/signing";
import { executionSchema } from "../../sandbox-runner/src/execution-schema";
import { emptyCallback } from "../../sandbox-runner/src/job-execution";
import { scoredCallback } from "../support/node/callbacks";
import { clientEffect, EXECUTION_LIMITS, executionRunnerLimits, exitFromRunner, parseRunnerMessage } from "../../src/domain/executions";
import {
  newRunnerJobId,
  RUNNER_JOB_OWNER_TYPES,
  runnerJobPayload,
  type RunnerJobSpec,
} from "../../src/domain/runner-jobs";

/**
 * The contract between the Worker and the runner (protocol/): what one side builds or signs,
 * the other side's schema or check takes, for every message that crosses between them.
 */

const urls = {
  snapshot: "https://api.test/api/v1/storage/s?expires=1&sig=a",
  environment: "https://api.test/api/v1/storage/e?expires=1&sig=b",
  junit: "https://api.test/api/v1/storage/j?expires=1&sig=c",
  log: "https://api.test/api/v1/storage/l?expires=1&sig=d",
  environmentUpload: "https://api.test/api/v1/storage/u?expires=1&sig=e",
  callback: "https://api.test/api/v1/internal/runner/callback",
  lease: { url: "https://api.test/api/v1/internal/runner/leases", interval_ms: 7500 },
};
const sha = (c: string) => c.repeat(64);
const owner = { owner_type: "run", owner_id: "run_1" } as const;
const schedule = { attempt_id: "att_1", org_id: "acme" };

describe("the job body: what the Worker builds, the runner takes", () => {
  it("a prepare job", () => {
    const spec: RunnerJobSpec = {
      kind: "prepare",
      owner: { owner_type: "task_validation", owner_id: "tsk_1/prepare" },
      schedule: { attempt_id: null, org_id: "acme" },
      snapshot: { key: "snapshots/t.tar.gz", sha256: sha("a") },
    };
    const parsed = jobSchema.parse(runnerJobPayload("job_1", spec, { ...urls, environment: null }));
    expect(parsed).toMatchObject({
      job_id: "job_1",
      kind: "prepare",
      snapshot: { url: urls.snapshot, sha256: sha("a") },
      environment: null,
      uploads: { junit: urls.junit, log: urls.log, environment: urls.environmentUpload },
      schedule: { priority: "validation", attempt_id: null, org_id: "acme" },
      callback_url: urls.callback,
      lease: urls.lease,
    });
  });

  it("the schedule's priority follows the owner type, in the order the runner's pool serves them", () => {
    const priorities = Object.fromEntries(
      RUNNER_JOB_OWNER_TYPES.map((owner_type) => {
        const spec: RunnerJobSpec = { kind: "test", owner: { owner_type, owner_id: "x" }, schedule, snapshot: { key: "s", sha256: sha("a") } };
        const parsed = jobSchema.parse(runnerJobPayload("job_4", spec, { ...urls, environmentUpload: null }));
        expect(parsed.schedule).toEqual({ priority: expect.any(String), ...schedule });
        return [owner_type, parsed.schedule.priority];
      }),
    );
    expect(priorities).toEqual({ scoring: "scoring", task_validation: "validation", run: "interactive" });
  });

  it("a spec stored before schedules existed still dispatches, with no attempt or organization", () => {
    const stored = { kind: "test", owner, snapshot: { key: "s", sha256: sha("a") } } as RunnerJobSpec;
    const parsed = jobSchema.parse(runnerJobPayload("job_5", stored, { ...urls, environmentUpload: null }));
    expect(parsed.schedule).toEqual({ priority: "interactive", attempt_id: null, org_id: null });
  });

  it("a test job with environment, overlay, patches, test options and limits is taken as given", () => {
    const spec: RunnerJobSpec = {
      kind: "test",
      owner,
      schedule,
      snapshot: { key: "s", sha256: sha("a") },
      environment: { key: "e", sha256: sha("b") },
      files: [{ path: "src/a.js", content_b64: btoa("x") }, { path: "old.js", delete: true }],
      patches: ["diff --git a/x b/x\n"],
      test: { framework: "pytest", coverage: true },
      limits: { wall_ms: 30_000 },
    };
    const payload = runnerJobPayload("job_2", spec, { ...urls, environmentUpload: null });
    const parsed = jobSchema.parse(payload);
    expect(parsed.environment).toEqual({ url: urls.environment, sha256: sha("b") });
    expect(parsed.files).toEqual(spec.files);
    expect(parsed.patches).toEqual(spec.patches);
    expect(parsed.test).toEqual({ framework: "pytest", command: null, coverage: true, files: null, canaries: false, harness_patch: null });
    expect(parsed.limits.wall_ms).toBe(30_000);
    expect(payload.uploads).not.toHaveProperty("environment");
  });

  it("the Worker's job ids fit the runner's rule", () => {
    expect(jobSchema.shape.job_id.safeParse(newRunnerJobId()).success).toBe(true);
  });
});

describe("signing, both directions", () => {
  const secret = "contract-secret-0123456789";
  const body = '{"job_id":"job_1","status":"SUCCEEDED"}';
  const now = Date.parse("2026-11-25T12:00:00Z");
  const ts = Math.floor(now / 1000);
  const check = (headers: Record<string, string>, signedBody: string, at = now, key = secret) =>
    verifySignature(key, headers[TIMESTAMP_HEADER], headers[SIGNATURE_HEADER], new TextEncoder().encode(signedBody), at);

  it("is v1= and the lowercase hex HMAC-SHA256 of <timestamp>.<raw body>, in X-Assay-Timestamp and X-Assay-Signature", async () => {
    const expected = `v1=${createHmac("sha256", secret).update(`${ts}.${body}`).digest("hex")}`;
    expect(await signedHeaders(secret, body, now)).toEqual({ "X-Assay-Timestamp": String(ts), "X-Assay-Signature": expected });
    expect(await sign(secret, ts, new TextEncoder().encode(body))).toBe(expected);
  });

  it("a signature made by the sender verifies at the receiver, over the raw bytes", async () => {
    expect(await check(await signedHeaders(secret, body, now), body)).toEqual({ ok: true });
    const unicode = '{"log_tail":"é ✓"}';
    expect(await check(await signedHeaders(secret, unicode, now), unicode)).toEqual({ ok: true });
  });

  it("fails when the body, the secret or the clock differs", async () => {
    const headers = await signedHeaders(secret, body, now);
    expect(await check(headers, `${body} `)).toEqual({ ok: false, reason: "bad signature" });
    expect(await check(headers, body, now, "another-secret-0123456789")).toEqual({ ok: false, reason: "bad signature" });
    const late = now + (MAX_SKEW_SECONDS + 1) * 1000;
    expect(await check(headers, body, late)).toMatchObject({ ok: false, reason: expect.stringMatching(/^stale or future X-Assay-Timestamp/) });
    expect(await check(headers, body, now - (MAX_SKEW_SECONDS + 1) * 1000)).toMatchObject({ ok: false, reason: expect.stringMatching(/^stale or future/) });
    expect(await check(headers, body, now + MAX_SKEW_SECONDS * 1000)).toEqual({ ok: true });
  });

  it("refuses headers that could sign no body, each with its reason", async () => {
    const good = await signedHeaders(secret, body, now);
    const hex = good[SIGNATURE_HEADER]!.slice(3);
    const reasons = [
      [{}, "missing signature headers"],
      [{ ...good, [SIGNATURE_HEADER]: "" }, "missing signature headers"],
      [{ ...good, [TIMESTAMP_HEADER]: "soon" }, "malformed X-Assay-Timestamp"],
      [{ ...good, [SIGNATURE_HEADER]: hex }, "malformed X-Assay-Signature (expected v1= and 64 lowercase hex digits)"],
      [{ ...good, [SIGNATURE_HEADER]: `v1=${hex.toUpperCase()}` }, "malformed X-Assay-Signature (expected v1= and 64 lowercase hex digits)"],
    ] as const;
    for (const [headers, reason] of reasons) expect(await check(headers, body)).toEqual({ ok: false, reason });
  });
});

describe("live executions", () => {
  it("the body the Worker sends is what the runner takes in", () => {
    const executionId = "exe_0123456789abcdef0123456789abcdef";
    const body: ExecutionBody = {
      execution_id: executionId,
      command: { language: "python", file: "src/main.py" },
      workspace: {
        snapshot: { url: urls.snapshot, sha256: sha("a") },
        environment: null,
        files: [{ path: "src/main.py", content_b64: btoa("print(1)") }],
      },
      limits: executionRunnerLimits(EXECUTION_LIMITS.timeoutSeconds.default),
      schedule: { priority: "interactive", attempt_id: "att_1", org_id: "acme" },
      connect: {
        url: `wss://api.test/api/v1/internal/runner/executions/${executionId}/ws`,
        // The shape of the Worker's connect token (services/runner/connect-token.ts): <expiry>.<nonce>.<hex HMAC>.
        token: `1795608000.${"n".repeat(32)}.${"0".repeat(64)}`,
      },
    };
    expect(executionSchema.parse(JSON.parse(JSON.stringify(body)))).toEqual(body);
  });

  it("every message the runner sends reads on the object as sent", () => {
    const sent: RunnerMessage[] = [
      { type: "queued" },
      { type: "started", setup_ms: 12 },
      { type: "output", stream: "stdout", data: "ready\n" },
      { type: "output", stream: "stderr", data: "é\uFFFD" },
      { type: "stdin_refused", reason: "too_large" },
      {
        type: "exit", status: "timed_out", cause: "wall", code: null, signal: "SIGKILL", truncated: true, error: null,
        timings: { setup_ms: 12, run_ms: 1000, total_ms: 1012 },
      },
    ];
    for (const message of sent) {
      expect(runnerMessageSchema.parse(JSON.parse(JSON.stringify(message)))).toEqual(message);
      expect(parseRunnerMessage(JSON.stringify(message))).toEqual(message);
    }
    const exit = sent.at(-1) as Extract<RunnerMessage, { type: "exit" }>;
    expect(exitFromRunner(exit, 1020)).toEqual({
      status: "timed_out", cause: "wall", code: null, signal: "SIGKILL", truncated: true, detail: null,
      timings: { setup_ms: 12, run_ms: 1000, total_ms: 1020 },
    });
  });

  it("every command the object sends the runner reads as sent", () => {
    const effects = [
      clientEffect('{"type":"stdin","data":"x\\n","eof":true}', "owner", "running"),
      clientEffect('{"type":"terminate"}', "owner", "queued"),
    ];
    const commands = effects.flatMap((e) => (e.kind === "runner" ? e.messages : []));
    expect(commands).toEqual([{ type: "stdin", data: "x\n" }, { type: "stdin", eof: true }, { type: "terminate" }]);
    for (const command of commands) expect(runnerCommandSchema.parse(JSON.parse(JSON.stringify(command)))).toEqual(command);
  });
});

describe("the callback: what the runner sends, the Worker takes", () => {
  const full = scoredCallback("job_3");

  it("takes a full result and the runner's shutdown report as sent", () => {
    expect(callbackSchema.parse(JSON.parse(JSON.stringify(full)))).toEqual(full);
    expect(callbackSchema.safeParse(emptyCallback({ job_id: "job_3", kind: "prepare" })).success).toBe(true);
    expect(callbackSchema.parse({ ...full, lint: null }).lint).toBeNull();
  });

  it("takes what an older runner sends, and ignores fields a newer one may add instead of refusing the result", () => {
    const { lint: _lint, integrity: _integrity, ...older } = full;
    const plain = { ...older, coverage: { ...full.coverage!, files: [{ file: "src/a.js", lines_total: 7, lines_covered: 5 }] } };
    expect(callbackSchema.parse(plain)).toEqual(plain);
    expect(callbackSchema.safeParse({ ...full, new_field: 1 }).success).toBe(true);
  });

  it("refuses findings and coverage it cannot score", () => {
    const finding = full.lint!.findings[0];
    expect(callbackSchema.safeParse({ ...full, lint: { ...full.lint, findings: [{ ...finding, severity: "info" }] } }).success).toBe(false);
    expect(callbackSchema.safeParse({ ...full, coverage: { ...full.coverage, files: [{ file: "a.js", lines_total: 1, lines_covered: 0, lines_missed: [0] }] } }).success).toBe(false);
  });
});

describe("leases", () => {
  it("the runner's heartbeat and hand-back read on the Worker; its answer reads on the runner", () => {
    const heartbeat: LeasesBody = { runner_id: "runner-1", held: ["job_1", "job_2"], released: [] };
    const handBack: LeasesBody = { runner_id: "runner-1", held: [], released: ["job_3"] };
    for (const body of [heartbeat, handBack]) expect(leasesSchema.parse(JSON.parse(JSON.stringify(body)))).toEqual(body);
    expect(leasesSchema.parse({ runner_id: "runner-1", held: [] }).released).toEqual([]);
    expect(leasesSchema.safeParse({ runner_id: "runner-1", held: ["job 1"] }).success).toBe(false);
    const answer = { renewed: ["job_1"], lost: ["job_2"] };
    expect(leasesAnswerSchema.parse(answer)).toEqual(answer);
  });
});

describe("workspace paths", () => {
  it("normalizes as POSIX does and refuses what could leave the workspace", () => {
    for (const path of ["a", "src/a.js", "./a", "a//b", "a/./b/", "a/b/", ".hidden/x"]) {
      expect(checkRelativePath(path)).toEqual({ ok: true, path: posix.normalize(path).replace(/\/+$/, "") });
    }
    for (const path of ["", ".", "./", "/etc/passwd", "a/../b", "..", "a\\b", "a\0b", "x".repeat(4097)]) {
      expect(checkRelativePath(path)).toMatchObject({ ok: false });
    }
  });
});
