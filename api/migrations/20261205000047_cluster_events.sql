-- What happened to a cluster, newest last (GET …/clusters/{c}/events): the
-- steps of the operations on it, its node pools and its deployments, its
-- phase changing, and nodes joining, leaving, failing and recovering, as
-- region observations and operation progress are recorded. Written by the
-- triggers below, in the transaction that records the change, so no writer
-- can forget one; gone with the cluster.
CREATE TABLE cluster_events (
    cluster_id uuid NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    kind text NOT NULL,
    resource_type text NOT NULL,
    resource_id uuid NOT NULL,
    resource_name text NOT NULL,
    message text NOT NULL,
    operation_id uuid,
    PRIMARY KEY (cluster_id, seq)
);
-- `?since=`: a time bound that finds its first row without walking the history.
CREATE INDEX cluster_events_at_idx ON cluster_events (cluster_id, at);

CREATE FUNCTION cluster_event_of_step() RETURNS trigger AS $$
BEGIN
    INSERT INTO cluster_events (cluster_id, kind, resource_type, resource_id, resource_name, message, operation_id)
    SELECT o.cluster_id, 'operation_step', o.target_type, o.target_id, o.target_name,
           o.kind || ' ' || NEW.status || ': ' || NEW.step, o.id
    FROM operations o JOIN clusters c ON c.id = o.cluster_id
    WHERE o.id = NEW.operation_id;
    RETURN NULL;
-- An event lost is history missing; a failure here would stop the region's ingest.
EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'cluster event of operation step not recorded: %', SQLERRM;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER operation_steps_cluster_events AFTER INSERT ON operation_steps
    FOR EACH ROW EXECUTE FUNCTION cluster_event_of_step();

CREATE FUNCTION cluster_event_of_phase() RETURNS trigger AS $$
DECLARE
    -- (a cluster row has no cluster_id: it is its own)
    cluster uuid := COALESCE((to_jsonb(NEW)->>'cluster_id')::uuid, NEW.id);
    resource text := CASE TG_TABLE_NAME WHEN 'clusters' THEN 'cluster' ELSE 'node_pool' END;
    node record;
BEGIN
    IF (OLD.status->>'phase') IS DISTINCT FROM (NEW.status->>'phase') THEN
        INSERT INTO cluster_events (cluster_id, kind, resource_type, resource_id, resource_name, message)
        VALUES (cluster, 'phase_changed', resource, NEW.id, NEW.name,
                'phase ' || COALESCE(OLD.status->>'phase', 'pending') || ' -> ' || COALESCE(NEW.status->>'phase', 'pending'));
    END IF;
    IF TG_TABLE_NAME = 'node_pools' THEN
        -- Nodes by name, before and after: joined, left, and readiness changes.
        FOR node IN
            SELECT COALESCE(n.name, o.name) AS name, o.name IS NULL AS joined, n.name IS NULL AS left_pool,
                   COALESCE((o.ready)::boolean, true) AS was_ready, COALESCE((n.ready)::boolean, true) AS is_ready
            FROM (SELECT e->>'name' AS name, e->>'ready' AS ready
                  FROM jsonb_array_elements(COALESCE(NEW.status->'nodes', '[]')) e) n
            FULL JOIN (SELECT e->>'name' AS name, e->>'ready' AS ready
                       FROM jsonb_array_elements(COALESCE(OLD.status->'nodes', '[]')) e) o ON o.name = n.name
            ORDER BY 1
        LOOP
            IF node.joined OR node.left_pool OR node.was_ready <> node.is_ready THEN
                INSERT INTO cluster_events (cluster_id, kind, resource_type, resource_id, resource_name, message)
                VALUES (cluster,
                        CASE WHEN node.joined THEN 'node_joined' WHEN node.left_pool THEN 'node_left'
                             WHEN node.is_ready THEN 'node_ready' ELSE 'node_not_ready' END,
                        'node_pool', NEW.id, NEW.name,
                        'node ' || node.name || CASE WHEN node.joined THEN ' joined' WHEN node.left_pool THEN ' left'
                                                     WHEN node.is_ready THEN ' is ready again' ELSE ' is not ready' END);
            END IF;
        END LOOP;
    END IF;
    RETURN NULL;
EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'cluster event of % % not recorded: %', TG_TABLE_NAME, NEW.id, SQLERRM;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

-- Only observations that change the phase or the nodes run it.
CREATE TRIGGER clusters_events AFTER UPDATE OF status ON clusters
    FOR EACH ROW WHEN ((OLD.status->>'phase') IS DISTINCT FROM (NEW.status->>'phase'))
    EXECUTE FUNCTION cluster_event_of_phase();
CREATE TRIGGER node_pools_events AFTER UPDATE OF status ON node_pools
    FOR EACH ROW WHEN ((OLD.status->>'phase') IS DISTINCT FROM (NEW.status->>'phase')
                       OR (OLD.status->'nodes') IS DISTINCT FROM (NEW.status->'nodes'))
    EXECUTE FUNCTION cluster_event_of_phase();
