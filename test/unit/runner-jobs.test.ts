import { describe, expect, it } from "vitest";
import { emptyCallback } from "../../sandbox-runner/src/job-execution";
import { jobSchema, type Callback } from "../../sandbox-runner/src/job-schema";
import { PRIORITIES } from "../../sandbox-runner/src/pool";
import { RunnerCallbackSchema, summarizeResult } from "../../src/domain/runner-callback";
import {
  DISPATCH_ATTEMPTS,
  dispatchRetryDelaySeconds,
  dispatchVerdict,
  newRunnerJobId,
  parseStepOwnerId,
  RUNNER_JOB_OWNER_TYPES,
  RUNNER_JOB_PRIORITIES,
  runnerJobKeys,
  runnerJobPayload,
  stepOwnerId,
  DEFAULT_LEASE_SECONDS,
  FULL_RETRY_MAX_SECONDS,
  fullRetryDelaySeconds,
  heartbeatIntervalMs,
  isoAfter,
  leaseSeconds,
  type RunnerJobSpec,
} from "../../src/domain/runner-jobs";
import { storageKeyProblem } from "../../src/domain/storage-keys";

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

describe("the runner's job body", () => {
  it("a prepare job is accepted by the runner's own schema", () => {
    const spec: RunnerJobSpec = {
      kind: "prepare",
      owner: { owner_type: "task_validation", owner_id: "tsk_1/prepare" },
      schedule: { attempt_id: null, org_id: "acme" },
      snapshot: { key: "snapshots/t.tar.gz", sha256: sha("a") },
    };
    const payload = runnerJobPayload("job_1", spec, { ...urls, environment: null });
    const parsed = jobSchema.parse(payload);
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
    expect(RUNNER_JOB_PRIORITIES).toEqual(PRIORITIES);
  });

  it("a spec stored before schedules existed still dispatches, with no attempt or organization", () => {
    const stored = { kind: "test", owner, snapshot: { key: "s", sha256: sha("a") } } as RunnerJobSpec;
    const parsed = jobSchema.parse(runnerJobPayload("job_5", stored, { ...urls, environmentUpload: null }));
    expect(parsed.schedule).toEqual({ priority: "interactive", attempt_id: null, org_id: null });
  });

  it("a test job with environment, overlay, patches, test options and limits is accepted as given", () => {
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
    expect(parsed.test).toEqual({ framework: "pytest", command: null, coverage: true, files: null, canaries: false });
    expect(parsed.limits.wall_ms).toBe(30_000);
    expect(payload.uploads).not.toHaveProperty("environment");
  });

  it("job ids fit the runner's rule and give each job its own keys", () => {
    const id = newRunnerJobId();
    expect(id).toMatch(/^job_[0-9a-f]{32}$/);
    expect(jobSchema.shape.job_id.safeParse(id).success).toBe(true);
    for (const key of Object.values(runnerJobKeys(id))) {
      expect(key.startsWith(`runner-jobs/${id}/`)).toBe(true);
      expect(storageKeyProblem(key)).toBeUndefined();
    }
  });
});

describe("dispatch policy", () => {
  it("retries with a growing delay, capped", () => {
    expect([1, 2, 3, 4, 5].map(dispatchRetryDelaySeconds)).toEqual([5, 10, 20, 40, 80]);
    expect(dispatchRetryDelaySeconds(20)).toBe(300);
    expect(DISPATCH_ATTEMPTS).toBeGreaterThan(1);
  });

  it("reads the runner's answers", () => {
    const verdict = (status: number) => dispatchVerdict(status, null);
    expect([202, 200].map(verdict)).toEqual(["accepted", "accepted"]);
    expect([500, 502, 503, 408, 429].map(verdict)).toEqual(Array(5).fill("retry"));
    expect([400, 401, 404, 413, 422].map(verdict)).toEqual(Array(5).fill("refused"));
  });

  it("a 503 with Retry-After is a full runner, not a failure; a malformed Retry-After is not trusted", () => {
    expect(dispatchVerdict(503, "2")).toBe("full");
    expect(dispatchVerdict(503, " 10 ")).toBe("full");
    expect(dispatchVerdict(503, "Wed, 21 Oct 2026 07:28:00 GMT")).toBe("retry");
    expect(dispatchVerdict(502, "2")).toBe("retry");
    expect(dispatchVerdict(202, "2")).toBe("accepted");
  });

  it("a job turned away again and again waits longer each time, capped, spread by jitter", () => {
    expect([0, 1, 2, 3, 4, 9].map((n) => fullRetryDelaySeconds(1, n, 0.5))).toEqual([1, 2, 4, 8, 8, 8]);
    expect(fullRetryDelaySeconds(0, 0, 0.5)).toBe(1);
    expect(fullRetryDelaySeconds(3600, 0, 0.5)).toBe(FULL_RETRY_MAX_SECONDS);
    expect([fullRetryDelaySeconds(1, 3, 0), fullRetryDelaySeconds(1, 3, 1)]).toEqual([6, 10]);
    expect(fullRetryDelaySeconds(1, 0, 0)).toBe(1);
  });

  it("leases: the setting within 2..600 s, else the default; heartbeats four times per lease", () => {
    expect(leaseSeconds(undefined)).toBe(DEFAULT_LEASE_SECONDS);
    expect(leaseSeconds("4")).toBe(4);
    for (const bad of ["1", "601", "2.5", "abc", ""]) expect(leaseSeconds(bad)).toBe(DEFAULT_LEASE_SECONDS);
    expect(heartbeatIntervalMs(30)).toBe(7500);
    expect(isoAfter(Date.parse("2026-01-01T00:00:00.000Z"), 30)).toBe("2026-01-01T00:00:30.000Z");
  });
});

describe("the runner's callback", () => {
  const full: Callback = {
    ...emptyCallback({ job_id: "job_3", kind: "test" }),
    status: "SUCCEEDED",
    tests: [{ name: "t", classname: "", file: null, status: "passed", duration_ms: 1, message: null }],
    counts: { total: 1, passed: 1, failed: 0, skipped: 0, errored: 0 },
    log_tail: "ok",
    coverage: { format: "lcov", lines_total: 10, lines_covered: 5, percent: 50, files: [{ file: "a.js", lines_total: 10, lines_covered: 5 }] },
  };

  it("accepts what the runner sends, including its shutdown report", () => {
    expect(RunnerCallbackSchema.safeParse(emptyCallback({ job_id: "job_3", kind: "prepare" })).success).toBe(true);
    expect(RunnerCallbackSchema.parse(full)).toEqual(full);
  });

  it("ignores fields a newer runner may add instead of refusing the result", () => {
    expect(RunnerCallbackSchema.safeParse({ ...full, new_field: 1 }).success).toBe(true);
  });

  it("the summary kept in D1 drops the per-test and per-file lists and the log", () => {
    const summary = summarizeResult(RunnerCallbackSchema.parse(full));
    expect(summary).not.toHaveProperty("tests");
    expect(summary).not.toHaveProperty("log_tail");
    expect(summary.coverage).toEqual({ format: "lcov", lines_total: 10, lines_covered: 5, percent: 50 });
    expect(summary.counts).toEqual(full.counts);
  });
});

describe("object keys", () => {
  it.each(["snapshots/task_1/base.tar.gz", "a", "runner-jobs/job_1/log.txt", "x.y-z_1/2"])("%s is accepted", (key) => {
    expect(storageKeyProblem(key)).toBeUndefined();
  });

  it.each(["", "/abs", "a//b", "a/../b", "..", "./a", "a b", "a/", "é", "a\\b", "x".repeat(513)])("%j is refused", (key) => {
    expect(storageKeyProblem(key)).toEqual(expect.any(String));
  });
});

describe("step owner ids", () => {
  it("carry the step of a job and give it back only for known steps", () => {
    const steps = ["base", "solution"] as const;
    expect(stepOwnerId("tsk_1", "base")).toBe("tsk_1/base");
    expect(parseStepOwnerId("tsk_1/solution", steps)).toEqual({ id: "tsk_1", step: "solution" });
    expect(parseStepOwnerId("tsk_1/prepare", steps)).toBeUndefined();
    expect(parseStepOwnerId("tsk_1/base/x", steps)).toBeUndefined();
    expect(parseStepOwnerId("/base", steps)).toBeUndefined();
  });
});
