import {
  applyBillingEvent,
  billingEventFilter,
  billingEventPage,
  countBillingEvents,
  findBillingState,
  organizationExists,
  organizationOfCustomer,
  planLimits,
  recordBillingEvent,
  storedBillingEvent,
  type BillingEventRow,
  type NewBillingEvent,
} from "../db/billing.queries";
import { database, type Database } from "../db/client";
import {
  decideBillingChange,
  isHandledEventType,
  matchOrganization,
  readBillingEvent,
  stripeTime,
  StripeEventSchema,
  type BillingEvent,
  type OrganizationMatch,
  type WebhookOutcome,
} from "../domain/billing";
import { accept, refuse, type Outcome } from "../domain/outcome";
import type { Listing } from "../domain/pagination";
import type { Env } from "../env";
import { log } from "../lib/log";
import { verifyStripeWebhook } from "../services/billing/stripe";

export { STRIPE_SIGNATURE_HEADER } from "../services/billing/stripe";

export interface BillingReceipt {
  eventId: string;
  type: string;
  outcome: WebhookOutcome;
  organizationId: string | null;
}

export type WebhookResult = { receipt: BillingReceipt } | { refused: string };

/**
 * Tries of one event: each that loses a race with another event of the same organization
 * reads the state again. Stripe sends an organization a handful of events at once at most.
 */
const APPLY_TRIES = 5;

/**
 * Stripe's webhook, from the raw body to the organization's new billing: verify the
 * signature, read the event, then record it and apply what it means exactly once. A refusal
 * stores nothing. Only types the service reads are stored; others are acknowledged.
 */
export async function receiveStripeWebhook(env: Env, secret: string, payload: string, signature: string): Promise<WebhookResult> {
  const verified = await verifyStripeWebhook(secret, payload, signature);
  if ("refused" in verified) return verified;
  const envelope = StripeEventSchema.safeParse(verified.event);
  if (!envelope.success) return { refused: "the body is signed but is not a Stripe event (id, type, created, data.object)" };
  const event = envelope.data;
  const receipt = (outcome: WebhookOutcome, organizationId: string | null = null): WebhookResult => ({
    receipt: { eventId: event.id, type: event.type, outcome, organizationId },
  });
  if (!isHandledEventType(event.type)) return receipt("unhandled");

  const db = database(env.DB);
  const before = await storedBillingEvent(db, event.id);
  if (before) return receipt("duplicate", before.organizationId);
  const receivedAt = new Date().toISOString();
  const record = { id: event.id, type: event.type, eventCreatedAt: stripeTime(event.created), receivedAt, changes: {} };

  const read = readBillingEvent({ ...event, type: event.type });
  if ("problem" in read) {
    log("warn", "billing: unreadable event", { event_id: event.id, type: event.type, problem: read.problem });
    const stored = await recordBillingEvent(db, { ...record, organizationId: null, customerId: null, objectId: null, outcome: "invalid", detail: read.problem });
    return receipt(stored ? "invalid" : "duplicate");
  }
  const billing = read.event;
  const about = { customerId: billing.customerId, objectId: billing.objectId };

  for (let attempt = 0; attempt < APPLY_TRIES; attempt++) {
    const match = await organizationFor(db, billing);
    if (!("organizationId" in match)) {
      const [outcome, organizationId, detail] =
        "unmatched" in match ? (["unmatched", null, match.unmatched] as const) : (["conflict", match.conflict.organizationId, match.conflict.detail] as const);
      const stored = await recordBillingEvent(db, { ...record, ...about, organizationId, outcome, detail });
      return receipt(stored ? outcome : "duplicate", organizationId);
    }
    const orgId = match.organizationId;
    const current = await findBillingState(db, orgId);
    if (!current) throw new Error(`organization ${orgId} matched billing event ${event.id} but cannot be read`);
    const decision = decideBillingChange(current.state, billing, await planLimits(db));
    const row: NewBillingEvent = { ...record, ...about, organizationId: orgId, outcome: decision.outcome, detail: null };
    if (!("next" in decision)) {
      const stored = await recordBillingEvent(db, { ...row, detail: decision.detail });
      return receipt(stored ? decision.outcome : "duplicate", orgId);
    }
    const written = await applyBillingEvent(db, orgId, current.lastEventId, decision.next, { ...row, changes: decision.changes });
    if (written === "stored") {
      if (decision.outcome === "applied") log("info", "billing: organization changed", { event_id: event.id, organization_id: orgId, changes: decision.changes });
      return receipt(decision.outcome, orgId);
    }
    if (written === "duplicate") return receipt("duplicate", orgId);
  }
  // A 500: Stripe delivers the event again later, when the organization has settled.
  throw new Error(`billing event ${event.id}: the organization kept changing during ${APPLY_TRIES} tries`);
}

async function organizationFor(db: Database, event: BillingEvent): Promise<OrganizationMatch> {
  const [namedExists, customerOwner] = await Promise.all([
    event.organizationRef ? organizationExists(db, event.organizationRef) : false,
    event.customerId ? organizationOfCustomer(db, event.customerId) : null,
  ]);
  return matchOrganization(event, { namedExists, customerOwner });
}

/** Every billing event about an organization, newest first. */
export async function billingEventListing(env: Env, orgId: string): Promise<Outcome<Listing<BillingEventRow>>> {
  const db = database(env.DB);
  if (!(await organizationExists(db, orgId))) return refuse("not_found", `Organization ${orgId} not found`);
  const where = billingEventFilter(orgId);
  return accept({
    count: () => countBillingEvents(db, where),
    page: (limit, offset) => billingEventPage(db, where, limit, offset),
  });
}
