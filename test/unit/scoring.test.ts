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
  type HiddenRun,
} from "../../src/domain/scoring";
import { type FrozenFile, hiddenTestFiles, scoringJobFiles } from "../../src/domain/scoring-jobs";

const HIDDEN = "test/hidden.test.js";
const t = (name: string, status: "passed" | "failed", file = HIDDEN) => ({ classname: "suite", file, name, status });
const checked = { checked_files: [HIDDEN], unverified_files: [], tampered: false, reason: null };
const file = (path: string, text: string[], lines = text.map((_, i) => i + 1), test = false): ChangedFile => ({
  path,
  test,
  changedLines: lines,
  changedText: text,
});

describe("correctness", () => {
  const f2p = [`${HIDDEN}::suite::new a`, `${HIDDEN}::suite::new b`];
  const p2p = [`${HIDDEN}::suite::old`];
  const run = (tests: ReturnType<typeof t>[], integrity: HiddenRun["integrity"] = checked): HiddenRun => ({ status: "SUCCEEDED", reason: null, tests, integrity });

  it("is 100 when every FAIL_TO_PASS and PASS_TO_PASS test passes", () => {
    expect(correctness(f2p, p2p, run([t("new a", "passed"), t("new b", "passed"), t("old", "passed")])).score).toBe(100);
  });

  it("weighs FAIL_TO_PASS 80 % and PASS_TO_PASS 20 %, naming the failing tests", () => {
    const s = correctness(f2p, p2p, run([t("new a", "passed"), t("new b", "failed"), t("old", "failed")]));
    expect(s.score).toBe(40);
    expect(s.evidence).toMatchObject({ fail_to_pass: { passed: 1, total: 2, failing: [`${HIDDEN}::suite::new b`] }, pass_to_pass: { failing: [`${HIDDEN}::suite::old`] } });
  });

  it("an absent test counts as failing; a run without a report scores 0 with its reason", () => {
    expect(correctness(f2p, p2p, run([t("old", "passed")])).score).toBe(20);
    const s = correctness(f2p, p2p, { status: "FAILED", reason: "syntax error", tests: [], integrity: checked });
    expect(s).toMatchObject({ score: 0, evidence: { run_status: "FAILED", reason: "syntax error" } });
  });

  it("a passing test of the same name in another file (the candidate's) does not count", () => {
    const own = "test/mine.test.js";
    const s = correctness(f2p, p2p, run([t("new a", "failed"), t("new b", "failed"), t("old", "passed"), t("new a", "passed", own), t("new b", "passed", own)]));
    expect(s.score).toBe(20);
  });

  it("a tampered run scores 0 whatever it reports, with the reason", () => {
    const all = [t("new a", "passed"), t("new b", "passed"), t("old", "passed")];
    const s = correctness(f2p, p2p, run(all, { ...checked, tampered: true, reason: "the canary test that must fail was reported passed" }));
    expect(s).toMatchObject({ score: 0, evidence: { tampered: true, reason: /canary/ } });
  });

  it("results of a file whose canaries are missing do not count, nor does a run without a canary check", () => {
    const all = [t("new a", "passed"), t("new b", "passed"), t("old", "passed")];
    expect(correctness(f2p, p2p, run(all, { ...checked, unverified_files: [HIDDEN] })).score).toBe(0);
    expect(correctness(f2p, p2p, run(all, null))).toMatchObject({ score: 0, evidence: { reason: /canary check/ } });
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
  const none = { events: 0, largePastes: 0, focusLosses: 0 };
  const base = { autoSubmitted: false, timeLimitMinutes: 90, startedAt: "2026-01-01T10:00:00Z", submittedAt: "2026-01-01T10:30:00Z", telemetry: none, claimed: {} };
  it("rewards testing the final work and submitting in time", () => {
    const s = behavior({ ...base, runs: [{ created_at: "2026-01-01T10:20:00Z", status: "SUCCEEDED" }], lastChangeAt: "2026-01-01T10:10:00Z" });
    expect(s.score).toBe(100);
    expect(s.evidence).toMatchObject({ minutes_used: 30, ran_tests_after_last_change: true });
  });

  it("no runs, auto-submitted, measured pastes and focus losses cost points", () => {
    const telemetry = { events: 40, largePastes: 2, focusLosses: 5 };
    const s = behavior({ ...base, runs: [], lastChangeAt: "2026-01-01T10:10:00Z", autoSubmitted: true, telemetry });
    // testing 0, time 10 (the deadline submitted), integrity 30 - 2×5 - 5×2.
    expect(s.score).toBe(20);
    expect(s.evidence).toMatchObject({ telemetry_events: 40, large_pastes: 2, focus_losses: 5 });
  });

  it("scores what was measured, not what the client claims", () => {
    const claimed = { large_pastes: 0, focus_losses: 0, keystrokes: 9 };
    const cheating = behavior({ ...base, runs: [], lastChangeAt: null, telemetry: { events: 12, largePastes: 4, focusLosses: 0 }, claimed });
    expect(cheating.evidence).toMatchObject({ large_pastes: 4, claimed_signals: claimed, parts: { integrity: 10 } });
    const modest = behavior({ ...base, runs: [], lastChangeAt: null, claimed: { large_pastes: 6, focus_losses: 20 } });
    expect(modest.evidence).toMatchObject({ parts: { integrity: 30 } });
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

describe("scoring job files", () => {
  const frozen = (path: string): FrozenFile => ({ path, op: "upsert", content: new TextEncoder().encode("x") });
  const b64 = () => "eA==";

  it("the hidden-test run gets only the candidate's source files; test files and test harness stay at the task's version", () => {
    const paths = [
      "src/slugify.js", "lib/util.py",
      "test/slugify.test.js", "test/helpers.js", "test/mine.test.js", "src/x.test.js",
      "conftest.py", "pkg/conftest.py", "pytest.ini", "pyproject.toml", "package.json", "sitecustomize.py", "pytest.py",
      "_pytest/runner.py", "node_modules/assert/index.js", "evil.pth", "src/unittest.py",
    ];
    const jobs = scoringJobFiles(paths.map(frozen), new Set(["test/slugify.test.js"]), b64);
    expect(jobs.hidden.map((f) => f.path)).toEqual(["src/slugify.js", "lib/util.py"]);
    expect(jobs.excludedFromHidden).toEqual(paths.slice(2));
    expect(jobs.workspace).toHaveLength(paths.length);
    expect(jobs.ignoredTestEdits).toEqual(["test/slugify.test.js"]);
  });

  it("runs every file a scored test is in", () => {
    expect(hiddenTestFiles(["tests/test_b.py::test_x", "tests/test_a.py::K::test_y"], ["tests/test_b.py::test_z"])).toEqual(["tests/test_a.py", "tests/test_b.py"]);
  });
});
