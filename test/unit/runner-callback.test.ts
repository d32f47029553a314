import { describe, expect, it } from "vitest";
import { emptyCallback } from "../../sandbox-runner/src/job-execution";
import type { Callback } from "../../sandbox-runner/src/job-schema";
import { RunnerCallbackSchema, summarizeResult } from "../../src/domain/runner-callback";

const scored: Callback = {
  ...emptyCallback({ job_id: "job_9", kind: "test" }),
  status: "SUCCEEDED",
  coverage: {
    format: "lcov",
    lines_total: 12,
    lines_covered: 5,
    percent: 41.67,
    files: [
      { file: "src/a.js", lines_total: 7, lines_covered: 5, lines_hit: [1, 2, 3, 4, 7], lines_missed: [5, 6] },
      { file: "src/huge.js", lines_total: 5, lines_covered: 0, lines_truncated: true },
    ],
  },
  lint: {
    tool: "eslint+pyflakes",
    files_checked: 2,
    findings: [
      { file: "src/a.js", line: 2, column: 13, rule: "no-undef", message: "'x' is not defined.", severity: "error" },
      { file: "app.py", line: 1, column: 1, rule: "UnusedImport", message: "'os' imported but unused", severity: "warning" },
      { file: "app.py", line: 3, column: 1, rule: "UnusedVariable", message: "local variable 'y' is assigned to but never used", severity: "warning" },
    ],
    truncated: false,
    error: null,
  },
};

describe("runner callbacks with scoring data", () => {
  it("keeps per-line coverage and lint findings through validation", () => {
    expect(RunnerCallbackSchema.parse(scored)).toEqual(scored);
    expect(RunnerCallbackSchema.parse({ ...scored, lint: null }).lint).toBeNull();
  });

  it("still accepts callbacks from runners without them", () => {
    const { lint: _lint, ...older } = scored;
    const plain = { ...older, coverage: { ...scored.coverage, files: [{ file: "src/a.js", lines_total: 7, lines_covered: 5 }] } };
    expect(RunnerCallbackSchema.parse(plain)).toEqual(plain);
  });

  it("refuses findings it cannot score", () => {
    const finding = scored.lint?.findings[0];
    expect(RunnerCallbackSchema.safeParse({ ...scored, lint: { ...scored.lint, findings: [{ ...finding, severity: "info" }] } }).success).toBe(false);
    expect(RunnerCallbackSchema.safeParse({ ...scored, coverage: { ...scored.coverage, files: [{ file: "a.js", lines_total: 1, lines_covered: 0, lines_missed: [0] }] } }).success).toBe(false);
  });

  it("the D1 summary counts findings instead of keeping them", () => {
    const summary = summarizeResult(RunnerCallbackSchema.parse(scored));
    expect(summary.lint).toEqual({ tool: "eslint+pyflakes", files_checked: 2, truncated: false, error: null, errors: 1, warnings: 2 });
    expect(summary.coverage).toEqual({ format: "lcov", lines_total: 12, lines_covered: 5, percent: 41.67 });
    expect(summarizeResult(RunnerCallbackSchema.parse(emptyCallback({ job_id: "job_9", kind: "test" })))).not.toHaveProperty("lint");
  });
});
