import type { OpenAPIRouteSchema } from "chanfana";
import { z } from "zod";
import { BILLING_STATUSES, RECORDED_OUTCOMES, StripeEventSchema, WEBHOOK_OUTCOMES } from "../domain/billing";
import { billingEventListing, receiveStripeWebhook, STRIPE_SIGNATURE_HEADER } from "../flows/billing.flow";
import { jsonContent, jsonResponse, PublicEndpoint, SessionEndpoint, type RouteContext, type SessionContext } from "../http/endpoint";
import { ErrorSchema, HttpError, json } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { pageEnvelope, paginate, paginationQuery } from "../http/paging";
import { readBodyBytes } from "../http/validation";
import { OrgIdParam } from "./params";
import type { RouteTable } from "./table";

const WebhookReceiptSchema = z
  .object({
    received: z.literal(true),
    event_id: z.string(),
    type: z.string(),
    outcome: z
      .enum(WEBHOOK_OUTCOMES)
      .describe(
        "applied: the organization changed; unchanged: current, nothing to change; duplicate: this event id was received " +
          "before, nothing changed; stale: older than an event already applied; unmatched: no organization; unknown_plan: " +
          "no price lookup key names a plan; ignored: about another subscription, or an invoice that moves no status; " +
          "invalid: the object could not be read; conflict: the customer belongs to another organization; unhandled: a type " +
          "the service does not read (not stored)",
      ),
    organization_id: z.string().nullable(),
  })
  .meta({ id: "BillingWebhookReceipt" });

const ChangeOf = <T extends z.ZodType>(value: T) => z.object({ from: value, to: value });

const BillingChangesSchema = z
  .object({
    plan: ChangeOf(z.string()).optional().describe("The plan in force, whose candidate limit invitations enforce"),
    candidate_limit: ChangeOf(z.number().int().nullable()).optional().describe("null: unlimited"),
    status: ChangeOf(z.enum(BILLING_STATUSES).nullable()).optional(),
    subscribed_plan: ChangeOf(z.string().nullable()).optional().describe("The subscription's plan, in force or not"),
    customer_id: ChangeOf(z.string().nullable()).optional(),
    subscription_id: ChangeOf(z.string().nullable()).optional(),
  })
  .meta({ id: "BillingChanges" });

const BillingEventSchema = z
  .object({
    event_id: z.string().describe("The payment provider's event id"),
    provider: z.string().describe("Who made the change: the payment provider (stripe)"),
    customer_id: z.string().nullable().describe("The provider's customer the event is about"),
    type: z.string(),
    object_id: z.string().nullable().describe("The Checkout Session, subscription or invoice the event is about"),
    outcome: z.enum(RECORDED_OUTCOMES),
    changes: BillingChangesSchema.describe("What changed, field by field; empty unless the outcome is applied"),
    detail: z.string().nullable().describe("Why nothing changed, when nothing did"),
    event_created_at: z.string().describe("When the provider created the event: the order events are applied in"),
    received_at: z.string(),
  })
  .meta({ id: "BillingEvent" });

/**
 * Stripe's webhook. Its credential is the `Stripe-Signature` over the raw body, so the body is
 * read as text and verified before anything parses it; a refusal changes nothing.
 */
export class PostStripeWebhook extends PublicEndpoint {
  schema = {
    tags: ["billing"],
    summary: "Inbound: Stripe's billing events (signed by Stripe, no Bearer credential)",
    description:
      "Called by Stripe only, signed with the endpoint's secret (`Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 " +
      "of \"<t>.<raw body>\">`, at most 300 s old). Handles checkout.session.completed, customer.subscription.created/" +
      "updated/deleted, invoice.paid and invoice.payment_failed; any other type is acknowledged and ignored. Idempotent " +
      "by event id, and an event older than one applied changes nothing (docs/billing.md).",
    request: { body: jsonContent(StripeEventSchema) },
    responses: {
      "200": jsonResponse("Received; `outcome` says what it did", WebhookReceiptSchema),
      "400": jsonResponse("Missing, bad or stale signature, or a signed body that is not an event; nothing was stored", ErrorSchema),
      "413": jsonResponse("The body is larger than the limit", ErrorSchema),
      "503": jsonResponse("No webhook secret is configured (STRIPE_WEBHOOK_SECRET): no event is accepted", ErrorSchema),
    },
  };

  // Not rate-limited per IP (src/domain/rate-scopes.ts), and the body is any signed text, not
  // validated JSON, so the document promises neither a 429 nor a 415 or 422.
  override getSchema(): OpenAPIRouteSchema {
    const schema = super.getSchema();
    for (const status of ["415", "422", "429"]) delete schema.responses?.[status];
    return schema;
  }

  async run({ request, env }: RouteContext) {
    const secret = env.STRIPE_WEBHOOK_SECRET;
    if (!secret) throw new HttpError(503, "Billing webhooks are not configured on this server (no STRIPE_WEBHOOK_SECRET)");
    const signature = request.headers.get(STRIPE_SIGNATURE_HEADER);
    if (!signature) throw HttpError.badRequest(`The ${STRIPE_SIGNATURE_HEADER} header is missing; nothing was stored`);
    const body = await readBodyBytes(request, Number(env.MAX_BODY_BYTES));
    const result = await receiveStripeWebhook(env, secret, new TextDecoder().decode(body), signature);
    if ("refused" in result) throw HttpError.badRequest(`Refused: ${result.refused}; nothing was stored`);
    const { eventId, type, outcome, organizationId } = result.receipt;
    return json({ received: true, event_id: eventId, type, outcome, organization_id: organizationId });
  }
}

export class ListBillingEvents extends SessionEndpoint {
  protected readonly role = "orgadmin";
  schema = {
    tags: ["organizations"],
    summary: "The organization's billing events (orgadmin or higher in it)",
    description:
      "Every payment provider event about the organization, newest first: who (the provider and its customer), what " +
      "changed (plan, candidate limit, status, from → to) and by which event. Never changed or removed.",
    request: { params: OrgIdParam, query: paginationQuery({ defaultLimit: 20, maxLimit: 100 }) },
    responses: {
      "200": jsonResponse("A page of billing events", pageEnvelope(BillingEventSchema)),
      "404": jsonResponse("No such organization", ErrorSchema),
    },
  };

  async run({ env, caller }: SessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    await caller.requireMember(params.org_id, "orgadmin");
    const events = unwrap(await billingEventListing(env, params.org_id));
    return paginate(query, events.count, async (limit, offset) =>
      (await events.page(limit, offset)).map((e) => ({
        event_id: e.id,
        provider: e.provider,
        customer_id: e.customerId,
        type: e.type,
        object_id: e.objectId,
        outcome: e.outcome,
        changes: e.changes,
        detail: e.detail,
        event_created_at: e.eventCreatedAt,
        received_at: e.receivedAt,
      })),
    );
  }
}

export const billingRoutes: RouteTable = [
  ["POST", "/billing/stripe/webhook", PostStripeWebhook],
  ["GET", "/organizations/:org_id/billing/events", ListBillingEvents],
];
