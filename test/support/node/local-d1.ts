// The stack's local D1 database, opened beside the running Worker for what no API may do: a
// test that needs an invitation whose expiry has passed cannot wait a day for it.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";

function d1File(stateDir: string): string {
  const dir = join(stateDir, "v3", "d1", "miniflare-D1DatabaseObject");
  const file = readdirSync(dir).find((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
  if (!file) throw new Error(`no local D1 database in ${dir}`);
  return join(dir, file);
}

/** Moves an invitation's expiry into the past, as if its days had gone by. */
export function expireInvitation(stateDir: string, inviteId: string): void {
  const db = new DatabaseSync(d1File(stateDir));
  try {
    const changed = db.prepare("UPDATE invitations SET expires_at = ? WHERE id = ?").run(new Date(Date.now() - 60_000).toISOString(), inviteId);
    if (changed.changes !== 1) throw new Error(`invitation ${inviteId} is not in the local D1 database`);
  } finally {
    db.close();
  }
}
