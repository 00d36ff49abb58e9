-- The cluster an operation belongs to (the cluster itself, or one of its
-- node pools or deployments), so a cluster's page lists all of its work,
-- including work on node pools and deployments that are gone. Expand only:
-- a nullable column (no rewrite, a brief lock), written by every insert from
-- now on. Rows written before, or by a gateway of the previous release
-- during a rolling deploy, keep NULL; reads find those by their target
-- instead, so no backfill holds the table. The index comes in the next
-- migration, built without blocking writes.
ALTER TABLE operations ADD COLUMN cluster_id uuid;
