-- Deployments made through a hosted cluster's own API (kubectl), as its
-- region last reported them in the cluster's observation: Moke lists them
-- as unmanaged and never changes them. A report replaces the cluster's
-- whole list; a row's id (UUID v7, given when first reported) orders it.
CREATE TABLE unmanaged_deployments (
    id uuid PRIMARY KEY,
    cluster_id uuid NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    namespace text NOT NULL,
    name text NOT NULL,
    image text NOT NULL,
    replicas bigint NOT NULL,
    current_replicas bigint NOT NULL,
    ready_replicas bigint NOT NULL,
    updated_replicas bigint NOT NULL,
    phase text NOT NULL,
    created_in_cluster_at timestamptz,
    observed_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (cluster_id, namespace, name)
);
CREATE INDEX unmanaged_deployments_by_cluster ON unmanaged_deployments (cluster_id, id);
