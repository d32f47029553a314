/**
 * Keystroke recording of an attempt (docs/api.md, "Keystroke recording"): every edit of the
 * candidate's editor as the CodeMirror change set it was, with its time, for a playback of how
 * the code was typed. It is the candidate's own code in their own attempt, never telemetry.
 * Stored by the attempt's object as snapshots of each file plus the change sets between them,
 * within a cap per attempt.
 */
import { ChangeSet, Text } from "@codemirror/state";
import type { FieldIssue } from "./outcome";

export const KEYSTROKE_LIMITS = {
  /** Edits one POST may carry. */
  batchEdits: 500,
  /** The largest body of one POST; the recorder's batches are far smaller (a keepalive request carries 64 KiB). */
  bodyBytes: 256 * 1024,
  /** Bytes of the workspace files one POST's edits start from together (a file's first edit, or a resynchronized one); 413 past it. */
  batchBaseBytes: 4 * 1024 * 1024,
  /** Edits an attempt records; past it, recording stops and the take-home goes on. */
  attemptEdits: 50_000,
  /** Bytes an attempt's recording stores (change sets and snapshots); past it, recording stops. */
  attemptBytes: 16 * 1024 * 1024,
  /** A file's snapshot is taken after this many edits of it at the least. */
  snapshotEvery: 250,
  /**
   * ... and after one edit for every this many bytes of the file: a large file is snapshotted
   * less often, so its snapshots cost at most this many bytes an edit.
   */
  snapshotBytesPerEdit: 64,
  /** The playback's markers of each kind (saves, runs, pastes) on the first page. */
  markers: 2_000,
} as const;

export type KeystrokeLimits = { readonly [K in keyof typeof KEYSTROKE_LIMITS]: number };

/** Who made an edit: the candidate at their editor, or someone of a live session (`author`, their user id). */
export type KeystrokeOrigin = "candidate" | "remote";

/** One edit as recorded: a change set (ChangeSet.toJSON()) of `path`, made at `t` (client ms since the epoch). */
export interface KeystrokeEdit {
  path: string;
  t: number;
  changes: unknown;
  paste: boolean;
  doc_length_before: number;
  origin: KeystrokeOrigin;
  author: string | null;
}

/** A stored item of the recording, in recording order: a file's whole text, or one edit of it. */
export type KeystrokeItem =
  | { seq: number; kind: "snapshot"; path: string; t: number; text: string }
  | ({ seq: number; kind: "edit" } & KeystrokeEdit);

/** How the recording of an attempt stands, as a POST answers and a GET reports. */
export interface RecordingState {
  /** `capped`: the attempt's cap was reached; nothing more is recorded. */
  recording: "on" | "capped";
  edits: number;
  bytes: number;
}

/** A file's text as CodeMirror holds it: lines split at \r\n, \r or \n, so its length is the editor's. */
export function editorText(content: string): Text {
  return Text.of(content.split(/\r\n?|\n/));
}

export const utf8Bytes = (text: string) => new TextEncoder().encode(text).byteLength;

/**
 * `doc` after `changes`, or why they do not apply to it: not a change set, or one for a
 * document of another length than the recording has (then the recorder and the recording
 * disagree about the file, and the batch is refused whole).
 */
export function applyEdit(doc: Text, changes: unknown, docLengthBefore: number): { ok: true; doc: Text } | { ok: false; why: string } {
  let set: ChangeSet;
  try {
    set = ChangeSet.fromJSON(changes);
  } catch {
    return { ok: false, why: "not a CodeMirror change set (ChangeSet.toJSON())" };
  }
  if (docLengthBefore !== doc.length) {
    return { ok: false, why: `doc_length_before is ${docLengthBefore}, but the recorded document has length ${doc.length}` };
  }
  if (set.length !== doc.length) {
    return { ok: false, why: `the change set applies to a document of length ${set.length}, but the recorded document has length ${doc.length}` };
  }
  return { ok: true, doc: set.apply(doc) };
}

/** Whether a file gets a snapshot after `sinceSnapshot` edits since its last one, at `docBytes` bytes. */
export function snapshotDue(sinceSnapshot: number, docBytes: number, limits: KeystrokeLimits = KEYSTROKE_LIMITS): boolean {
  return sinceSnapshot >= Math.max(limits.snapshotEvery, Math.ceil(docBytes / limits.snapshotBytesPerEdit));
}

/** The 422 entry of edit `index` of a batch. */
export function editIssue(index: number, field: string, msg: string): FieldIssue {
  return { loc: ["body", "edits", index, field], msg, type: "inconsistent_change_set" };
}
