-- The last heartbeat of each region's agent, for GET /v1/regions.
CREATE TABLE region_health (
    region            text PRIMARY KEY,
    last_heartbeat_at timestamptz NOT NULL,
    commands_applied  bigint NOT NULL DEFAULT 0
);
