-- The steps an Operation went through, with when each was reported: the
-- history behind its current `step` (GET /v1/operations/{id}/steps). A
-- step is recorded when it differs from the one before; the gateway's
-- ingest keeps every step of a batch of reports, not only the last.
CREATE TABLE operation_steps (
    operation_id uuid NOT NULL REFERENCES operations (id) ON DELETE CASCADE,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    status text NOT NULL,
    step text NOT NULL,
    progress integer NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (operation_id, seq)
);

-- Operations made before steps were kept start their history at the step they are at.
INSERT INTO operation_steps (operation_id, status, step, progress, at)
SELECT id, status, step, progress, updated_at FROM operations;
