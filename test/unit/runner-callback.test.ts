import { describe, expect, it } from "vitest";
import { callbackSchema } from "../../protocol/callback";
import { emptyCallback } from "../../sandbox-runner/src/job-execution";
import { summarizeResult } from "../../src/domain/runner-callback";
import { scoredCallback } from "../support/node/callbacks";

const scored = scoredCallback("job_9");

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
