import { describe, expect, it } from "vitest";
import { stateRefusal } from "../../src/domain/attempts";
import {
  DISPATCH_WINDOW_MS,
  inFlightRefusal,
  newRunId,
  parseRunOwnerId,
  preferredWaitSeconds,
  runOwnerId,
  RUN_LIMITS,
  RUN_SWEEP_MARGIN_MS,
  RUN_WAIT_MAX_SECONDS,
  runFiles,
  runJobSpec,
  runStatus,
  runSummary,
  runSweepAt,
  runTaskOf,
  sweepReason,
  unknownPathIssues,
} from "../../src/domain/runs";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("run status", () => {
  it("a queued record follows its job: queued until the runner has it, then RUNNING", () => {
    expect(runStatus("queued", null)).toBe("queued");
    expect(runStatus("queued", "queued")).toBe("queued");
    expect(runStatus("queued", "dispatched")).toBe("RUNNING");
    // The job is final but its result is not recorded on the run yet.
    expect(runStatus("queued", "SUCCEEDED")).toBe("RUNNING");
  });

  it("a finished record keeps its status whatever the job row says", () => {
    for (const status of ["SUCCEEDED", "FAILED", "TIMED_OUT", "ERROR"] as const) {
      expect(runStatus(status, "dispatched")).toBe(status);
      expect(runStatus(status, null)).toBe(status);
    }
  });
});

describe("runs and the attempt's state", () => {
  it("only while IN_PROGRESS; a submitted attempt is locked", () => {
    const attempt = (status: "NOT_STARTED" | "IN_PROGRESS" | "SUBMITTED" | "SCORED") => ({ id: "att_1", status, auto_submitted: false });
    expect(stateRefusal("run", attempt("IN_PROGRESS"))).toBeUndefined();
    expect(stateRefusal("run", attempt("NOT_STARTED"))).toEqual({
      kind: "conflict",
      detail: "Attempt att_1 has not been started; start it before running tests",
    });
    expect(stateRefusal("run", attempt("SUBMITTED"))?.detail).toBe("Attempt att_1 is locked: it was submitted");
    expect(stateRefusal("run", attempt("SCORED"))?.kind).toBe("conflict");
  });

  it("the bound on runs in flight is a 429 that says how many and when to retry", () => {
    expect(inFlightRefusal("att_1", RUN_LIMITS.inFlight - 1)).toBeUndefined();
    const refusal = inFlightRefusal("att_1", RUN_LIMITS.inFlight);
    expect(refusal).toMatchObject({ kind: "rate_limited", retryAfterSeconds: RUN_LIMITS.retryAfterSeconds });
    expect(refusal?.detail).toMatch(/has 3 runs in flight \(queued or running\); at most 3/);
    expect(refusal?.detail).toContain("/api/v1/attempts/att_1/runs");
  });
});

describe("what a run includes", () => {
  it("unknown paths are 422 entries at their index in changed_files", () => {
    const overlay = new Set(["src/a.js", "old.js"]);
    expect(unknownPathIssues(["src/a.js", "old.js"], overlay)).toEqual([]);
    expect(unknownPathIssues([], overlay)).toEqual([]);
    expect(unknownPathIssues(["src/a.js", "src/b.js", "c.js"], overlay)).toEqual([
      { loc: ["body", "changed_files", 1], msg: expect.stringContaining("src/b.js is not in the attempt's changes overlay"), type: "unknown_path" },
      { loc: ["body", "changed_files", 2], msg: expect.stringContaining("c.js"), type: "unknown_path" },
    ]);
  });

  it("only the named entries go to the runner: upserts as base64, deletions as deletions", () => {
    const entries = [
      { path: "src/a.js", op: "upsert" as const, content: bytes("let a = 1;\n") },
      { path: "empty.txt", op: "upsert" as const, content: new Uint8Array() },
      { path: "old.js", op: "delete" as const, content: null },
      { path: "notes.md", op: "upsert" as const, content: bytes("not in this run") },
    ];
    expect(runFiles(entries, ["old.js", "src/a.js", "empty.txt", "src/a.js"])).toEqual([
      { path: "src/a.js", content_b64: btoa("let a = 1;\n") },
      { path: "empty.txt", content_b64: "" },
      { path: "old.js", delete: true },
    ]);
    expect(runFiles(entries, [])).toEqual([]);
  });

  it("the job: the task's snapshot and environment, the files, the tests, no patches, the run's limits and owners", () => {
    const task = runTaskOf({
      id: "task_1",
      organizationId: "acme",
      snapshotSha256: "a".repeat(64),
      environmentKey: "runner-jobs/job_1/environment.tar.gz",
      environmentSha256: "b".repeat(64),
      testFramework: "jest",
      testCommand: ["npx", "jest"],
      settings: { install_command: null, test_command: null, framework: null, test_paths: null, node_version: "20", python_version: null, node_reason: null, live_sessions: false },
    });
    const files = [{ path: "src/a.js", content_b64: "eA==" }];
    const run = { id: "run_1", attempt_id: "att_1", timeout_seconds: 30 };
    expect(runJobSpec(run, task, files)).toEqual({
      kind: "test",
      owner: { owner_type: "run", owner_id: "att_1/run_1" },
      schedule: { attempt_id: "att_1", org_id: "acme" },
      snapshot: { key: "tasks/task_1/snapshot.tar.gz", sha256: "a".repeat(64) },
      environment: { key: "runner-jobs/job_1/environment.tar.gz", sha256: "b".repeat(64) },
      files,
      test: { framework: "jest", command: ["npx", "jest"] },
      runtime: { node: "20", python: null },
      limits: { wall_ms: 30_000, cpu_ms: 60_000, memory_mb: 1024, processes: 256, output_bytes: 1024 * 1024, workspace_mb: 512 },
    });
    expect(runJobSpec(run, task, files)).not.toHaveProperty("patches");
  });

  it("a task without an environment or a known framework still runs; one without a snapshot cannot", () => {
    const bare = { id: "t", organizationId: "acme", snapshotSha256: "c".repeat(64), environmentKey: null, environmentSha256: null, testFramework: null, testCommand: null, settings: null };
    expect(runTaskOf(bare)).toMatchObject({ environment: null, framework: "auto", command: null });
    expect(() => runTaskOf({ ...bare, snapshotSha256: null })).toThrow(/no snapshot/);
  });

  it("keeps a result's figures and nothing else", () => {
    const result = {
      exit_code: 1,
      framework: "node-test" as const,
      command: ["node", "--test"],
      counts: { total: 2, passed: 1, failed: 1, skipped: 0, errored: 0 },
      timings: { queued_ms: 1, setup_ms: 2, run_ms: 3, total_ms: 6 },
      artifacts: { junit: true, log: true },
      log_truncated: false,
    };
    expect(runSummary({ ...result, tests: [], log_tail: "…", job_id: "job_1" } as typeof result)).toEqual(result);
  });

  it("run ids are opaque and unique", () => {
    expect(newRunId()).toMatch(/^run_[0-9a-f]{32}$/);
    expect(newRunId()).not.toBe(newRunId());
  });
});

describe("the owner of a run's job", () => {
  it("names the attempt beside the run, so the job's completion needs no lookup", () => {
    expect(runOwnerId("att_1", "run_1")).toBe("att_1/run_1");
    expect(parseRunOwnerId(runOwnerId("att_1", "run_1"))).toEqual({ attemptId: "att_1", runId: "run_1" });
  });

  it.each(["run_1", "att_1/", "/run_1", "att_1/run_1/x", ""])("reads %j as no run's owner", (ownerId) => {
    expect(parseRunOwnerId(ownerId)).toBeUndefined();
  });
});

describe("the sweep of runs without a result", () => {
  const run = { created_at: "2026-01-01T10:00:00.000Z", timeout_seconds: 120 };
  const created = Date.parse(run.created_at);

  it("a queued job: after the dispatch retries and the margin", () => {
    expect(DISPATCH_WINDOW_MS).toBe((5 + 10 + 20 + 40 + 80) * 1000);
    expect(runSweepAt(run, null)).toBe(created + DISPATCH_WINDOW_MS + RUN_SWEEP_MARGIN_MS);
    expect(sweepReason(run, null)).toBe("the sandbox runner did not take the run within 455 s of its creation");
  });

  it("a job the runner has: after its time limit and the margin, counted from the hand-over", () => {
    const dispatched = "2026-01-01T10:03:00.000Z";
    expect(runSweepAt(run, dispatched)).toBe(Date.parse(dispatched) + 120_000 + RUN_SWEEP_MARGIN_MS);
    expect(sweepReason(run, dispatched)).toMatch(/^no result from the sandbox runner within 420 s of handing it the run \(its time limit is 120 s\)/);
  });
});

describe("a GET's wait for the run's end (Prefer: wait, RFC 7240)", () => {
  it("reads wait=N among other preferences, in any case and spacing, quoted or not, with parameters", () => {
    expect(preferredWaitSeconds("wait=5")).toBe(5);
    expect(preferredWaitSeconds("respond-async, WAIT = 12")).toBe(12);
    expect(preferredWaitSeconds('return=minimal, wait="3"')).toBe(3);
    expect(preferredWaitSeconds("wait=4; foo=bar")).toBe(4);
  });

  it("waits at most RUN_WAIT_MAX_SECONDS however long is asked", () => {
    expect(preferredWaitSeconds("wait=3600")).toBe(RUN_WAIT_MAX_SECONDS);
    expect(preferredWaitSeconds("wait=999999")).toBe(RUN_WAIT_MAX_SECONDS);
  });

  it("no wait without a header, for wait=0, or for a value the RFC does not give (negative, fractional, not a number, too long)", () => {
    for (const prefer of [null, "", "wait=0", "wait=-1", "wait=1.5", "wait=soon", "wait", "wait=1234567", "respond-async", "nowait=5"]) {
      expect(preferredWaitSeconds(prefer)).toBeNull();
    }
  });
});
