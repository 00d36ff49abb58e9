-- Regional work queues on Postgres (the embedded default; NATS JetStream
-- replaces both tables' transport when configured).

-- The command in its wire form (moke.region.v1.Command), encoded once at
-- enqueue so every transport sends the same bytes. NULL for rows written
-- before this migration; agents skip those (their JSON payload stays).
ALTER TABLE outbox ADD COLUMN command bytea;
CREATE INDEX outbox_region_pending_idx ON outbox (region, id) WHERE delivered_at IS NULL;

-- What regions report (moke.region.v1.Status), waiting to be ingested.
CREATE TABLE region_status (
    id         bigserial PRIMARY KEY,
    region     text NOT NULL,
    message    bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION notify_region_status() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('moke_status', NEW.region);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER region_status_notify AFTER INSERT ON region_status
    FOR EACH ROW EXECUTE FUNCTION notify_region_status();
