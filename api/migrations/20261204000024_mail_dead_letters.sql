-- Mail the relay gave up on (refused for good, or failing every attempt)
-- is kept, without its body, for a person to see; it is never retried.
ALTER TABLE mail_outbox ADD COLUMN dead_at timestamptz;

DROP INDEX mail_outbox_pending_idx;
CREATE INDEX mail_outbox_pending_idx ON mail_outbox (available_at, id) WHERE sent_at IS NULL AND dead_at IS NULL;
