/**
 * The scoring rubric (docs/scoring.md): five subscores from what the service measured, each
 * 0–100 with the evidence it came from, and their weighted mean. Pure: the scoring pipeline
 * gathers the inputs (the hidden-test run, the coverage and lint run, the attempt's activity).
 */
import { SUBSCORES, type SubscoreName } from "../../protocol/assessment-rules";
import { testFileOf, testId, type TestResult } from "./test-outcomes";

export const RUBRIC_VERSION = "assay-rubric-4";

/** The five subscores, in the rubric's order (protocol/assessment-rules.ts: the web app shows them in it). */
export { SUBSCORES };
export type { SubscoreName };

/** The weights of the overall score; they add up to 1. */
export const WEIGHTS: Record<SubscoreName, number> = {
  correctness: 0.5,
  test_coverage: 0.15,
  code_quality: 0.15,
  behavior: 0.1,
  communication: 0.1,
};

export interface Subscore {
  score: number;
  evidence: Record<string, unknown>;
}

const clamp = (n: number) => Math.max(0, Math.min(100, Math.round(n)));

// ---------------------------------------------------------------- correctness

export interface HiddenRun {
  status: "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "ERROR";
  reason: string | null;
  tests: TestResult[];
  /** The runner's canary check (docs/scoring.md, "Threat model"); null when it sent none. */
  integrity: { checked_files: string[]; unverified_files: string[]; tampered: boolean; reason: string | null; pinned_files?: string[] } | null;
}

/**
 * FAIL_TO_PASS tests carry 80 % (the task's point), PASS_TO_PASS 20 % (nothing broken). A
 * hidden-test run that produced no report scores 0: nothing could be shown to work. A run
 * whose canaries show tampering scores 0 whatever it reports; a test counts only as a result
 * from its own file, and only from a file whose canaries came out as they must.
 */
export function correctness(failToPass: string[], passToPass: string[], run: HiddenRun): Subscore {
  const zero = (evidence: Record<string, unknown>) => ({
    score: 0,
    evidence: { run_status: run.status, ...evidence, fail_to_pass: { passed: 0, total: failToPass.length, failing: failToPass } },
  });
  if (!run.integrity) return zero({ tampered: false, reason: "the hidden-test run did not report its canary check" });
  if (run.integrity.tampered) return zero({ tampered: true, reason: run.integrity.reason });
  if (run.status !== "SUCCEEDED") return zero({ tampered: false, reason: run.reason });
  const verified = new Set(run.integrity.checked_files.filter((f) => !run.integrity?.unverified_files.includes(f)));
  const passing = new Set(
    run.tests
      .filter((t) => t.status === "passed")
      .map(testId)
      .filter((id): id is string => id !== null && verified.has(testFileOf(id))),
  );
  const tally = (ids: string[]) => {
    const failing = ids.filter((id) => !passing.has(id));
    return { passed: ids.length - failing.length, total: ids.length, failing };
  };
  const f2p = tally(failToPass);
  const p2p = tally(passToPass);
  const f2pRate = f2p.total === 0 ? 1 : f2p.passed / f2p.total;
  const p2pRate = p2p.total === 0 ? 1 : p2p.passed / p2p.total;
  return {
    score: clamp(100 * (0.8 * f2pRate + 0.2 * p2pRate)),
    evidence: { run_status: run.status, tampered: false, unverified_files: run.integrity.unverified_files, fail_to_pass: f2p, pass_to_pass: p2p },
  };
}

// ---------------------------------------------------------------- changed lines

export interface ChangedFile {
  path: string;
  /** Test file by the task's path rules; its lines are not counted as code to cover. */
  test: boolean;
  /** Line numbers (1-based, in the new file) the candidate added or changed. */
  changedLines: number[];
  /** The text of those lines, in the same order. */
  changedText: string[];
}

/**
 * Lines of `next` that are not in `base` (added or changed), by a longest-common-subsequence
 * line diff. `base` null is a new file: every line is changed.
 */
export function changedLines(base: string | null, next: string): { lines: number[]; text: string[] } {
  const b = base === null ? [] : splitLines(base);
  const n = splitLines(next);
  // Trim the common head and tail first: edits are local, so the quadratic table stays small.
  let head = 0;
  while (head < b.length && head < n.length && b[head] === n[head]) head++;
  let tail = 0;
  while (tail < b.length - head && tail < n.length - head && b[b.length - 1 - tail] === n[n.length - 1 - tail]) tail++;
  const bm = b.slice(head, b.length - tail);
  const nm = n.slice(head, n.length - tail);
  const kept = lcsKeptIndexes(bm, nm);
  const lines: number[] = [];
  const text: string[] = [];
  nm.forEach((line, i) => {
    if (!kept.has(i)) {
      lines.push(head + i + 1);
      text.push(line);
    }
  });
  return { lines, text };
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Indexes of `next` that belong to a longest common subsequence with `base`. */
function lcsKeptIndexes(base: string[], next: string[]): Set<number> {
  // Beyond this many cells the change is treated as a rewrite: every line of next is changed.
  if (base.length * next.length > 4_000_000) return new Set();
  const w = next.length + 1;
  const table = new Uint32Array((base.length + 1) * w);
  for (let i = base.length - 1; i >= 0; i--) {
    for (let j = next.length - 1; j >= 0; j--) {
      table[i * w + j] = base[i] === next[j] ? table[(i + 1) * w + j + 1]! + 1 : Math.max(table[(i + 1) * w + j]!, table[i * w + j + 1]!);
    }
  }
  const kept = new Set<number>();
  for (let i = 0, j = 0; i < base.length && j < next.length; ) {
    if (base[i] === next[j]) {
      kept.add(j);
      i++;
      j++;
    } else if (table[(i + 1) * w + j]! >= table[i * w + j + 1]!) i++;
    else j++;
  }
  return kept;
}

// ---------------------------------------------------------------- test coverage

export interface FileCoverage {
  lines_hit: number[];
  lines_missed: number[];
}

/**
 * The share of the candidate's changed, executable source lines that the workspace's own
 * tests (the repository's and the candidate's, never the hidden ones) ran. A changed line the
 * instrumentation does not count (blank, comment, brace) is not executable; a changed file the
 * tests never loaded counts every non-blank changed line as missed.
 */
export function testCoverage(files: ChangedFile[], coverage: Map<string, FileCoverage> | null, reason: string | null = null): Subscore {
  const source = files.filter((f) => !f.test && f.changedLines.length > 0);
  if (source.length === 0) return { score: 0, evidence: { reason: "no source lines were changed", files: [] } };
  if (!coverage) return { score: 0, evidence: { reason: reason ?? "coverage could not be measured", files: source.map((f) => f.path) } };
  let executable = 0;
  let covered = 0;
  const perFile = source.map((f) => {
    const c = coverage.get(f.path);
    const hit = new Set(c?.lines_hit ?? []);
    const instrumented = c ? new Set([...c.lines_hit, ...c.lines_missed]) : null;
    const lines = f.changedLines.filter((line, i) => (instrumented ? instrumented.has(line) : (f.changedText[i] ?? "").trim() !== ""));
    const ran = lines.filter((line) => hit.has(line));
    executable += lines.length;
    covered += ran.length;
    return { file: f.path, changed_executable_lines: lines.length, covered_lines: ran.length, loaded_by_tests: c !== undefined };
  });
  return {
    score: executable === 0 ? 0 : clamp((100 * covered) / executable),
    evidence: { changed_executable_lines: executable, covered_lines: covered, files: perFile },
  };
}

// ---------------------------------------------------------------- code quality

export interface LintFinding {
  file: string;
  line: number;
  rule: string | null;
  message: string;
  severity: "error" | "warning";
}

const DEBUG_LEFTOVER = /\b(console\.(log|debug)|debugger|print\(|pdb\.set_trace|breakpoint\()/;
const TODO = /\b(TODO|FIXME|XXX)\b/;

/**
 * 100 less: 10 per lint error (at most 60), 3 per lint warning (at most 30), and on the changed
 * lines 2 per debugging leftover (at most 10), 1 per line over 120 characters (at most 10) and
 * 1 per TODO/FIXME (at most 5). Lint counts only findings on changed files.
 */
export function codeQuality(files: ChangedFile[], lint: { findings: LintFinding[]; error?: string | null } | null): Subscore {
  const changed = files.filter((f) => f.changedLines.length > 0);
  if (changed.length === 0) return { score: 0, evidence: { reason: "no lines were changed" } };
  const changedPaths = new Set(changed.map((f) => f.path));
  const findings = (lint?.findings ?? []).filter((f) => changedPaths.has(f.file));
  const errors = findings.filter((f) => f.severity === "error").length;
  const warnings = findings.length - errors;
  const text = changed.flatMap((f) => f.changedText);
  const debug = text.filter((l) => DEBUG_LEFTOVER.test(l)).length;
  const long = text.filter((l) => l.length > 120).length;
  const todos = text.filter((l) => TODO.test(l)).length;
  const deductions = {
    lint_errors: Math.min(60, 10 * errors),
    lint_warnings: Math.min(30, 3 * warnings),
    debug_leftovers: Math.min(10, 2 * debug),
    long_lines: Math.min(10, long),
    todos: Math.min(5, todos),
  };
  const total = Object.values(deductions).reduce((a, b) => a + b, 0);
  return {
    score: clamp(100 - total),
    evidence: {
      linted: lint !== null && !lint.error,
      lint_error: lint?.error ?? (lint ? null : "the linter did not run"),
      lint_errors: errors,
      lint_warnings: warnings,
      findings: findings.slice(0, 50),
      debug_leftovers: debug,
      long_lines: long,
      todos,
      deductions,
    },
  };
}

// ---------------------------------------------------------------- behavior

/** What the service measured of the candidate's activity from ingested IDE telemetry (docs/api.md, "Telemetry"). */
export interface MeasuredTelemetry {
  /** Events ingested for the attempt up to its submission. */
  events: number;
  /** Paste events of at least LARGE_PASTE's bytes or lines. */
  largePastes: number;
  /** Times the IDE lost focus or was hidden. */
  focusLosses: number;
}

/** A paste this large is more than a line or two of the candidate's own notes. */
export const LARGE_PASTE = { bytes: 500, lines: 15 };

export interface Activity {
  runs: { created_at: string; status: string }[];
  /** When the overlay last changed; null when it never did. */
  lastChangeAt: string | null;
  autoSubmitted: boolean;
  timeLimitMinutes: number | null;
  startedAt: string | null;
  submittedAt: string | null;
  telemetry: MeasuredTelemetry;
  /** The client's own `behavior_signals`: kept beside the measurements, never scored. */
  claimed: Record<string, unknown>;
}

/**
 * Testing habit (40): 25 for running the tests at least once, 15 more for a run after the last
 * change. Time (30): 30 when the candidate submitted (or there is no limit), 10 when the
 * deadline did. Integrity (30): less 5 per large paste and 2 per focus loss, as measured from
 * the IDE's telemetry. What the client claims in behavior_signals is evidence only: a client
 * could claim anything.
 */
export function behavior(a: Activity): Subscore {
  const ran = a.runs.length > 0;
  const lastRun = a.runs.map((r) => r.created_at).sort().at(-1) ?? null;
  const testedFinalWork = ran && (a.lastChangeAt === null || (lastRun !== null && lastRun >= a.lastChangeAt));
  const testing = (ran ? 25 : 0) + (testedFinalWork ? 15 : 0);
  const time = a.autoSubmitted ? 10 : 30;
  const { largePastes, focusLosses, events } = a.telemetry;
  const integrity = Math.max(0, 30 - 5 * largePastes - 2 * focusLosses);
  const minutesUsed =
    a.startedAt && a.submittedAt ? Math.round((Date.parse(a.submittedAt) - Date.parse(a.startedAt)) / 600) / 100 : null;
  return {
    score: clamp(testing + time + integrity),
    evidence: {
      runs: a.runs.length,
      ran_tests_after_last_change: testedFinalWork,
      auto_submitted: a.autoSubmitted,
      minutes_used: minutesUsed,
      time_limit_minutes: a.timeLimitMinutes,
      telemetry_events: events,
      large_pastes: largePastes,
      focus_losses: focusLosses,
      claimed_signals: a.claimed,
      parts: { testing, time, integrity },
    },
  };
}

// ---------------------------------------------------------------- communication

const COMMENT = /^\s*(\/\/|#|\/\*|\*|""")/;
const EXPLAINS = [/\b(because|so that|since|in order to)\b/i, /\b(test|tested|tests|testing)\b/i, /\b(edge case|trade-?off|alternative|limitation)s?\b/i];

/**
 * What the candidate wrote to explain the work: the submission's `explanation` (up to 60:
 * 0 for none, 20 from 10 words, 40 from 40 words, plus 10 for each of reasons, testing, and
 * edge cases or trade-offs named, at most 20 more) and comments on the changed source lines (up
 * to 40: 40 when 5–40 % of them are comments, 20 when some are, else 0).
 */
export function communication(explanation: string | null, files: ChangedFile[]): Subscore {
  const words = (explanation ?? "").trim().split(/\s+/).filter(Boolean).length;
  const length = words >= 40 ? 40 : words >= 10 ? 20 : 0;
  const named = EXPLAINS.filter((r) => r.test(explanation ?? "")).length;
  const written = words === 0 ? 0 : length + Math.min(20, 10 * named);
  const lines = files.filter((f) => !f.test).flatMap((f) => f.changedText).filter((l) => l.trim() !== "");
  const comments = lines.filter((l) => COMMENT.test(l)).length;
  const ratio = lines.length === 0 ? 0 : comments / lines.length;
  const commented = ratio >= 0.05 && ratio <= 0.4 ? 40 : comments > 0 ? 20 : 0;
  return {
    score: clamp(written + commented),
    evidence: { explanation_words: words, explains: named, changed_source_lines: lines.length, comment_lines: comments, parts: { written, commented } },
  };
}

// ---------------------------------------------------------------- overall and claims

export function overallScore(subscores: Record<SubscoreName, Subscore>): number {
  return Math.round(SUBSCORES.reduce((sum, name) => sum + WEIGHTS[name] * subscores[name].score, 0) * 10) / 10;
}

export interface Claims {
  tests_passed: number | null;
  tests_total: number | null;
  coverage: number | null;
  lint_score: number | null;
}

/** A claimed fraction this far from the measured one is flagged for the reviewer. */
export const CLAIM_GAP_THRESHOLD = 0.25;

/**
 * The client's figures beside the measured ones. Tests: the claimed pass rate against the pass
 * rate of the workspace's own tests in the coverage run; coverage: against the changed-line
 * coverage; lint: against code_quality / 100.
 */
export function claimGaps(claims: Claims, measured: { visiblePassRate: number | null; coverage: number | null; quality: number }) {
  const claimedPassRate = claims.tests_total ? (claims.tests_passed ?? 0) / claims.tests_total : null;
  const rows = [
    { figure: "tests", claimed: claimedPassRate, measured: measured.visiblePassRate },
    { figure: "coverage", claimed: claims.coverage, measured: measured.coverage },
    { figure: "lint_score", claimed: claims.lint_score, measured: measured.quality / 100 },
  ];
  return rows.map((r) => {
    const gap = r.claimed === null || r.measured === null ? null : Math.round(Math.abs(r.claimed - r.measured) * 1000) / 1000;
    return { ...r, gap, flagged: gap !== null && gap > CLAIM_GAP_THRESHOLD };
  });
}
