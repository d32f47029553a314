CREATE TABLE `executions` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`attempt_id` text,
	`organization_id` text,
	`language` text NOT NULL,
	`file` text NOT NULL,
	`timeout_seconds` integer NOT NULL,
	`status` text NOT NULL,
	`created_at` text NOT NULL,
	`live_until` text NOT NULL,
	`ended_at` text,
	`exit_code` integer
);
--> statement-breakpoint
CREATE INDEX `executions_user_idx` ON `executions` (`user_id`,`ended_at`);--> statement-breakpoint
CREATE INDEX `executions_attempt_idx` ON `executions` (`attempt_id`,`ended_at`);