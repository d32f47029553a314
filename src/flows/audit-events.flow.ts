import { auditEventPage, auditFilter, countAuditEvents } from "../db/audit.queries";
import { database } from "../db/client";
import type { AuditAction } from "../domain/audit";
import type { Listing } from "../domain/pagination";
import type { Env } from "../env";

type AuditEntry = Awaited<ReturnType<typeof auditEventPage>>[number];

/** An organization's audit log, newest first, each event with its actor's e-mail address; only `action` when given. */
export function auditEventListing(env: Env, orgId: string, action: AuditAction | undefined): Listing<AuditEntry> {
  const db = database(env.DB);
  const where = auditFilter(orgId, action);
  return {
    count: () => countAuditEvents(db, where),
    page: (limit, offset) => auditEventPage(db, where, limit, offset),
  };
}
