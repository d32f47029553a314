import { JOB_KINDS, JOB_PRIORITIES, JOB_STATUSES, type JobBody, TEST_FRAMEWORKS } from "../../protocol/jobs";
import { backoffSeconds } from "./backoff";
import { newId } from "../lib/ids";

/**
 * Jobs the Worker hands to the sandbox runner (docs/runner-protocol.md): what a caller asks
 * for, how it becomes the runner's `POST /jobs` body, and the dispatch retry policy.
 */

// The protocol's vocabulary (protocol/jobs.ts) under the names the Worker's code uses.
export const RUNNER_JOB_KINDS = JOB_KINDS;
/** The test frameworks the runner knows; unittest suites run under pytest. */
export { TEST_FRAMEWORKS };
export type TestFramework = (typeof TEST_FRAMEWORKS)[number];

/** An import's stated install and runtime (docs/tasks-from-prs.md, "Stated settings"), as every job of the task carries them. */
export interface JobRuntime {
  install: { command: string[] | null };
  runtime: { node: string | null; python: string | null; node_reason?: string };
}
export type RunnerJobKind = (typeof RUNNER_JOB_KINDS)[number];

/** Who asked for a job and is told when it ends; one job-finished handler per type (flows/job-finished.flow.ts). */
export const RUNNER_JOB_OWNER_TYPES = ["task_validation", "run", "scoring"] as const;
export type RunnerJobOwnerType = (typeof RUNNER_JOB_OWNER_TYPES)[number];

export const FINAL_RUNNER_JOB_STATUSES = JOB_STATUSES;
export type FinalRunnerJobStatus = (typeof FINAL_RUNNER_JOB_STATUSES)[number];
export const RUNNER_JOB_STATUSES = ["queued", "dispatched", ...FINAL_RUNNER_JOB_STATUSES] as const;
export type RunnerJobStatus = (typeof RUNNER_JOB_STATUSES)[number];

export function isFinalStatus(status: RunnerJobStatus): status is FinalRunnerJobStatus {
  return (FINAL_RUNNER_JOB_STATUSES as readonly string[]).includes(status);
}

/**
 * The owner id of one job of a process with several steps (task validation, scoring):
 * `{id}/{step}`. The step travels with the job, so its completion is matched to its step
 * without first writing the job's id anywhere (a callback may come back before that).
 */
export function stepOwnerId(id: string, step: string): string {
  return `${id}/${step}`;
}

export function parseStepOwnerId<S extends string>(ownerId: string, steps: readonly S[]): { id: string; step: S } | undefined {
  const [id, step, ...rest] = ownerId.split("/");
  if (!id || rest.length || !(steps as readonly string[]).includes(step ?? "")) return undefined;
  return { id, step: step as S };
}

export interface RunnerJobOwner {
  owner_type: RunnerJobOwnerType;
  owner_id: string;
}

/**
 * The order in which the runner's pool serves waiting jobs: a submitted attempt's score
 * first, then a task on its way to READY, then candidates' runs, which are retried by hand.
 */
export const RUNNER_JOB_PRIORITIES = JOB_PRIORITIES;
export type RunnerJobPriority = (typeof RUNNER_JOB_PRIORITIES)[number];

const OWNER_PRIORITY: Record<RunnerJobOwnerType, RunnerJobPriority> = {
  scoring: "scoring",
  task_validation: "validation",
  run: "interactive",
};

/** A job's priority follows from who asked for it, so a spec cannot claim another. */
export function runnerJobPriority(ownerType: RunnerJobOwnerType): RunnerJobPriority {
  return OWNER_PRIORITY[ownerType];
}

/**
 * Whom a job is done for, so the runner can cap the pool slots one attempt or organization
 * holds; null where the job serves none (a task's validation belongs to no attempt).
 */
export interface RunnerJobShare {
  attempt_id: string | null;
  org_id: string | null;
}

/** An archive in the bucket: its object key and the sha256 the runner verifies it against. */
export interface StoredArchive {
  key: string;
  sha256: string;
}

export type OverlayFile = { path: string; content_b64: string } | { path: string; delete: true };

export interface RunnerLimits {
  wall_ms: number;
  cpu_ms: number;
  memory_mb: number;
  processes: number;
  output_bytes: number;
  workspace_mb: number;
}

/**
 * What a caller asks the runner to do. Archives are object keys, not URLs: URLs are signed
 * when the job is dispatched, so a job that waits in the queue never carries expired ones.
 * Omitted fields take the runner's defaults.
 */
export interface RunnerJobSpec {
  kind: RunnerJobKind;
  owner: RunnerJobOwner;
  /** The body's `schedule` without its priority, which the owner type decides. */
  schedule: RunnerJobShare;
  snapshot: StoredArchive;
  environment?: StoredArchive | null;
  files?: OverlayFile[];
  patches?: string[];
  /**
   * `files`: run exactly these test files; `canaries`: place canary tests in them and report
   * what they showed (`integrity`), as scoring's hidden-test run does; `harness_patch`: the
   * solution patch, whose changes to the test harness that run keeps.
   */
  test?: { framework?: "auto" | TestFramework; command?: string[] | null; coverage?: boolean; files?: string[]; canaries?: boolean; harness_patch?: string | null };
  /** Prepare jobs: the stated install command; every job: the stated Node and Python versions. */
  install?: JobRuntime["install"];
  runtime?: JobRuntime["runtime"];
  /** With `test.coverage`: files whose hit and missed lines the result lists. */
  coverage_files?: string[];
  /** Files to lint after the tests (docs/runner-protocol.md). */
  lint?: { files: string[] } | null;
  limits?: Partial<RunnerLimits>;
}

/** Where a job's spec, result and uploads live in the bucket. */
export function runnerJobKeys(jobId: string) {
  const base = `runner-jobs/${jobId}`;
  return {
    spec: `${base}/spec.json`,
    result: `${base}/result.json`,
    junit: `${base}/junit.xml`,
    log: `${base}/log.txt`,
    environment: `${base}/environment.tar.gz`,
  };
}

export function newRunnerJobId(): string {
  return newId("job");
}

/** Presigned URLs and the callback URL for one dispatch of a job. */
export interface DispatchUrls {
  snapshot: string;
  environment: string | null;
  junit: string;
  log: string;
  /** Present for prepare jobs only. */
  environmentUpload: string | null;
  callback: string;
  /** Where the runner renews the job's lease, and how often. */
  lease: { url: string; interval_ms: number };
}

/** The runner's `POST /jobs` body for a job (docs/runner-protocol.md). */
export function runnerJobPayload(jobId: string, spec: RunnerJobSpec, urls: DispatchUrls): JobBody {
  return {
    job_id: jobId,
    kind: spec.kind,
    snapshot: { url: urls.snapshot, sha256: spec.snapshot.sha256 },
    environment: spec.environment && urls.environment ? { url: urls.environment, sha256: spec.environment.sha256 } : null,
    files: spec.files ?? [],
    patches: spec.patches ?? [],
    ...(spec.test && { test: spec.test }),
    ...(spec.coverage_files && { coverage_files: spec.coverage_files }),
    ...(spec.install && { install: spec.install }),
    ...(spec.runtime && { runtime: spec.runtime }),
    ...(spec.lint && { lint: spec.lint }),
    ...(spec.limits && { limits: spec.limits }),
    // Spread, not read: a spec stored before `schedule` existed adds nothing, and the runner
    // takes null ids for it, rather than failing the dispatch.
    schedule: { priority: runnerJobPriority(spec.owner.owner_type), ...spec.schedule },
    uploads: {
      junit: urls.junit,
      log: urls.log,
      ...(urls.environmentUpload && { environment: urls.environmentUpload }),
    },
    callback_url: urls.callback,
    lease: urls.lease,
  };
}

/**
 * Failed dispatches (runner unreachable) of one job before it is given up as ERROR, counted
 * on the job's row: a "full" answer is not a failure, and its new offer is a new message.
 * The queue's own `max_retries` (wrangler.toml) is higher, so its dead-letter queue only
 * receives messages whose handling failed for another reason than an unreachable runner.
 */
export const DISPATCH_ATTEMPTS = 6;

/** Seconds before delivery `attempt + 1`: 5, 10, 20, 40, 80 (2.5 minutes in all), at most 5 minutes. */
export function dispatchRetryDelaySeconds(attempt: number): number {
  return backoffSeconds(attempt, 5, 300);
}

/**
 * What a runner answer means for a dispatch: accepted (202 new, 200 seen before); full (503
 * with `Retry-After`: no free place now, come back then; not a failed attempt); worth retrying
 * (unreachable, overloaded without saying when, a proxy in the way); or refused for good (a
 * bad signature or body would be refused again).
 */
export function dispatchVerdict(status: number, retryAfter: string | null): "accepted" | "full" | "retry" | "refused" {
  if (status === 200 || status === 202) return "accepted";
  if (status === 503 && retryAfter !== null && /^\d+$/.test(retryAfter.trim())) return "full";
  if (status >= 500 || status === 408 || status === 429) return "retry";
  return "refused";
}

/**
 * Seconds before a job a full fleet turned away is offered again: the runner's `Retry-After`,
 * doubled for each of the first three earlier "full" answers to the same job (a long backlog
 * must not become a storm of offers), at most FULL_RETRY_MAX_SECONDS, and spread by `jitter`
 * (0..1, ±25%) so jobs turned away together do not come back together. The cap is low so a
 * job that has waited long is not offered more rarely than a new one.
 */
export const FULL_RETRY_MAX_SECONDS = 8;
export function fullRetryDelaySeconds(retryAfterSeconds: number, earlierFullAnswers: number, jitter: number): number {
  const base = Math.max(1, Math.min(retryAfterSeconds, FULL_RETRY_MAX_SECONDS));
  const delay = Math.min(FULL_RETRY_MAX_SECONDS, base * 2 ** Math.min(earlierFullAnswers, 3));
  return Math.max(1, Math.round(delay * (0.75 + jitter / 2)));
}

/**
 * Leases (docs/runner-protocol.md, "Leases"): a runner that took a job renews its lease by
 * heartbeat; a job whose lease ran out goes back to the queue for another runner, at most
 * MAX_REQUEUES times (a job that keeps losing its runners, such as one that crashes them, then
 * ends ERROR). The consumer holds a queued job for DISPATCH_CLAIM_SECONDS while it offers it,
 * longer than its POST's timeout, so two deliveries never offer one job at once.
 */
export const DEFAULT_LEASE_SECONDS = 30;
export const MAX_REQUEUES = 3;
export const DISPATCH_CLAIM_SECONDS = 45;

/**
 * A candidate waits on every hop between a run's POST and its result, so the two hops on that
 * path that need no queue are made in the request that comes before them (docs/runner-protocol.md,
 * "Who owns a job"): a job's first offer in the request that queued it, its owner's handler in
 * the runner's callback. Each has its queue message all the same, sent this much later, which
 * finds the work done and is dropped, or does it when the first try did not get there (the
 * fleet full, the runner unreachable, the isolate gone). The owner's handler may take longer
 * than an offer, and a second call of it beside the first is harmless but wasted.
 */
export const FIRST_OFFER_BACKSTOP_SECONDS = 2;
export const OWNER_TOLD_BACKSTOP_SECONDS = 10;

/** The lease from the RUNNER_LEASE_SECONDS setting: 2 to 600 s, else the default. */
export function leaseSeconds(setting: string | undefined): number {
  const n = Number(setting);
  return Number.isInteger(n) && n >= 2 && n <= 600 ? n : DEFAULT_LEASE_SECONDS;
}

/** How often a runner renews: a quarter of the lease, so three heartbeats may be lost before it runs out. */
export function heartbeatIntervalMs(lease: number): number {
  return Math.floor((lease * 1000) / 4);
}

/** An instant `seconds` after `nowMs`, as the ISO text the rows store (so they compare as text). */
export function isoAfter(nowMs: number, seconds: number): string {
  return new Date(nowMs + seconds * 1000).toISOString();
}

/**
 * What follows a dispatch that could not reach a runner, counted on the job (`failures`):
 * another try after a growing delay, or, from the DISPATCH_ATTEMPTS-th, the job's end as
 * ERROR with this reason.
 */
export function afterUnreachable(failures: number, detail: string): { retryDelaySeconds: number } | { giveUp: string } {
  if (failures >= DISPATCH_ATTEMPTS) return { giveUp: `the sandbox runner could not be reached: ${detail} (${failures} attempts)` };
  return { retryDelaySeconds: dispatchRetryDelaySeconds(failures) };
}

/**
 * Jobs whose lease ran out, each with its requeue count: those offered to the runners again,
 * and those that have lost their runner more than MAX_REQUEUES times and end ERROR.
 */
export function splitRequeued(requeued: readonly { id: string; requeues: number }[]): { again: string[]; givenUp: string[] } {
  return {
    again: requeued.filter((j) => j.requeues <= MAX_REQUEUES).map((j) => j.id),
    givenUp: requeued.filter((j) => j.requeues > MAX_REQUEUES).map((j) => j.id),
  };
}

/**
 * Of the jobs a runner holds but could not renew, those no longer its, which it may stop
 * working on: unknown, final, or dispatched to another runner. A queued job is not lost to it:
 * it may be on its way to this runner (its answer not yet recorded), or requeued, when the
 * runner's result is still welcome.
 */
export function lostJobIds(
  runnerId: string,
  unrenewed: readonly string[],
  holders: readonly { id: string; status: RunnerJobStatus; runnerId: string | null }[],
): string[] {
  const known = new Map(holders.map((j) => [j.id, j]));
  return unrenewed.filter((id) => {
    const job = known.get(id);
    return !job || isFinalStatus(job.status) || (job.status === "dispatched" && job.runnerId !== runnerId);
  });
}
