-- Every generation of a cluster's and a node pool's desired spec, as it was
-- (GET …/revisions and the diff between two): "what changed before it broke".
-- A trigger writes one whenever the generation moves, in the transaction that
-- moves it, so no writer (nor a gateway of the previous release) can forget
-- one; the gateway then names the Operation and principal that made it
-- (`operation_id`, `created_by`; NULL for revisions older than this table or
-- written by a gateway of the previous release). The newest 100 of a resource
-- are kept; gone with the cluster, a node pool's with the pool. Revisions
-- keep specs in their stored shape: a migration that rewrites the stored
-- shape of `clusters.spec` or `node_pools.spec` rewrites these too.
CREATE TABLE spec_revisions (
    resource_id   uuid NOT NULL,
    generation    bigint NOT NULL,
    cluster_id    uuid NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    resource_type text NOT NULL CHECK (resource_type IN ('cluster', 'node_pool')),
    spec          jsonb NOT NULL,
    operation_id  uuid,
    -- The principal's prefixed id (`usr_…`, `sa_…`) or `system`.
    created_by    text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (resource_id, generation)
);
CREATE INDEX spec_revisions_cluster_idx ON spec_revisions (cluster_id);

CREATE FUNCTION record_spec_revision() RETURNS trigger AS $$
DECLARE
    -- (a cluster row has no cluster_id: it is its own)
    cluster uuid := COALESCE((to_jsonb(NEW)->>'cluster_id')::uuid, NEW.id);
    resource text := CASE TG_TABLE_NAME WHEN 'clusters' THEN 'cluster' ELSE 'node_pool' END;
BEGIN
    INSERT INTO spec_revisions (resource_id, generation, cluster_id, resource_type, spec)
    VALUES (NEW.id, NEW.generation, cluster, resource, NEW.spec)
    ON CONFLICT (resource_id, generation) DO NOTHING;
    DELETE FROM spec_revisions WHERE resource_id = NEW.id AND generation <= NEW.generation - 100;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER clusters_spec_revisions AFTER INSERT OR UPDATE OF generation ON clusters
    FOR EACH ROW EXECUTE FUNCTION record_spec_revision();
CREATE TRIGGER node_pools_spec_revisions AFTER INSERT OR UPDATE OF generation ON node_pools
    FOR EACH ROW EXECUTE FUNCTION record_spec_revision();

CREATE FUNCTION forget_spec_revisions() RETURNS trigger AS $$
BEGIN
    DELETE FROM spec_revisions WHERE resource_id = OLD.id;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER node_pools_forget_spec_revisions AFTER DELETE ON node_pools
    FOR EACH ROW EXECUTE FUNCTION forget_spec_revisions();

-- What exists today is its own first revision, made by the Operation that
-- brought it about when one is known (one row per customer cluster or pool:
-- small enough to backfill here).
INSERT INTO spec_revisions (resource_id, generation, cluster_id, resource_type, spec, operation_id, created_at)
SELECT c.id, c.generation, c.id, 'cluster', c.spec, o.id, COALESCE(o.created_at, c.updated_at)
FROM clusters c
LEFT JOIN LATERAL (SELECT id, created_at FROM operations
                   WHERE target_id = c.id AND target_generation = c.generation
                   ORDER BY id LIMIT 1) o ON true
UNION ALL
SELECT n.id, n.generation, n.cluster_id, 'node_pool', n.spec, o.id, COALESCE(o.created_at, n.updated_at)
FROM node_pools n
LEFT JOIN LATERAL (SELECT id, created_at FROM operations
                   WHERE target_id = n.id AND target_generation = n.generation
                   ORDER BY id LIMIT 1) o ON true;
