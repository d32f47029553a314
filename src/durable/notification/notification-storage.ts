import type { Notification, NotificationType, ReadSelection } from "../../domain/notifications";
import { TICKETS_SCHEMA } from "../socket-tickets";

// One user per object: their stored notifications (newest NOTIFICATION_LIMITS.storedPerUser),
// the last id handed out (ids never repeat, even after the oldest are dropped), and the
// browser tickets already used.
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS state (one INTEGER PRIMARY KEY CHECK (one = 1), user_id TEXT NOT NULL, last_id INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS notifications (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  read_ms INTEGER
);
CREATE INDEX IF NOT EXISTS notifications_unread ON notifications (read_ms, id);
${TICKETS_SCHEMA}
`;

type Row = { id: number; type: NotificationType; payload: string; created_ms: number; read_ms: number | null };

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const toNotification = (row: Row): Notification => ({
  id: row.id,
  type: row.type,
  created_at: new Date(row.created_ms).toISOString(),
  read_at: iso(row.read_ms),
  payload: JSON.parse(row.payload) as Record<string, unknown>,
});
const COLUMNS = "id, type, payload, created_ms, read_ms";

export function lastId(sql: SqlStorage): number {
  return sql.exec<{ last_id: number }>("SELECT last_id FROM state").toArray()[0]?.last_id ?? 0;
}

export function ownerOf(sql: SqlStorage): string | undefined {
  return sql.exec<{ user_id: string }>("SELECT user_id FROM state").toArray()[0]?.user_id;
}

/** Records the object's user the first time it is told; an object never changes hands. */
export function claimOwner(sql: SqlStorage, userId: string): boolean {
  sql.exec("INSERT INTO state (one, user_id, last_id) VALUES (1, ?, 0) ON CONFLICT (one) DO NOTHING", userId);
  return ownerOf(sql) === userId;
}

/** Stores a notification unless its key was stored before; its id is one past the last handed out. */
export function insertNotification(
  sql: SqlStorage,
  n: { key: string; type: NotificationType; payload: unknown; createdMs: number },
): Notification | undefined {
  if (sql.exec("SELECT 1 FROM notifications WHERE key = ?", n.key).toArray().length > 0) return undefined;
  const id = lastId(sql) + 1;
  sql.exec("UPDATE state SET last_id = ?", id);
  sql.exec(
    "INSERT INTO notifications (id, key, type, payload, created_ms) VALUES (?, ?, ?, ?, ?)",
    id,
    n.key,
    n.type,
    JSON.stringify(n.payload),
    n.createdMs,
  );
  return toNotification({ id, type: n.type, payload: JSON.stringify(n.payload), created_ms: n.createdMs, read_ms: null });
}

/** Drops all but the newest `keep`. */
export function trim(sql: SqlStorage, keep: number): void {
  sql.exec("DELETE FROM notifications WHERE id <= (SELECT id FROM notifications ORDER BY id DESC LIMIT 1 OFFSET ?)", keep);
}

export function oldestId(sql: SqlStorage): number | null {
  return sql.exec<{ id: number | null }>("SELECT MIN(id) AS id FROM notifications").one().id;
}

export function notificationsAfter(sql: SqlStorage, afterId: number): Notification[] {
  return sql.exec<Row>(`SELECT ${COLUMNS} FROM notifications WHERE id > ? ORDER BY id`, afterId).toArray().map(toNotification);
}

/** Newest first, as a list shows them. */
export function notificationPage(sql: SqlStorage, unreadOnly: boolean, limit: number, offset: number): Notification[] {
  return sql
    .exec<Row>(`SELECT ${COLUMNS} FROM notifications ${unreadOnly ? "WHERE read_ms IS NULL" : ""} ORDER BY id DESC LIMIT ? OFFSET ?`, limit, offset)
    .toArray()
    .map(toNotification);
}

export function countNotifications(sql: SqlStorage, unreadOnly: boolean): number {
  return sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM notifications ${unreadOnly ? "WHERE read_ms IS NULL" : ""}`).one().n;
}

export function findNotification(sql: SqlStorage, id: number): Notification | undefined {
  const row = sql.exec<Row>(`SELECT ${COLUMNS} FROM notifications WHERE id = ?`, id).toArray()[0];
  return row && toNotification(row);
}

/** Marks the selected unread notifications read; returns the ids it changed, in order. */
export function markRead(sql: SqlStorage, selection: ReadSelection, nowMs: number): number[] {
  let where = "";
  let bound: number[] = [];
  if ("ids" in selection) {
    if (selection.ids.length === 0) return [];
    where = `AND id IN (${selection.ids.map(() => "?").join(", ")})`;
    bound = selection.ids;
  } else if (selection.upToId !== null) {
    where = "AND id <= ?";
    bound = [selection.upToId];
  }
  return sql
    .exec<{ id: number }>(`UPDATE notifications SET read_ms = ? WHERE read_ms IS NULL ${where} RETURNING id`, nowMs, ...bound)
    .toArray()
    .map((r) => r.id)
    .sort((a, b) => a - b);
}
