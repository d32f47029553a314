ALTER TABLE `tasks` ADD `origin` text DEFAULT 'pull_request' NOT NULL;--> statement-breakpoint
ALTER TABLE `tasks` ADD `issue_number` integer;--> statement-breakpoint
ALTER TABLE `tasks` ADD `issue_url` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `issue_title` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `issue_body` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `template_slug` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `published_at` text;--> statement-breakpoint
CREATE INDEX `tasks_creator_origin_idx` ON `tasks` (`created_by`,`origin`,`created_at`);--> statement-breakpoint
-- Every task before the builder was published when it was made.
UPDATE `tasks` SET `published_at` = `created_at`;
