CREATE TABLE `repohost_tokens` (
	`organization_id` text NOT NULL,
	`host` text NOT NULL,
	`ciphertext` text NOT NULL,
	`iv` text NOT NULL,
	`last4` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`organization_id`, `host`),
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `task_assignments` (
	`task_id` text NOT NULL,
	`user_id` text NOT NULL,
	`assigned_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`task_id`, `user_id`),
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `task_assignments_user_idx` ON `task_assignments` (`user_id`);--> statement-breakpoint
CREATE TABLE `tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`visibility` text NOT NULL,
	`tags` text NOT NULL,
	`title` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`status` text NOT NULL,
	`failure_reason` text,
	`source_host` text NOT NULL,
	`source_api_base` text NOT NULL,
	`source_owner` text NOT NULL,
	`source_repo` text NOT NULL,
	`pr_number` integer NOT NULL,
	`pr_url` text NOT NULL,
	`base_sha` text,
	`head_sha` text,
	`language` text,
	`test_framework` text,
	`test_command` text,
	`time_limit_minutes` integer,
	`fail_to_pass` text,
	`pass_to_pass` text,
	`test_files` text,
	`snapshot_sha256` text,
	`environment_key` text,
	`environment_sha256` text,
	`prepare_job_id` text,
	`base_run_job_id` text,
	`solution_run_job_id` text,
	`created_by` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`preparing_at` text,
	`validating_at` text,
	`ready_at` text,
	`archived_at` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `tasks_org_status_idx` ON `tasks` (`organization_id`,`status`);--> statement-breakpoint
CREATE INDEX `tasks_visibility_idx` ON `tasks` (`visibility`,`status`);--> statement-breakpoint
CREATE TABLE `attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`task_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`candidate_id` text NOT NULL,
	`status` text NOT NULL,
	`time_limit_minutes` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`started_at` text,
	`deadline_at` text,
	`submitted_at` text,
	`auto_submitted` integer DEFAULT false NOT NULL,
	`score_id` text,
	`submission` text,
	`version` integer NOT NULL,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`candidate_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `attempts_candidate_idx` ON `attempts` (`candidate_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `attempts_org_idx` ON `attempts` (`organization_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `attempts_task_idx` ON `attempts` (`task_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `attempts_open_uq` ON `attempts` (`task_id`,`candidate_id`) WHERE "status" in ('NOT_STARTED', 'IN_PROGRESS');--> statement-breakpoint
CREATE TABLE `ide_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`attempt_id` text NOT NULL,
	`expires_at` text NOT NULL,
	`revoked_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`attempt_id`) REFERENCES `attempts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `ide_tokens_attempt_idx` ON `ide_tokens` (`attempt_id`);--> statement-breakpoint
CREATE TABLE `invitations` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`task_id` text NOT NULL,
	`email` text NOT NULL,
	`email_normalized` text NOT NULL,
	`invited_by` text NOT NULL,
	`token_hash` text NOT NULL,
	`token_version` integer DEFAULT 1 NOT NULL,
	`issued_at` text NOT NULL,
	`valid_hours` integer NOT NULL,
	`expires_at` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`used_at` text,
	`used_by` text,
	`revoked_at` text,
	`revoked_by` text,
	`superseded_by` text,
	`delivery_status` text DEFAULT 'queued' NOT NULL,
	`delivery_attempts` integer DEFAULT 0 NOT NULL,
	`delivery_error` text,
	`delivered_at` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`invited_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`used_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`revoked_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invitations_token_hash_unique` ON `invitations` (`token_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `invitations_open_unique` ON `invitations` (`task_id`,`email_normalized`) WHERE "invitations"."used_at" IS NULL AND "invitations"."revoked_at" IS NULL AND "invitations"."superseded_by" IS NULL;--> statement-breakpoint
CREATE INDEX `invitations_org_created_idx` ON `invitations` (`organization_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `invitations_org_email_idx` ON `invitations` (`organization_id`,`email_normalized`);