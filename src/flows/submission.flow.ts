import { database } from "../db/client";
import { findTask } from "../db/tasks.queries";
import { stateRefusal, type AttemptRecord, type SubmissionPayload } from "../domain/attempts";
import { type Outcome } from "../domain/outcome";
import { OVERLAY_LIMITS } from "../domain/overlay";
import { hiddenTestFiles } from "../domain/scoring-jobs";
import { applySubmissionDiff, checkSubmissionDiff } from "../domain/submission-diff";
import { taskKeys } from "../domain/tasks";
import { attemptObject } from "../durable/attempt/attempt-object";
import type { AttemptActor, StagedChange } from "../durable/attempt/attempt-types";
import type { Env } from "../env";
import { readTarFiles, TarLimitError } from "../services/repohost/tar";
import { artifactStorage } from "../services/storage/artifact-storage";
import { sha256Hex } from "../lib/digest";
import { startScoringNow } from "./scoring/scoring-start.flow";

/**
 * Base files a diff within the overlay's limits can start from: what it changes or renames
 * (at most the overlay's total once changed) and what it removes (at most the diff itself),
 * with room to spare. Anything larger cannot make a submission the overlay can hold.
 */
const BASE_READ_LIMITS = { stripComponents: 1, maxFileBytes: 2 * OVERLAY_LIMITS.totalBytes, maxStreamBytes: 2 * 1024 ** 3 };

/** The regular files among `paths` in the task's snapshot; too large when they are more than a submission could start from. */
async function baseFiles(env: Env, taskId: string, paths: string[]): Promise<Outcome<Map<string, Uint8Array>>> {
  const snapshot = await artifactStorage(env).get(taskKeys(taskId).snapshot);
  if (!snapshot) throw new Error(`task ${taskId} has no snapshot`);
  const tar = snapshot.body.pipeThrough(new DecompressionStream("gzip") as TransformStream<Uint8Array, Uint8Array>);
  try {
    return { ok: true, value: await readTarFiles(tar, new Set(paths), BASE_READ_LIMITS) };
  } catch (e) {
    if (!(e instanceof TarLimitError)) throw e;
    return {
      ok: false,
      refusal: {
        kind: "too_large",
        detail: `Not submitted: the base files git_diff changes are over ${BASE_READ_LIMITS.maxFileBytes} bytes; a submission holds at most ${OVERLAY_LIMITS.totalBytes}`,
      },
    };
  }
}

/**
 * Submits an attempt (docs/api.md, "Submit by diff"). With an empty git_diff the saved
 * overlay is the submission. Otherwise the diff is: it is checked and applied to the task's
 * base here, and its files replace the overlay in the object's step that locks the attempt,
 * so a diff that is refused leaves the attempt as it was. Scoring starts after the answer, in
 * `exec`'s waitUntil; the scoring queue's message follows for a start that did not get there.
 */
export async function submitAttempt(
  env: Env,
  exec: Pick<ExecutionContext, "waitUntil">,
  attemptId: string,
  actor: AttemptActor,
  payload: SubmissionPayload,
): Promise<Outcome<AttemptRecord>> {
  const submitted = await submitToObject(env, attemptId, actor, payload);
  if (submitted.ok) exec.waitUntil(startScoringNow(env, attemptId));
  return submitted;
}

async function submitToObject(env: Env, attemptId: string, actor: AttemptActor, payload: SubmissionPayload): Promise<Outcome<AttemptRecord>> {
  const object = attemptObject(env, attemptId);
  if (!payload.git_diff) return object.submit(actor, payload, null);

  const record = await object.record();
  if (!record) throw new Error(`attempt ${attemptId} has no state in its object`);
  // Spares reading the snapshot for an attempt that cannot be submitted; the object checks again as it locks.
  const refusal = stateRefusal("submit", record);
  if (refusal) return { ok: false, refusal };
  const task = await findTask(database(env.DB), record.task_id);
  if (!task) throw new Error(`attempt ${attemptId} has no task ${record.task_id}`);

  const hiddenTests = new Set([...(task.testFiles ?? []), ...hiddenTestFiles(task.failToPass ?? [], task.passToPass ?? [])]);
  const diff = checkSubmissionDiff(payload.git_diff, { hiddenTests, changedFiles: payload.changed_files });
  if (!diff.ok) return diff;
  const base = await baseFiles(env, task.id, diff.value.basePaths);
  if (!base.ok) return base;
  const files = applySubmissionDiff(diff.value, base.value);
  if (!files.ok) return files;
  const staged = await Promise.all(
    files.value.map(async (f): Promise<StagedChange> => (f.op === "delete" ? f : { ...f, sha256: await sha256Hex(f.content) })),
  );
  return object.submit(actor, payload, staged);
}
