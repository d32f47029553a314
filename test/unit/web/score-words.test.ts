import { describe, expect, it } from "vitest";
import { subscoreRows, testFindings, type CandidateReport } from "../../../web/src/candidate/score-words";

type Correctness = CandidateReport["evidence"]["correctness"];

const scores = {
  subscores: { correctness: 80, test_coverage: 50, code_quality: 90, behavior: 70, communication: 40 },
  weights: { correctness: 0.5, test_coverage: 0.15, code_quality: 0.15, behavior: 0.1, communication: 0.1 },
};

const ran: Correctness = { run_status: "SUCCEEDED", fail_to_pass: { passed: 2, total: 3 }, pass_to_pass: { passed: 10, total: 10 }, tampered: false };
const measured = (rate: number | null): CandidateReport["claims"] => [
  { figure: "tests", claimed: 1, measured: rate, gap: null, flagged: false },
  { figure: "coverage", claimed: null, measured: 0.4, gap: null, flagged: false },
];
const findings = (correctness: Correctness, rate: number | null) =>
  testFindings({ evidence: { correctness, test_coverage: {}, code_quality: {}, behavior: {}, communication: {} }, claims: measured(rate) });

describe("the candidate's score in figures", () => {
  it("lists every subscore in the rubric's order with its weight and what it adds", () => {
    const rows = subscoreRows(scores);
    expect(rows.map((r) => r.label)).toEqual(["Correctness", "Test coverage", "Code quality", "Behavior", "Communication"]);
    expect(rows[0]).toEqual({ key: "correctness", label: "Correctness", score: 80, weightPercent: 50, adds: 40 });
    expect(rows[1]).toMatchObject({ weightPercent: 15, adds: 7.5 });
  });
});

describe("what scoring found of the tests", () => {
  it("gives the hidden tests as counts and the visible ones as the measured pass rate", () => {
    expect(findings(ran, 0.75)).toEqual([
      "Hidden tests the task asked you to make pass: 2 of 3 pass.",
      "Hidden tests that passed before your change: 10 of 10 still pass.",
      "Your visible tests: 75 % passed when scoring ran your workspace.",
    ]);
  });

  it("says when a run gave nothing to count", () => {
    const timedOut = findings({ run_status: "TIMED_OUT", fail_to_pass: null, pass_to_pass: null }, null);
    expect(timedOut).toEqual([
      "The hidden-test run gave no results: timed out.",
      "No pass rate of your visible tests was measured: scoring's run of your workspace gave no test results.",
    ]);
  });

  it("says a tampered run was not counted, whatever its status", () => {
    expect(findings({ ...ran, tampered: true }, 1)[0]).toBe("The hidden-test run was found tampered with, so its results were not counted.");
  });
});
