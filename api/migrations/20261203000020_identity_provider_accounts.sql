-- Accounts an identity provider made (first signed in through it, with an
-- address only that provider vouched for): when the provider goes with an
-- evicted maker, so does the word it gave for those addresses.
ALTER TABLE users
    ADD COLUMN made_through_sso_org    uuid,
    ADD COLUMN made_through_sso_issuer text;
CREATE INDEX users_made_through_sso_idx ON users (made_through_sso_org, made_through_sso_issuer)
    WHERE made_through_sso_org IS NOT NULL;
-- Accounts made before the columns existed: the identity linked within a
-- minute of the account's creation made it.
UPDATE users u SET made_through_sso_org = i.org_id, made_through_sso_issuer = i.issuer
FROM (SELECT DISTINCT ON (user_id) user_id, org_id, issuer, created_at
      FROM sso_identities ORDER BY user_id, created_at) i
WHERE i.user_id = u.id AND i.created_at >= u.created_at AND i.created_at < u.created_at + interval '1 minute';

-- A link request confirms only while the provider settings that asked for
-- it are unchanged (not merely while the same issuer is configured).
ALTER TABLE sso_link_requests ADD COLUMN provider_version bigint;

-- Who received the secret a hook's last rotation kept valid for a while,
-- for rotations before migration 019 recorded it: the actor of the event
-- before the latest one that issued the hook a secret.
CREATE OR REPLACE FUNCTION pg_temp.id_of(text) RETURNS uuid AS $$
    SELECT substring($1 from '_([0-9a-f]{32})$')::uuid
$$ LANGUAGE sql IMMUTABLE;
UPDATE deploy_hooks h SET previous_secret_issued_to = e.principal_id
FROM (SELECT id, principal_id FROM (
          SELECT pg_temp.id_of(resource_id) AS id, principal_id,
                 row_number() OVER (PARTITION BY pg_temp.id_of(resource_id) ORDER BY occurred_at DESC) AS n
          FROM audit_events
          WHERE action IN ('deploy_hook.create', 'deploy_hook.rotate_secret') AND outcome = 'success'
            AND principal_id IS NOT NULL) ranked
      WHERE n = 2) e
WHERE h.previous_secret_enc IS NOT NULL AND h.previous_secret_issued_to IS NULL AND h.id = e.id;
