-- no-transaction
-- A project's operations of one kind (`?kind=`), so a kind that never
-- matches does not walk the project's whole history; built CONCURRENTLY
-- (one statement: several would run in one implicit transaction).
CREATE INDEX CONCURRENTLY IF NOT EXISTS operations_project_kind_idx ON operations (project_id, kind, id)
    WHERE project_id IS NOT NULL;
