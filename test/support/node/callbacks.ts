import type { Callback } from "../../../protocol/callback";
import { emptyCallback } from "../../../sandbox-runner/src/job-execution";

/** A test job's callback with every part a scored run reports: tests, coverage, lint findings, integrity. */
export function scoredCallback(jobId: string): Callback {
  return {
    ...emptyCallback({ job_id: jobId, kind: "test" }),
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
    integrity: { checked_files: ["test/a.test.js"], unverified_files: [], tampered: false, reason: null, pinned_files: [] },
  };
}
