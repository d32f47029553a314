import { describe, expect, it } from "vitest";
import { callbackSchema, type Callback } from "../../protocol/callback";
import { emptyCallback } from "../../sandbox-runner/src/job-execution";
import { summarizeResult } from "../../src/domain/runner-callback";

const scored: Callback = {
  ...emptyCallback({ job_id: "job_9", kind: "test" }),
  status: "SUCCEEDED",
  tests: [{ name: "t", classname: "", file: null, status: "passed", duration_ms: 1, message: null }],
  counts: { total: 1, passed: 1, failed: 0, skipped: 0, errored: 0 },
  log_tail: "ok",
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

describe("the summary of a result kept in D1", () => {
  it("drops the per-test and per-file lists and the log", () => {
    const summary = summarizeResult(callbackSchema.parse(scored));
    expect(summary).not.toHaveProperty("tests");
    expect(summary).not.toHaveProperty("log_tail");
    expect(summary.coverage).toEqual({ format: "lcov", lines_total: 12, lines_covered: 5, percent: 41.67 });
    expect(summary.counts).toEqual(scored.counts);
  });

  it("counts lint findings instead of keeping them; a result without lint has none", () => {
    const summary = summarizeResult(callbackSchema.parse(scored));
    expect(summary.lint).toEqual({ tool: "eslint+pyflakes", files_checked: 2, truncated: false, error: null, errors: 1, warnings: 2 });
    expect(summarizeResult(callbackSchema.parse(emptyCallback({ job_id: "job_9", kind: "test" })))).not.toHaveProperty("lint");
  });
});
