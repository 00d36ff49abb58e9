-- What clusters used, as regions report it, for billing. Each sample once.
CREATE TABLE usage_samples (
    id              text PRIMARY KEY,
    org_id          uuid NOT NULL REFERENCES organizations(id),
    cluster_id      uuid NOT NULL,
    region          text NOT NULL,
    period_start    timestamptz NOT NULL,
    period_end      timestamptz NOT NULL,
    cluster_seconds double precision NOT NULL,
    -- Ready worker-node seconds by machine type.
    node_seconds    jsonb NOT NULL,
    received_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usage_samples_org_period_idx ON usage_samples (org_id, period_end);
