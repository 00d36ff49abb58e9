-- Deploy hooks and event webhook endpoints name who made them, so that
-- proving a legacy account's address can end what its maker set up there
-- (a hook deploying their images, an endpoint sending them events).
-- Rows made before this have no creator and are left alone.

ALTER TABLE deploy_hooks ADD COLUMN created_by uuid;
ALTER TABLE webhook_endpoints ADD COLUMN created_by uuid;
CREATE INDEX deploy_hooks_created_by_idx ON deploy_hooks (created_by) WHERE created_by IS NOT NULL;
CREATE INDEX webhook_endpoints_created_by_idx ON webhook_endpoints (created_by) WHERE created_by IS NOT NULL;
CREATE INDEX service_accounts_created_by_idx ON service_accounts (created_by) WHERE created_by IS NOT NULL;
CREATE INDEX api_tokens_created_by_idx ON api_tokens (created_by) WHERE created_by IS NOT NULL;
CREATE INDEX trust_policies_created_by_idx ON trust_policies (created_by) WHERE created_by IS NOT NULL;
CREATE INDEX invitations_invited_by_idx ON invitations (invited_by) WHERE accepted_at IS NULL AND revoked_at IS NULL;
