import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { BILLING_STATUSES } from "../../domain/billing";
import { MEMBERSHIP_SOURCES, ROLES } from "../../domain/roles";
import { timestamp } from "./columns";

/** Subscription plans; `candidate_limit` null means unlimited. */
export const plans = sqliteTable("plans", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  candidateLimit: integer("candidate_limit"),
  upgradeUrl: text("upgrade_url"),
});

export const organizations = sqliteTable("organizations", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  planId: text("plan_id").notNull().references(() => plans.id),
  createdAt: timestamp("created_at"),
  // Billing as the payment provider's events left it (src/domain/billing.ts, BillingState);
  // all null until the first event about the organization. `plan_id` above is the plan in force.
  billingStatus: text("billing_status", { enum: BILLING_STATUSES }),
  billingPlanId: text("billing_plan_id").references(() => plans.id),
  stripeCustomerId: text("stripe_customer_id").unique(),
  stripeSubscriptionId: text("stripe_subscription_id"),
  /** Stripe `created` (Unix seconds) of the last subscription event applied, and of the last that set the status. */
  billingSubscriptionEventAt: integer("billing_subscription_event_at"),
  billingStatusEventAt: integer("billing_status_event_at"),
  /** The last event applied: the version a billing write expects, so concurrent events cannot both apply. */
  billingEventId: text("billing_event_id"),
  billingUpdatedAt: text("billing_updated_at"),
});

export const users = sqliteTable("users", {
  id: text("id").primaryKey(),
  /** The identity provider's `sub`; the unique key that makes first-request creation idempotent. */
  subject: text("subject").notNull().unique(),
  email: text("email").notNull(),
  role: text("role", { enum: ROLES }).notNull(),
  /**
   * The organization the latest session token named (null: none), beside `role`: the rights the
   * user holds now (src/domain/roles.ts), read where no token is at hand, as when notifying staff.
   */
  orgId: text("org_id"),
  createdAt: timestamp("created_at"),
  updatedAt: timestamp("updated_at"),
});

export const memberships = sqliteTable(
  "memberships",
  {
    userId: text("user_id").notNull().references(() => users.id),
    organizationId: text("organization_id").notNull().references(() => organizations.id),
    role: text("role", { enum: ROLES }).notNull(),
    /** Only `invitation` memberships grant anything by themselves (src/domain/roles.ts, roleIn). */
    source: text("source", { enum: MEMBERSHIP_SOURCES }).notNull().default("token"),
    createdAt: timestamp("created_at"),
  },
  (t) => [primaryKey({ columns: [t.userId, t.organizationId] }), index("memberships_org_idx").on(t.organizationId)],
);

