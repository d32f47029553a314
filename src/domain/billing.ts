/**
 * Billing by the payment provider's events (docs/billing.md): which events are read, what
 * they mean for an organization's plan and billing status, and the order rule that keeps a
 * late or redelivered event from undoing a newer one. Pure: the flow reads the state, asks
 * here what changes, and writes it.
 */
import { z } from "zod";

/** Who makes every billing change: the provider's events are the only writer. */
export const BILLING_PROVIDER = "stripe";

/** Seconds a `Stripe-Signature` timestamp may be old; Stripe's own default. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** Stripe's subscription statuses, which an organization's billing status follows. */
export const BILLING_STATUSES = [
  "active",
  "trialing",
  "past_due",
  "unpaid",
  "canceled",
  "incomplete",
  "incomplete_expired",
  "paused",
] as const;
export type BillingStatus = (typeof BILLING_STATUSES)[number];

/**
 * Statuses under which the subscribed plan is in force. past_due keeps it while Stripe retries
 * the payment; the others (unpaid, canceled, incomplete, incomplete_expired, paused) fall back
 * to FALLBACK_PLAN_ID until the subscription is paid again.
 */
const PLAN_IN_FORCE: ReadonlySet<BillingStatus> = new Set(["active", "trialing", "past_due"]);
export const FALLBACK_PLAN_ID = "free";

/** Statuses after which the organization may follow another subscription. */
const ENDED: ReadonlySet<BillingStatus> = new Set(["canceled", "incomplete_expired"]);

export const HANDLED_EVENT_TYPES = [
  "checkout.session.completed",
  "customer.subscription.created",
  "customer.subscription.updated",
  "customer.subscription.deleted",
  "invoice.paid",
  "invoice.payment_failed",
] as const;
export type HandledEventType = (typeof HANDLED_EVENT_TYPES)[number];

export function isHandledEventType(type: string): type is HandledEventType {
  return (HANDLED_EVENT_TYPES as readonly string[]).includes(type);
}

/**
 * What became of a stored event. applied: the organization changed; unchanged: the event was
 * current but changed nothing; stale: older than what was applied; unmatched: no organization;
 * unknown_plan: no price names a plan; ignored: about another subscription, or an invoice that
 * cannot move the status; invalid: a handled type whose object could not be read; conflict:
 * the customer belongs to another organization.
 */
export const RECORDED_OUTCOMES = ["applied", "unchanged", "stale", "unmatched", "unknown_plan", "ignored", "invalid", "conflict"] as const;
export type RecordedOutcome = (typeof RECORDED_OUTCOMES)[number];

/** The webhook's answer: a recorded outcome, or duplicate (seen before) or unhandled (a type not read; not stored). */
export const WEBHOOK_OUTCOMES = [...RECORDED_OUTCOMES, "duplicate", "unhandled"] as const;
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

/** The envelope every Stripe event has; `data.object` is read per type by readBillingEvent. */
export const StripeEventSchema = z
  .object({
    id: z.string().min(1).max(255),
    type: z.string().min(1).max(255),
    created: z.number().int().nonnegative().describe("Unix seconds"),
    data: z.object({ object: z.record(z.string(), z.unknown()) }),
  })
  .meta({ id: "StripeEvent" });
export type StripeEvent = z.infer<typeof StripeEventSchema>;

/** An expandable reference: Stripe sends an id, or the object when the field was expanded. */
const StripeRef = z
  .union([z.string().min(1), z.object({ id: z.string().min(1) })])
  .transform((ref) => (typeof ref === "string" ? ref : ref.id));
const Metadata = z.record(z.string(), z.string()).nullish();

const CheckoutSessionSchema = z.object({
  id: z.string(),
  client_reference_id: z.string().nullish(),
  customer: StripeRef.nullish(),
  subscription: StripeRef.nullish(),
});

const SubscriptionSchema = z.object({
  id: z.string(),
  customer: StripeRef,
  status: z.enum(BILLING_STATUSES),
  metadata: Metadata,
  items: z.object({ data: z.array(z.object({ price: z.object({ lookup_key: z.string().nullish() }) })) }),
});

// Since API version 2025-03-31 the subscription is under `parent.subscription_details`; before,
// `subscription` and `subscription_details` sat on the invoice. Both are read.
const InvoiceSchema = z.object({
  id: z.string(),
  customer: StripeRef.nullish(),
  parent: z.object({ subscription_details: z.object({ subscription: StripeRef, metadata: Metadata }).nullish() }).nullish(),
  subscription: StripeRef.nullish(),
  subscription_details: z.object({ metadata: Metadata }).nullish(),
});

/** The organization id a subscription carries in its metadata (set through Checkout's `subscription_data`). */
export const ORGANIZATION_METADATA_KEY = "organization_id";

interface EventBase {
  id: string;
  type: HandledEventType;
  /** Stripe's `created` of the event, Unix seconds: the order of events. */
  created: number;
  /** The Checkout Session, subscription or invoice the event is about. */
  objectId: string;
  customerId: string | null;
  /** The organization the event names itself, if any: `client_reference_id` or the metadata's. */
  organizationRef: string | null;
}
export type BillingEvent =
  | (EventBase & { kind: "checkout"; subscriptionId: string | null })
  | (EventBase & { kind: "subscription"; subscriptionId: string; status: BillingStatus; lookupKeys: string[]; deleted: boolean })
  | (EventBase & { kind: "invoice"; subscriptionId: string | null; paid: boolean });

/** The event's object read for its type, or why it could not be. */
export function readBillingEvent(event: StripeEvent & { type: HandledEventType }): { event: BillingEvent } | { problem: string } {
  const base = { id: event.id, type: event.type, created: event.created };
  const object = event.data.object;
  switch (event.type) {
    case "checkout.session.completed": {
      const parsed = CheckoutSessionSchema.safeParse(object);
      if (!parsed.success) return { problem: issueText(parsed.error) };
      const s = parsed.data;
      return {
        event: {
          ...base,
          kind: "checkout",
          objectId: s.id,
          customerId: s.customer ?? null,
          subscriptionId: s.subscription ?? null,
          organizationRef: s.client_reference_id ?? null,
        },
      };
    }
    case "customer.subscription.created":
    case "customer.subscription.updated":
    case "customer.subscription.deleted": {
      const parsed = SubscriptionSchema.safeParse(object);
      if (!parsed.success) return { problem: issueText(parsed.error) };
      const s = parsed.data;
      return {
        event: {
          ...base,
          kind: "subscription",
          objectId: s.id,
          customerId: s.customer,
          subscriptionId: s.id,
          status: s.status,
          lookupKeys: s.items.data.flatMap((item) => (item.price.lookup_key ? [item.price.lookup_key] : [])),
          deleted: event.type === "customer.subscription.deleted",
          organizationRef: s.metadata?.[ORGANIZATION_METADATA_KEY] ?? null,
        },
      };
    }
    case "invoice.paid":
    case "invoice.payment_failed": {
      const parsed = InvoiceSchema.safeParse(object);
      if (!parsed.success) return { problem: issueText(parsed.error) };
      const inv = parsed.data;
      const details = inv.parent?.subscription_details;
      const metadata = details?.metadata ?? inv.subscription_details?.metadata;
      return {
        event: {
          ...base,
          kind: "invoice",
          objectId: inv.id,
          customerId: inv.customer ?? null,
          subscriptionId: details?.subscription ?? inv.subscription ?? null,
          paid: event.type === "invoice.paid",
          organizationRef: metadata?.[ORGANIZATION_METADATA_KEY] ?? null,
        },
      };
    }
  }
}

function issueText(error: z.ZodError): string {
  return error.issues.map((i) => `data.object${i.path.map((p) => `.${String(p)}`).join("")}: ${i.message}`).join("; ");
}

export type OrganizationMatch =
  | { organizationId: string }
  | { unmatched: string }
  | { conflict: { organizationId: string; detail: string } };

/**
 * The organization an event is about: the one it names (`client_reference_id`, or the
 * subscription's `metadata.organization_id`) if that exists, else the one its customer is
 * linked to. Naming one organization with another's customer is a conflict, never a move.
 */
export function matchOrganization(
  event: BillingEvent,
  found: { namedExists: boolean; customerOwner: string | null },
): OrganizationMatch {
  const named = event.organizationRef;
  if (named && found.namedExists) {
    if (found.customerOwner && found.customerOwner !== named) {
      return { conflict: { organizationId: named, detail: `customer ${event.customerId} is linked to another organization` } };
    }
    return { organizationId: named };
  }
  if (found.customerOwner) return { organizationId: found.customerOwner };
  if (named) return { unmatched: `organization ${named} does not exist` };
  if (event.customerId) return { unmatched: `no organization is linked to customer ${event.customerId}` };
  return { unmatched: "the event names no organization and no customer" };
}

/** An organization's billing as its events left it. */
export interface BillingState {
  /** The plan in force: what the candidate limit comes from. */
  planId: string;
  status: BillingStatus | null;
  /** The plan of the subscription (its price's lookup key), in force or not. */
  subscribedPlanId: string | null;
  customerId: string | null;
  subscriptionId: string | null;
  /** `created` of the last subscription event applied: an older one is stale. */
  subscriptionEventAt: number | null;
  /** `created` of the last event that decided the status (subscription or invoice). */
  statusEventAt: number | null;
}

/** Plan id → its candidate limit (null: unlimited): the plans that exist. */
export type PlanLimits = ReadonlyMap<string, number | null>;

export interface Change<T> {
  from: T;
  to: T;
}
/** What an event changed, one entry per field that differs. */
export interface BillingChanges {
  plan?: Change<string>;
  candidate_limit?: Change<number | null>;
  status?: Change<BillingStatus | null>;
  subscribed_plan?: Change<string | null>;
  customer_id?: Change<string | null>;
  subscription_id?: Change<string | null>;
}

export type BillingDecision =
  | { outcome: "applied" | "unchanged"; next: BillingState; changes: BillingChanges }
  | { outcome: "stale" | "unknown_plan" | "ignored"; detail: string };

/** The plan in force under a status: the subscribed one while it is paid for (or retried), else the fallback. */
export function planInForce(status: BillingStatus | null, subscribedPlanId: string | null, current: string): string {
  if (status === null) return current;
  if (!PLAN_IN_FORCE.has(status)) return FALLBACK_PLAN_ID;
  return subscribedPlanId ?? current;
}

/**
 * What an event does to an organization's billing. Checkout links the customer (and the
 * subscription, unless one is followed); subscription events set the plan and the status in
 * the order of their `created`; invoice events move the status of the followed subscription
 * (paid → active, failed → past_due) in the same order. The plan in force follows (planInForce).
 */
export function decideBillingChange(state: BillingState, event: BillingEvent, plans: PlanLimits): BillingDecision {
  const next = nextState(state, event, plans);
  if ("outcome" in next) return next;
  const changes = diff(state, next, plans);
  return { outcome: Object.keys(changes).length > 0 ? "applied" : "unchanged", next, changes };
}

function nextState(state: BillingState, event: BillingEvent, plans: PlanLimits): BillingState | BillingDecision {
  switch (event.kind) {
    case "checkout":
      return {
        ...state,
        customerId: event.customerId ?? state.customerId,
        subscriptionId: follows(state) ? state.subscriptionId : (event.subscriptionId ?? state.subscriptionId),
      };
    case "subscription":
      return subscriptionState(state, event, plans);
    case "invoice":
      return invoiceState(state, event);
  }
}

/** True while the organization follows a subscription that has not ended. */
function follows(state: BillingState): boolean {
  return state.subscriptionId !== null && state.status !== null && !ENDED.has(state.status);
}

function subscriptionState(
  state: BillingState,
  event: Extract<BillingEvent, { kind: "subscription" }>,
  plans: PlanLimits,
): BillingState | BillingDecision {
  const other = state.subscriptionId !== null && state.subscriptionId !== event.subscriptionId;
  // A new subscription replaces the followed one; late news of an older one does not.
  if (other && follows(state) && event.type !== "customer.subscription.created") {
    return { outcome: "ignored", detail: `the organization follows subscription ${state.subscriptionId}, not ${event.subscriptionId}` };
  }
  if (state.subscriptionEventAt !== null && event.created < state.subscriptionEventAt) {
    return { outcome: "stale", detail: staleDetail(event.created, state.subscriptionEventAt) };
  }
  let subscribedPlanId: string | null = null;
  if (!event.deleted) {
    subscribedPlanId = event.lookupKeys.find((key) => plans.has(key)) ?? null;
    if (subscribedPlanId === null) {
      const keys = event.lookupKeys.length > 0 ? event.lookupKeys.join(", ") : "none";
      return { outcome: "unknown_plan", detail: `no price of subscription ${event.subscriptionId} has a lookup key that names a plan (lookup keys: ${keys})` };
    }
  }
  const statusCurrent = state.statusEventAt === null || event.created >= state.statusEventAt;
  const status = statusCurrent ? (event.deleted ? "canceled" : event.status) : state.status;
  return {
    planId: planInForce(status, subscribedPlanId, state.planId),
    status,
    subscribedPlanId,
    customerId: event.customerId,
    subscriptionId: event.subscriptionId,
    subscriptionEventAt: event.created,
    statusEventAt: statusCurrent ? event.created : state.statusEventAt,
  };
}

function invoiceState(state: BillingState, event: Extract<BillingEvent, { kind: "invoice" }>): BillingState | BillingDecision {
  if (event.subscriptionId === null) return { outcome: "ignored", detail: `invoice ${event.objectId} belongs to no subscription` };
  if (state.status === null) {
    return { outcome: "ignored", detail: "no subscription event has set a status yet; the subscription's own events will" };
  }
  if (state.subscriptionId !== null && state.subscriptionId !== event.subscriptionId) {
    return { outcome: "ignored", detail: `the organization follows subscription ${state.subscriptionId}, not ${event.subscriptionId}` };
  }
  if (state.statusEventAt !== null && event.created < state.statusEventAt) {
    return { outcome: "stale", detail: staleDetail(event.created, state.statusEventAt) };
  }
  const status = invoiceStatus(state.status, event.paid);
  return {
    ...state,
    planId: planInForce(status, state.subscribedPlanId, state.planId),
    status,
    customerId: state.customerId ?? event.customerId,
    subscriptionId: event.subscriptionId,
    statusEventAt: event.created,
  };
}

/**
 * A paid invoice ends a payment problem; a failed one starts one on a paying subscription.
 * Neither touches a trial (its first invoice is of zero), a pause or an end: the
 * subscription's own events move those.
 */
export function invoiceStatus(status: BillingStatus, paid: boolean): BillingStatus {
  if (paid) return status === "past_due" || status === "unpaid" || status === "incomplete" ? "active" : status;
  return status === "active" || status === "trialing" ? "past_due" : status;
}

function staleDetail(created: number, applied: number): string {
  return `created ${stripeTime(created)}, before the event applied at ${stripeTime(applied)}`;
}

function diff(before: BillingState, after: BillingState, plans: PlanLimits): BillingChanges {
  const changes: BillingChanges = {};
  if (before.planId !== after.planId) {
    changes.plan = { from: before.planId, to: after.planId };
    const from = plans.get(before.planId) ?? null;
    const to = plans.get(after.planId) ?? null;
    if (from !== to) changes.candidate_limit = { from, to };
  }
  if (before.status !== after.status) changes.status = { from: before.status, to: after.status };
  if (before.subscribedPlanId !== after.subscribedPlanId) {
    changes.subscribed_plan = { from: before.subscribedPlanId, to: after.subscribedPlanId };
  }
  if (before.customerId !== after.customerId) changes.customer_id = { from: before.customerId, to: after.customerId };
  if (before.subscriptionId !== after.subscriptionId) {
    changes.subscription_id = { from: before.subscriptionId, to: after.subscriptionId };
  }
  return changes;
}

/** Stripe's Unix seconds as the API's ISO 8601 UTC. */
export function stripeTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}
