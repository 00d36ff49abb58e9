-- The region's autoscaler reports each decision as the node pool's
-- `Autoscaled` condition; a new one is a cluster event ('autoscaled'),
-- beside the nodes joining and leaving it makes. Replaces the function and
-- the node-pool trigger, which now also runs when that condition's message
-- changes (not on every report: each carries new transition times).
CREATE OR REPLACE FUNCTION cluster_event_of_phase() RETURNS trigger AS $$
DECLARE
    -- (a cluster row has no cluster_id: it is its own)
    cluster uuid := COALESCE((to_jsonb(NEW)->>'cluster_id')::uuid, NEW.id);
    resource text := CASE TG_TABLE_NAME WHEN 'clusters' THEN 'cluster' ELSE 'node_pool' END;
    node record;
    scaled text;
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
        scaled := jsonb_path_query_first(NEW.status, '$.conditions[*] ? (@.type == "Autoscaled").message') #>> '{}';
        IF scaled IS NOT NULL AND scaled IS DISTINCT FROM
               (jsonb_path_query_first(OLD.status, '$.conditions[*] ? (@.type == "Autoscaled").message') #>> '{}') THEN
            INSERT INTO cluster_events (cluster_id, kind, resource_type, resource_id, resource_name, message)
            VALUES (cluster, 'autoscaled', 'node_pool', NEW.id, NEW.name, 'autoscaler ' || left(scaled, 256));
        END IF;
    END IF;
    RETURN NULL;
EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'cluster event of % % not recorded: %', TG_TABLE_NAME, NEW.id, SQLERRM;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE TRIGGER node_pools_events AFTER UPDATE OF status ON node_pools
    FOR EACH ROW WHEN ((OLD.status->>'phase') IS DISTINCT FROM (NEW.status->>'phase')
                       OR (OLD.status->'nodes') IS DISTINCT FROM (NEW.status->'nodes')
                       OR jsonb_path_query_first(OLD.status, '$.conditions[*] ? (@.type == "Autoscaled").message')
                          IS DISTINCT FROM
                          jsonb_path_query_first(NEW.status, '$.conditions[*] ? (@.type == "Autoscaled").message'))
    EXECUTE FUNCTION cluster_event_of_phase();
