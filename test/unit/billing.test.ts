import { describe, expect, it } from "vitest";
import {
  decideBillingChange,
  FALLBACK_PLAN_ID,
  invoiceStatus,
  isHandledEventType,
  matchOrganization,
  planInForce,
  readBillingEvent,
  StripeEventSchema,
  type BillingEvent,
  type BillingState,
  type BillingStatus,
  type HandledEventType,
} from "../../src/domain/billing";
import { rateScopes } from "../../src/domain/rate-scopes";
import { EVENT_KINDS, stripeEvent, type EventKind } from "../../scripts/lib/stripe-events";

const PLANS = new Map<string, number | null>([
  ["free", 5],
  ["team", 50],
  ["enterprise", null],
]);

const FRESH: BillingState = {
  planId: "free",
  status: null,
  subscribedPlanId: null,
  customerId: null,
  subscriptionId: null,
  subscriptionEventAt: null,
  statusEventAt: null,
};

const ON_TEAM: BillingState = {
  planId: "team",
  status: "active",
  subscribedPlanId: "team",
  customerId: "cus_1",
  subscriptionId: "sub_1",
  subscriptionEventAt: 1000,
  statusEventAt: 1000,
};

function read(kind: EventKind, opts: Partial<Parameters<typeof stripeEvent>[1]> = {}): BillingEvent {
  const raw = StripeEventSchema.parse(stripeEvent(kind, { org: "acme", customer: "cus_1", subscription: "sub_1", created: 2000, ...opts }));
  const result = readBillingEvent({ ...raw, type: raw.type as HandledEventType });
  if ("problem" in result) throw new Error(result.problem);
  return result.event;
}

describe("reading events", () => {
  it("handles the six types the webhook reads, and no other", () => {
    for (const type of Object.values(EVENT_KINDS)) expect(isHandledEventType(type)).toBe(true);
    for (const type of ["customer.created", "invoice.created", "checkout.session.expired", ""]) expect(isHandledEventType(type)).toBe(false);
  });

  it("checkout: the organization from client_reference_id, the customer and subscription ids", () => {
    expect(read("checkout.completed")).toMatchObject({
      kind: "checkout",
      type: "checkout.session.completed",
      organizationRef: "acme",
      customerId: "cus_1",
      subscriptionId: "sub_1",
      created: 2000,
    });
  });

  it("subscription: status, the prices' lookup keys and the organization from its metadata", () => {
    expect(read("subscription.updated", { plan: "enterprise", status: "past_due" })).toMatchObject({
      kind: "subscription",
      subscriptionId: "sub_1",
      status: "past_due",
      lookupKeys: ["enterprise"],
      organizationRef: "acme",
      deleted: false,
    });
    expect(read("subscription.deleted")).toMatchObject({ deleted: true, status: "canceled" });
  });

  it("invoice: the subscription and its metadata from `parent` (current API) or the invoice itself (before 2025-03)", () => {
    expect(read("invoice.paid")).toMatchObject({ kind: "invoice", paid: true, subscriptionId: "sub_1", organizationRef: "acme" });
    const old = readBillingEvent({
      id: "evt_old",
      type: "invoice.payment_failed",
      created: 5,
      data: { object: { id: "in_1", customer: { id: "cus_9" }, subscription: "sub_9", subscription_details: { metadata: { organization_id: "beta" } } } },
    });
    expect(old).toEqual({
      event: expect.objectContaining({ paid: false, customerId: "cus_9", subscriptionId: "sub_9", organizationRef: "beta" }),
    });
  });

  it("an object of a handled type that cannot be read says where", () => {
    const result = readBillingEvent({ id: "evt_1", type: "customer.subscription.updated", created: 1, data: { object: { id: "sub_1", status: "active" } } });
    expect(result).toEqual({ problem: expect.stringContaining("data.object.customer") });
    const status = readBillingEvent({
      id: "evt_2",
      type: "customer.subscription.updated",
      created: 1,
      data: { object: { id: "sub_1", customer: "cus_1", status: "exploded", items: { data: [] } } },
    });
    expect(status).toEqual({ problem: expect.stringContaining("data.object.status") });
  });
});

describe("matching an organization", () => {
  const event = read("subscription.updated");
  it("the one the event names, when it exists", () => {
    expect(matchOrganization(event, { namedExists: true, customerOwner: null })).toEqual({ organizationId: "acme" });
    expect(matchOrganization(event, { namedExists: true, customerOwner: "acme" })).toEqual({ organizationId: "acme" });
  });
  it("else the one the customer is linked to", () => {
    expect(matchOrganization(event, { namedExists: false, customerOwner: "beta" })).toEqual({ organizationId: "beta" });
    expect(matchOrganization({ ...event, organizationRef: null }, { namedExists: false, customerOwner: "beta" })).toEqual({ organizationId: "beta" });
  });
  it("never moves a customer from one organization to another", () => {
    expect(matchOrganization(event, { namedExists: true, customerOwner: "beta" })).toEqual({
      conflict: { organizationId: "acme", detail: "customer cus_1 is linked to another organization" },
    });
  });
  it("unmatched, saying why", () => {
    expect(matchOrganization(event, { namedExists: false, customerOwner: null })).toEqual({ unmatched: "organization acme does not exist" });
    expect(matchOrganization({ ...event, organizationRef: null }, { namedExists: false, customerOwner: null })).toEqual({
      unmatched: "no organization is linked to customer cus_1",
    });
    expect(matchOrganization({ ...event, organizationRef: null, customerId: null }, { namedExists: false, customerOwner: null })).toEqual({
      unmatched: "the event names no organization and no customer",
    });
  });
});

describe("the plan in force", () => {
  it.each<[BillingStatus | null, string]>([
    ["active", "team"],
    ["trialing", "team"],
    ["past_due", "team"],
    ["unpaid", FALLBACK_PLAN_ID],
    ["canceled", FALLBACK_PLAN_ID],
    ["incomplete", FALLBACK_PLAN_ID],
    ["incomplete_expired", FALLBACK_PLAN_ID],
    ["paused", FALLBACK_PLAN_ID],
    [null, "enterprise"],
  ])("%s → %s (subscribed team, currently enterprise)", (status, plan) => {
    expect(planInForce(status, "team", "enterprise")).toBe(plan);
  });
});

describe("invoice status moves", () => {
  it.each<[BillingStatus, boolean, BillingStatus]>([
    ["past_due", true, "active"],
    ["unpaid", true, "active"],
    ["incomplete", true, "active"],
    ["active", true, "active"],
    ["trialing", true, "trialing"],
    ["canceled", true, "canceled"],
    ["paused", true, "paused"],
    ["active", false, "past_due"],
    ["trialing", false, "past_due"],
    ["past_due", false, "past_due"],
    ["unpaid", false, "unpaid"],
    ["incomplete", false, "incomplete"],
    ["canceled", false, "canceled"],
  ])("%s, paid %s → %s", (from, paid, to) => {
    expect(invoiceStatus(from, paid)).toBe(to);
  });
});

describe("deciding a change", () => {
  it("checkout links the customer and the subscription and changes no plan", () => {
    const d = decideBillingChange(FRESH, read("checkout.completed"), PLANS);
    expect(d).toEqual({
      outcome: "applied",
      next: { ...FRESH, customerId: "cus_1", subscriptionId: "sub_1" },
      changes: { customer_id: { from: null, to: "cus_1" }, subscription_id: { from: null, to: "sub_1" } },
    });
  });

  it("checkout does not replace a subscription the organization follows", () => {
    const d = decideBillingChange(ON_TEAM, read("checkout.completed", { subscription: "sub_2", customer: "cus_1" }), PLANS);
    expect(d).toMatchObject({ outcome: "unchanged", next: ON_TEAM, changes: {} });
  });

  it("a subscription sets the subscribed plan, the status and the plan in force, with the candidate limit", () => {
    const d = decideBillingChange(FRESH, read("subscription.created", { plan: "team" }), PLANS);
    expect(d).toEqual({
      outcome: "applied",
      next: { planId: "team", status: "active", subscribedPlanId: "team", customerId: "cus_1", subscriptionId: "sub_1", subscriptionEventAt: 2000, statusEventAt: 2000 },
      changes: {
        plan: { from: "free", to: "team" },
        candidate_limit: { from: 5, to: 50 },
        status: { from: null, to: "active" },
        subscribed_plan: { from: null, to: "team" },
        customer_id: { from: null, to: "cus_1" },
        subscription_id: { from: null, to: "sub_1" },
      },
    });
  });

  it("a downgrade lowers the candidate limit; an upgrade to enterprise makes it unlimited", () => {
    expect(decideBillingChange(ON_TEAM, read("subscription.updated", { plan: "free" }), PLANS)).toMatchObject({
      outcome: "applied",
      changes: { plan: { from: "team", to: "free" }, candidate_limit: { from: 50, to: 5 }, subscribed_plan: { from: "team", to: "free" } },
    });
    expect(decideBillingChange(ON_TEAM, read("subscription.updated", { plan: "enterprise" }), PLANS)).toMatchObject({
      changes: { candidate_limit: { from: 50, to: null } },
    });
  });

  it("an event older than the subscription event applied is stale; one of the same second is applied", () => {
    expect(decideBillingChange(ON_TEAM, read("subscription.updated", { plan: "free", created: 999 }), PLANS)).toEqual({
      outcome: "stale",
      detail: "created 1970-01-01T00:16:39.000Z, before the event applied at 1970-01-01T00:16:40.000Z",
    });
    expect(decideBillingChange(ON_TEAM, read("subscription.updated", { plan: "free", created: 1000 }), PLANS)).toMatchObject({ outcome: "applied" });
  });

  it("a current event that changes nothing is unchanged, and still moves the order forward", () => {
    const d = decideBillingChange(ON_TEAM, read("subscription.updated", { plan: "team" }), PLANS);
    expect(d).toEqual({ outcome: "unchanged", next: { ...ON_TEAM, subscriptionEventAt: 2000, statusEventAt: 2000 }, changes: {} });
  });

  it("no price that names a plan: unknown_plan, nothing changes", () => {
    expect(decideBillingChange(ON_TEAM, read("subscription.updated", { plan: "gold" }), PLANS)).toEqual({
      outcome: "unknown_plan",
      detail: "no price of subscription sub_1 has a lookup key that names a plan (lookup keys: gold)",
    });
  });

  it("the first price whose lookup key names a plan decides; add-ons without one are passed over", () => {
    const event = read("subscription.updated") as Extract<BillingEvent, { kind: "subscription" }>;
    const d = decideBillingChange(FRESH, { ...event, lookupKeys: ["seats_addon", "enterprise", "team"] }, PLANS);
    expect(d).toMatchObject({ next: { subscribedPlanId: "enterprise", planId: "enterprise" } });
  });

  it("unpaid or canceled falls back to the free plan; past_due keeps the plan while Stripe retries", () => {
    expect(decideBillingChange(ON_TEAM, read("subscription.updated", { status: "unpaid" }), PLANS)).toMatchObject({
      next: { planId: "free", subscribedPlanId: "team", status: "unpaid" },
    });
    expect(decideBillingChange(ON_TEAM, read("subscription.updated", { status: "past_due" }), PLANS)).toMatchObject({
      next: { planId: "team", status: "past_due" },
    });
  });

  it("deletion: plan free, status canceled, no subscribed plan", () => {
    expect(decideBillingChange(ON_TEAM, read("subscription.deleted"), PLANS)).toMatchObject({
      outcome: "applied",
      next: { planId: "free", status: "canceled", subscribedPlanId: null, subscriptionId: "sub_1" },
      changes: { plan: { from: "team", to: "free" }, status: { from: "active", to: "canceled" } },
    });
  });

  it("late news of another subscription is ignored while one is followed; a new one replaces it", () => {
    expect(decideBillingChange(ON_TEAM, read("subscription.deleted", { subscription: "sub_0" }), PLANS)).toEqual({
      outcome: "ignored",
      detail: "the organization follows subscription sub_1, not sub_0",
    });
    expect(decideBillingChange(ON_TEAM, read("subscription.updated", { subscription: "sub_0" }), PLANS)).toMatchObject({ outcome: "ignored" });
    expect(decideBillingChange(ON_TEAM, read("subscription.created", { subscription: "sub_2", plan: "enterprise" }), PLANS)).toMatchObject({
      outcome: "applied",
      next: { subscriptionId: "sub_2", planId: "enterprise" },
    });
    const ended = { ...ON_TEAM, status: "canceled" as const, planId: "free", subscribedPlanId: null };
    expect(decideBillingChange(ended, read("subscription.updated", { subscription: "sub_2" }), PLANS)).toMatchObject({
      next: { subscriptionId: "sub_2", planId: "team", status: "active" },
    });
  });

  it("a subscription event older than the last status decision sets the plan but keeps the status", () => {
    const paidLater = { ...ON_TEAM, status: "active" as const, subscriptionEventAt: 1000, statusEventAt: 3000 };
    const d = decideBillingChange(paidLater, read("subscription.updated", { status: "incomplete", plan: "enterprise", created: 2000 }), PLANS);
    expect(d).toMatchObject({
      next: { status: "active", planId: "enterprise", subscribedPlanId: "enterprise", subscriptionEventAt: 2000, statusEventAt: 3000 },
    });
  });

  it("invoice.payment_failed: past_due with the plan kept; invoice.paid: active again", () => {
    const failed = decideBillingChange(ON_TEAM, read("invoice.payment_failed"), PLANS);
    expect(failed).toMatchObject({ outcome: "applied", next: { status: "past_due", planId: "team", statusEventAt: 2000, subscriptionEventAt: 1000 } });
    const unpaid = { ...ON_TEAM, status: "unpaid" as const, planId: "free" };
    expect(decideBillingChange(unpaid, read("invoice.paid"), PLANS)).toMatchObject({
      outcome: "applied",
      next: { status: "active", planId: "team" },
      changes: { plan: { from: "free", to: "team" }, candidate_limit: { from: 5, to: 50 }, status: { from: "unpaid", to: "active" } },
    });
  });

  it("invoices change nothing out of order, for another subscription, without one, or before any status", () => {
    expect(decideBillingChange(ON_TEAM, read("invoice.payment_failed", { created: 999 }), PLANS)).toMatchObject({ outcome: "stale" });
    expect(decideBillingChange(ON_TEAM, read("invoice.paid", { subscription: "sub_0" }), PLANS)).toMatchObject({ outcome: "ignored" });
    const oneOff = { ...read("invoice.paid"), subscriptionId: null } as BillingEvent;
    expect(decideBillingChange(ON_TEAM, oneOff, PLANS)).toMatchObject({ outcome: "ignored", detail: expect.stringContaining("no subscription") });
    expect(decideBillingChange(FRESH, read("invoice.paid"), PLANS)).toMatchObject({ outcome: "ignored", detail: expect.stringContaining("no subscription event") });
  });
});

describe("the webhook's rate limits", () => {
  it("Stripe's webhook is not counted per IP, like the other signed routes; listing billing events is", () => {
    expect(rateScopes("POST", "/api/v1/billing/stripe/webhook")).toEqual([]);
    expect(rateScopes("GET", "/api/v1/organizations/acme/billing/events")).toEqual(["burst", "general"]);
  });
});
