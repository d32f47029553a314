DROP INDEX `attempts_org_idx`;--> statement-breakpoint
CREATE INDEX `attempts_org_idx` ON `attempts` (`organization_id`,`created_at`,`task_id`,`started_at`,`submitted_at`,`score_id`);--> statement-breakpoint
DROP INDEX `invitations_org_created_idx`;--> statement-breakpoint
CREATE INDEX `invitations_org_created_idx` ON `invitations` (`organization_id`,`created_at`,`task_id`,`superseded_by`,`used_at`);--> statement-breakpoint
ALTER TABLE `scores` ADD `correctness_score` integer;--> statement-breakpoint
ALTER TABLE `scores` ADD `test_coverage_score` integer;--> statement-breakpoint
ALTER TABLE `scores` ADD `code_quality_score` integer;--> statement-breakpoint
ALTER TABLE `scores` ADD `behavior_score` integer;--> statement-breakpoint
ALTER TABLE `scores` ADD `communication_score` integer;--> statement-breakpoint
-- Existing reports: their subscores into the new columns (src/db/scores.ts writes both from now on).
UPDATE `scores` SET
  `correctness_score` = CASE WHEN json_type(`report`, '$.subscores.correctness') IN ('integer', 'real') THEN json_extract(`report`, '$.subscores.correctness') END,
  `test_coverage_score` = CASE WHEN json_type(`report`, '$.subscores.test_coverage') IN ('integer', 'real') THEN json_extract(`report`, '$.subscores.test_coverage') END,
  `code_quality_score` = CASE WHEN json_type(`report`, '$.subscores.code_quality') IN ('integer', 'real') THEN json_extract(`report`, '$.subscores.code_quality') END,
  `behavior_score` = CASE WHEN json_type(`report`, '$.subscores.behavior') IN ('integer', 'real') THEN json_extract(`report`, '$.subscores.behavior') END,
  `communication_score` = CASE WHEN json_type(`report`, '$.subscores.communication') IN ('integer', 'real') THEN json_extract(`report`, '$.subscores.communication') END
WHERE `report` IS NOT NULL AND json_valid(`report`);--> statement-breakpoint
CREATE INDEX `scores_analytics_idx` ON `scores` (`id`,`status`,`overall_score`,`correctness_score`,`test_coverage_score`,`code_quality_score`,`behavior_score`,`communication_score`);