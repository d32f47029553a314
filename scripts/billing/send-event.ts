// `npm run billing:event -- <event> --org ORG [--plan PLAN] ...`: sends one Stripe webhook
// event, signed with the local STRIPE_WEBHOOK_SECRET, to the stack of `npm start`, and prints
// what it sent and the API's answer. Exit 0 on a 2xx answer. docs/billing.md has examples.
import { parseArgs } from "node:util";
import { z } from "zod";
import { readDevVars } from "../lib/dev-vars";
import { DEV_VARS } from "../lib/paths";
import { EVENT_KINDS, stripeEvent, stripeSignature, type EventKind } from "../lib/stripe-events";

const USAGE = `usage: npm run billing:event -- <event> [--org ORG] [--plan PLAN] [--status STATUS] [--customer ID]
         [--subscription ID] [--id EVENT_ID] [--ago SECONDS] [--url URL] [--secret whsec_...]
events: ${Object.keys(EVENT_KINDS).join(", ")}
  --org           the organization (Checkout's client_reference_id, the subscription's metadata.organization_id)
  --plan          the price's lookup key, for subscription events: free, team, enterprise (default team)
  --status        the subscription's status (default active; canceled for subscription.deleted)
  --customer      Stripe customer id (default cus_dev_<org>); --subscription likewise (sub_dev_<org>)
  --id            the event id (default a new one): send one id twice to see a duplicate
  --ago           make the event this many seconds old (an older event arriving late is stale)
  --url           the API (default http://127.0.0.1:$PORT, PORT 8787)
  --secret        the webhook secret (default STRIPE_WEBHOOK_SECRET from the environment or .dev.vars)`;

const Args = z
  .object({
    event: z.enum(Object.keys(EVENT_KINDS) as [EventKind, ...EventKind[]]),
    org: z.string().min(1).optional(),
    plan: z.string().min(1).optional(),
    status: z.string().min(1).optional(),
    customer: z.string().min(1).optional(),
    subscription: z.string().min(1).optional(),
    id: z.string().min(1).optional(),
    ago: z.coerce.number().int().min(0).default(0),
    url: z.url().default(`http://127.0.0.1:${process.env.PORT ?? 8787}`),
    secret: z.string().min(1).optional(),
  })
  .refine((a) => a.org || a.customer, { message: "name the organization (--org) or its customer (--customer)", path: ["org"] });

function fail(lines: string[], code: number): never {
  for (const line of lines) console.error(line);
  process.exit(code);
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: Object.fromEntries(
    ["org", "plan", "status", "customer", "subscription", "id", "ago", "url", "secret"].map((k) => [k, { type: "string" as const }]),
  ),
});
if (positionals.length !== 1) fail([USAGE], 2);
const parsed = Args.safeParse({ ...values, event: positionals[0] });
if (!parsed.success) fail([...parsed.error.issues.map((i) => `${i.path.join(".") || "event"}: ${i.message}`), USAGE], 2);
const args = parsed.data;

const secret = args.secret ?? process.env.STRIPE_WEBHOOK_SECRET ?? readDevVars(DEV_VARS).STRIPE_WEBHOOK_SECRET;
if (!secret) fail(["no STRIPE_WEBHOOK_SECRET in .dev.vars; run npm start or npm run setup first"], 1);

// One organization's events share a customer and a subscription unless told otherwise.
const name = args.org ?? args.customer?.replace(/^cus_(dev_)?/, "");
const event = stripeEvent(args.event, {
  org: args.org,
  customer: args.customer ?? `cus_dev_${name}`,
  subscription: args.subscription ?? `sub_dev_${name}`,
  plan: args.plan,
  status: args.status,
  id: args.id,
  created: Math.floor(Date.now() / 1000) - args.ago,
});
const payload = JSON.stringify(event, null, 2);
const signature = await stripeSignature(payload, secret);
const endpoint = new URL("/api/v1/billing/stripe/webhook", args.url);

console.log(`POST ${endpoint}`);
console.log(`Stripe-Signature: ${signature}`);
console.log(payload);
let res: Response;
try {
  res = await fetch(endpoint, { method: "POST", headers: { "Content-Type": "application/json; charset=utf-8", "Stripe-Signature": signature }, body: payload });
} catch (e) {
  fail([`could not reach ${endpoint}: ${(e as Error).message}; is npm start running?`], 1);
}
console.log(`\nHTTP ${res.status}`);
console.log(await res.text());
process.exit(res.ok ? 0 : 1);
