import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { database } from "../../src/db/client";
import { billingEvents, organizations } from "../../src/db/schema";
import type { Env } from "../../src/env";
import worker from "../../src/index";
import { stripeEvent, stripeSignature, type EventKind, type EventOptions, type StripeTestEvent } from "../../scripts/lib/stripe-events";
import { call, errorBody, freshIp, sessionToken, uniqueSubject } from "../support/worker/client";
import { insertTask, person, uniqueOrg, type Person } from "../support/worker/invitations";

const WEBHOOK = "/api/v1/billing/stripe/webhook";

interface Receipt {
  received: true;
  event_id: string;
  type: string;
  outcome: string;
  organization_id: string | null;
}

interface BillingEventView {
  event_id: string;
  provider: string;
  customer_id: string | null;
  type: string;
  object_id: string | null;
  outcome: string;
  changes: Record<string, { from: unknown; to: unknown }>;
  detail: string | null;
  event_created_at: string;
  received_at: string;
}

interface Organization {
  plan: { id: string; candidate_limit: number | null };
  billing: { status: string | null; subscribed_plan_id: string | null; updated_at: string | null; last_event_id: string | null };
}

const now = () => Math.floor(Date.now() / 1000);

/** An organization with an orgadmin (which creates it, on the free plan) and its own Stripe ids. */
async function billedOrg() {
  const org = uniqueOrg("billing");
  const admin = await person({ role: "orgadmin", org_id: org });
  return { org, admin, ids: { org, customer: `cus_${org}`, subscription: `sub_${org}` } };
}

function event(kind: EventKind, ids: EventOptions, extra: Partial<EventOptions> = {}): StripeTestEvent {
  return stripeEvent(kind, { ...ids, ...extra });
}

/** Delivers a payload as Stripe does: the raw body, signed at `timestamp` with `secret`. */
async function deliver(payload: string, opts: { secret?: string; timestamp?: number; signature?: string | null } = {}) {
  const signature = opts.signature === undefined ? await stripeSignature(payload, opts.secret ?? env.STRIPE_WEBHOOK_SECRET!, opts.timestamp) : opts.signature;
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
  if (signature !== null) headers["stripe-signature"] = signature;
  return call(WEBHOOK, { method: "POST", rawBody: payload, headers });
}

async function send(e: StripeTestEvent): Promise<Receipt> {
  const res = await deliver(JSON.stringify(e));
  if (res.status !== 200) throw new Error(`${e.type}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Receipt;
}

async function organization(admin: Person, org: string): Promise<Organization> {
  const res = await call(`/api/v1/organizations/${org}`, { token: admin.token });
  expect(res.status).toBe(200);
  return (await res.json()) as Organization;
}

async function storedEvents(id: string) {
  return database(env.DB).select().from(billingEvents).where(eq(billingEvents.id, id)).all();
}

async function orgRow(org: string) {
  return database(env.DB).select().from(organizations).where(eq(organizations.id, org)).get();
}

async function billingEventsOf(admin: Person, org: string, query = ""): Promise<{ items: BillingEventView[]; pagination: unknown }> {
  const res = await call(`/api/v1/organizations/${org}/billing/events${query}`, { token: admin.token });
  expect(res.status).toBe(200);
  return (await res.json()) as { items: BillingEventView[]; pagination: unknown };
}

describe("the webhook's signature", () => {
  it("a valid signature is accepted and the event applied", async () => {
    const { org, admin, ids } = await billedOrg();
    const e = event("subscription.created", ids, { plan: "team" });
    expect(await send(e)).toEqual({ received: true, event_id: e.id, type: "customer.subscription.created", outcome: "applied", organization_id: org });
    expect((await organization(admin, org)).plan).toMatchObject({ id: "team", candidate_limit: 50 });
  });

  async function expectRefused(res: Response, detail: RegExp, org: string, eventId: string) {
    expect(res.status).toBe(400);
    expect((await errorBody(res)).detail).toMatch(detail);
    expect(await storedEvents(eventId)).toEqual([]);
    expect(await orgRow(org)).toMatchObject({ planId: "free", billingStatus: null, billingEventId: null });
  }

  it("400 for another secret, a stale timestamp, a tampered body or no header; nothing stored or changed", async () => {
    const { org, ids } = await billedOrg();
    const e = event("subscription.created", ids, { plan: "enterprise" });
    const payload = JSON.stringify(e);

    await expectRefused(await deliver(payload, { secret: "whsec_someone_else" }), /Stripe-Signature was refused: No signatures found matching/, org, e.id);
    await expectRefused(await deliver(payload, { timestamp: now() - 301 }), /Stripe-Signature was refused: Timestamp outside the tolerance zone/, org, e.id);
    const signature = await stripeSignature(payload, env.STRIPE_WEBHOOK_SECRET!);
    await expectRefused(await deliver(payload.replace('"enterprise"', '"team"'), { signature }), /No signatures found matching/, org, e.id);
    await expectRefused(await deliver(payload, { signature: null }), /^The Stripe-Signature header is missing/, org, e.id);
    await expectRefused(await deliver(payload, { signature: "t=abc" }), /No signatures found with expected scheme/, org, e.id);

    // Within the tolerance it is accepted.
    expect((await deliver(payload, { timestamp: now() - 240 })).status).toBe(200);
  });

  it("503 when no secret is configured: no event is accepted unsigned or otherwise", async () => {
    const { org, ids } = await billedOrg();
    const e = event("subscription.created", ids);
    const payload = JSON.stringify(e);
    const unconfigured = { ...env, STRIPE_WEBHOOK_SECRET: undefined } as Env;
    const request = new Request(`https://assay.test${WEBHOOK}`, {
      method: "POST",
      headers: { "content-type": "application/json", "cf-connecting-ip": freshIp(), "stripe-signature": await stripeSignature(payload, "whsec_any") },
      body: payload,
    });
    const res = await worker.fetch(request, unconfigured, createExecutionContext());
    expect(res.status).toBe(503);
    expect((await errorBody(res)).detail).toMatch(/not configured/);
    expect(await storedEvents(e.id)).toEqual([]);
    expect(await orgRow(org)).toMatchObject({ planId: "free", billingStatus: null });
  });

  it("is not rate-limited per IP: Stripe delivers from shared addresses", async () => {
    const ip = freshIp();
    const statuses = await Promise.all(
      Array.from({ length: 25 }, () => call(WEBHOOK, { method: "POST", rawBody: "{}", headers: { "content-type": "application/json" }, ip }).then((r) => r.status)),
    );
    expect(new Set(statuses)).toEqual(new Set([400]));
  });
});

describe("the OpenAPI document", () => {
  it("lists the webhook without a Bearer credential or a 429, and the events list for orgadmins", async () => {
    const doc = (await (await call("/api/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { security?: unknown; responses: Record<string, unknown> }>>;
    };
    const webhook = doc.paths["/api/v1/billing/stripe/webhook"]!.post!;
    expect(webhook.security).toBeUndefined();
    expect(Object.keys(webhook.responses).sort()).toEqual(["200", "400", "413", "500", "503"]);
    const list = doc.paths["/api/v1/organizations/{org_id}/billing/events"]!.get!;
    expect(list.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(list.responses)).toEqual(expect.arrayContaining(["200", "401", "403", "404", "422"]));
  });
});

describe("idempotency and order", () => {
  it("the same event twice: one change recorded, the second answered duplicate", async () => {
    const { org, admin, ids } = await billedOrg();
    const e = event("subscription.created", ids, { plan: "team" });
    expect((await send(e)).outcome).toBe("applied");
    const after = await orgRow(org);
    // Stripe signs each delivery anew: another timestamp, the same event.
    const again = await deliver(JSON.stringify(e), { timestamp: now() - 5 });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ received: true, event_id: e.id, type: e.type, outcome: "duplicate", organization_id: org });
    expect(await storedEvents(e.id)).toHaveLength(1);
    expect(await orgRow(org)).toEqual(after);
    expect((await billingEventsOf(admin, org)).items.map((i) => i.event_id)).toEqual([e.id]);
  });

  it("concurrent deliveries of one event apply it once", async () => {
    const { org, ids } = await billedOrg();
    const e = event("subscription.created", ids, { plan: "enterprise" });
    const outcomes = (await Promise.all(Array.from({ length: 4 }, () => send(e)))).map((r) => r.outcome).sort();
    expect(outcomes).toEqual(["applied", "duplicate", "duplicate", "duplicate"]);
    expect(await storedEvents(e.id)).toHaveLength(1);
    expect(await orgRow(org)).toMatchObject({ planId: "enterprise", billingEventId: e.id });
  });

  it("an older subscription event arriving after a newer one changes nothing and is recorded stale", async () => {
    const { org, admin, ids } = await billedOrg();
    const t = now();
    expect((await send(event("subscription.created", ids, { plan: "team", created: t - 120 }))).outcome).toBe("applied");
    const newer = event("subscription.updated", ids, { plan: "enterprise", created: t });
    expect((await send(newer)).outcome).toBe("applied");
    const older = event("subscription.updated", ids, { plan: "free", status: "past_due", created: t - 60 });
    expect(await send(older)).toMatchObject({ outcome: "stale", organization_id: org });

    expect(await organization(admin, org)).toMatchObject({
      plan: { id: "enterprise", candidate_limit: null },
      billing: { status: "active", subscribed_plan_id: "enterprise", last_event_id: newer.id },
    });
    const [stale] = (await billingEventsOf(admin, org)).items;
    expect(stale).toMatchObject({ event_id: older.id, outcome: "stale", changes: {}, detail: expect.stringMatching(/^created .* before the event applied at /) });
  });

  it("an invoice failure older than a later payment does not make the organization past_due", async () => {
    const { org, ids } = await billedOrg();
    const t = now();
    await send(event("subscription.created", ids, { created: t - 100 }));
    expect((await send(event("invoice.paid", ids, { created: t }))).outcome).toBe("unchanged");
    expect((await send(event("invoice.payment_failed", ids, { created: t - 50 }))).outcome).toBe("stale");
    expect(await orgRow(org)).toMatchObject({ billingStatus: "active", planId: "team" });
  });
});

describe("each event type", () => {
  it("checkout.session.completed links the customer and subscription; later events find the organization by the customer", async () => {
    const { org, admin, ids } = await billedOrg();
    const checkout = event("checkout.completed", ids);
    expect(await send(checkout)).toMatchObject({ outcome: "applied", organization_id: org });
    expect(await orgRow(org)).toMatchObject({ stripeCustomerId: ids.customer, stripeSubscriptionId: ids.subscription, planId: "free" });

    // No metadata on the subscription: the stored customer decides.
    const created = event("subscription.created", { ...ids, org: undefined }, { plan: "team" });
    expect(await send(created)).toMatchObject({ outcome: "applied", organization_id: org });
    expect(await organization(admin, org)).toMatchObject({ plan: { id: "team", candidate_limit: 50 }, billing: { status: "active" } });
    const [, first] = (await billingEventsOf(admin, org)).items;
    expect(first).toMatchObject({
      event_id: checkout.id,
      provider: "stripe",
      customer_id: ids.customer,
      type: "checkout.session.completed",
      object_id: expect.stringMatching(/^cs_test_/),
      outcome: "applied",
      changes: { customer_id: { from: null, to: ids.customer }, subscription_id: { from: null, to: ids.subscription } },
    });
  });

  it("customer.subscription.created, updated and deleted move the plan, the status and the candidate limit", async () => {
    const { org, admin, ids } = await billedOrg();
    const t = now();
    await send(event("subscription.created", ids, { plan: "team", status: "trialing", created: t - 30 }));
    expect(await organization(admin, org)).toMatchObject({ plan: { id: "team", candidate_limit: 50 }, billing: { status: "trialing", subscribed_plan_id: "team" } });

    await send(event("subscription.updated", ids, { plan: "enterprise", created: t - 20 }));
    expect(await organization(admin, org)).toMatchObject({ plan: { id: "enterprise", candidate_limit: null }, billing: { status: "active" } });

    const deleted = event("subscription.deleted", ids, { plan: "enterprise", created: t - 10 });
    expect((await send(deleted)).outcome).toBe("applied");
    expect(await organization(admin, org)).toMatchObject({
      plan: { id: "free", candidate_limit: 5 },
      billing: { status: "canceled", subscribed_plan_id: null, last_event_id: deleted.id, updated_at: expect.any(String) },
    });
    const [last] = (await billingEventsOf(admin, org)).items;
    expect(last!.changes).toEqual({
      plan: { from: "enterprise", to: "free" },
      candidate_limit: { from: null, to: 5 },
      status: { from: "active", to: "canceled" },
      subscribed_plan: { from: "enterprise", to: null },
    });
  });

  it("invoice.payment_failed makes it past_due with the plan kept; invoice.paid makes it active", async () => {
    const { org, admin, ids } = await billedOrg();
    const t = now();
    await send(event("subscription.created", ids, { plan: "team", created: t - 30 }));
    expect((await send(event("invoice.payment_failed", ids, { created: t - 20 }))).outcome).toBe("applied");
    expect(await organization(admin, org)).toMatchObject({ plan: { id: "team" }, billing: { status: "past_due" } });
    expect((await send(event("invoice.paid", ids, { created: t - 10 }))).outcome).toBe("applied");
    expect(await organization(admin, org)).toMatchObject({ plan: { id: "team" }, billing: { status: "active" } });
    const [paid, failed] = (await billingEventsOf(admin, org)).items;
    expect(failed!.changes).toEqual({ status: { from: "active", to: "past_due" } });
    expect(paid!.changes).toEqual({ status: { from: "past_due", to: "active" } });
  });

  it("an unknown lookup key is recorded and changes nothing", async () => {
    const { org, admin, ids } = await billedOrg();
    expect((await send(event("subscription.created", ids, { plan: "platinum" }))).outcome).toBe("unknown_plan");
    expect(await organization(admin, org)).toMatchObject({ plan: { id: "free" }, billing: { status: null, last_event_id: null } });
    expect((await billingEventsOf(admin, org)).items[0]).toMatchObject({ outcome: "unknown_plan", detail: expect.stringContaining("lookup keys: platinum") });
  });

  it("an unknown event type is acknowledged and not stored", async () => {
    const e = { ...event("invoice.paid", { customer: "cus_x", subscription: "sub_x" }), type: "customer.tax_id.created" };
    expect(await send(e)).toEqual({ received: true, event_id: e.id, type: "customer.tax_id.created", outcome: "unhandled", organization_id: null });
    expect(await storedEvents(e.id)).toEqual([]);
  });
});

describe("what cannot be applied is handled, never a 500", () => {
  it("a signed body that is not JSON, or not an event: 400, nothing stored", async () => {
    const notJson = await deliver("{not json");
    expect(notJson.status).toBe(400);
    expect((await errorBody(notJson)).detail).toMatch(/signed but is not JSON/);
    const notEvent = await deliver(JSON.stringify({ id: "evt_x", object: "event" }));
    expect(notEvent.status).toBe(400);
    expect((await errorBody(notEvent)).detail).toMatch(/not a Stripe event/);
    expect(await storedEvents("evt_x")).toEqual([]);
  });

  it("an event for no known organization is acknowledged and recorded unmatched", async () => {
    const e = event("subscription.created", { org: uniqueOrg("nowhere"), customer: "cus_nobody", subscription: "sub_nobody" });
    expect(await send(e)).toMatchObject({ outcome: "unmatched", organization_id: null });
    expect(await storedEvents(e.id)).toEqual([
      expect.objectContaining({ outcome: "unmatched", organizationId: null, customerId: "cus_nobody", detail: expect.stringMatching(/does not exist/) }),
    ]);
    expect((await send(e)).outcome).toBe("duplicate");
  });

  it("a handled type whose object cannot be read is acknowledged and recorded invalid", async () => {
    const e = event("subscription.updated", { customer: "cus_x", subscription: "sub_x" });
    e.data.object = { id: "sub_x", status: "active" };
    expect((await send(e)).outcome).toBe("invalid");
    expect(await storedEvents(e.id)).toEqual([expect.objectContaining({ outcome: "invalid", detail: expect.stringContaining("data.object.customer") })]);
  });

  it("a checkout naming one organization with another's customer is a conflict; nothing moves", async () => {
    const a = await billedOrg();
    const b = await billedOrg();
    await send(event("checkout.completed", a.ids));
    const e = event("checkout.completed", { ...b.ids, customer: a.ids.customer });
    expect(await send(e)).toMatchObject({ outcome: "conflict", organization_id: b.org });
    expect(await orgRow(b.org)).toMatchObject({ stripeCustomerId: null });
    expect(await orgRow(a.org)).toMatchObject({ stripeCustomerId: a.ids.customer });
  });
});

describe("plans and invitations", () => {
  const candidateEmail = () => `cand-${crypto.randomUUID().slice(0, 8)}@example.test`;

  async function staffWithTask(org: string) {
    const staff = await person({ role: "interviewer", org_id: org });
    const task = await insertTask({ organizationId: org, createdBy: staff.userId });
    const invite = () => call("/api/v1/invites/candidate", { method: "POST", token: staff.token, body: { email: candidateEmail(), task_id: task.id } });
    return { invite };
  }

  it("a downgrade to free makes the next invitation past 5 candidates a 403 with the upgrade message", async () => {
    const { org, ids } = await billedOrg();
    const { invite } = await staffWithTask(org);
    const t = now();
    await send(event("subscription.created", ids, { plan: "team", created: t - 10 }));
    for (let i = 0; i < 6; i++) expect((await invite()).status).toBe(201);

    expect((await send(event("subscription.updated", ids, { plan: "free", created: t }))).outcome).toBe("applied");
    const refused = await invite();
    expect(refused.status).toBe(403);
    expect((await errorBody(refused)).detail).toBe(
      `Organization ${org} has reached the candidate limit of its Free plan (5 candidates). ` +
        "Revoke an open invitation or upgrade at https://app.assay.dev/billing/upgrade to invite more.",
    );
  });

  it("an unpaid subscription falls back to the free plan's limit until it is paid", async () => {
    const { org, ids } = await billedOrg();
    const { invite } = await staffWithTask(org);
    const t = now();
    await send(event("subscription.created", ids, { plan: "team", created: t - 20 }));
    for (let i = 0; i < 6; i++) expect((await invite()).status).toBe(201);

    await send(event("subscription.updated", ids, { plan: "team", status: "unpaid", created: t - 10 }));
    expect((await invite()).status).toBe(403);
    await send(event("invoice.paid", ids, { created: t }));
    expect((await invite()).status).toBe(201);
  });
});

describe("GET /organizations/{org_id}/billing/events", () => {
  it("200: the organization's events, newest first, paginated", async () => {
    const { org, admin, ids } = await billedOrg();
    const t = now();
    const sent = [
      event("checkout.completed", ids, { created: t - 30 }),
      event("subscription.created", ids, { created: t - 20 }),
      event("invoice.paid", ids, { created: t - 10 }),
    ];
    for (const e of sent) await send(e);
    const page = await billingEventsOf(admin, org, "?limit=2");
    expect(page.pagination).toEqual({ total: 3, pages: 2, current: 1, limit: 2 });
    expect(page.items.map((i) => i.event_id)).toEqual([sent[2]!.id, sent[1]!.id]);
    const second = await billingEventsOf(admin, org, "?limit=2&page=2");
    expect(second.items.map((i) => i.event_id)).toEqual([sent[0]!.id]);
    expect(second.items[0]).toMatchObject({ event_created_at: new Date((t - 30) * 1000).toISOString(), received_at: expect.any(String) });
  });

  it("401 without a credential, 403 below orgadmin or outside the organization, 404 for no such organization, 422 for a bad page", async () => {
    const { org, admin } = await billedOrg();
    const path = `/api/v1/organizations/${org}/billing/events`;
    expect((await call(path)).status).toBe(401);
    const interviewer = await person({ role: "interviewer", org_id: org });
    expect((await call(path, { token: interviewer.token })).status).toBe(403);
    const elsewhere = await person({ role: "orgadmin", org_id: uniqueOrg() });
    expect((await call(path, { token: elsewhere.token })).status).toBe(403);
    const platformAdmin = await sessionToken({ sub: uniqueSubject("admin"), role: "admin" });
    expect((await call(path, { token: platformAdmin })).status).toBe(200);
    const missing = await call(`/api/v1/organizations/${uniqueOrg("missing")}/billing/events`, { token: platformAdmin });
    expect(missing.status).toBe(404);
    for (const query of ["?limit=0", "?limit=101", "?page=0"]) {
      const res = await call(`${path}${query}`, { token: admin.token });
      expect(res.status).toBe(422);
      expect((await errorBody(res)).detail).toEqual([expect.objectContaining({ loc: ["query", query.slice(1).split("=")[0]] })]);
    }
  });
});
