import {
  applyEdit,
  editIssue,
  editorText,
  KEYSTROKE_LIMITS,
  snapshotDue,
  utf8Bytes,
  type KeystrokeEdit,
  type KeystrokeItem,
  type KeystrokeLimits,
  type KeystrokeOrigin,
  type RecordingState,
} from "../../domain/keystrokes";
import { accept, invalid, refuse, type Outcome } from "../../domain/outcome";
import { OVERLAY_LIMITS } from "../../domain/overlay";

// The attempt's keystroke recording (docs/api.md, "Keystroke recording"): `keystrokes` holds,
// in recording order, each file's snapshots (its whole text) and its edits (change sets)
// between them; seq counts from 1 without gaps, as rows are never deleted. The first item of
// a file is a snapshot of its text before its first edit, and another follows every so many
// edits (snapshotDue), so a playback may start anywhere from the snapshot before it.
// `keystroke_files` holds each file's text as recorded so far, against which every change set
// is checked; `keystroke_totals` the recording's size against its cap. Every function is
// synchronous, so a batch is checked and stored in one step of the object.
export const KEYSTROKE_SCHEMA = `
CREATE TABLE IF NOT EXISTS keystrokes (
  seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, path TEXT NOT NULL, t INTEGER NOT NULL, data TEXT NOT NULL,
  paste INTEGER NOT NULL DEFAULT 0, origin TEXT, author TEXT, length_before INTEGER
);
CREATE INDEX IF NOT EXISTS keystrokes_pastes ON keystrokes (seq) WHERE paste = 1;
CREATE TABLE IF NOT EXISTS keystroke_files (
  path TEXT PRIMARY KEY, text TEXT NOT NULL, since_snapshot INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS keystroke_totals (
  id INTEGER PRIMARY KEY CHECK (id = 1), edits INTEGER NOT NULL, bytes INTEGER NOT NULL, capped INTEGER NOT NULL
);
`;

/** What a batch did: how many of its edits were stored (0 once the cap is reached), and the recording after it. */
export interface KeystrokesRecorded extends RecordingState {
  accepted: number;
}

type Pending =
  | { kind: "snapshot"; path: string; t: number; text: string }
  | { kind: "edit"; edit: KeystrokeEdit; data: string };

export function recordingState(sql: SqlStorage): RecordingState {
  const row = sql.exec<{ edits: number; bytes: number; capped: number }>("SELECT edits, bytes, capped FROM keystroke_totals").toArray()[0];
  return row ? { recording: row.capped ? "capped" : "on", edits: row.edits, bytes: row.bytes } : { recording: "on", edits: 0, bytes: 0 };
}

/**
 * The length of each of `paths` the recording has a text of; the others need a base with their
 * first edit, and so does one whose next edit starts from another length (resynchronized).
 */
export function recordedLengths(sql: SqlStorage, paths: readonly string[]): Record<string, number> {
  const lengths: Record<string, number> = {};
  for (const path of paths) {
    // In UTF-16 code units, as CodeMirror counts; SQLite's length() counts code points.
    const row = sql.exec<{ text: string }>("SELECT text FROM keystroke_files WHERE path = ?", path).toArray()[0];
    if (row) lengths[path] = row.text.length;
  }
  return lengths;
}

/**
 * Records a batch of edits, all or none: the candidate's from POST .../keystrokes, and a live
 * session's (`origin: "remote"` with the `author`'s user id, or the candidate's own typed into
 * the session) through AttemptObject.recordKeystrokes. `bases` holds the text of each file the
 * recording does not have yet (recordedLengths), as its first snapshot; and of a file it has
 * whose first edit here starts from another length than recorded: the file changed outside this
 * recording (saved from an IDE, deleted and created again), and a snapshot of the base starts it
 * afresh. Every change set must apply to the file as recorded (422 naming the edit otherwise). A batch that would take the
 * recording past its cap is not stored, and the recording is capped from then on: a batch
 * then stores nothing and says so, and its sender stops sending.
 */
export function recordKeystrokeEdits(
  storage: DurableObjectStorage,
  edits: readonly KeystrokeEdit[],
  bases: Readonly<Record<string, string>>,
  limits: KeystrokeLimits = KEYSTROKE_LIMITS,
): Outcome<KeystrokesRecorded> {
  const sql = storage.sql;
  const state = recordingState(sql);
  if (state.recording === "capped") return accept({ ...state, accepted: 0 });
  const files = new Map<string, { doc: ReturnType<typeof editorText>; since: number }>();
  const pending: Pending[] = [];
  let bytes = 0;
  for (const [i, edit] of edits.entries()) {
    let file = files.get(edit.path);
    if (!file) {
      const row = sql
        .exec<{ text: string; since_snapshot: number }>("SELECT text, since_snapshot FROM keystroke_files WHERE path = ?", edit.path)
        .toArray()[0];
      const given = bases[edit.path];
      const resync = row !== undefined && given !== undefined && row.text.length !== edit.doc_length_before;
      const base = resync ? given : (row?.text ?? given);
      if (base === undefined) return invalid([editIssue(i, "path", `no base text of ${edit.path} to apply the edit to`)]);
      file = { doc: editorText(base), since: row && !resync ? row.since_snapshot : 0 };
      files.set(edit.path, file);
      if (!row || resync) {
        const text = file.doc.toString();
        pending.push({ kind: "snapshot", path: edit.path, t: edit.t, text });
        bytes += utf8Bytes(text);
      }
    }
    const applied = applyEdit(file.doc, edit.changes, edit.doc_length_before);
    if (!applied.ok) return invalid([editIssue(i, "changes", applied.why)]);
    const data = JSON.stringify(edit.changes);
    pending.push({ kind: "edit", edit, data });
    bytes += utf8Bytes(data);
    file.doc = applied.doc;
    file.since += 1;
    if (snapshotDue(file.since, file.doc.length, limits)) {
      const text = file.doc.toString();
      pending.push({ kind: "snapshot", path: edit.path, t: edit.t, text });
      bytes += utf8Bytes(text);
      file.since = 0;
    }
  }
  // A file grown past what the overlay holds could not be stored as one row, nor saved: the batch is refused, as its save would be.
  for (const [path, file] of files) {
    if (file.doc.length > OVERLAY_LIMITS.fileBytes / 3 && utf8Bytes(file.doc.toString()) > OVERLAY_LIMITS.fileBytes) {
      return refuse("too_large", `${path} would be over ${OVERLAY_LIMITS.fileBytes} bytes after these edits, the most a file of the changes may hold`);
    }
  }
  const after = { edits: state.edits + edits.length, bytes: state.bytes + bytes };
  if (after.edits > limits.attemptEdits || after.bytes > limits.attemptBytes) {
    sql.exec(
      "INSERT INTO keystroke_totals (id, edits, bytes, capped) VALUES (1, ?, ?, 1) ON CONFLICT (id) DO UPDATE SET capped = 1",
      state.edits,
      state.bytes,
    );
    return accept({ recording: "capped", edits: state.edits, bytes: state.bytes, accepted: 0 });
  }
  storage.transactionSync(() => {
    for (const item of pending) {
      if (item.kind === "snapshot") {
        sql.exec("INSERT INTO keystrokes (kind, path, t, data) VALUES ('snapshot', ?, ?, ?)", item.path, item.t, item.text);
      } else {
        const { edit } = item;
        sql.exec(
          "INSERT INTO keystrokes (kind, path, t, data, paste, origin, author, length_before) VALUES ('edit', ?, ?, ?, ?, ?, ?, ?)",
          edit.path,
          edit.t,
          item.data,
          edit.paste ? 1 : 0,
          edit.origin,
          edit.author,
          edit.doc_length_before,
        );
      }
    }
    for (const [path, file] of files) {
      sql.exec(
        `INSERT INTO keystroke_files (path, text, since_snapshot) VALUES (?, ?, ?)
         ON CONFLICT (path) DO UPDATE SET text = excluded.text, since_snapshot = excluded.since_snapshot`,
        path,
        file.doc.toString(),
        file.since,
      );
    }
    sql.exec(
      "INSERT INTO keystroke_totals (id, edits, bytes, capped) VALUES (1, ?, ?, 0) ON CONFLICT (id) DO UPDATE SET edits = excluded.edits, bytes = excluded.bytes",
      after.edits,
      after.bytes,
    );
  });
  return accept({ recording: "on", ...after, accepted: edits.length });
}

type ItemRow = {
  seq: number;
  kind: "snapshot" | "edit";
  path: string;
  t: number;
  data: string;
  paste: number;
  origin: KeystrokeOrigin | null;
  author: string | null;
  length_before: number | null;
};

function toItem(row: ItemRow): KeystrokeItem {
  const { seq, path, t } = row;
  if (row.kind === "snapshot") return { seq, kind: "snapshot", path, t, text: row.data };
  return {
    seq,
    kind: "edit",
    path,
    t,
    changes: JSON.parse(row.data) as unknown,
    paste: row.paste === 1,
    doc_length_before: row.length_before ?? 0,
    origin: row.origin ?? "candidate",
    author: row.author,
  };
}

/** How many items the recording holds: seq has no gaps, so the newest seq. */
export function keystrokeItemCount(sql: SqlStorage): number {
  return sql.exec<{ n: number | null }>("SELECT max(seq) AS n FROM keystrokes").one().n ?? 0;
}

/** Items `offset + 1` to `offset + limit` of the recording, in order. */
export function readKeystrokeItems(sql: SqlStorage, limit: number, offset: number): KeystrokeItem[] {
  return sql
    .exec<ItemRow>(
      "SELECT seq, kind, path, t, data, paste, origin, author, length_before FROM keystrokes WHERE seq > ? ORDER BY seq LIMIT ?",
      offset,
      limit,
    )
    .toArray()
    .map(toItem);
}

/** The first `limit` pastes (and drops) of the recording, for the playback's markers. */
export function readPastes(sql: SqlStorage, limit: number): { seq: number; t: number; path: string }[] {
  return sql.exec<{ seq: number; t: number; path: string }>("SELECT seq, t, path FROM keystrokes WHERE paste = 1 ORDER BY seq LIMIT ?", limit).toArray();
}
