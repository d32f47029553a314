-- Plans an organization can be on. The candidate limit is what invitations enforce
-- (docs/limits.md says how it counts); NULL means unlimited.
INSERT INTO plans (id, name, candidate_limit, upgrade_url) VALUES
  ('free', 'Free', 5, 'https://app.assay.dev/billing/upgrade'),
  ('team', 'Team', 50, 'https://app.assay.dev/billing/upgrade'),
  ('enterprise', 'Enterprise', NULL, NULL);
