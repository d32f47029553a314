-- The organization the user's latest session token named, beside the role it carried: who is
-- staff of an organization now, for the flows that have no token at hand (staff notifications).
ALTER TABLE `users` ADD `org_id` text;
--> statement-breakpoint
-- Until a user's next request writes it, the best guess: the one organization whose recorded
-- token membership has the user's current role. Anyone else stays null (staff of nowhere) until
-- they sign in again, which is safer than staff rights they may no longer hold.
UPDATE `users` SET `org_id` = (
  SELECT `memberships`.`organization_id` FROM `memberships`
  WHERE `memberships`.`user_id` = `users`.`id` AND `memberships`.`source` = 'token' AND `memberships`.`role` = `users`.`role`
)
WHERE (
  SELECT count(*) FROM `memberships`
  WHERE `memberships`.`user_id` = `users`.`id` AND `memberships`.`source` = 'token' AND `memberships`.`role` = `users`.`role`
) = 1;
