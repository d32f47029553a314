import { count, inArray, min } from "drizzle-orm";
import type { BacklogGroup } from "../domain/runner-backlog";
import type { Database } from "./client";
import { runnerJobs } from "./schema";

/**
 * The runner jobs that are not final, waiting for a runner (queued) or held by one
 * (dispatched), counted by kind and owner with the oldest one's creation: one read over the
 * status index (`runner_jobs_lease_idx` leads with status), so it costs the open jobs, never
 * the table. For the fleet's autoscaler (docs/deploy-runners.md).
 */
export async function runnerBacklogGroups(db: Database): Promise<BacklogGroup[]> {
  const rows = await db
    .select({ status: runnerJobs.status, kind: runnerJobs.kind, ownerType: runnerJobs.ownerType, jobs: count(), oldestCreatedAt: min(runnerJobs.createdAt) })
    .from(runnerJobs)
    .where(inArray(runnerJobs.status, ["queued", "dispatched"]))
    .groupBy(runnerJobs.status, runnerJobs.kind, runnerJobs.ownerType)
    .all();
  return rows.map((r) => ({ ...r, status: r.status === "queued" ? "queued" : "dispatched" }));
}
