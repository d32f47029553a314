-- Similarity of submitted attempts (docs/scoring.md, "Similarity"): evidence for reviewers, written by the `similarity` queue's consumer.
CREATE TABLE `similarity_pairs` (
	`attempt_a` text NOT NULL,
	`attempt_b` text NOT NULL,
	`organization_id` text NOT NULL,
	`task_id` text NOT NULL,
	`similarity` real NOT NULL,
	`regions` text NOT NULL,
	`computed_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`attempt_a`, `attempt_b`),
	FOREIGN KEY (`attempt_a`) REFERENCES `attempts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`attempt_b`) REFERENCES `attempts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `similarity_pairs_b_idx` ON `similarity_pairs` (`attempt_b`);--> statement-breakpoint
CREATE TABLE `similarity_results` (
	`attempt_id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`task_id` text NOT NULL,
	`upstream_similarity` real,
	`upstream_regions` text,
	`upstream_missing` text,
	`computed_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`attempt_id`) REFERENCES `attempts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE no action
);
