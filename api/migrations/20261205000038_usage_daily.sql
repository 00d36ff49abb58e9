-- Usage summed per invoice, resource instance, SKU and day (UTC), kept by
-- the database as usage records are written, so a draft invoice reads at
-- most 31 rows an instance however often regions sample. A trigger keeps
-- it rather than the gateway, so a gateway of the previous release, still
-- running during a rolling deploy, keeps it right too. New table only.

CREATE TABLE usage_daily (
    invoice_id     uuid NOT NULL REFERENCES invoices(id),
    -- The UTC day the summed periods start on (price versions take effect
    -- at midnight UTC, so a day has one price).
    day            date NOT NULL,
    resource_id    uuid NOT NULL,
    instance       text NOT NULL,
    sku            text NOT NULL,
    resource_kind  text NOT NULL,
    -- Names as they were recorded: a rename mid-day starts another row.
    resource_name  text NOT NULL,
    project_name   text NOT NULL,
    seconds        numeric(20, 3) NOT NULL CHECK (seconds >= 0),
    -- The first summed period's start and the last one's end.
    period_start   timestamptz NOT NULL,
    period_end     timestamptz NOT NULL,
    PRIMARY KEY (invoice_id, resource_id, instance, sku, day, resource_kind, resource_name, project_name)
);

-- Adds each statement's new usage records to their days. Records are
-- only ever inserted (never updated or deleted), and a record that was
-- already there (ON CONFLICT DO NOTHING) is not in the transition table.
CREATE FUNCTION usage_daily_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_daily AS d (invoice_id, day, resource_id, instance, sku, resource_kind, resource_name,
                                  project_name, seconds, period_start, period_end)
    SELECT invoice_id, (period_start AT TIME ZONE 'UTC')::date, resource_id, instance, sku, resource_kind,
           resource_name, project_name, sum(seconds), min(period_start), max(period_end)
    FROM new_records
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
    ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
    ON CONFLICT (invoice_id, resource_id, instance, sku, day, resource_kind, resource_name, project_name)
    DO UPDATE SET seconds = d.seconds + EXCLUDED.seconds,
                  period_start = least(d.period_start, EXCLUDED.period_start),
                  period_end = greatest(d.period_end, EXCLUDED.period_end);
    RETURN NULL;
END $$;

-- Created before the backfill: its lock on usage_records holds off other
-- writers until this migration commits, so no record is missed or counted twice.
CREATE TRIGGER usage_daily_add AFTER INSERT ON usage_records
    REFERENCING NEW TABLE AS new_records
    FOR EACH STATEMENT EXECUTE FUNCTION usage_daily_add();

INSERT INTO usage_daily (invoice_id, day, resource_id, instance, sku, resource_kind, resource_name, project_name,
                         seconds, period_start, period_end)
SELECT invoice_id, (period_start AT TIME ZONE 'UTC')::date, resource_id, instance, sku, resource_kind, resource_name,
       project_name, sum(seconds), min(period_start), max(period_end)
FROM usage_records
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;
