CREATE TABLE `scores` (
	`id` text PRIMARY KEY NOT NULL,
	`attempt_id` text NOT NULL,
	`status` text NOT NULL,
	`tries` integer DEFAULT 0 NOT NULL,
	`hidden_job_id` text,
	`workspace_job_id` text,
	`reason` text,
	`rubric_version` text NOT NULL,
	`overall_score` real,
	`report` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`attempt_id`) REFERENCES `attempts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `scores_attempt_idx` ON `scores` (`attempt_id`,`created_at`);