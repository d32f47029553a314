import { env } from "cloudflare:workers";
import { database } from "../../../src/db/client";
import { findRunnerJob, insertRunnerJob, type RunnerJobRow } from "../../../src/db/runner-jobs.queries";
import { newRunnerJobId, runnerJobKeys, type RunnerJobSpec } from "../../../src/domain/runner-jobs";

export { accepted, fakeRunner } from "./fake-runner";
export { callbackFor, hasRunnerSignature, postCallback, runnerHeaders } from "./runner-callbacks";

/**
 * The job once its owner's job-finished handler has run to the end (the row's notified_at),
 * with what the handler was handed (its status, reason and stored summary); undefined before.
 * The jobs createJob makes name no run, task or score, so their real handlers do nothing else.
 */
export async function notifiedJob(id: string): Promise<RunnerJobRow | undefined> {
  const job = await findRunnerJob(database(env.DB), id);
  return job?.notifiedAt ? job : undefined;
}

/** A queued job with its spec in R2, as enqueueRunnerJob leaves it, but with no queue message. */
export async function createJob(spec: Partial<RunnerJobSpec> = {}): Promise<{ id: string; spec: RunnerJobSpec }> {
  const id = newRunnerJobId();
  const snapshotKey = `test-snapshots/${id}.tar.gz`;
  await env.BUCKET.put(snapshotKey, "snapshot bytes");
  const full: RunnerJobSpec = {
    kind: "test",
    test: { framework: "node-test" },
    owner: { owner_type: "run", owner_id: `run_${id}` },
    schedule: { attempt_id: null, org_id: null },
    snapshot: { key: snapshotKey, sha256: "a".repeat(64) },
    ...spec,
  };
  await env.BUCKET.put(runnerJobKeys(id).spec, JSON.stringify(full));
  await insertRunnerJob(database(env.DB), id, full.kind, full.owner);
  return { id, spec: full };
}
