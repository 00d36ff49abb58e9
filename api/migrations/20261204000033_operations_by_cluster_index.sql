-- no-transaction
-- A cluster's operations, newest first (see the previous migration); built
-- CONCURRENTLY, outside a transaction, so inserts into `operations` go on.
CREATE INDEX CONCURRENTLY IF NOT EXISTS operations_cluster_idx ON operations (cluster_id, id)
    WHERE cluster_id IS NOT NULL;
