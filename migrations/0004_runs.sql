CREATE TABLE `runs` (
	`id` text PRIMARY KEY NOT NULL,
	`attempt_id` text NOT NULL,
	`status` text NOT NULL,
	`changed_files` text NOT NULL,
	`timeout_seconds` integer NOT NULL,
	`reason` text,
	`result` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`finished_at` text,
	`version` integer NOT NULL,
	FOREIGN KEY (`attempt_id`) REFERENCES `attempts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `runs_attempt_idx` ON `runs` (`attempt_id`,`created_at`);