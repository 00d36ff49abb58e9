-- Who received a deploy hook's previous secret: while a rotation's grace
-- period runs, that secret still signs deliveries, so an eviction of its
-- holder (an account's maker before its address was proven) ends it too.
ALTER TABLE deploy_hooks ADD COLUMN previous_secret_issued_to uuid;
CREATE INDEX deploy_hooks_previous_secret_issued_to_idx ON deploy_hooks (previous_secret_issued_to)
    WHERE previous_secret_issued_to IS NOT NULL;

-- Members who joined through someone's invitation, listed when that person
-- is evicted.
CREATE INDEX invitations_accepted_invited_by_idx ON invitations (invited_by) WHERE accepted_by IS NOT NULL;
