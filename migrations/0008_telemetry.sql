CREATE TABLE `telemetry_events` (
	`attempt_id` text NOT NULL,
	`event_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`seq` integer,
	`kind` text NOT NULL,
	`occurred_at` text NOT NULL,
	`data` text NOT NULL,
	`received_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`attempt_id`, `event_id`),
	FOREIGN KEY (`attempt_id`) REFERENCES `attempts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `telemetry_attempt_time_idx` ON `telemetry_events` (`attempt_id`,`occurred_at`);--> statement-breakpoint
CREATE INDEX `telemetry_org_time_idx` ON `telemetry_events` (`organization_id`,`occurred_at`);