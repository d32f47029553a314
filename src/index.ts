import { handleFetch } from "./app";
import { AttemptObject } from "./durable/attempt/attempt-object";
import type { Env } from "./env";
import { giveUpRunnerJob, runnerJob } from "./flows/runner-jobs.flow";
import { liveSnapshotFile } from "./flows/live.flow";
import { handleQueue } from "./queues/handle-queue";
import { handleScheduled } from "./scheduled";

/**
 * The attempt's object as wrangler.toml binds it, handed the runner-job lifecycle its run
 * sweep calls and the snapshot reader its live session seeds files with: an object imports no
 * flow, so the entry, which sits above every layer, joins them.
 */
export class AttemptDO extends AttemptObject {
  protected readonly runnerJobs = { runnerJob, giveUpRunnerJob };
  protected readonly liveSnapshot = { snapshotFile: liveSnapshotFile };
}
export { ExecutionDO } from "./durable/execution/execution-object";
export { NotificationDO } from "./durable/notification/notification-object";

export default {
  fetch: handleFetch,
  queue: handleQueue,
  scheduled: handleScheduled,
} satisfies ExportedHandler<Env>;
