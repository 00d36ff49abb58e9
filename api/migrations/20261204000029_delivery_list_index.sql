-- The deliveries page (`GET /v1/orgs/{org}/webhooks/{endpoint}/deliveries`)
-- walks an endpoint's deliveries newest first by (created_at, id): this index
-- lets it read just the page, whatever the endpoint's history.
CREATE INDEX webhook_deliveries_endpoint_created_idx ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
