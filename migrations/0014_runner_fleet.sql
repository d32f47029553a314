ALTER TABLE `runner_jobs` ADD `dispatch_failures` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `runner_jobs` ADD `requeues` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `runner_jobs` ADD `lease_expires_at` text;--> statement-breakpoint
ALTER TABLE `runner_jobs` ADD `runner_id` text;--> statement-breakpoint
CREATE INDEX `runner_jobs_lease_idx` ON `runner_jobs` (`status`,`lease_expires_at`);