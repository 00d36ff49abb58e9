-- Rotating a deploy hook's secret keeps the previous one valid for a while,
-- so a CI system can switch to the new one without a failed deploy between.
ALTER TABLE deploy_hooks
    ADD COLUMN previous_secret_enc        text,
    ADD COLUMN previous_secret_expires_at timestamptz,
    ADD CONSTRAINT deploy_hooks_previous_secret_check
        CHECK ((previous_secret_enc IS NULL) = (previous_secret_expires_at IS NULL));
