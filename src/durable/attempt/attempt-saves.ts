import {
  contentCutoff,
  SAVE_HISTORY_LIMITS,
  type SavedFileLookup,
  type SaveEntry,
  type SaveGroup,
  type SaveHistoryLimits,
} from "../../domain/evaluation";
import type { OverlayOp } from "../../domain/overlay";
import type { StagedChange } from "./attempt-types";

// The attempt's save history, for a replay of how the code evolved (docs/api.md, "Evaluation"):
// one `saves` row per file change of each PATCH .../changes, and the contents in
// `save_contents`, once per SHA-256, because IDEs save unchanged files again and again. Every
// function is synchronous, so a save and its history are written in one step of the object.

type SaveRow = Omit<SaveEntry, "content_kept"> & { kept: number };

const entry = ({ kept, ...row }: SaveRow): SaveEntry => ({ ...row, content_kept: row.op === "delete" ? null : kept === 1 });

/**
 * Appends one save (the changes of one PATCH, applied at `at`) and keeps the history within
 * `limits`: past the entries, the oldest saves go whole; past the bytes, the contents saved
 * least recently go, their entries staying as metadata.
 */
export function recordSaves(sql: SqlStorage, at: string, changes: readonly StagedChange[], limits: SaveHistoryLimits = SAVE_HISTORY_LIMITS): void {
  const { save } = sql.exec<{ save: number }>("SELECT coalesce(max(save), 0) + 1 AS save FROM saves").one();
  for (const change of changes) {
    const size = change.op === "upsert" ? change.content.byteLength : 0;
    const sha256 = change.op === "upsert" ? change.sha256 : null;
    const { seq } = sql
      .exec<{ seq: number }>(
        "INSERT INTO saves (save, at, path, op, size, sha256) VALUES (?, ?, ?, ?, ?, ?) RETURNING seq",
        save,
        at,
        change.path,
        change.op,
        size,
        sha256,
      )
      .one();
    if (change.op === "upsert") {
      sql.exec(
        `INSERT INTO save_contents (sha256, content, size, last_seq) VALUES (?, ?, ?, ?)
         ON CONFLICT (sha256) DO UPDATE SET last_seq = excluded.last_seq`,
        change.sha256,
        change.content,
        size,
        seq,
      );
    }
  }
  dropOldestEntries(sql, save, limits.entries);
  dropOldestContents(sql, limits.contentBytes);
}

/** The save just made stays whatever the bound: a replay always reaches the overlay's state. */
function dropOldestEntries(sql: SqlStorage, newest: number, maxEntries: number): void {
  // Rows go only from the head, so seq has no gaps and max - min + 1 counts them.
  const { lo, hi } = sql.exec<{ lo: number; hi: number }>("SELECT min(seq) AS lo, max(seq) AS hi FROM saves").one();
  if (hi - lo + 1 <= maxEntries) return;
  const { save } = sql.exec<{ save: number }>("SELECT save FROM saves WHERE seq = ?", hi - maxEntries).one();
  sql.exec("DELETE FROM saves WHERE save <= ?", Math.min(save, newest - 1));
  sql.exec("DELETE FROM save_contents WHERE last_seq < (SELECT min(seq) FROM saves)");
}

function dropOldestContents(sql: SqlStorage, maxBytes: number): void {
  const { total } = sql.exec<{ total: number }>("SELECT coalesce(sum(size), 0) AS total FROM save_contents").one();
  const cutoff = contentCutoff(
    sql.exec<{ last_seq: number; size: number }>("SELECT last_seq, size FROM save_contents ORDER BY last_seq"),
    total,
    maxBytes,
  );
  if (cutoff !== null) sql.exec("DELETE FROM save_contents WHERE last_seq <= ?", cutoff);
}

/** Where a page of saves continues: after `at`, and at `at` itself after save number `save`. */
export interface SaveBound {
  at: string;
  save: number;
}

/** Up to `limit` saves after `after`, in time order, each with its files. */
export function readSaveGroups(sql: SqlStorage, after: SaveBound | null, limit: number): SaveGroup[] {
  const { at, save } = after ?? { at: "", save: 0 };
  const rows = sql
    .exec<{ save: number; at: string; path: string; op: OverlayOp; size: number }>(
      `WITH page AS (SELECT DISTINCT at, save FROM saves WHERE at > ? OR (at = ? AND save > ?) ORDER BY at, save LIMIT ?)
       SELECT s.save, s.at, s.path, s.op, s.size FROM saves s JOIN page p ON p.save = s.save ORDER BY s.at, s.save, s.seq`,
      at,
      at,
      save,
      limit,
    )
    .toArray();
  const groups: SaveGroup[] = [];
  for (const row of rows) {
    const last = groups.at(-1);
    const file = { path: row.path, op: row.op, size: row.size };
    if (last?.save === row.save) last.files.push(file);
    else groups.push({ save: row.save, at: row.at, files: [file] });
  }
  return groups;
}

/** How many entries the history holds, and how many older ones the bound dropped. */
export function saveHistorySize(sql: SqlStorage): { entries: number; dropped: number } {
  const { lo, hi } = sql.exec<{ lo: number | null; hi: number | null }>("SELECT min(seq) AS lo, max(seq) AS hi FROM saves").one();
  return lo === null || hi === null ? { entries: 0, dropped: 0 } : { entries: hi - lo + 1, dropped: lo - 1 };
}

const ENTRY_COLUMNS = `s.seq, s.save, s.at, s.path, s.op, s.size, s.sha256, (c.sha256 IS NOT NULL) AS kept`;

/** A page of the history's entries, oldest first. */
export function readSaveEntries(sql: SqlStorage, limit: number, offset: number): SaveEntry[] {
  return sql
    .exec<SaveRow>(
      `SELECT ${ENTRY_COLUMNS} FROM saves s LEFT JOIN save_contents c ON c.sha256 = s.sha256 ORDER BY s.seq LIMIT ? OFFSET ?`,
      limit,
      offset,
    )
    .toArray()
    .map(entry);
}

/** `path` as of save `save`: its newest change in that save or before, with the content while it is kept. */
export function readSavedFile(sql: SqlStorage, save: number, path: string): SavedFileLookup {
  const { last } = sql.exec<{ last: number | null }>("SELECT max(save) AS last FROM saves").one();
  if (last === null || save > last) return { found: false, why: "no_such_save" };
  const row = sql
    .exec<SaveRow & { content: ArrayBuffer | null }>(
      `SELECT ${ENTRY_COLUMNS}, c.content FROM saves s LEFT JOIN save_contents c ON c.sha256 = s.sha256
       WHERE s.path = ? AND s.save <= ? ORDER BY s.save DESC, s.seq DESC LIMIT 1`,
      path,
      save,
    )
    .toArray()[0];
  if (!row) return { found: false, why: "not_changed" };
  const { content, ...rest } = row;
  return { found: true, entry: entry(rest), content };
}
