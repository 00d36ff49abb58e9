-- no-transaction
-- Unfinished snapshot and restore Operations by age, for the periodic
-- deadline check (`etcd_deadlines`), which would otherwise scan every
-- Operation each run; built CONCURRENTLY (one statement).
CREATE INDEX CONCURRENTLY IF NOT EXISTS operations_etcd_unfinished_idx ON operations (created_at)
    WHERE status NOT IN ('succeeded', 'failed') AND kind IN ('cluster_snapshot', 'cluster_restore');
