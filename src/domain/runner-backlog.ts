import { RUNNER_JOB_KINDS, RUNNER_JOB_PRIORITIES, runnerJobPriority, type RunnerJobKind, type RunnerJobOwnerType, type RunnerJobPriority } from "./runner-jobs";

/** Where the autoscaler reads the backlog, relative to the API's base (/api/v1), as route tables give paths. */
export const RUNNER_BACKLOG_ROUTE = "/internal/runner/backlog";

/**
 * The runner fleet's backlog, as the autoscaler reads it (docs/runner-protocol.md, "The
 * backlog"; docs/deploy-runners.md): KEDA's metrics-api scaler takes `total` at its
 * `valueLocation` and divides it by the jobs one runner should hold.
 */
export interface RunnerBacklog {
  /** Jobs the fleet is asked to serve now: waiting for a runner plus held by one. */
  total: number;
  queued: { total: number } & Record<RunnerJobKind, number>;
  queued_by_priority: Record<RunnerJobPriority, number>;
  /** Jobs a runner has taken (running, waiting in its pool, or reporting) and not yet finished. */
  dispatched: number;
  /** Seconds since the oldest queued job was created; 0 when none is queued. */
  oldest_queued_age_seconds: number;
}

export interface BacklogGroup {
  status: "queued" | "dispatched";
  kind: RunnerJobKind;
  ownerType: RunnerJobOwnerType;
  jobs: number;
  oldestCreatedAt: string | null;
}

const zeroes = <K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

/** The backlog from the open jobs' groups, at `nowMs`. */
export function runnerBacklog(groups: BacklogGroup[], nowMs: number): RunnerBacklog {
  const queued = { total: 0, ...zeroes(RUNNER_JOB_KINDS) };
  const byPriority = zeroes(RUNNER_JOB_PRIORITIES);
  let dispatched = 0;
  let oldest: number | null = null;
  for (const g of groups) {
    if (g.status === "dispatched") {
      dispatched += g.jobs;
      continue;
    }
    queued.total += g.jobs;
    queued[g.kind] += g.jobs;
    byPriority[runnerJobPriority(g.ownerType)] += g.jobs;
    const created = g.oldestCreatedAt === null ? Number.NaN : Date.parse(g.oldestCreatedAt);
    if (Number.isFinite(created) && (oldest === null || created < oldest)) oldest = created;
  }
  return {
    total: queued.total + dispatched,
    queued,
    queued_by_priority: byPriority,
    dispatched,
    oldest_queued_age_seconds: oldest === null ? 0 : Math.max(0, Math.floor((nowMs - oldest) / 1000)),
  };
}

/** Shortest backlog token the Worker accepts as configured: as long as the runner's secret must be. */
export const BACKLOG_TOKEN_MIN_LENGTH = 16;

/**
 * Why the configured backlog token cannot be used, or null when it can. It is a credential of
 * its own: the runner's signing key is never accepted in its place, so whoever reads the
 * autoscaler's Secret cannot sign jobs or results.
 */
export function backlogTokenProblem(token: string | undefined, runnerSecret: string | undefined): string | null {
  if (!token) return "no RUNNER_BACKLOG_TOKEN is configured";
  if (token.length < BACKLOG_TOKEN_MIN_LENGTH) return `RUNNER_BACKLOG_TOKEN is shorter than ${BACKLOG_TOKEN_MIN_LENGTH} characters`;
  if (runnerSecret && token === runnerSecret) return "RUNNER_BACKLOG_TOKEN is the runner's signing key (RUNNER_SECRET); it must be a token of its own";
  return null;
}
