-- Services in hosted clusters. Their endpoints are not stored: they are the
-- observed pods of the namespace's deployments that the selector matches.
CREATE TABLE services (
    id          uuid PRIMARY KEY,
    org_id      uuid NOT NULL REFERENCES organizations(id),
    project_id  uuid NOT NULL REFERENCES projects(id),
    cluster_id  uuid NOT NULL,
    namespace   text NOT NULL,
    name        text NOT NULL,
    labels      jsonb NOT NULL DEFAULT '{}',
    -- model::ServiceSpec, with node ports allocated.
    spec        jsonb NOT NULL,
    -- The cluster IP's host number within the service network (10.96.0.0/12).
    ip_index    integer NOT NULL,
    version     bigint NOT NULL DEFAULT 1,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (cluster_id, namespace) REFERENCES namespaces (cluster_id, name) ON DELETE CASCADE,
    UNIQUE (cluster_id, namespace, name),
    UNIQUE (cluster_id, ip_index)
);
CREATE INDEX services_org_idx ON services (org_id);
