/**
 * Candidate test runs (spec sections 2 and 3; docs/api.md, "Runs"): the task's base snapshot
 * and prepared environment, plus the overlay entries the candidate names, with the
 * repository's tests and the candidate's own. Hidden tests never run: they live only in the
 * task's test patch, and a run applies no patch.
 */
import type { FieldIssue, Refusal } from "./outcome";
import { bytesToBase64, OVERLAY_LIMITS, type OverlayOp } from "./overlay";
import type { RunnerCallback } from "./runner-callback";
import {
  DISPATCH_ATTEMPTS,
  dispatchRetryDelaySeconds,
  FINAL_RUNNER_JOB_STATUSES,
  type FinalRunnerJobStatus,
  type OverlayFile,
  type RunnerJobSpec,
  type RunnerJobStatus,
  type RunnerLimits,
  type JobRuntime,
  type StoredArchive,
  TEST_FRAMEWORKS,
  type TestFramework,
} from "./runner-jobs";
import { jobRuntime, type TaskSettings } from "./task-settings";
import { taskKeys } from "./tasks";
import { newId } from "../lib/ids";

/** The spec spells the first two `queued` and `SUCCEEDED`; the rest follow the runner job's. */
export const RUN_STATUSES = ["queued", "RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ERROR"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** What a run's record holds: RUNNING is not stored but read from its runner job. */
export const STORED_RUN_STATUSES = ["queued", ...FINAL_RUNNER_JOB_STATUSES] as const;
export type StoredRunStatus = (typeof STORED_RUN_STATUSES)[number];

export const RUN_LIMITS = {
  /** Runs queued or running at once per attempt; the runner's pool is shared by every attempt. */
  inFlight: 3,
  /** What a 429 for too many runs in flight tells the client to wait: a typical run's length. */
  retryAfterSeconds: 10,
  /** Wall-clock limit of the test command, chosen per run. */
  timeoutSeconds: { min: 1, max: 300, default: 120 },
  /** Entries of changed_files: at most the overlay's entries. */
  changedFiles: OVERLAY_LIMITS.files,
  /** Lifetime of the artifact URLs a GET hands out. */
  urlTtlSeconds: { min: 1, max: 3600, default: 900 },
} as const;

/**
 * The sandbox limits of a run besides its wall clock. CPU time is counted over the whole
 * process tree, and node:test runs test files in parallel, so it may exceed the wall time.
 */
export function runLimits(timeoutSeconds: number): RunnerLimits {
  return {
    wall_ms: timeoutSeconds * 1000,
    cpu_ms: 2 * timeoutSeconds * 1000,
    memory_mb: 1024,
    processes: 256,
    output_bytes: 1024 * 1024,
    workspace_mb: 512,
  };
}

export function newRunId(): string {
  return newId("run");
}

/** The figures of a finished run, kept on its record; the per-test list stays in the job's stored result. */
export type RunSummary = Pick<RunnerCallback, "exit_code" | "framework" | "command" | "counts" | "timings" | "artifacts" | "log_truncated">;

/** Takes a run's figures from a runner result or from the summary stored on its job. */
export function runSummary(result: RunSummary): RunSummary {
  const { exit_code, framework, command, counts, timings, artifacts, log_truncated } = result;
  return { exit_code, framework, command, counts, timings, artifacts, log_truncated };
}

/** A run as the attempt's object keeps it and D1 mirrors it. */
export interface RunRecord {
  id: string;
  attempt_id: string;
  status: StoredRunStatus;
  /** The overlay paths the run includes, as asked, without repeats. */
  changed_files: string[];
  timeout_seconds: number;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  reason: string | null;
  /** Null until the run is finished, and for a run given up without a result. */
  result: RunSummary | null;
}

/** How a run ended: its runner job's final status and what the job reported. */
export interface RunOutcome {
  status: FinalRunnerJobStatus;
  reason: string | null;
  result: RunSummary | null;
}

/** A run that has ended, with the candidate to tell: all that announcing it needs. */
export interface EndedRun {
  attempt_id: string;
  candidate_id: string;
  run_id: string;
  status: FinalRunnerJobStatus;
  /** Tests by result; null when the runner reported nothing. The announcement carries them so it can say how the tests went. */
  counts: RunSummary["counts"] | null;
}

/**
 * The status a client sees. A queued record follows its job: `queued` until the runner has
 * taken it, then RUNNING, also while a result the runner reported is being recorded.
 */
export function runStatus(stored: StoredRunStatus, job: RunnerJobStatus | null): RunStatus {
  if (stored !== "queued") return stored;
  return job === null || job === "queued" ? "queued" : "RUNNING";
}

/** What a run needs of its task: a READY task has all of it. */
export interface RunTask {
  organization_id: string;
  snapshot: StoredArchive;
  environment: StoredArchive | null;
  framework: "auto" | TestFramework;
  command: string[] | null;
  /** The stated Node and Python versions (domain/task-settings.ts). */
  runtime: JobRuntime["runtime"];
}

export function runTaskOf(task: {
  id: string;
  organizationId: string;
  snapshotSha256: string | null;
  environmentKey: string | null;
  environmentSha256: string | null;
  testFramework: string | null;
  testCommand: string[] | null;
  settings: TaskSettings | null;
}): RunTask {
  if (!task.snapshotSha256) throw new Error(`task ${task.id} has no snapshot to run`);
  return {
    organization_id: task.organizationId,
    snapshot: { key: taskKeys(task.id).snapshot, sha256: task.snapshotSha256 },
    environment: task.environmentKey && task.environmentSha256 ? { key: task.environmentKey, sha256: task.environmentSha256 } : null,
    framework: TEST_FRAMEWORKS.find((f) => f === task.testFramework) ?? "auto",
    command: task.testCommand,
    runtime: jobRuntime(task.settings).runtime,
  };
}

/** One overlay entry with its content (null for a deletion). */
export interface OverlayContent {
  path: string;
  op: OverlayOp;
  content: Uint8Array | null;
}

/** 422 entries for the paths of changed_files that are not in the overlay. */
export function unknownPathIssues(changedFiles: readonly string[], overlayPaths: ReadonlySet<string>): FieldIssue[] {
  return changedFiles.flatMap((path, i) =>
    overlayPaths.has(path)
      ? []
      : [{ loc: ["body", "changed_files", i], msg: `${path} is not in the attempt's changes overlay; save it first`, type: "unknown_path" }],
  );
}

/** Rate-limited when the attempt already has as many runs in flight as it may. */
export function inFlightRefusal(attemptId: string, inFlight: number): Refusal | undefined {
  if (inFlight < RUN_LIMITS.inFlight) return undefined;
  return {
    kind: "rate_limited",
    retryAfterSeconds: RUN_LIMITS.retryAfterSeconds,
    detail:
      `Attempt ${attemptId} has ${inFlight} runs in flight (queued or running); at most ${RUN_LIMITS.inFlight} may be. ` +
      `Retry when one has finished: GET /api/v1/attempts/${attemptId}/runs shows them.`,
  };
}

/** The runner's files of the chosen overlay entries: upserts with their content, deletions as such. */
export function runFiles(entries: readonly OverlayContent[], changedFiles: readonly string[]): OverlayFile[] {
  const chosen = new Set(changedFiles);
  return entries
    .filter((e) => chosen.has(e.path))
    .map((e) => (e.op === "delete" || e.content === null ? { path: e.path, delete: true as const } : { path: e.path, content_b64: bytesToBase64(e.content) }));
}

/**
 * The owner id of a run's job, `{attempt_id}/{run_id}`: the job's completion goes straight to
 * the run's attempt without looking the run up. Ids hold no `/` (ids are `prefix_hex`).
 */
export function runOwnerId(attemptId: string, runId: string): string {
  return `${attemptId}/${runId}`;
}

export function parseRunOwnerId(ownerId: string): { attemptId: string; runId: string } | undefined {
  const [attemptId, runId, ...rest] = ownerId.split("/");
  return attemptId && runId && rest.length === 0 ? { attemptId, runId } : undefined;
}

/**
 * The runner job of a run: the task's snapshot and environment, the chosen files, and no
 * patches, so the hidden tests of the task's test patch are never in the workspace.
 */
export function runJobSpec(
  run: Pick<RunRecord, "id" | "attempt_id" | "timeout_seconds">,
  task: RunTask,
  files: OverlayFile[],
): RunnerJobSpec {
  return {
    kind: "test",
    owner: { owner_type: "run", owner_id: runOwnerId(run.attempt_id, run.id) },
    schedule: { attempt_id: run.attempt_id, org_id: task.organization_id },
    snapshot: task.snapshot,
    environment: task.environment,
    files,
    test: { framework: task.framework, command: task.command },
    runtime: task.runtime,
    limits: runLimits(run.timeout_seconds),
  };
}

/**
 * How long the Worker keeps handing a job to an unreachable runner (the queue's retry delays)
 * before it gives the job up itself.
 */
export const DISPATCH_WINDOW_MS =
  Array.from({ length: DISPATCH_ATTEMPTS - 1 }, (_, i) => dispatchRetryDelaySeconds(i + 1)).reduce((a, b) => a + b, 0) * 1000;

/**
 * Room beyond a run's own time for what else a run waits for: a place in the runner's pool,
 * downloads and unpacking, uploads, the runner's callback retries (about a minute) and the
 * completion message.
 */
export const RUN_SWEEP_MARGIN_MS = 5 * 60_000;

/**
 * When a run still without a result is given up (the attempt's alarm sweeps it): a job the
 * runner has taken after its time limit plus the margin, one still waiting for the runner
 * after the dispatch retries plus the margin.
 */
export function runSweepAt(run: Pick<RunRecord, "created_at" | "timeout_seconds">, dispatchedAt: string | null): number {
  if (dispatchedAt !== null) return Date.parse(dispatchedAt) + run.timeout_seconds * 1000 + RUN_SWEEP_MARGIN_MS;
  return Date.parse(run.created_at) + DISPATCH_WINDOW_MS + RUN_SWEEP_MARGIN_MS;
}

/** Why a swept run is ERROR, for its `reason`. */
export function sweepReason(run: Pick<RunRecord, "created_at" | "timeout_seconds">, dispatchedAt: string | null): string {
  if (dispatchedAt !== null) {
    const seconds = Math.round((runSweepAt(run, dispatchedAt) - Date.parse(dispatchedAt)) / 1000);
    return (
      `no result from the sandbox runner within ${seconds} s of handing it the run (its time limit is ` +
      `${run.timeout_seconds} s); the runner may have stopped or lost it`
    );
  }
  const seconds = Math.round((runSweepAt(run, null) - Date.parse(run.created_at)) / 1000);
  return `the sandbox runner did not take the run within ${seconds} s of its creation`;
}

/** The longest a GET of a run waits for its end (`Prefer: wait`). */
export const RUN_WAIT_MAX_SECONDS = 20;

/**
 * Seconds a GET of a run may wait for the run's end, from its `Prefer` header (RFC 7240:
 * `Prefer: wait=10`, among other preferences), at most RUN_WAIT_MAX_SECONDS; null when the
 * client did not ask to wait, or asked in a form the RFC does not give.
 */
export function preferredWaitSeconds(prefer: string | null): number | null {
  if (!prefer) return null;
  for (const preference of prefer.split(",")) {
    const match = /^\s*wait\s*=\s*"?(\d{1,6})"?\s*(;.*)?$/i.exec(preference);
    if (!match) continue;
    const seconds = Number(match[1]);
    return seconds === 0 ? null : Math.min(seconds, RUN_WAIT_MAX_SECONDS);
  }
  return null;
}
