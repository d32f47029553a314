CREATE TABLE `ai_chat_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`attempt_id` text NOT NULL,
	`seq` integer NOT NULL,
	`role` text NOT NULL,
	`content` text NOT NULL,
	`status` text NOT NULL,
	`error` text,
	`files` text NOT NULL,
	`reply_to` text,
	`provider` text,
	`model` text,
	`prompt_tokens` integer,
	`completion_tokens` integer,
	`usage_estimated` integer,
	`created_at` text NOT NULL,
	`first_token_at` text,
	`ended_at` text,
	FOREIGN KEY (`attempt_id`) REFERENCES `attempts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ai_chat_attempt_seq_idx` ON `ai_chat_messages` (`attempt_id`,`seq`);--> statement-breakpoint
CREATE INDEX `ai_chat_attempt_time_idx` ON `ai_chat_messages` (`attempt_id`,`created_at`,`seq`);--> statement-breakpoint
ALTER TABLE `tasks` ADD `ai_assistance` integer DEFAULT false NOT NULL;