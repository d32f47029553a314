import { describe, expect, it } from "vitest";
import {
  afterUnreachable,
  DISPATCH_ATTEMPTS,
  dispatchRetryDelaySeconds,
  dispatchVerdict,
  newRunnerJobId,
  parseStepOwnerId,
  runnerJobKeys,
  stepOwnerId,
  DEFAULT_LEASE_SECONDS,
  FULL_RETRY_MAX_SECONDS,
  fullRetryDelaySeconds,
  heartbeatIntervalMs,
  isoAfter,
  leaseSeconds,
  lostJobIds,
  MAX_REQUEUES,
  splitRequeued,
} from "../../src/domain/runner-jobs";
import { storageKeyProblem } from "../../src/domain/storage-keys";

describe("job ids", () => {
  it("give each job its own keys", () => {
    const id = newRunnerJobId();
    expect(id).toMatch(/^job_[0-9a-f]{32}$/);
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

  it("an unreachable runner is tried again after a growing delay, and the job given up at the last attempt", () => {
    expect(afterUnreachable(1, "HTTP 502")).toEqual({ retryDelaySeconds: 5 });
    expect(afterUnreachable(DISPATCH_ATTEMPTS - 1, "HTTP 502")).toEqual({ retryDelaySeconds: dispatchRetryDelaySeconds(DISPATCH_ATTEMPTS - 1) });
    expect(afterUnreachable(DISPATCH_ATTEMPTS, "connect ECONNREFUSED")).toEqual({
      giveUp: `the sandbox runner could not be reached: connect ECONNREFUSED (${DISPATCH_ATTEMPTS} attempts)`,
    });
    // Another delivery may have counted a failure too: past the bound still ends it.
    expect(afterUnreachable(DISPATCH_ATTEMPTS + 2, "x")).toHaveProperty("giveUp");
  });

  it("a job whose lease ran out is offered again, up to MAX_REQUEUES times, then given up", () => {
    const requeued = [
      { id: "job_a", requeues: 1 },
      { id: "job_b", requeues: MAX_REQUEUES },
      { id: "job_c", requeues: MAX_REQUEUES + 1 },
    ];
    expect(splitRequeued(requeued)).toEqual({ again: ["job_a", "job_b"], givenUp: ["job_c"] });
    expect(splitRequeued([])).toEqual({ again: [], givenUp: [] });
  });

  it("a held job the runner could not renew is lost to it when gone, final or another runner's; a queued one is not", () => {
    const holders = [
      { id: "final", status: "SUCCEEDED" as const, runnerId: "r1" },
      { id: "elsewhere", status: "dispatched" as const, runnerId: "r2" },
      { id: "requeued", status: "queued" as const, runnerId: null },
      { id: "mine", status: "dispatched" as const, runnerId: "r1" },
    ];
    expect(lostJobIds("r1", ["gone", "final", "elsewhere", "requeued", "mine"], holders)).toEqual(["gone", "final", "elsewhere"]);
    expect(lostJobIds("r1", [], holders)).toEqual([]);
  });

  it("leases: the setting within 2..600 s, else the default; heartbeats four times per lease", () => {
    expect(leaseSeconds(undefined)).toBe(DEFAULT_LEASE_SECONDS);
    expect(leaseSeconds("4")).toBe(4);
    for (const bad of ["1", "601", "2.5", "abc", ""]) expect(leaseSeconds(bad)).toBe(DEFAULT_LEASE_SECONDS);
    expect(heartbeatIntervalMs(30)).toBe(7500);
    expect(isoAfter(Date.parse("2026-01-01T00:00:00.000Z"), 30)).toBe("2026-01-01T00:00:30.000Z");
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
