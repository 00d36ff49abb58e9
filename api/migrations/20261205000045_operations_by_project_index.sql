-- no-transaction
-- A project's operations, newest first (GET /v1/projects/{p}/operations);
-- built CONCURRENTLY, outside a transaction, so inserts into `operations` go on.
CREATE INDEX CONCURRENTLY IF NOT EXISTS operations_project_idx ON operations (project_id, id)
    WHERE project_id IS NOT NULL;
