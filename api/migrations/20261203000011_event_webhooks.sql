-- Customer event webhooks: events written in the transaction of the change
-- that caused them, fanned out to subscribed endpoints, delivered with retries.

CREATE TABLE webhook_endpoints (
    id              uuid PRIMARY KEY,
    org_id          uuid NOT NULL REFERENCES organizations(id),
    url             text NOT NULL,
    description     text NOT NULL DEFAULT '',
    -- Patterns such as 'cluster.*', 'deployment.rollout.*' or '*'.
    event_types     text[] NOT NULL,
    -- Vault transit ciphertext of the whsec_ signing secret (see app/secrets.rs).
    secret_enc      text NOT NULL,
    -- Set when a delivery first failed after the last success.
    failing_since   timestamptz,
    disabled_at     timestamptz,
    disabled_reason text,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_org_idx ON webhook_endpoints (org_id);

CREATE TABLE events (
    id         uuid PRIMARY KEY,
    org_id     uuid NOT NULL REFERENCES organizations(id),
    event_type text NOT NULL,
    payload    jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_org_idx ON events (org_id, id);

CREATE TABLE webhook_deliveries (
    id              uuid PRIMARY KEY,
    event_id        uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    endpoint_id     uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
    -- pending, succeeded or failed.
    status          text NOT NULL DEFAULT 'pending',
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    created_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, id);

CREATE TABLE webhook_attempts (
    delivery_id  uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    attempt      integer NOT NULL,
    attempted_at timestamptz NOT NULL DEFAULT now(),
    status_code  integer,
    error        text,
    latency_ms   integer NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
);

-- Writes an event and a delivery for every enabled endpoint subscribed to
-- it, then wakes the dispatchers: call inside the transaction of the change.
CREATE FUNCTION emit_event(org uuid, kind text, body jsonb) RETURNS uuid AS $$
DECLARE
    event_id uuid := gen_random_uuid();
BEGIN
    INSERT INTO events (id, org_id, event_type, payload) VALUES (event_id, org, kind, body);
    INSERT INTO webhook_deliveries (id, event_id, endpoint_id)
        SELECT gen_random_uuid(), event_id, e.id FROM webhook_endpoints e
        WHERE e.org_id = org AND e.disabled_at IS NULL
          AND EXISTS (SELECT 1 FROM unnest(e.event_types) AS pattern
                      WHERE kind LIKE replace(replace(pattern, '%', '\%'), '*', '%'));
    PERFORM pg_notify('moke_webhooks', '');
    RETURN event_id;
END;
$$ LANGUAGE plpgsql;

-- Every finished Operation is an event (operation.succeeded / .failed), and
-- so is what it did: cluster.create.succeeded, nodepool.update.failed,
-- deployment.rollout.succeeded, deployment.delete.succeeded, ...
CREATE FUNCTION operation_events() RETURNS trigger AS $$
DECLARE
    body jsonb;
    action text := regexp_replace(NEW.kind, '^[a-z]+_(pool_)?', '');
    resource text := CASE NEW.target_type WHEN 'node_pool' THEN 'nodepool' ELSE NEW.target_type END;
BEGIN
    IF NEW.status NOT IN ('succeeded', 'failed')
       OR (TG_OP = 'UPDATE' AND OLD.status = NEW.status) THEN
        RETURN NULL;
    END IF;
    body := jsonb_build_object('operation', jsonb_build_object(
        'id', 'op_' || replace(NEW.id::text, '-', ''),
        'kind', NEW.kind, 'status', NEW.status, 'error', NEW.error,
        'target', jsonb_build_object('type', NEW.target_type, 'name', NEW.target_name,
                                     'generation', NEW.target_generation)));
    PERFORM emit_event(NEW.org_id, 'operation.' || NEW.status, body);
    IF NEW.target_type = 'deployment' AND NEW.kind <> 'deployment_delete' THEN
        PERFORM emit_event(NEW.org_id, 'deployment.rollout.' || NEW.status, body);
    ELSIF NEW.target_type IN ('cluster', 'node_pool', 'deployment') THEN
        PERFORM emit_event(NEW.org_id, resource || '.' || action || '.' || NEW.status, body);
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER operations_events AFTER INSERT OR UPDATE OF status ON operations
    FOR EACH ROW EXECUTE FUNCTION operation_events();
