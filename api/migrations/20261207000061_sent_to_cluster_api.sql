-- Moke's namespaces and services reach the cluster's own API through a
-- command each change sends. Those made before their kind's commands
-- existed were never sent: they are marked here, and the gateway's
-- backfill sends each once (as a change the system makes). Rows made from
-- now on are sent when they are made. A row sent again by the backfill
-- changes nothing in the cluster: the region applies such commands
-- idempotently.
ALTER TABLE namespaces ADD COLUMN sent_to_cluster boolean NOT NULL DEFAULT false;
-- `default` is every cluster's own, and kubectl's come from the cluster.
UPDATE namespaces SET sent_to_cluster = true WHERE made_with = 'kubectl' OR name = 'default';
ALTER TABLE namespaces ALTER COLUMN sent_to_cluster SET DEFAULT true;
ALTER TABLE services ADD COLUMN sent_to_cluster boolean NOT NULL DEFAULT false;
ALTER TABLE services ALTER COLUMN sent_to_cluster SET DEFAULT true;
-- The backfill finds what is left to send without a scan.
CREATE INDEX namespaces_unsent_idx ON namespaces (id) WHERE NOT sent_to_cluster;
CREATE INDEX services_unsent_idx ON services (id) WHERE NOT sent_to_cluster;
