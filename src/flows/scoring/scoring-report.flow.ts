import { database } from "../../db/client";
import { runTimeline } from "../../db/runs.queries";
import { measuredTelemetry } from "../../db/telemetry.queries";
import type { TaskRow } from "../../db/tasks.queries";
import { classifyPath } from "../../domain/patch-rules";
import { reviewFlags } from "../../domain/review-flags";
import type { RunnerCallback } from "../../domain/runner-callback";
import {
  behavior,
  changedLines,
  claimGaps,
  codeQuality,
  communication,
  correctness,
  overallScore,
  RUBRIC_VERSION,
  SUBSCORES,
  testCoverage,
  WEIGHTS,
  type ChangedFile,
  type FileCoverage,
  type HiddenRun,
  type Subscore,
  type SubscoreName,
} from "../../domain/scoring";
import type { ScoreReport } from "../../domain/score-views";
import type { ScoringJobFiles } from "../../domain/scoring-jobs";
import { taskKeys } from "../../domain/tasks";
import type { TestResult } from "../../domain/test-outcomes";
import type { FrozenEntry, SubmittedWork } from "../../durable/attempt/attempt-types";
import type { Env } from "../../env";
import { readTarFiles } from "../../services/repohost/tar";
import { artifactStorage } from "../../services/storage/artifact-storage";

const SNAPSHOT_READ_LIMITS = { stripComponents: 1, maxFileBytes: 32 * 1024 * 1024, maxStreamBytes: 2 * 1024 ** 3 };

function text(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return null;
  }
}

/** The base versions of `paths`, read from the task's snapshot in the bucket. */
async function baseFiles(env: Env, task: TaskRow, paths: string[]): Promise<Map<string, Uint8Array>> {
  if (paths.length === 0) return new Map();
  const snapshot = await artifactStorage(env).get(taskKeys(task.id).snapshot);
  if (!snapshot) throw new Error(`task ${task.id} has no snapshot`);
  const tar = snapshot.body.pipeThrough(new DecompressionStream("gzip") as TransformStream<Uint8Array, Uint8Array>);
  return readTarFiles(tar, new Set(paths), SNAPSHOT_READ_LIMITS);
}

/** The candidate's changed lines per file: the frozen overlay against the snapshot. */
async function changedFiles(env: Env, task: TaskRow, frozen: readonly FrozenEntry[]): Promise<ChangedFile[]> {
  const upserts = frozen.filter((f) => f.op === "upsert" && f.content);
  const base = await baseFiles(env, task, upserts.map((f) => f.path));
  const out: ChangedFile[] = [];
  for (const file of upserts) {
    const next = text(new Uint8Array(file.content!));
    if (next === null) continue;
    const before = base.get(file.path);
    const diff = changedLines(before ? text(before) : null, next);
    out.push({ path: file.path, test: classifyPath(file.path) === "test", changedLines: diff.lines, changedText: diff.text });
  }
  return out;
}

function coverageOf(result: RunnerCallback | null): Map<string, FileCoverage> | null {
  if (!result?.coverage) return null;
  const map = new Map<string, FileCoverage>();
  for (const f of result.coverage.files) {
    if (f.lines_hit && f.lines_missed) map.set(f.file, { lines_hit: f.lines_hit, lines_missed: f.lines_missed });
  }
  return map;
}

/**
 * Computes an attempt's score report from its two scoring runs (docs/scoring.md): the
 * hidden-test run for correctness, the workspace run for coverage, lint and the measured pass
 * rate, and the attempt's own record for behavior and communication.
 */
export async function buildReport(
  env: Env,
  ids: { scoreId: string; task: TaskRow; work: SubmittedWork },
  hidden: HiddenRun,
  workspace: { status: string; reason: string | null; result: RunnerCallback | null },
  jobFiles: Pick<ScoringJobFiles, "ignoredTestEdits" | "excludedFromHidden">,
): Promise<ScoreReport> {
  const { ignoredTestEdits } = jobFiles;
  const { task, work } = ids;
  const attempt = work.record;
  const db = database(env.DB);
  const [files, attemptRuns, telemetry] = await Promise.all([
    changedFiles(env, task, work.overlay),
    runTimeline(db, attempt.id),
    measuredTelemetry(db, attempt.id, attempt.submitted_at ?? new Date().toISOString()),
  ]);
  const payload = work.payload;
  const lastChangeAt = work.overlay.map((e) => e.updated_at).sort().at(-1) ?? null;
  const workspaceRan = workspace.status === "SUCCEEDED" ? workspace.result : null;

  const subs: Record<SubscoreName, Subscore> = {
    correctness: correctness(task.failToPass ?? [], task.passToPass ?? [], hidden),
    test_coverage: testCoverage(files, coverageOf(workspaceRan), workspace.reason ?? "the workspace run produced no coverage"),
    code_quality: codeQuality(files, workspace.result?.lint ?? null),
    behavior: behavior({
      runs: attemptRuns,
      lastChangeAt,
      autoSubmitted: attempt.auto_submitted,
      timeLimitMinutes: attempt.time_limit_minutes,
      startedAt: attempt.started_at,
      submittedAt: attempt.submitted_at,
      telemetry,
      claimed: payload.behavior_signals ?? {},
    }),
    communication: communication(payload.explanation ?? null, files),
  };
  const counts = workspaceRan?.counts;
  const claims = claimGaps(
    {
      tests_passed: payload.tests_passed ?? null,
      tests_total: payload.tests_total ?? null,
      coverage: payload.coverage ?? null,
      lint_score: payload.lint_score ?? null,
    },
    {
      visiblePassRate: counts && counts.total > 0 ? counts.passed / counts.total : null,
      coverage: subs.test_coverage.evidence.changed_executable_lines ? subs.test_coverage.score / 100 : null,
      quality: subs.code_quality.score,
    },
  );
  const flags = claims.filter((c) => c.flagged).map((c) => `claimed ${c.figure} ${c.claimed} is ${c.gap} away from the measured ${c.measured}`);
  if (ignoredTestEdits.length > 0) flags.push(`edits to the task's test files were not scored: ${ignoredTestEdits.join(", ")}`);
  const pinned = hidden.integrity?.pinned_files ?? [];
  if (pinned.length > 0) flags.push(`the hidden-test run kept the task's version of the test harness files the candidate changed: ${pinned.join(", ")}`);
  if (hidden.integrity?.tampered) flags.push(`the hidden-test run was tampered with, so correctness is 0: ${hidden.integrity.reason ?? "no detail"}`);
  const unverified = hidden.integrity?.unverified_files ?? [];
  if (unverified.length > 0) flags.push(`the results of ${unverified.join(", ")} were not counted: the file's canary tests did not both run as they must`);
  // Evidence for the reviewer, with the lines; no score reads them (docs/scoring.md, "Threat model").
  const review = reviewFlags(files);
  flags.push(...review.summaries);
  return {
    score_id: ids.scoreId,
    attempt_id: attempt.id,
    task_id: task.id,
    rubric_version: RUBRIC_VERSION,
    overall_score: overallScore(subs),
    subscores: Object.fromEntries(SUBSCORES.map((n) => [n, subs[n].score])) as Record<SubscoreName, number>,
    weights: WEIGHTS,
    evidence: Object.fromEntries(SUBSCORES.map((n) => [n, subs[n].evidence])) as Record<SubscoreName, Record<string, unknown>>,
    claims,
    flags,
    review_flags: review.flags,
    ignored_test_edits: ignoredTestEdits,
    // The Worker's cut (test files, package manifests) and the runner's (its framework's harness).
    excluded_from_hidden_run: [...new Set([...jobFiles.excludedFromHidden, ...(hidden.integrity?.pinned_files ?? [])])],
  };
}

export function hiddenRunOf(status: HiddenRun["status"], reason: string | null, result: RunnerCallback | null): HiddenRun {
  return { status, reason, tests: (result?.tests ?? []) as TestResult[], integrity: result?.integrity ?? null };
}
