import { describe, expect, it } from "vitest";
import { backlogTokenProblem, runnerBacklog } from "../../src/domain/runner-backlog";

describe("runner backlog", () => {
  const now = Date.parse("2026-11-28T12:00:00.000Z");

  it("sums queued jobs by kind and priority, adds the dispatched ones to the total, and ages the oldest queued", () => {
    const backlog = runnerBacklog(
      [
        { status: "queued", kind: "prepare", ownerType: "task_validation", jobs: 2, oldestCreatedAt: "2026-11-28T11:59:00.000Z" },
        { status: "queued", kind: "test", ownerType: "run", jobs: 5, oldestCreatedAt: "2026-11-28T11:58:30.500Z" },
        { status: "queued", kind: "test", ownerType: "scoring", jobs: 1, oldestCreatedAt: "2026-11-28T11:59:59.000Z" },
        { status: "dispatched", kind: "test", ownerType: "run", jobs: 4, oldestCreatedAt: "2026-11-28T10:00:00.000Z" },
      ],
      now,
    );
    expect(backlog).toEqual({
      total: 12,
      queued: { total: 8, prepare: 2, test: 6 },
      queued_by_priority: { scoring: 1, validation: 2, interactive: 5 },
      dispatched: 4,
      // The dispatched job is older, but it waits for no runner.
      oldest_queued_age_seconds: 89,
    });
  });

  it("is all zeroes with nothing open", () => {
    expect(runnerBacklog([], now)).toEqual({
      total: 0,
      queued: { total: 0, prepare: 0, test: 0 },
      queued_by_priority: { scoring: 0, validation: 0, interactive: 0 },
      dispatched: 0,
      oldest_queued_age_seconds: 0,
    });
  });

  it("takes a token of its own: set, 16 characters or more, and never the runner's signing key", () => {
    expect(backlogTokenProblem(undefined, "runner-secret-0123456789")).toMatch(/no RUNNER_BACKLOG_TOKEN/);
    expect(backlogTokenProblem("", "runner-secret-0123456789")).toMatch(/no RUNNER_BACKLOG_TOKEN/);
    expect(backlogTokenProblem("short", "runner-secret-0123456789")).toMatch(/shorter than 16/);
    expect(backlogTokenProblem("runner-secret-0123456789", "runner-secret-0123456789")).toMatch(/RUNNER_SECRET/);
    expect(backlogTokenProblem("backlog-token-0123456789", "runner-secret-0123456789")).toBeNull();
  });
});
