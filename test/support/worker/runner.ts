import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { database } from "../../../src/db/client";
import { insertRunnerJob } from "../../../src/db/runner-jobs";
import type { FinishedRunnerJob } from "../../../src/domain/runner-callback";
import { newRunnerJobId, RUNNER_JOB_OWNER_TYPES, runnerJobKeys, type RunnerJobSpec } from "../../../src/domain/runner-jobs";
import { jobFinishedHandlers } from "../../../src/flows/job-finished";
import { hasRunnerSignature } from "./runner-callbacks";

export { callbackFor, hasRunnerSignature, postCallback, runnerHeaders } from "./runner-callbacks";

/** Every job-finished handler call, by job id; these handlers replace every owner type's. */
export const notified = new Map<string, FinishedRunnerJob[]>();
/** Owner ids whose handler throws once, then succeeds. */
export const failOnce = new Set<string>();
for (const ownerType of RUNNER_JOB_OWNER_TYPES) {
  jobFinishedHandlers[ownerType] = async (_env, job) => {
    if (failOnce.delete(job.owner.owner_id)) throw new Error("handler failed on purpose");
    notified.set(job.id, [...(notified.get(job.id) ?? []), job]);
  };
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

export interface FakeRunnerCall {
  body: Record<string, unknown>;
  signed: boolean;
}

/**
 * Answers the Worker's requests to RUNNER_URL (the only outbound HTTP the tests fake; our
 * own storage and database are real). `answer` gets each job body.
 */
export function fakeRunner(answer: (job: Record<string, unknown>) => Response | Promise<Response>) {
  const calls: FakeRunnerCall[] = [];
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    if (!request.url.startsWith(env.RUNNER_URL)) throw new Error(`unexpected outbound request to ${request.url}`);
    const text = await request.text();
    const body = JSON.parse(text) as Record<string, unknown>;
    calls.push({ body, signed: request.url === `${env.RUNNER_URL}/jobs` && (await hasRunnerSignature(request, text)) });
    return answer(body);
  });
  return { calls, restore: () => spy.mockRestore() };
}

export const accepted = (job: Record<string, unknown>) => Response.json({ job_id: job.job_id, status: "accepted" }, { status: 202 });
