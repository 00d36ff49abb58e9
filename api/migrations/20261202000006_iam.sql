-- IAM: people, memberships, project roles, service accounts, typed API
-- tokens, login sessions with rotating refresh tokens, e-mail tokens,
-- invitations, single sign-on and CI workload identity.

CREATE TABLE users (
    id                uuid PRIMARY KEY,
    -- Normalized: trimmed and lower-cased; unique.
    email             text NOT NULL UNIQUE,
    display_name      text NOT NULL,
    -- argon2id PHC string; NULL for people who only sign in through SSO.
    password_hash     text,
    email_verified_at timestamptz,
    version           bigint NOT NULL DEFAULT 1,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
    org_id     uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    user_id    uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);

CREATE TABLE service_accounts (
    id          uuid PRIMARY KEY,
    org_id      uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name        text NOT NULL,
    description text NOT NULL DEFAULT '',
    role        text NOT NULL,
    created_by  uuid,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, name)
);

-- Project roles of users and service accounts (principal_id is either).
CREATE TABLE project_members (
    project_id   uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    org_id       uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    principal_id uuid NOT NULL,
    role         text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, principal_id)
);
CREATE INDEX project_members_principal_idx ON project_members (principal_id, org_id);

-- Typed tokens: 'sat' (service account), 'pat' (personal), 'legacy' (the
-- foundation's `moke_` tokens, hashed without pepper).
ALTER TABLE api_tokens
    ADD COLUMN kind               text NOT NULL DEFAULT 'legacy',
    ADD COLUMN service_account_id uuid REFERENCES service_accounts(id) ON DELETE CASCADE,
    ADD COLUMN user_id            uuid REFERENCES users(id) ON DELETE CASCADE,
    ADD COLUMN project_id         uuid REFERENCES projects(id) ON DELETE CASCADE,
    -- Allowed actions; NULL means everything the owner's roles allow.
    ADD COLUMN scopes             text[];
CREATE INDEX api_tokens_service_account_idx ON api_tokens (service_account_id);
CREATE INDEX api_tokens_user_idx ON api_tokens (user_id);

-- Every foundation token becomes a service account token: one service
-- account per token, with the token's role and id.
INSERT INTO service_accounts (id, org_id, name, description, role, created_by, created_at)
SELECT id, org_id, left(name, 80) || '-' || left(replace(id::text, '-', ''), 8),
       'Created for an API token made before service accounts existed', role, created_by, created_at
FROM api_tokens WHERE kind = 'legacy' AND service_account_id IS NULL;
UPDATE api_tokens SET service_account_id = id WHERE kind = 'legacy' AND service_account_id IS NULL;

-- Platform-wide security events (a failed login for an unknown address)
-- belong to no organization.
ALTER TABLE audit_events ALTER COLUMN org_id DROP NOT NULL;

-- A login session: one family of rotating refresh tokens.
CREATE TABLE sessions (
    id             uuid PRIMARY KEY,
    user_id        uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    org_id         uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL,
    revoked_at     timestamptz,
    revoked_reason text,
    source_ip      text,
    user_agent     text
);
CREATE INDEX sessions_user_idx ON sessions (user_id);

CREATE TABLE refresh_tokens (
    token_hash bytea PRIMARY KEY,
    session_id uuid NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- Set when exchanged for a new pair; a second use revokes the session.
    used_at    timestamptz
);
CREATE INDEX refresh_tokens_session_idx ON refresh_tokens (session_id);

-- Single-use links sent by e-mail: address verification, password reset.
CREATE TABLE email_tokens (
    token_hash bytea PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    purpose    text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX email_tokens_user_idx ON email_tokens (user_id, purpose);

CREATE TABLE invitations (
    id          uuid PRIMARY KEY,
    org_id      uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    email       text NOT NULL,
    role        text NOT NULL,
    token_hash  bytea NOT NULL UNIQUE,
    invited_by  uuid,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    accepted_at timestamptz,
    accepted_by uuid,
    revoked_at  timestamptz
);
CREATE INDEX invitations_org_idx ON invitations (org_id, id);

-- Per-organization OpenID Connect single sign-on.
CREATE TABLE sso_providers (
    org_id            uuid PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
    issuer            text NOT NULL,
    client_id         text NOT NULL,
    -- Vault transit ciphertext (`vault:v1:…`); the secret itself is never stored.
    client_secret_enc text NOT NULL,
    allowed_domains   text[] NOT NULL,
    default_role      text NOT NULL,
    version           bigint NOT NULL DEFAULT 1,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);

-- An SSO login in flight: found by the hash of its `state`, used once.
CREATE TABLE sso_logins (
    state_hash    bytea PRIMARY KEY,
    org_id        uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    nonce         text NOT NULL,
    pkce_verifier text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    used_at       timestamptz
);

-- Which CI identities may act as a service account.
CREATE TABLE trust_policies (
    id                 uuid PRIMARY KEY,
    org_id             uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    service_account_id uuid NOT NULL REFERENCES service_accounts(id) ON DELETE CASCADE,
    issuer             text NOT NULL,
    audience           text NOT NULL,
    -- Required claim values (e.g. repository, ref, environment); all must match.
    claims             jsonb NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX trust_policies_sa_idx ON trust_policies (service_account_id);

-- ID tokens already exchanged, by issuer and `jti`, until they expire.
CREATE TABLE exchanged_tokens (
    issuer     text NOT NULL,
    jti        text NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (issuer, jti)
);

-- Role changes, memberships and sessions evict cached principals in every gateway.
CREATE FUNCTION notify_principal_change() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('moke_principals', COALESCE(NEW.user_id, OLD.user_id)::text);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER memberships_notify AFTER INSERT OR UPDATE OR DELETE ON memberships
    FOR EACH ROW EXECUTE FUNCTION notify_principal_change();
CREATE TRIGGER sessions_notify AFTER UPDATE OF revoked_at ON sessions
    FOR EACH ROW EXECUTE FUNCTION notify_principal_change();

CREATE FUNCTION notify_project_member_change() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('moke_principals', COALESCE(NEW.principal_id, OLD.principal_id)::text);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER project_members_notify AFTER INSERT OR UPDATE OR DELETE ON project_members
    FOR EACH ROW EXECUTE FUNCTION notify_project_member_change();

CREATE FUNCTION notify_service_account_change() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('moke_principals', COALESCE(NEW.id, OLD.id)::text);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER service_accounts_notify AFTER UPDATE OR DELETE ON service_accounts
    FOR EACH ROW EXECUTE FUNCTION notify_service_account_change();

-- Outgoing e-mail, written in the transaction that causes it and sent at
-- least once by the mail relay (a log-backed sender in dev).
CREATE TABLE mail_outbox (
    id           bigserial PRIMARY KEY,
    kind         text NOT NULL,
    to_address   text NOT NULL,
    from_address text NOT NULL,
    subject      text NOT NULL,
    text_body    text NOT NULL,
    -- Message-ID and other headers an SMTP sender needs.
    headers      jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at   timestamptz NOT NULL DEFAULT now(),
    attempts     integer NOT NULL DEFAULT 0,
    available_at timestamptz NOT NULL DEFAULT now(),
    last_error   text,
    sent_at      timestamptz
);
CREATE INDEX mail_outbox_pending_idx ON mail_outbox (available_at, id) WHERE sent_at IS NULL;

-- Failed password logins per address (known or not), for per-account backoff.
CREATE TABLE login_failures (
    email         text PRIMARY KEY,
    failures      integer NOT NULL,
    last_failed   timestamptz NOT NULL DEFAULT now(),
    blocked_until timestamptz
);
