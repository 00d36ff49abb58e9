-- Inbound CI/CD deploy webhooks and the per-project policy they obey.

-- Which registries a project's webhooks may deploy from (prefix match), and
-- which branches count for branch-based events.
CREATE TABLE project_deploy_policies (
    project_id             uuid PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
    org_id                 uuid NOT NULL REFERENCES organizations(id),
    allowed_image_prefixes text[] NOT NULL DEFAULT '{}',
    allowed_branches       text[] NOT NULL DEFAULT '{main}',
    updated_at             timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE deploy_hooks (
    id             uuid PRIMARY KEY,
    org_id         uuid NOT NULL REFERENCES organizations(id),
    project_id     uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name           text NOT NULL,
    -- A hook for one deployment, or rules mapping repository/image to deployments.
    deployment_id  uuid REFERENCES deployments(id) ON DELETE CASCADE,
    rules          jsonb NOT NULL DEFAULT '[]',
    -- For events that carry a commit or tag but no image, e.g. "registry.example.com/web:{sha}".
    image_template text,
    -- Vault transit ciphertext of the signing secret (see app/secrets.rs).
    secret_enc     text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    last_delivery_at timestamptz,
    UNIQUE (project_id, name)
);
CREATE INDEX deploy_hooks_deployment_idx ON deploy_hooks (deployment_id);

-- Deliveries seen, per hook: a replayed delivery id is refused.
CREATE TABLE hook_deliveries (
    hook_id      uuid NOT NULL REFERENCES deploy_hooks(id) ON DELETE CASCADE,
    delivery_id  text NOT NULL,
    provider     text NOT NULL,
    event        text NOT NULL,
    outcome      text NOT NULL,
    operation_id uuid REFERENCES operations(id),
    received_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (hook_id, delivery_id)
);
