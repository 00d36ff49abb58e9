-- Moke's namespaces and services reach the cluster's own API through a
-- command each change sends; those made before their kind's commands
-- existed never were. Rows made from now on are sent when they are made
-- (true); the rows already here are NULL, not known, and the gateway's
-- backfill job looks at each in turn: one whose audit events show no
-- command is sent once, then each is marked. Adding a column without a
-- default rewrites nothing.
ALTER TABLE namespaces ADD COLUMN sent_to_cluster boolean;
ALTER TABLE namespaces ALTER COLUMN sent_to_cluster SET DEFAULT true;
ALTER TABLE services ADD COLUMN sent_to_cluster boolean;
ALTER TABLE services ALTER COLUMN sent_to_cluster SET DEFAULT true;
-- The job finds what is left to look at without a scan.
CREATE INDEX namespaces_unchecked_idx ON namespaces (id) WHERE sent_to_cluster IS NULL;
CREATE INDEX services_unchecked_idx ON services (id) WHERE sent_to_cluster IS NULL;
