-- Commands a region gave up on (undecodable, or failed too often), kept with
-- the evidence; their Operations are marked failed.
ALTER TABLE outbox ADD COLUMN dead_lettered_at timestamptz;
