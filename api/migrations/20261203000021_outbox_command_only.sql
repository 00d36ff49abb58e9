-- Commands are built as `moke.region.v1.Command` messages and the outbox
-- stores only their bytes (`command`). `payload` (the JSON they were once
-- read back from) gets a default so new rows need not carry it, while a
-- gateway of the previous release still reads a value there during a
-- rolling deploy; a later release drops it.
ALTER TABLE outbox ALTER COLUMN payload SET DEFAULT '{}'::jsonb;
