-- Every heartbeat tells each gateway's region clock (see app/observations.rs),
-- so reads can mark a silent region's observations stale without a query.
CREATE FUNCTION notify_region_heartbeat() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('moke_regions',
        NEW.region || ' ' || to_char(NEW.last_heartbeat_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'));
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER region_health_notify AFTER INSERT OR UPDATE ON region_health
    FOR EACH ROW EXECUTE FUNCTION notify_region_heartbeat();
