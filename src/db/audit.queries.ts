import { and, count, desc, eq, type SQL } from "drizzle-orm";
import type { AuditAction } from "../domain/audit";
import type { Database } from "./client";
import { auditEvents, users } from "./schema";

export function auditFilter(organizationId: string, action: AuditAction | undefined): SQL | undefined {
  return and(eq(auditEvents.organizationId, organizationId), action ? eq(auditEvents.action, action) : undefined);
}

export async function countAuditEvents(db: Database, where: SQL | undefined): Promise<number> {
  return (await db.select({ n: count() }).from(auditEvents).where(where).get())?.n ?? 0;
}

/** A page of audit events, newest first, each with its actor's e-mail address. */
export async function auditEventPage(db: Database, where: SQL | undefined, limit: number, offset: number) {
  return db
    .select({ event: auditEvents, actorEmail: users.email })
    .from(auditEvents)
    .innerJoin(users, eq(users.id, auditEvents.actorId))
    .where(where)
    .orderBy(desc(auditEvents.createdAt), desc(auditEvents.id))
    .limit(limit)
    .offset(offset)
    .all();
}
