// Browser tickets (http/ws-tickets.ts) are single-use: the object behind a socket keeps the
// ids it accepted until they expire. Each socket object includes this table in its schema.
export const TICKETS_SCHEMA = "CREATE TABLE IF NOT EXISTS tickets (id TEXT PRIMARY KEY, expires_ms INTEGER NOT NULL);";

/** Takes a browser ticket once: false when it was taken before. Forgets expired ones as it goes. */
export function takeTicket(sql: SqlStorage, id: string, expiresMs: number, nowMs: number): boolean {
  sql.exec("DELETE FROM tickets WHERE expires_ms <= ?", nowMs);
  if (sql.exec("SELECT 1 FROM tickets WHERE id = ?", id).toArray().length > 0) return false;
  sql.exec("INSERT INTO tickets (id, expires_ms) VALUES (?, ?)", id, expiresMs);
  return true;
}

/** How the Worker tells a socket object the browser ticket a client came with: `<ticket id>:<expiry ms>`. */
export const TICKET_HEADER = "X-Assay-Ticket";

/** The `<ticket id>:<expiry ms>` header value the Worker hands a socket object, taken once; true without a ticket. */
export function takeTicketHeader(sql: SqlStorage, header: string | null, nowMs: number): boolean {
  if (!header) return true;
  const [id = "", expires = "0"] = header.split(":");
  return takeTicket(sql, id, Number(expires), nowMs);
}
