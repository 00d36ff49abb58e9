-- Namespaces, Deployments and their revisions in hosted clusters.

CREATE TABLE namespaces (
    cluster_id uuid NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
    org_id     uuid NOT NULL REFERENCES organizations(id),
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (cluster_id, name)
);

-- Every cluster has `default`, from its first moment.
INSERT INTO namespaces (cluster_id, org_id, name) SELECT id, org_id, 'default' FROM clusters;
CREATE FUNCTION cluster_default_namespace() RETURNS trigger AS $$
BEGIN
    INSERT INTO namespaces (cluster_id, org_id, name) VALUES (NEW.id, NEW.org_id, 'default');
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER clusters_default_namespace AFTER INSERT ON clusters
    FOR EACH ROW EXECUTE FUNCTION cluster_default_namespace();

CREATE TABLE deployments (
    id                    uuid PRIMARY KEY,
    org_id                uuid NOT NULL REFERENCES organizations(id),
    project_id            uuid NOT NULL REFERENCES projects(id),
    cluster_id            uuid NOT NULL,
    namespace             text NOT NULL,
    name                  text NOT NULL,
    labels                jsonb NOT NULL DEFAULT '{}',
    -- The portable spec (model::DeploymentSpec), however it was written.
    spec                  jsonb NOT NULL,
    generation            bigint NOT NULL DEFAULT 1,
    version               bigint NOT NULL DEFAULT 1,
    -- Newest revision; the one whose pod template runs; the last fully rolled out.
    revision              bigint NOT NULL DEFAULT 1,
    template_revision     bigint NOT NULL DEFAULT 1,
    last_good_revision    bigint,
    -- replicas × CPU request, for the per-cluster quota.
    requested_cpu_millis  bigint NOT NULL,
    -- The operation of the change rolling out now, watched for its progress deadline.
    rollout_operation_id  uuid REFERENCES operations(id),
    last_error            jsonb,
    status                jsonb NOT NULL DEFAULT '{"phase": "pending"}',
    observed_generation   bigint NOT NULL DEFAULT 0,
    observed_at           timestamptz,
    deletion_requested_at timestamptz,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (cluster_id, namespace) REFERENCES namespaces (cluster_id, name) ON DELETE CASCADE,
    UNIQUE (cluster_id, namespace, name)
);
CREATE INDEX deployments_org_idx ON deployments (org_id);
CREATE INDEX deployments_rolling_idx ON deployments (rollout_operation_id) WHERE rollout_operation_id IS NOT NULL;

-- History: one row per change, never updated.
CREATE TABLE deployment_revisions (
    deployment_id uuid NOT NULL REFERENCES deployments(id) ON DELETE CASCADE,
    revision      bigint NOT NULL,
    spec          jsonb NOT NULL,
    cause         text NOT NULL,
    created_by    text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (deployment_id, revision)
);
CREATE FUNCTION deployment_revisions_immutable() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'deployment revisions are immutable';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER deployment_revisions_no_update BEFORE UPDATE ON deployment_revisions
    FOR EACH ROW EXECUTE FUNCTION deployment_revisions_immutable();
