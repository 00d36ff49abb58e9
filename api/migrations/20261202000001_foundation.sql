-- Foundation schema: tenants, desired/observed resources, operations, outbox,
-- audit log, API tokens, idempotency records. See README.md in this folder
-- for the rules every migration follows.

CREATE TABLE organizations (
    id           uuid PRIMARY KEY,
    name         text NOT NULL UNIQUE,
    display_name text NOT NULL,
    labels       jsonb NOT NULL DEFAULT '{}'::jsonb,
    version      bigint NOT NULL DEFAULT 1,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- Per-organization quota overrides; NULL means "the configured default".
CREATE TABLE org_quotas (
    org_id                     uuid PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
    max_clusters               bigint,
    max_node_pools_per_cluster bigint,
    max_nodes                  bigint,
    max_vcpus                  bigint,
    updated_at                 timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_tokens (
    id           uuid PRIMARY KEY,
    org_id       uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name         text NOT NULL,
    role         text NOT NULL,
    -- SHA-256 of the whole token text; the token itself is never stored.
    token_hash   bytea NOT NULL UNIQUE,
    -- First characters of the token, to let people recognise it in lists.
    token_hint   text NOT NULL,
    created_by   uuid,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz,
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_tokens_org_idx ON api_tokens (org_id, id);

CREATE TABLE projects (
    id          uuid PRIMARY KEY,
    org_id      uuid NOT NULL REFERENCES organizations(id),
    name        text NOT NULL,
    labels      jsonb NOT NULL DEFAULT '{}'::jsonb,
    spec        jsonb NOT NULL,
    generation  bigint NOT NULL DEFAULT 1,
    version     bigint NOT NULL DEFAULT 1,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, name)
);
CREATE INDEX projects_org_idx ON projects (org_id, id);

CREATE TABLE clusters (
    id                    uuid PRIMARY KEY,
    org_id                uuid NOT NULL REFERENCES organizations(id),
    project_id            uuid NOT NULL REFERENCES projects(id),
    name                  text NOT NULL,
    region                text NOT NULL,
    labels                jsonb NOT NULL DEFAULT '{}'::jsonb,
    spec                  jsonb NOT NULL,
    generation            bigint NOT NULL DEFAULT 1,
    version               bigint NOT NULL DEFAULT 1,
    status                jsonb NOT NULL,
    observed_generation   bigint NOT NULL DEFAULT 0,
    observed_at           timestamptz,
    deletion_requested_at timestamptz,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, name)
);
CREATE INDEX clusters_project_idx ON clusters (project_id, id);
CREATE INDEX clusters_org_idx ON clusters (org_id);

CREATE TABLE node_pools (
    id                    uuid PRIMARY KEY,
    org_id                uuid NOT NULL REFERENCES organizations(id),
    cluster_id            uuid NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
    name                  text NOT NULL,
    labels                jsonb NOT NULL DEFAULT '{}'::jsonb,
    spec                  jsonb NOT NULL,
    -- Quota accounting, kept beside the spec so sums need no JSON parsing.
    reserved_nodes        bigint NOT NULL,
    reserved_vcpus        bigint NOT NULL,
    generation            bigint NOT NULL DEFAULT 1,
    version               bigint NOT NULL DEFAULT 1,
    status                jsonb NOT NULL,
    observed_generation   bigint NOT NULL DEFAULT 0,
    observed_at           timestamptz,
    deletion_requested_at timestamptz,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    UNIQUE (cluster_id, name)
);
CREATE INDEX node_pools_cluster_idx ON node_pools (cluster_id, id);
CREATE INDEX node_pools_org_idx ON node_pools (org_id);

CREATE TABLE operations (
    id                uuid PRIMARY KEY,
    org_id            uuid NOT NULL REFERENCES organizations(id),
    kind              text NOT NULL,
    status            text NOT NULL,
    step              text NOT NULL,
    progress          integer NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
    error             jsonb,
    target_type       text NOT NULL,
    target_id         uuid NOT NULL,
    target_name       text NOT NULL,
    target_generation bigint NOT NULL,
    created_by        uuid NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    finished_at       timestamptz
);
CREATE INDEX operations_org_idx ON operations (org_id, id);
CREATE INDEX operations_target_idx ON operations (target_id, id);

-- Work for regions, written in the same transaction as the desired state.
CREATE TABLE outbox (
    id            bigserial PRIMARY KEY,
    region        text NOT NULL,
    kind          text NOT NULL,
    operation_id  uuid REFERENCES operations(id),
    resource_id   uuid NOT NULL,
    generation    bigint NOT NULL,
    payload       jsonb NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    attempts      integer NOT NULL DEFAULT 0,
    available_at  timestamptz NOT NULL DEFAULT now(),
    last_error    text,
    delivered_at  timestamptz
);
CREATE INDEX outbox_pending_idx ON outbox (available_at, id) WHERE delivered_at IS NULL;

CREATE TABLE audit_events (
    id             uuid PRIMARY KEY,
    org_id         uuid NOT NULL REFERENCES organizations(id),
    occurred_at    timestamptz NOT NULL DEFAULT now(),
    action         text NOT NULL,
    outcome        text NOT NULL,
    principal_id   uuid,
    principal_kind text NOT NULL,
    resource_type  text NOT NULL,
    resource_id    text,
    request_id     text,
    source_ip      text,
    user_agent     text,
    details        jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX audit_events_org_idx ON audit_events (org_id, id);

-- Idempotency-Key records: one per (principal, key), kept 24 hours.
CREATE TABLE idempotency_keys (
    principal_id    uuid NOT NULL,
    key             text NOT NULL,
    request_hash    bytea NOT NULL,
    -- Which attempt holds the key; the mutation completes it only if it still does.
    claim_id        uuid NOT NULL,
    -- While NULL the original request is still in flight (or died; see locked_until).
    response_status integer,
    response_body   jsonb,
    locked_until    timestamptz NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (principal_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- Wakes operation long-polls in every gateway process.
CREATE FUNCTION notify_operation_change() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('moke_operations', NEW.id::text);
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER operations_notify AFTER UPDATE ON operations
    FOR EACH ROW EXECUTE FUNCTION notify_operation_change();

-- Wakes the outbox relay.
CREATE FUNCTION notify_outbox_insert() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('moke_outbox', NEW.region);
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER outbox_notify AFTER INSERT ON outbox
    FOR EACH ROW EXECUTE FUNCTION notify_outbox_insert();
