CREATE TABLE `billing_events` (
	`id` text PRIMARY KEY NOT NULL,
	`provider` text DEFAULT 'stripe' NOT NULL,
	`type` text NOT NULL,
	`organization_id` text,
	`customer_id` text,
	`object_id` text,
	`outcome` text NOT NULL,
	`changes` text NOT NULL,
	`detail` text,
	`event_created_at` text NOT NULL,
	`received_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `billing_events_org_idx` ON `billing_events` (`organization_id`,`received_at`);--> statement-breakpoint
ALTER TABLE `organizations` ADD `billing_status` text;--> statement-breakpoint
ALTER TABLE `organizations` ADD `billing_plan_id` text REFERENCES plans(id);--> statement-breakpoint
ALTER TABLE `organizations` ADD `stripe_customer_id` text;--> statement-breakpoint
ALTER TABLE `organizations` ADD `stripe_subscription_id` text;--> statement-breakpoint
ALTER TABLE `organizations` ADD `billing_subscription_event_at` integer;--> statement-breakpoint
ALTER TABLE `organizations` ADD `billing_status_event_at` integer;--> statement-breakpoint
ALTER TABLE `organizations` ADD `billing_event_id` text;--> statement-breakpoint
ALTER TABLE `organizations` ADD `billing_updated_at` text;--> statement-breakpoint
CREATE UNIQUE INDEX `organizations_stripe_customer_id_unique` ON `organizations` (`stripe_customer_id`);