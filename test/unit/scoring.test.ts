import { describe, expect, it } from "vitest";
import {
  behavior,
  changedLines,
  claimGaps,
  codeQuality,
  communication,
  correctness,
  overallScore,
  testCoverage,
  WEIGHTS,
  type ChangedFile,
} from "../../src/domain/scoring";

const t = (name: string, status: "passed" | "failed") => ({ classname: "suite", name, status });
const file = (path: string, text: string[], lines = text.map((_, i) => i + 1), test = false): ChangedFile => ({
  path,
  test,
  changedLines: lines,
  changedText: text,
});

describe("correctness", () => {
  const f2p = ["suite::new a", "suite::new b"];
  const p2p = ["suite::old"];

  it("is 100 when every FAIL_TO_PASS and PASS_TO_PASS test passes", () => {
    const s = correctness(f2p, p2p, { status: "SUCCEEDED", reason: null, tests: [t("new a", "passed"), t("new b", "passed"), t("old", "passed")] });
    expect(s.score).toBe(100);
  });

  it("weighs FAIL_TO_PASS 80 % and PASS_TO_PASS 20 %, naming the failing tests", () => {
    const s = correctness(f2p, p2p, { status: "SUCCEEDED", reason: null, tests: [t("new a", "passed"), t("new b", "failed"), t("old", "failed")] });
    expect(s.score).toBe(40);
    expect(s.evidence).toMatchObject({ fail_to_pass: { passed: 1, total: 2, failing: ["suite::new b"] }, pass_to_pass: { failing: ["suite::old"] } });
  });

  it("an absent test counts as failing; a run without a report scores 0 with its reason", () => {
    expect(correctness(f2p, p2p, { status: "SUCCEEDED", reason: null, tests: [t("old", "passed")] }).score).toBe(20);
    const s = correctness(f2p, p2p, { status: "FAILED", reason: "syntax error", tests: [] });
    expect(s).toMatchObject({ score: 0, evidence: { run_status: "FAILED", reason: "syntax error" } });
  });
});

describe("changed lines", () => {
  it("finds added and modified lines by line diff", () => {
    expect(changedLines("a\nb\nc\n", "a\nB\nc\nd\n")).toEqual({ lines: [2, 4], text: ["B", "d"] });
    expect(changedLines(null, "x\ny")).toEqual({ lines: [1, 2], text: ["x", "y"] });
    expect(changedLines("same\n", "same\n")).toEqual({ lines: [], text: [] });
    expect(changedLines("a\nb\n", "b\na\n").lines).toHaveLength(1);
  });
});

describe("test coverage", () => {
  it("is the share of changed executable source lines the tests ran", () => {
    const files = [file("src/a.js", ["x", "y", "// note", "z"], [10, 11, 12, 13]), file("test/a.test.js", ["t"], [1], true)];
    const coverage = new Map([["src/a.js", { lines_hit: [10, 11], lines_missed: [13, 20] }]]);
    const s = testCoverage(files, coverage);
    expect(s.score).toBe(67);
    expect(s.evidence).toMatchObject({ changed_executable_lines: 3, covered_lines: 2 });
  });

  it("a changed file the tests never loaded counts every non-blank changed line as missed", () => {
    const s = testCoverage([file("src/b.js", ["x", "", "y"])], new Map());
    expect(s.evidence).toMatchObject({ changed_executable_lines: 2, covered_lines: 0 });
    expect(s.score).toBe(0);
  });

  it("no changed source lines, or no coverage measured, is 0 with the reason", () => {
    expect(testCoverage([file("test/x.test.js", ["t"], [1], true)], new Map()).evidence).toMatchObject({ reason: "no source lines were changed" });
    expect(testCoverage([file("src/a.js", ["x"])], null, "the run failed").evidence).toMatchObject({ reason: "the run failed" });
  });
});

describe("code quality", () => {
  it("deducts for lint findings on changed files and for leftovers on changed lines", () => {
    const files = [file("src/a.js", ["console.log(x)", "// TODO later", "y".repeat(130)])];
    const lint = {
      findings: [
        { file: "src/a.js", line: 1, rule: "no-undef", message: "x is not defined", severity: "error" as const },
        { file: "src/a.js", line: 2, rule: "no-unused-vars", message: "unused", severity: "warning" as const },
        { file: "src/untouched.js", line: 1, rule: "no-undef", message: "not the candidate's", severity: "error" as const },
      ],
    };
    const s = codeQuality(files, lint);
    expect(s.evidence).toMatchObject({ lint_errors: 1, lint_warnings: 1, debug_leftovers: 1, long_lines: 1, todos: 1 });
    expect(s.score).toBe(100 - 10 - 3 - 2 - 1 - 1);
  });

  it("caps each deduction and never goes below 0", () => {
    const findings = Array.from({ length: 20 }, (_, i) => ({ file: "a.py", line: i, rule: null, message: "bad", severity: "error" as const }));
    expect(codeQuality([file("a.py", ["x"])], { findings }).evidence).toMatchObject({ deductions: { lint_errors: 60 } });
    expect(codeQuality([file("a.py", ["x"])], { findings }).score).toBe(40);
  });

  it("no changes score 0", () => {
    expect(codeQuality([], null).score).toBe(0);
  });
});

describe("behavior", () => {
  const base = { autoSubmitted: false, timeLimitMinutes: 90, startedAt: "2026-01-01T10:00:00Z", submittedAt: "2026-01-01T10:30:00Z", signals: {} };
  it("rewards testing the final work and submitting in time", () => {
    const s = behavior({ ...base, runs: [{ created_at: "2026-01-01T10:20:00Z", status: "SUCCEEDED" }], lastChangeAt: "2026-01-01T10:10:00Z" });
    expect(s.score).toBe(100);
    expect(s.evidence).toMatchObject({ minutes_used: 30, ran_tests_after_last_change: true });
  });

  it("no runs, auto-submitted, pastes and focus losses cost points", () => {
    const s = behavior({ ...base, runs: [], lastChangeAt: "2026-01-01T10:10:00Z", autoSubmitted: true, signals: { large_pastes: 2, focus_losses: 5, keystrokes: 9 } });
    // testing 0, time 10 (the deadline submitted), integrity 30 - 2×5 - 5×2.
    expect(s.score).toBe(20);
    expect(s.evidence).toMatchObject({ other_signals: ["keystrokes"] });
  });
});

describe("communication", () => {
  it("scores the explanation and comments on changed source lines", () => {
    const words = Array.from({ length: 40 }, () => "word").join(" ");
    const explanation = `${words} because the input can be empty; I tested the edge case.`;
    const files = [file("src/a.js", ["// why this", "a()", "b()", "c()"])];
    const s = communication(explanation, files);
    expect(s.evidence).toMatchObject({ explains: 3, comment_lines: 1, parts: { written: 60, commented: 40 } });
    expect(s.score).toBe(100);
  });

  it("nothing written scores 0", () => {
    expect(communication(null, [file("src/a.js", ["a()"])]).score).toBe(0);
  });
});

describe("overall and claims", () => {
  it("is the weighted mean of the subscores", () => {
    const s = (score: number) => ({ score, evidence: {} });
    expect(Object.values(WEIGHTS).reduce((a, b) => a + b, 0)).toBeCloseTo(1);
    expect(overallScore({ correctness: s(100), code_quality: s(50), test_coverage: s(0), behavior: s(100), communication: s(0) })).toBe(67.5);
  });

  it("flags a claimed figure far from the measured one", () => {
    const rows = claimGaps({ tests_passed: 10, tests_total: 10, coverage: 0.9, lint_score: null }, { visiblePassRate: 0.5, coverage: 0.8, quality: 70 });
    expect(rows).toEqual([
      { figure: "tests", claimed: 1, measured: 0.5, gap: 0.5, flagged: true },
      { figure: "coverage", claimed: 0.9, measured: 0.8, gap: 0.1, flagged: false },
      { figure: "lint_score", claimed: null, measured: 0.7, gap: null, flagged: false },
    ]);
  });
});
