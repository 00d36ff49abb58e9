-- Migration 020 attributed accounts to the identity provider that made
-- them by an identity linked within a minute of the account; a person who
-- signed up with a password and linked SSO that quickly was caught too. An
-- account an identity provider made gets its identity in the same
-- transaction, at the same instant: keep only those.
UPDATE users u SET made_through_sso_org = NULL, made_through_sso_issuer = NULL
WHERE u.made_through_sso_org IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM sso_identities i
                  WHERE i.user_id = u.id AND i.org_id = u.made_through_sso_org
                    AND i.issuer = u.made_through_sso_issuer AND i.created_at = u.created_at);
