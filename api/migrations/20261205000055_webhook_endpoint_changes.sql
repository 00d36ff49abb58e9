-- Event webhook endpoints change in place (PATCH) and rotate their signing
-- secret. For a while after a rotation the previous secret signs every
-- delivery beside the new one (Standard Webhooks' space-separated `v1,`
-- signatures), so the receiver can switch without refusing a delivery.
-- `url_set_by` names who last pointed the endpoint at a new URL: an eviction
-- of an account's maker disables what they made or pointed, as it does for
-- `created_by`. Expand only: the running code neither reads nor writes these.
ALTER TABLE webhook_endpoints
    ADD COLUMN previous_secret_enc        text,
    ADD COLUMN previous_secret_expires_at timestamptz,
    ADD COLUMN url_set_by                 uuid,
    ADD CONSTRAINT webhook_endpoints_previous_secret_check
        CHECK ((previous_secret_enc IS NULL) = (previous_secret_expires_at IS NULL));
CREATE INDEX webhook_endpoints_url_set_by_idx ON webhook_endpoints (url_set_by) WHERE url_set_by IS NOT NULL;
