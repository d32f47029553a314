ALTER TABLE `tasks` ADD `settings` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `install_failure` text;