import { describe, expect, it } from "vitest";
import { candidateReport, candidateScoringReason } from "../../src/domain/score-views";

const base = {
  score_id: "scr_1",
  attempt_id: "att_1",
  task_id: "tsk_1",
  rubric_version: "assay-rubric-1",
  overall_score: 50,
  subscores: { correctness: 40, code_quality: 80, test_coverage: 0, behavior: 60, communication: 20 },
  weights: { correctness: 0.5, test_coverage: 0.15, code_quality: 0.15, behavior: 0.1, communication: 0.1 },
  claims: [],
  flags: ["edits to the task's test files were not scored: test/hidden.test.js"],
  ignored_test_edits: ["test/hidden.test.js"],
};

const correctnessOf = (evidence: Record<string, unknown>) =>
  candidateReport({ ...base, evidence: { correctness: evidence } }).evidence.correctness;

describe("the candidate's view of a score report", () => {
  it("keeps the scores and weights, and leaves out the reviewer's flags and ignored test edits", () => {
    const view = candidateReport({ ...base, evidence: {} });
    expect(view).toEqual({
      score_id: "scr_1",
      attempt_id: "att_1",
      task_id: "tsk_1",
      rubric_version: "assay-rubric-1",
      overall_score: 50,
      subscores: base.subscores,
      weights: base.weights,
      evidence: {
        correctness: { run_status: null, fail_to_pass: null, pass_to_pass: null },
        code_quality: {},
        test_coverage: {},
        behavior: {},
        communication: {},
      },
      claims: [],
    });
  });

  it("leaves out the review flags: staff's evidence, with lines of the candidate's code beside a reason", () => {
    const reviewFlags = [
      {
        kind: "reads_test_files",
        reason: "Reads, lists or imports test files at run time.",
        file: "src/slugify.js",
        lines: [{ line: 3, text: 'readFileSync("test/hidden.test.js")' }],
        more_lines: 0,
      },
    ];
    const view = candidateReport({ ...base, evidence: {}, review_flags: reviewFlags });
    expect(view).not.toHaveProperty("review_flags");
    expect(JSON.stringify(view)).not.toContain("readFileSync");
  });

  it("shows the hidden tests as counts only", () => {
    expect(
      correctnessOf({
        run_status: "SUCCEEDED",
        reason: "test/hidden.test.js failed to load",
        fail_to_pass: { passed: 1, total: 3, failing: ["test/hidden.test.js::a", "test/hidden.test.js::b"] },
        pass_to_pass: { passed: 2, total: 2, failing: [] },
      }),
    ).toEqual({ run_status: "SUCCEEDED", fail_to_pass: { passed: 1, total: 3 }, pass_to_pass: { passed: 2, total: 2 } });
  });

  it("says whether the run was tampered with, but not why", () => {
    expect(correctnessOf({ tampered: true, reason: "canary in test/hidden.test.js" })).toEqual({ run_status: null, fail_to_pass: null, pass_to_pass: null, tampered: true });
    expect(correctnessOf({ tampered: false })).toMatchObject({ tampered: false });
    expect(correctnessOf({})).not.toHaveProperty("tampered");
    expect(JSON.stringify(correctnessOf({ tampered: true, reason: "canary in test/hidden.test.js", unverified_files: ["test/hidden.test.js"] }))).not.toContain("hidden");
  });

  it("keeps only the listed evidence about the candidate's own work, so keys added later stay with staff", () => {
    const view = candidateReport({
      ...base,
      evidence: {
        behavior: { runs: 3, parts: { testing: 40 }, discarded_files: ["test/hidden.test.js"] },
        code_quality: { lint_errors: 1, findings: [{ file: "src/a.js", line: 1 }], canaries: ["c"] },
        future_subscore: { failing: ["test/hidden.test.js::a"] },
      },
    });
    expect(view.evidence.behavior).toEqual({ runs: 3, parts: { testing: 40 } });
    expect(view.evidence.code_quality).toEqual({ lint_errors: 1, findings: [{ file: "src/a.js", line: 1 }] });
    expect(JSON.stringify(view)).not.toContain("hidden");
  });

  it("rebuilds the claims from their known fields", () => {
    const view = candidateReport({
      ...base,
      evidence: {},
      claims: [{ figure: "coverage", claimed: 0.9, measured: 0.2, gap: 0.7, flagged: true, detail: "test/hidden.test.js" }, "junk"],
    });
    expect(view.claims).toEqual([{ figure: "coverage", claimed: 0.9, measured: 0.2, gap: 0.7, flagged: true }]);
  });
});

describe("the candidate's reading of scoring's state", () => {
  it("replaces the runner's words with a general sentence", () => {
    expect(candidateScoringReason("failed", "runner refused test/hidden.test.js")).toMatch(/staff can re-score/);
    expect(candidateScoringReason("scoring", "runner disk full")).toMatch(/being tried again/);
    expect(candidateScoringReason("scoring", null)).toBeNull();
    expect(candidateScoringReason("scored", null)).toBeNull();
    expect(candidateScoringReason("not_submitted", null)).toBeNull();
  });
});
