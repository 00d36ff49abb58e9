-- Security hardening: SSO identities keyed by issuer and subject, verified
-- domains, sessions bound to the identity provider that made them,
-- per-principal revocation of cluster credentials, organization credential
-- policies, replay protection for unsigned-timestamp deliveries, audit
-- events that name the credential, idempotency keys per organization, and
-- quotas for what tenants create. Expand only: nothing running code reads
-- is removed or renamed.

-- An identity at an organization's identity provider, linked to a Moke
-- account. The link is made on first sign-in for addresses in a domain the
-- organization verified, or after the person proves control of an existing
-- account; never by matching an e-mail address alone.
CREATE TABLE sso_identities (
    org_id        uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    issuer        text NOT NULL,
    subject       text NOT NULL,
    user_id       uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    -- The address the provider asserted when the link was made.
    email         text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_login_at timestamptz,
    PRIMARY KEY (org_id, issuer, subject)
);
CREATE INDEX sso_identities_user_idx ON sso_identities (user_id);

-- An SSO sign-in that matched an existing account: it links only once the
-- account's owner confirms (signed in, or through the link mailed to the
-- account's verified address). Single use, short-lived.
CREATE TABLE sso_link_requests (
    -- Handed to the browser that finished the sign-in: confirmed by the
    -- account's owner while signed in.
    token_hash   bytea PRIMARY KEY,
    -- Mailed to the account's verified address: confirmed by following it.
    mail_token_hash bytea NOT NULL UNIQUE,
    org_id       uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    issuer       text NOT NULL,
    subject      text NOT NULL,
    user_id      uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    email        text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz
);
CREATE INDEX sso_link_requests_user_idx ON sso_link_requests (user_id);

-- A login in flight is bound to the browser that started it (RFC 9700
-- §4.7): the hash of a random value kept in that browser's cookie.
ALTER TABLE sso_logins ADD COLUMN browser_binding_hash bytea;

-- Domains an organization claims. Verified by a DNS TXT record carrying the
-- token Moke issued; a domain is verified by at most one organization.
CREATE TABLE org_domains (
    id              uuid PRIMARY KEY,
    org_id          uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    domain          text NOT NULL,
    -- Published by the customer in DNS, so not a secret.
    challenge       text NOT NULL,
    verified_at     timestamptz,
    last_checked_at timestamptz,
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, domain)
);
CREATE UNIQUE INDEX org_domains_verified_idx ON org_domains (domain) WHERE verified_at IS NOT NULL;

-- How a session began: 'password', or 'sso' at sso_org_id's identity
-- provider (such a session acts in that organization only).
ALTER TABLE sessions
    ADD COLUMN method       text NOT NULL DEFAULT 'password',
    ADD COLUMN sso_org_id   uuid REFERENCES organizations(id) ON DELETE CASCADE,
    ADD COLUMN last_used_at timestamptz,
    ADD COLUMN last_ip      text;
-- Sessions made by SSO sign-ins before identities were keyed by issuer and
-- subject may belong to an account an identity provider was wrongly matched
-- to by address: end them (their audit events name them).
UPDATE sessions SET revoked_at = now(), revoked_reason = 'sso_relink_required'
    WHERE revoked_at IS NULL AND id IN (
        SELECT substr(resource_id, 5)::uuid FROM audit_events
        WHERE action = 'auth.sso_login' AND outcome = 'success' AND resource_id ~ '^ses_[0-9a-f]{32}$');

-- How a personal token's creator signed in ('password', 'sso',
-- 'api_token', 'token_exchange'): organizations that require SSO accept
-- only personal tokens made from an SSO session.
ALTER TABLE api_tokens ADD COLUMN issued_via text;

-- Cluster client certificates name their principal and the principal's
-- credential epoch in the organization; bumping the epoch (removal,
-- demotion, deletion, token revocation) makes every hosted cluster of the
-- organization refuse the older certificates.
CREATE TABLE principal_credential_epochs (
    org_id       uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    principal_id uuid NOT NULL,
    epoch        bigint NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, principal_id)
);

-- What an organization demands of its members' credentials.
CREATE TABLE org_credential_policies (
    org_id                     uuid PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
    -- The longest lifetime a new API token may have; NULL for no limit.
    max_token_lifetime_seconds bigint,
    -- Members other than owners act here only through the organization's SSO.
    require_sso                boolean NOT NULL DEFAULT false,
    -- Members act here only with a verified e-mail address.
    require_verified_email     boolean NOT NULL DEFAULT false,
    version                    bigint NOT NULL DEFAULT 1,
    updated_at                 timestamptz NOT NULL DEFAULT now()
);

-- A trust policy made by an expiring credential ends with it.
ALTER TABLE trust_policies
    ADD COLUMN expires_at timestamptz,
    ADD COLUMN created_by uuid;

-- GitHub's signature does not cover its delivery id: a body accepted once
-- is refused when it comes again under another id.
ALTER TABLE hook_deliveries ADD COLUMN body_digest bytea;
CREATE UNIQUE INDEX hook_deliveries_body_idx ON hook_deliveries (hook_id, body_digest)
    WHERE body_digest IS NOT NULL;

-- Audit events name the credential and how the caller signed in; events
-- about one account (failed sign-ins, resets) name it even without an
-- organization, so the account can read them.
ALTER TABLE audit_events
    ADD COLUMN credential_id     text,
    ADD COLUMN credential_method text,
    ADD COLUMN subject_user_id   uuid;
CREATE INDEX audit_events_subject_idx ON audit_events (subject_user_id, id) WHERE subject_user_id IS NOT NULL;
CREATE INDEX audit_events_org_time_idx ON audit_events (org_id, occurred_at);

-- Operations name their project (NULL for organization-wide work), so a
-- credential limited to a project sees only that project's operations.
ALTER TABLE operations ADD COLUMN project_id uuid;
UPDATE operations o SET project_id = c.project_id
    FROM clusters c WHERE o.target_type = 'cluster' AND c.id = o.target_id;
UPDATE operations o SET project_id = c.project_id
    FROM node_pools n JOIN clusters c ON c.id = n.cluster_id
    WHERE o.target_type = 'node_pool' AND n.id = o.target_id;
UPDATE operations o SET project_id = c.project_id
    FROM deployments d JOIN clusters c ON c.id = d.cluster_id
    WHERE o.target_type = 'deployment' AND d.id = o.target_id;

-- Idempotency keys belong to an organization and a principal: a person in
-- two organizations may use one key in both. A new table rather than a new
-- primary key on the old one (a rolling deploy keeps the old one working);
-- the old table is dropped in a later release.
CREATE TABLE idempotency_records (
    org_id          uuid NOT NULL,
    principal_id    uuid NOT NULL,
    key             text NOT NULL,
    request_hash    bytea NOT NULL,
    claim_id        uuid NOT NULL,
    response_status integer,
    response_body   jsonb,
    locked_until    timestamptz NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, principal_id, key)
);
CREATE INDEX idempotency_records_created_idx ON idempotency_records (created_at);

-- Mail holds sign-in links and tokens: the body is Vault transit ciphertext
-- until the message is sent, and nothing of it is kept afterwards.
ALTER TABLE mail_outbox
    ALTER COLUMN text_body DROP NOT NULL,
    ADD COLUMN text_body_enc text,
    ADD COLUMN org_id uuid;
CREATE INDEX mail_outbox_org_idx ON mail_outbox (org_id, created_at) WHERE org_id IS NOT NULL;
-- Messages already sent keep no body.
UPDATE mail_outbox SET text_body = NULL WHERE sent_at IS NOT NULL;

-- Sign-up asks for the address first: the account exists once its owner
-- follows the mailed link, so sign-up never tells whether an address has an
-- account.
CREATE TABLE signup_requests (
    token_hash        bytea PRIMARY KEY,
    email             text NOT NULL,
    display_name      text NOT NULL,
    password_hash     text NOT NULL,
    organization_name text NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    expires_at        timestamptz NOT NULL,
    used_at           timestamptz
);

-- Per-organization limits on what tenants create (NULL: the configured default).
ALTER TABLE org_quotas
    ADD COLUMN max_webhook_endpoints          bigint,
    ADD COLUMN max_pending_invitations        bigint,
    ADD COLUMN max_service_accounts           bigint,
    ADD COLUMN max_api_tokens                 bigint,
    ADD COLUMN max_trust_policies             bigint,
    ADD COLUMN max_deploy_hooks               bigint,
    ADD COLUMN max_namespaces_per_cluster     bigint,
    ADD COLUMN max_invitations_per_hour       bigint;

-- A policy change drops every cached principal of the organization in
-- every gateway (the cache evicts by principal, credential or organization id).
CREATE FUNCTION notify_org_policy_change() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('moke_principals', COALESCE(NEW.org_id, OLD.org_id)::text);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER org_credential_policies_notify AFTER INSERT OR UPDATE OR DELETE ON org_credential_policies
    FOR EACH ROW EXECUTE FUNCTION notify_org_policy_change();
