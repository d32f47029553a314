import { database } from "../db/client";
import { runsAfter } from "../db/evaluation.queries";
import { KEYSTROKE_LIMITS, type KeystrokeEdit, type KeystrokeItem, type RecordingState } from "../domain/keystrokes";
import { OVERLAY_LIMITS } from "../domain/overlay";
import { accept, refuse, type Outcome } from "../domain/outcome";
import type { Listing } from "../domain/pagination";
import { attemptObject } from "../durable/attempt/attempt-object";
import type { KeystrokesRecorded } from "../durable/attempt/attempt-keystrokes";
import type { Env } from "../env";
import { snapshotContents, snapshotFiles } from "./workspace-files.flow";

// The keystroke recording of an attempt (docs/api.md, "Keystroke recording"): the candidate's
// editor sends its edits, the attempt's object checks and stores them, and its organization's
// staff play them back with the saves and runs of the evaluation timeline as markers.

/**
 * Records a batch of the candidate's edits. A file the recording does not have yet starts
 * from its text in the attempt's workspace (the overlay's, else the task snapshot's, else
 * empty for a new file): the editor opened it from there, and the recorder sends a file's first
 * edit at once, before the save queue saves it. So does a file whose first edit here starts from
 * another length than recorded: it changed outside the recording (an IDE saved it, it was
 * deleted and created again), and the editor opened it afresh from the workspace. The bases are
 * read in one pass over the snapshot and within KEYSTROKE_LIMITS.batchBaseBytes together (413
 * past it, or for a file over the overlay's limit): a batch naming many files must not make the
 * Worker read the snapshot once per file, nor hold them all at once.
 */
export async function recordKeystrokes(env: Env, attempt: { id: string; taskId: string }, edits: KeystrokeEdit[]): Promise<Outcome<KeystrokesRecorded>> {
  const object = attemptObject(env, attempt.id);
  const first = new Map<string, KeystrokeEdit>();
  for (const edit of edits) if (!first.has(edit.path)) first.set(edit.path, edit);
  const recorded = await object.keystrokeFiles([...first.keys()]);
  const needed = [...first].filter(([path, edit]) => recorded[path] !== edit.doc_length_before).map(([path]) => path);
  const bases: Record<string, string> = {};
  if (needed.length > 0) {
    const read = await workspaceBases(env, attempt, needed);
    if (!read.ok) return read;
    Object.assign(bases, read.value);
  }
  return object.recordKeystrokes(edits, bases);
}

/** The workspace's text of each of `paths` (empty for a file it does not have), within KEYSTROKE_LIMITS.batchBaseBytes together. */
async function workspaceBases(env: Env, attempt: { id: string; taskId: string }, paths: readonly string[]): Promise<Outcome<Record<string, string>>> {
  const object = attemptObject(env, attempt.id);
  const [overlay, snapshot] = await Promise.all([object.overlay(), snapshotFiles(env, attempt.taskId)]);
  const changed = new Map(overlay.map((e) => [e.path, e]));
  const tooLarge = refuse(
    "too_large",
    `The files this batch starts from are over ${OVERLAY_LIMITS.fileBytes} bytes each or ${KEYSTROKE_LIMITS.batchBaseBytes} bytes together; send a file's edits in batches of their own`,
  );
  const bases: Record<string, string> = {};
  const fromSnapshot: string[] = [];
  let budget: number = KEYSTROKE_LIMITS.batchBaseBytes;
  for (const path of paths) {
    const entry = changed.get(path);
    if (entry?.op === "upsert") {
      budget -= entry.size;
      if (budget < 0) return tooLarge;
      const file = await object.overlayFile(path);
      bases[path] = file?.content ? new TextDecoder().decode(file.content) : "";
    } else if (entry === undefined && snapshot.has(path)) fromSnapshot.push(path);
    else bases[path] = "";
  }
  if (fromSnapshot.length > 0) {
    const contents = await snapshotContents(env, attempt.taskId, fromSnapshot, budget);
    if (contents === undefined) return tooLarge;
    for (const path of fromSnapshot) {
      const content = contents.get(path);
      if (content && content.byteLength > OVERLAY_LIMITS.fileBytes) return tooLarge;
      bases[path] = content ? new TextDecoder().decode(content) : "";
    }
  }
  return accept(bases);
}

/** A point of the attempt to jump to in a playback; `t` in ms since the epoch, as the edits' times. */
export type PlaybackMarker =
  | { kind: "save"; t: number; at: string; save: number; paths: string[] }
  | { kind: "run"; t: number; at: string; run_id: string; status: string }
  | { kind: "paste"; t: number; at: string; seq: number; path: string };

/**
 * The attempt's recording page by page, its state, and the markers of its playback: the saves
 * and runs of the evaluation timeline (from the attempt's object and D1, where the timeline
 * reads them) and the recording's pastes, in time order, at most KEYSTROKE_LIMITS.markers of each.
 */
export function keystrokePlayback(
  env: Env,
  attemptId: string,
): Listing<KeystrokeItem> & { recording: Promise<RecordingState>; markers: () => Promise<PlaybackMarker[]> } {
  const object = attemptObject(env, attemptId);
  const summary = object.keystrokeSummary();
  const markers = async (): Promise<PlaybackMarker[]> => {
    const [groups, runs, { pastes }] = await Promise.all([
      object.saveGroups(null, KEYSTROKE_LIMITS.markers),
      runsAfter(database(env.DB), attemptId, null, KEYSTROKE_LIMITS.markers),
      summary,
    ]);
    const all: PlaybackMarker[] = [
      ...groups.map((g): PlaybackMarker => ({ kind: "save", t: Date.parse(g.at), at: g.at, save: g.save, paths: g.files.map((f) => f.path) })),
      ...runs.flatMap((r): PlaybackMarker[] => (r.type === "run" ? [{ kind: "run", t: Date.parse(r.at), at: r.at, run_id: r.run_id, status: r.status }] : [])),
      ...pastes.map((p): PlaybackMarker => ({ kind: "paste", t: p.t, at: new Date(p.t).toISOString(), seq: p.seq, path: p.path })),
    ];
    return all.sort((a, b) => a.t - b.t);
  };
  return {
    count: async () => (await summary).items,
    page: (limit, offset) => object.keystrokeItems(limit, offset),
    recording: summary.then(({ recording, edits, bytes }) => ({ recording, edits, bytes })),
    markers,
  };
}
