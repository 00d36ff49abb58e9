-- A region report that fails alone (a value the database refuses) is tried
-- again a few times, then set aside with its last error instead of holding
-- up every report behind it. Rows set aside stay for an operator to read.
ALTER TABLE region_status
    ADD COLUMN attempts integer NOT NULL DEFAULT 0,
    ADD COLUMN last_error text,
    ADD COLUMN dead_lettered_at timestamptz;
CREATE INDEX region_status_pending_idx ON region_status (id) WHERE dead_lettered_at IS NULL;
