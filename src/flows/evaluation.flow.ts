import { database } from "../db/client";
import { chatMessagesAfter, newestFinishedScore, runsAfter, scoreTimes, telemetryPerMinute } from "../db/evaluation.queries";
import { latestScore } from "../db/scores.queries";
import { findTask } from "../db/tasks.queries";
import { type SubmissionPayload } from "../domain/attempts";
import { accept, refuse, type Outcome } from "../domain/outcome";
import {
  boundFor,
  lifecycleEvents,
  mergeTimeline,
  numberTie,
  SAVE_HISTORY_LIMITS,
  saveEvents,
  scoringEvents,
  telemetryEvents,
  type SaveEntry,
  type TimelineCursor,
  type TimelinePage,
} from "../domain/evaluation";
import { bytesToBase64, type OverlayEntry } from "../domain/overlay";
import type { Listing } from "../domain/pagination";
import { attemptObject } from "../durable/attempt/attempt-object";
import type { Env } from "../env";

// An attempt's evaluation for its organization's staff (docs/api.md, "Evaluation"): what the
// attempt object holds (its lifecycle, saves, submission) beside what D1 holds (runs,
// telemetry, the AI chat transcript, score reports).

/**
 * One page of the attempt's timeline after `cursor`. Each source gives one event more than
 * a page from where the cursor left it, so the merge knows whether another page follows.
 */
export async function timelinePage(env: Env, attemptId: string, cursor: TimelineCursor | undefined, limit: number): Promise<TimelinePage> {
  const db = database(env.DB);
  const object = attemptObject(env, attemptId);
  const more = limit + 1;
  const saves = boundFor(cursor, "save");
  const [record, explanation, groups, runs, telemetry, chat, scores] = await Promise.all([
    object.record(),
    object.submittedExplanation(),
    object.saveGroups(saves && { at: saves.at, save: numberTie(saves) }, more),
    runsAfter(db, attemptId, boundFor(cursor, "run"), more),
    // From the minute the cursor falls in, which may lie before it: one minute more.
    telemetryPerMinute(db, attemptId, boundFor(cursor, "telemetry")?.at ?? null, more + 1),
    chatMessagesAfter(db, attemptId, boundFor(cursor, "ai_chat_message"), more),
    scoreTimes(db, attemptId),
  ]);
  if (!record) throw new Error(`attempt ${attemptId} has no state in its object`);
  return mergeTimeline(
    [lifecycleEvents(record, explanation), saveEvents(groups), runs, telemetryEvents(telemetry), chat, scoringEvents(scores)],
    cursor,
    limit,
  );
}

export interface SubmissionDiff {
  submitted_at: string;
  auto_submitted: boolean;
  git_diff: string | null;
  git_diff_bytes: number;
  files: OverlayEntry[];
  total_bytes: number;
}

/** The submitted diff as the client sent it, and the overlay as submission froze it; a conflict before submission. */
export async function submissionDiff(env: Env, attemptId: string): Promise<Outcome<SubmissionDiff>> {
  const object = attemptObject(env, attemptId);
  const [record, rawPayload, files] = await Promise.all([object.record(), object.submissionPayload(), object.overlay()]);
  if (!record) throw new Error(`attempt ${attemptId} has no state in its object`);
  // RPC types the payload's free-form behavior_signals away; it is the object's own SubmissionPayload.
  const payload = rawPayload as SubmissionPayload | null;
  if (!record.submitted_at || !payload) {
    return refuse("conflict", `Attempt ${attemptId} is ${record.status}; its diff exists once it is submitted`);
  }
  const gitDiff = payload.git_diff ?? null;
  return accept({
    submitted_at: record.submitted_at,
    auto_submitted: record.auto_submitted,
    git_diff: gitDiff,
    git_diff_bytes: new TextEncoder().encode(gitDiff ?? "").byteLength,
    files,
    total_bytes: files.reduce((n, f) => n + f.size, 0),
  });
}

/**
 * The attempt's score report in force, whole, with the candidate's explanation and the names
 * of the task's hidden tests; 409 while there is none, saying why.
 */
export async function scoreEvidence(env: Env, attempt: { id: string; taskId: string }): Promise<Outcome<Record<string, unknown>>> {
  const db = database(env.DB);
  const [score, task] = await Promise.all([newestFinishedScore(db, attempt.id), findTask(db, attempt.taskId)]);
  if (!score?.report || !score.completedAt) {
    const latest = await latestScore(db, attempt.id);
    const why = !latest
      ? "it has not been submitted, or its scoring has not started"
      : latest.status === "failed"
        ? `scoring failed: ${latest.reason ?? "no reason was recorded"}`
        : "scoring is in progress";
    return refuse("conflict", `Attempt ${attempt.id} has no score report yet: ${why}`);
  }
  return accept({
    view: "staff",
    ...score.report,
    explanation: await attemptObject(env, attempt.id).submittedExplanation(),
    created_at: score.createdAt,
    completed_at: score.completedAt,
    hidden_tests: { fail_to_pass: task?.failToPass ?? [], pass_to_pass: task?.passToPass ?? [] },
  });
}

/** The attempt's save history page by page, and its size: the entries it holds and those its bound dropped. */
export function saveHistory(env: Env, attemptId: string): Listing<SaveEntry> & { size: Promise<{ entries: number; dropped: number }> } {
  const object = attemptObject(env, attemptId);
  const size = object.saveHistorySize();
  return { size, count: async () => (await size).entries, page: (limit, offset) => object.saveHistory(limit, offset) };
}

/**
 * A file as of a save, with its content: not found when there is no such save or the file
 * was not changed up to it, gone when the history's bound has dropped its content.
 */
export async function savedFile(env: Env, attemptId: string, save: number, path: string): Promise<Outcome<SaveEntry & { content_b64: string | null }>> {
  const file = await attemptObject(env, attemptId).savedFile(save, path);
  if (!file.found) {
    return refuse(
      "not_found",
      file.why === "no_such_save"
        ? `Attempt ${attemptId} has no save ${save}`
        : `${path} was not changed up to save ${save} of attempt ${attemptId}, or its changes are older than the history keeps`,
    );
  }
  const { entry, content } = file;
  if (entry.content_kept === false) {
    return refuse(
      "gone",
      `The content of ${path} as of save ${save} (entry ${entry.seq}) is no longer kept: the save history keeps ` +
        `${SAVE_HISTORY_LIMITS.contentBytes} bytes of contents per attempt (docs/limits.md)`,
    );
  }
  return accept({ ...entry, content_b64: content === null ? null : bytesToBase64(new Uint8Array(content)) });
}
