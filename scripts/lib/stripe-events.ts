// Stripe webhook events as Stripe sends them (the fields the Worker reads, and a few around
// them), signed as Stripe signs them. Shared by `npm run billing:event` and the integration
// tests, so both drive the Worker exactly as Stripe would. No Node imports: it runs in workerd too.
import Stripe from "stripe";

/** The event kinds the dev command sends, by short name, with the Stripe type each one is. */
export const EVENT_KINDS = {
  "checkout.completed": "checkout.session.completed",
  "subscription.created": "customer.subscription.created",
  "subscription.updated": "customer.subscription.updated",
  "subscription.deleted": "customer.subscription.deleted",
  "invoice.paid": "invoice.paid",
  "invoice.payment_failed": "invoice.payment_failed",
} as const;
export type EventKind = keyof typeof EVENT_KINDS;

export interface EventOptions {
  /** The organization: Checkout's `client_reference_id`, the subscription's `metadata.organization_id`. */
  org?: string;
  customer: string;
  subscription: string;
  /** The price's lookup key: a plan id (free, team, enterprise) or anything else. */
  plan?: string;
  /** The subscription's status; canceled for a deletion, active otherwise. */
  status?: string;
  /** Event id; a new random one by default. */
  id?: string;
  /** Event `created`, Unix seconds; now by default. */
  created?: number;
}

export interface StripeTestEvent {
  id: string;
  object: "event";
  api_version: string;
  type: string;
  created: number;
  livemode: false;
  pending_webhooks: number;
  request: { id: null; idempotency_key: null };
  data: { object: Record<string, unknown> };
}

export function stripeEvent(kind: EventKind, opts: EventOptions): StripeTestEvent {
  const created = opts.created ?? Math.floor(Date.now() / 1000);
  const type = EVENT_KINDS[kind];
  return {
    id: opts.id ?? `evt_dev_${crypto.randomUUID().replaceAll("-", "")}`,
    object: "event",
    api_version: Stripe.API_VERSION,
    type,
    created,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: { object: eventObject(kind, opts, created) },
  };
}

function eventObject(kind: EventKind, opts: EventOptions, created: number): Record<string, unknown> {
  const metadata = opts.org ? { organization_id: opts.org } : {};
  switch (kind) {
    case "checkout.completed":
      return {
        id: `cs_test_${created}`,
        object: "checkout.session",
        mode: "subscription",
        status: "complete",
        payment_status: "paid",
        client_reference_id: opts.org ?? null,
        customer: opts.customer,
        subscription: opts.subscription,
        metadata: {},
      };
    case "subscription.created":
    case "subscription.updated":
    case "subscription.deleted": {
      const plan = opts.plan ?? "team";
      return {
        id: opts.subscription,
        object: "subscription",
        customer: opts.customer,
        status: opts.status ?? (kind === "subscription.deleted" ? "canceled" : "active"),
        metadata,
        created,
        items: {
          object: "list",
          data: [{ id: `si_${opts.subscription}`, object: "subscription_item", price: { id: `price_${plan}`, object: "price", lookup_key: plan } }],
        },
      };
    }
    case "invoice.paid":
    case "invoice.payment_failed":
      return {
        id: `in_test_${created}`,
        object: "invoice",
        customer: opts.customer,
        status: kind === "invoice.paid" ? "paid" : "open",
        parent: { type: "subscription_details", subscription_details: { subscription: opts.subscription, metadata } },
      };
  }
}

/**
 * The `Stripe-Signature` header of a payload, as Stripe computes it, with Stripe's own helper
 * over Web Crypto (so it runs in Node and in workerd alike). `timestamp` in Unix seconds.
 */
export async function stripeSignature(payload: string, secret: string, timestamp?: number): Promise<string> {
  return Stripe.webhooks.generateTestHeaderStringAsync({ payload, secret, timestamp, cryptoProvider: Stripe.createSubtleCryptoProvider() });
}
