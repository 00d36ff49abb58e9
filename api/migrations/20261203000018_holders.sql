-- What a legacy account's maker could keep using after its address is
-- proven, made findable: exchanged CI tokens get a row each (revocable,
-- like API tokens and sessions); a deploy hook names who last received its
-- secret; SSO settings and verified domains name who set them. Rows made
-- before the creator columns existed are attributed from the audit log.

ALTER TABLE exchanged_tokens
    ADD COLUMN service_account_id uuid,
    ADD COLUMN issued_jti uuid,
    ADD COLUMN revoked_at timestamptz;
CREATE UNIQUE INDEX exchanged_tokens_issued_idx ON exchanged_tokens (issued_jti) WHERE issued_jti IS NOT NULL;
CREATE INDEX exchanged_tokens_account_idx ON exchanged_tokens (service_account_id) WHERE revoked_at IS NULL;

-- A revoked exchanged token evicts its service account from every gateway's cache.
CREATE FUNCTION notify_exchanged_token_change() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('moke_principals', NEW.service_account_id::text);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER exchanged_tokens_notify AFTER UPDATE OF revoked_at ON exchanged_tokens
    FOR EACH ROW WHEN (NEW.service_account_id IS NOT NULL) EXECUTE FUNCTION notify_exchanged_token_change();

ALTER TABLE deploy_hooks ADD COLUMN secret_issued_to uuid;
ALTER TABLE sso_providers ADD COLUMN updated_by uuid;
ALTER TABLE org_domains ADD COLUMN verified_by uuid;
CREATE INDEX deploy_hooks_secret_issued_to_idx ON deploy_hooks (secret_issued_to) WHERE secret_issued_to IS NOT NULL;

-- Attribution from the audit log: the actor of the event that made each
-- resource (for a hook's secret, the latest that issued it; for SSO
-- settings, the latest change; for a domain, the first proof). Prefixed ids (`dh_<32 hex>`) end in their uuid.
CREATE FUNCTION pg_temp.id_of(text) RETURNS uuid AS $$
    SELECT substring($1 from '_([0-9a-f]{32})$')::uuid
$$ LANGUAGE sql IMMUTABLE;

UPDATE deploy_hooks h SET created_by = e.principal_id
FROM (SELECT DISTINCT ON (pg_temp.id_of(resource_id)) pg_temp.id_of(resource_id) AS id, principal_id
      FROM audit_events WHERE action = 'deploy_hook.create' AND outcome = 'success' AND principal_id IS NOT NULL
      ORDER BY pg_temp.id_of(resource_id), occurred_at) e
WHERE h.created_by IS NULL AND h.id = e.id;

UPDATE deploy_hooks h SET secret_issued_to = e.principal_id
FROM (SELECT DISTINCT ON (pg_temp.id_of(resource_id)) pg_temp.id_of(resource_id) AS id, principal_id
      FROM audit_events
      WHERE action IN ('deploy_hook.create', 'deploy_hook.rotate_secret') AND outcome = 'success'
        AND principal_id IS NOT NULL
      ORDER BY pg_temp.id_of(resource_id), occurred_at DESC) e
WHERE h.id = e.id;
UPDATE deploy_hooks SET secret_issued_to = created_by WHERE secret_issued_to IS NULL;

UPDATE webhook_endpoints w SET created_by = e.principal_id
FROM (SELECT DISTINCT ON (pg_temp.id_of(resource_id)) pg_temp.id_of(resource_id) AS id, principal_id
      FROM audit_events WHERE action = 'webhook_endpoint.create' AND outcome = 'success' AND principal_id IS NOT NULL
      ORDER BY pg_temp.id_of(resource_id), occurred_at) e
WHERE w.created_by IS NULL AND w.id = e.id;

UPDATE trust_policies p SET created_by = e.principal_id
FROM (SELECT DISTINCT ON (pg_temp.id_of(details->>'policy')) pg_temp.id_of(details->>'policy') AS id, principal_id
      FROM audit_events WHERE action = 'trust_policy.create' AND outcome = 'success' AND principal_id IS NOT NULL
      ORDER BY pg_temp.id_of(details->>'policy'), occurred_at) e
WHERE p.created_by IS NULL AND p.id = e.id;

UPDATE sso_providers s SET updated_by = e.principal_id
FROM (SELECT DISTINCT ON (org_id) org_id, principal_id
      FROM audit_events WHERE action = 'sso.configure' AND outcome = 'success' AND principal_id IS NOT NULL
      ORDER BY org_id, occurred_at DESC) e
WHERE s.org_id = e.org_id;

UPDATE org_domains d SET verified_by = e.principal_id
FROM (SELECT DISTINCT ON (pg_temp.id_of(resource_id)) pg_temp.id_of(resource_id) AS id, principal_id
      FROM audit_events
      WHERE action = 'domain.verify' AND outcome = 'success' AND principal_id IS NOT NULL
        AND details->'problem' = 'null'::jsonb
      ORDER BY pg_temp.id_of(resource_id), occurred_at) e
WHERE d.verified_at IS NOT NULL AND d.id = e.id;
