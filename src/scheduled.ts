import type { Env } from "./env";
import { requeueLostJobs } from "./flows/runner-jobs.flow";
import { log } from "./lib/log";

/**
 * The Worker's cron entry (wrangler.toml `[triggers]`): requeues runner jobs whose lease ran
 * out. Runners' heartbeats do the same whenever any runner holds a job; this covers a fleet
 * that has gone quiet, or that lost every runner at once.
 */
export async function handleScheduled(_controller: ScheduledController, env: Env): Promise<void> {
  try {
    await requeueLostJobs(env, Date.now());
  } catch (e) {
    log("error", "scheduled: requeueing lost runner jobs failed", { error: e instanceof Error ? e.message : String(e) });
    throw e;
  }
}
