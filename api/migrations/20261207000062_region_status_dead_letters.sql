-- A region report that fails alone (a value the database refuses) is tried
-- again on a backoff, then set aside with its last error instead of holding
-- up every report behind it; one about the same thing applied later takes
-- its place. Rows set aside stay for an operator to read, 30 days.
ALTER TABLE region_status
    ADD COLUMN attempts integer NOT NULL DEFAULT 0,
    ADD COLUMN last_error text,
    ADD COLUMN retry_at timestamptz,
    -- What the report is about (`<region>|<key>`), set when it fails.
    ADD COLUMN report_key text,
    ADD COLUMN dead_lettered_at timestamptz;
CREATE INDEX region_status_pending_idx ON region_status (id) WHERE dead_lettered_at IS NULL;
CREATE INDEX region_status_failed_idx ON region_status (report_key) WHERE report_key IS NOT NULL;
