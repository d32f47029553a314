/**
 * What a candidate sees of their own scoring (docs/scoring.md, "What candidates see"). Staff
 * see the report as it is stored. Candidates get an allow-list of it: evidence the report
 * gains later stays with staff until it is listed here, so nothing naming a hidden test, a
 * file of the hidden test patch, or the test or gold patch reaches a candidate by default.
 */
import type { ReviewFlag } from "./review-flags";
import { SUBSCORES, type claimGaps, type SubscoreName } from "./scoring";

export interface TestCounts {
  passed: number;
  total: number;
}

export interface CandidateClaim {
  figure: string;
  claimed: number | null;
  measured: number | null;
  gap: number | null;
  flagged: boolean;
}

/** A score report as it is stored and staff see it (built by flows/scoring/scoring-report.flow.ts). */
export interface ScoreReport {
  score_id: string;
  attempt_id: string;
  task_id: string;
  rubric_version: string;
  overall_score: number;
  subscores: Record<SubscoreName, number>;
  weights: Record<SubscoreName, number>;
  evidence: Record<SubscoreName, Record<string, unknown>>;
  claims: ReturnType<typeof claimGaps>;
  flags: string[];
  /**
   * Changed source lines a reviewer should read (src/domain/review-flags.ts), with their file,
   * numbers and text: evidence, not a deduction. Staff only. Absent from reports made before.
   */
  review_flags?: ReviewFlag[];
  ignored_test_edits: string[];
  /** Overlay paths the hidden-test run left at the task's version (staff evidence). */
  excluded_from_hidden_run: string[];
}

/** The candidate's cut of a report: no review flags, no names of the hidden test patch's files. */
export type CandidateReport = Omit<ScoreReport, "claims" | "flags" | "review_flags" | "ignored_test_edits" | "excluded_from_hidden_run"> & {
  claims: CandidateClaim[];
};

/**
 * Evidence keys a candidate sees, besides correctness (built by hand below). These describe the
 * candidate's own files, runs and text only: the workspace run never includes the hidden tests.
 */
const OWN_WORK_EVIDENCE: Record<Exclude<SubscoreName, "correctness">, readonly string[]> = {
  test_coverage: ["reason", "changed_executable_lines", "covered_lines", "files"],
  code_quality: ["reason", "linted", "lint_error", "lint_errors", "lint_warnings", "findings", "debug_leftovers", "long_lines", "todos", "deductions"],
  behavior: ["runs", "ran_tests_after_last_change", "auto_submitted", "minutes_used", "time_limit_minutes", "telemetry_events", "large_pastes", "focus_losses", "parts"],
  communication: ["explanation_words", "explains", "changed_source_lines", "comment_lines", "parts"],
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const numberOr = <T>(v: unknown, fallback: T): number | T => (typeof v === "number" && Number.isFinite(v) ? v : fallback);
const record = (v: unknown): Record<string, unknown> => (isRecord(v) ? v : {});

function counts(v: unknown): TestCounts | null {
  if (!isRecord(v)) return null;
  return { passed: numberOr(v.passed, 0), total: numberOr(v.total, 0) };
}

/** Only the fact that the run was void, never its reason: the reason names hidden test files. */
function correctnessEvidence(e: Record<string, unknown>): Record<string, unknown> {
  return {
    run_status: typeof e.run_status === "string" ? e.run_status : null,
    fail_to_pass: counts(e.fail_to_pass),
    pass_to_pass: counts(e.pass_to_pass),
    ...(typeof e.tampered === "boolean" && { tampered: e.tampered }),
  };
}

function ownWorkEvidence(e: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => k in e).map((k) => [k, e[k]]));
}

function claim(v: unknown): CandidateClaim | null {
  if (!isRecord(v) || typeof v.figure !== "string") return null;
  return {
    figure: v.figure,
    claimed: numberOr(v.claimed, null),
    measured: numberOr(v.measured, null),
    gap: numberOr(v.gap, null),
    flagged: v.flagged === true,
  };
}

const perSubscore = <T>(f: (name: SubscoreName) => T) => Object.fromEntries(SUBSCORES.map((n) => [n, f(n)])) as Record<SubscoreName, T>;

/**
 * The candidate's view of a stored report: the scores, weights, claims and the allowed
 * evidence. Everything else (the reviewer's `flags` and `review_flags`, `ignored_test_edits`,
 * `excluded_from_hidden_run`) is left out: those name the files of the hidden test patch or
 * are the staff's evidence about the candidate.
 */
export function candidateReport(report: Record<string, unknown>): CandidateReport {
  const evidence = record(report.evidence);
  const subscores = record(report.subscores);
  const weights = record(report.weights);
  return {
    score_id: String(report.score_id),
    attempt_id: String(report.attempt_id),
    task_id: String(report.task_id),
    rubric_version: String(report.rubric_version),
    overall_score: numberOr(report.overall_score, 0),
    subscores: perSubscore((n) => numberOr(subscores[n], 0)),
    weights: perSubscore((n) => numberOr(weights[n], 0)),
    evidence: perSubscore((n) =>
      n === "correctness" ? correctnessEvidence(record(evidence[n])) : ownWorkEvidence(record(evidence[n]), OWN_WORK_EVIDENCE[n]),
    ),
    claims: (Array.isArray(report.claims) ? report.claims : []).map(claim).filter((c): c is CandidateClaim => c !== null),
  };
}

export type ScoringStatus = "not_submitted" | "scoring" | "scored" | "failed";

/**
 * Why scoring failed or is being retried, as a candidate reads it. The stored reason is the
 * runner's own words about the hidden-test run, which may name its files; staff see those.
 */
export function candidateScoringReason(status: ScoringStatus, reason: string | null): string | null {
  if (status === "failed") return "Scoring could not be completed; the organization's staff can re-score the attempt";
  if (status === "scoring" && reason !== null) return "The sandbox runner could not run the scoring; it is being tried again";
  return null;
}
