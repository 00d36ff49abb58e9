-- Automatic upgrades (release channels, versions past their end of life):
-- one row per cluster and version the owners were told of, written before
-- the upgrade may start, so each notice goes out once and the notice
-- period is counted from when it did. `operation_id` is the upgrade it
-- started (set once; a failed one is not retried on its own), and
-- `finish_told_at` when the owners were told how it ended.
CREATE TABLE cluster_upgrade_notices (
    cluster_id uuid NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    kubernetes_version text NOT NULL,
    reason text NOT NULL CHECK (reason IN ('release_channel', 'end_of_life')),
    noticed_at timestamptz NOT NULL,
    operation_id uuid REFERENCES operations (id) ON DELETE SET NULL,
    finish_told_at timestamptz,
    PRIMARY KEY (cluster_id, kubernetes_version)
);

-- Upgrades whose end the owners have not been told of yet.
CREATE INDEX cluster_upgrade_notices_untold_idx ON cluster_upgrade_notices (operation_id)
    WHERE operation_id IS NOT NULL AND finish_told_at IS NULL;

-- Every upgrade's end is also a cluster.upgrade_finished event (manual or
-- automatic), beside cluster.upgrade.succeeded|failed. Replaces the
-- function only; the trigger stays.
CREATE OR REPLACE FUNCTION operation_events() RETURNS trigger AS $$
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
    IF NEW.kind = 'cluster_upgrade' THEN
        PERFORM emit_event(NEW.org_id, 'cluster.upgrade_finished', body);
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
