-- no-transaction
-- An Operation's commands, for a cancel taking back those not delivered and
-- for progress reports checking which region an Operation was sent to,
-- which would otherwise scan the whole outbox; built CONCURRENTLY (one
-- statement).
CREATE INDEX CONCURRENTLY IF NOT EXISTS outbox_operation_idx ON outbox (operation_id);
