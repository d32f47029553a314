import { and, count, desc, eq, isNull, sql, type SQL } from "drizzle-orm";
import type { BillingChanges, BillingState, PlanLimits, RecordedOutcome } from "../domain/billing";
import type { Database } from "./client";
import { rowValues } from "./rows";
import { billingEvents, organizations, plans } from "./schema";

export type BillingEventRow = typeof billingEvents.$inferSelect;

export async function planLimits(db: Database): Promise<PlanLimits> {
  const rows = await db.select({ id: plans.id, limit: plans.candidateLimit }).from(plans).all();
  return new Map(rows.map((r) => [r.id, r.limit]));
}

export async function organizationExists(db: Database, orgId: string): Promise<boolean> {
  return (await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, orgId)).get()) !== undefined;
}

export async function organizationOfCustomer(db: Database, customerId: string): Promise<string | null> {
  const row = await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.stripeCustomerId, customerId)).get();
  return row?.id ?? null;
}

/** An organization's billing state, and the last event applied to it (the version a write expects). */
export async function findBillingState(
  db: Database,
  orgId: string,
): Promise<{ state: BillingState; lastEventId: string | null } | undefined> {
  const org = await db.select().from(organizations).where(eq(organizations.id, orgId)).get();
  if (!org) return undefined;
  return {
    state: {
      planId: org.planId,
      status: org.billingStatus,
      subscribedPlanId: org.billingPlanId,
      customerId: org.stripeCustomerId,
      subscriptionId: org.stripeSubscriptionId,
      subscriptionEventAt: org.billingSubscriptionEventAt,
      statusEventAt: org.billingStatusEventAt,
    },
    lastEventId: org.billingEventId,
  };
}

export interface NewBillingEvent {
  id: string;
  type: string;
  organizationId: string | null;
  customerId: string | null;
  objectId: string | null;
  outcome: RecordedOutcome;
  changes: BillingChanges;
  detail: string | null;
  eventCreatedAt: string;
  receivedAt: string;
}

/** Stores an event that changes no organization; false when its id was stored before. */
export async function recordBillingEvent(db: Database, event: NewBillingEvent): Promise<boolean> {
  const rows = await db.insert(billingEvents).values(event).onConflictDoNothing().returning({ id: billingEvents.id }).all();
  return rows.length === 1;
}

/** An event stored before, with the organization it was about (null: none). */
export async function storedBillingEvent(db: Database, id: string): Promise<{ organizationId: string | null } | undefined> {
  return db.select({ organizationId: billingEvents.organizationId }).from(billingEvents).where(eq(billingEvents.id, id)).get();
}

/**
 * Writes an organization's new billing state and stores the event that made it, in one
 * transaction, only if the organization is still at `lastEventId` (no other event applied
 * since it was read) and the event was not stored before. The insert takes its condition
 * from the organization as this call left it, so neither write happens without the other.
 * "stored": both happened; "duplicate": the event id was stored before; "moved": another
 * event changed the organization meanwhile, so the caller decides again.
 */
export async function applyBillingEvent(
  db: Database,
  orgId: string,
  lastEventId: string | null,
  next: BillingState,
  event: NewBillingEvent,
): Promise<"stored" | "duplicate" | "moved"> {
  const notStored = sql`NOT EXISTS (SELECT 1 FROM ${billingEvents} WHERE ${billingEvents.id} = ${event.id})`;
  const atVersion = lastEventId === null ? isNull(organizations.billingEventId) : eq(organizations.billingEventId, lastEventId);
  const [, inserted] = await db.batch([
    db
      .update(organizations)
      .set({
        planId: next.planId,
        billingStatus: next.status,
        billingPlanId: next.subscribedPlanId,
        stripeCustomerId: next.customerId,
        stripeSubscriptionId: next.subscriptionId,
        billingSubscriptionEventAt: next.subscriptionEventAt,
        billingStatusEventAt: next.statusEventAt,
        billingEventId: event.id,
        billingUpdatedAt: event.receivedAt,
      })
      .where(and(eq(organizations.id, orgId), atVersion, notStored)),
    db
      .insert(billingEvents)
      .select(
        sql`SELECT ${rowValues(billingEvents, event)} WHERE EXISTS (SELECT 1 FROM ${organizations} WHERE ${organizations.id} = ${orgId} AND ${organizations.billingEventId} = ${event.id})`,
      )
      .onConflictDoNothing()
      .returning({ id: billingEvents.id }),
  ]);
  if (inserted.length === 1) return "stored";
  return (await storedBillingEvent(db, event.id)) ? "duplicate" : "moved";
}

export function billingEventFilter(orgId: string): SQL {
  return eq(billingEvents.organizationId, orgId);
}

export async function countBillingEvents(db: Database, where: SQL): Promise<number> {
  return (await db.select({ n: count() }).from(billingEvents).where(where).get())?.n ?? 0;
}

/** A page of an organization's billing events, newest first. */
export async function billingEventPage(db: Database, where: SQL, limit: number, offset: number): Promise<BillingEventRow[]> {
  return db
    .select()
    .from(billingEvents)
    .where(where)
    .orderBy(desc(billingEvents.receivedAt), desc(billingEvents.id))
    .limit(limit)
    .offset(offset)
    .all();
}
