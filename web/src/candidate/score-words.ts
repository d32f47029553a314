// The candidate's own score report in figures and sentences (docs/scoring.md, "What candidates
// see"). Their view has the hidden tests as counts only and their visible tests as the pass rate
// scoring measured; these words say what it has and never ask for more. Pure.
import type { components } from "../../../client/src/index";
import { SUBSCORES, type SubscoreKey } from "../interviewer/analytics";
import { runOutcomeText } from "../lib/run-words";

export type CandidateReport = components["schemas"]["CandidateScoreReport"];

export interface SubscoreRow {
  key: SubscoreKey;
  label: string;
  score: number;
  weightPercent: number;
  /** Points it adds to the overall score, to one decimal. */
  adds: number;
}

export function subscoreRows(report: Pick<CandidateReport, "subscores" | "weights">): SubscoreRow[] {
  return SUBSCORES.map(({ key, label }) => ({
    key,
    label,
    score: report.subscores[key],
    weightPercent: Math.round(report.weights[key] * 100),
    adds: Math.round(report.subscores[key] * report.weights[key] * 10) / 10,
  }));
}

/** What scoring found of the tests: the hidden tests by count, the visible ones by the measured pass rate. */
export function testFindings(report: Pick<CandidateReport, "evidence" | "claims">): string[] {
  const { run_status: status, tampered, fail_to_pass: toPass, pass_to_pass: kept } = report.evidence.correctness;
  const lines: string[] = [];
  if (tampered) lines.push("The hidden-test run was found tampered with, so its results were not counted.");
  else if (status !== null && status !== "SUCCEEDED") lines.push(`The hidden-test run gave no results: ${runOutcomeText(status, null)}.`);
  if (toPass) lines.push(`Hidden tests the task asked you to make pass: ${toPass.passed} of ${toPass.total} pass.`);
  if (kept) lines.push(`Hidden tests that passed before your change: ${kept.passed} of ${kept.total} still pass.`);
  // The "tests" claim's measured figure is the visible tests' pass rate in scoring's run of the workspace.
  const visible = report.claims.find((c) => c.figure === "tests")?.measured ?? null;
  lines.push(
    visible === null
      ? "No pass rate of your visible tests was measured: scoring's run of your workspace gave no test results."
      : `Your visible tests: ${Math.round(visible * 100)} % passed when scoring ran your workspace.`,
  );
  return lines;
}
