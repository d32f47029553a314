-- The pull request's own title and body, staff only, and the statement candidates read instead:
-- null statement columns are the default made from the pull request (src/domain/statement.ts).
ALTER TABLE `tasks` ADD `pr_title` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `pr_body` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `statement_title` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `statement_body` text;--> statement-breakpoint
-- Tasks imported before this migration hold the pull request's title and body in title and
-- description (set together with base_sha); their statement becomes the default made from them.
UPDATE `tasks` SET `pr_title` = `title`, `pr_body` = `description` WHERE `base_sha` IS NOT NULL;--> statement-breakpoint
CREATE TABLE `retakes` (
	`id` text PRIMARY KEY NOT NULL,
	`task_id` text NOT NULL,
	`user_id` text NOT NULL,
	`granted_by` text NOT NULL,
	`reason` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`granted_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `retakes_task_user_idx` ON `retakes` (`task_id`,`user_id`);--> statement-breakpoint
CREATE TABLE `audit_events` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`actor_id` text NOT NULL,
	`action` text NOT NULL,
	`target_type` text NOT NULL,
	`target_id` text NOT NULL,
	`detail` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`actor_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `audit_events_org_idx` ON `audit_events` (`organization_id`,`created_at`);
