-- Namespaces get an id, time-ordered like every other id, so their list
-- pages by keyset (`page_token` holds the last id) in creation order. It
-- never leaves the gateway: the API names a namespace by its name.

-- A UUIDv7 for the instant `at`: 48 bits of Unix milliseconds, then random.
CREATE FUNCTION uuid_v7(at timestamptz) RETURNS uuid AS $$
    SELECT encode(
        set_bit(set_bit(
            overlay(uuid_send(gen_random_uuid())
                    PLACING substring(int8send(floor(extract(epoch FROM at) * 1000)::bigint) FROM 3)
                    FROM 1 FOR 6),
            52, 1), 53, 1),
        'hex')::uuid;
$$ LANGUAGE sql VOLATILE;

-- The table is small (a quota bounds it per cluster): filled in place.
ALTER TABLE namespaces ADD COLUMN id uuid NOT NULL DEFAULT uuid_v7(clock_timestamp());
UPDATE namespaces SET id = uuid_v7(created_at);
CREATE UNIQUE INDEX namespaces_cluster_id_idx ON namespaces (cluster_id, id);
