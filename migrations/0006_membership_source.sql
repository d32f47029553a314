-- Where a membership came from. Rights come from the current session token; of the stored
-- memberships only those made by accepting an invitation grant anything (a candidate's rights),
-- so those recorded from earlier tokens no longer do (src/domain/roles.ts, roleIn).
ALTER TABLE `memberships` ADD `source` text DEFAULT 'token' NOT NULL;
--> statement-breakpoint
-- Memberships in an organization whose invitation the user accepted become the invitation's,
-- as accepting one makes them from now on, so accepted candidates keep their place.
UPDATE `memberships` SET `source` = 'invitation', `role` = 'candidate'
WHERE EXISTS (
  SELECT 1 FROM `invitations`
  WHERE `invitations`.`used_by` = `memberships`.`user_id` AND `invitations`.`organization_id` = `memberships`.`organization_id`
);
