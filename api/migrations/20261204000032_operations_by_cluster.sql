-- The cluster an operation belongs to (the cluster itself, or one of its
-- node pools or deployments), so a cluster's page can list all of its work,
-- including work on node pools and deployments that are gone. Expand only:
-- a nullable column written by the new insert; earlier rows are filled here,
-- where the table is still small, and rows of organization-wide work keep NULL.
ALTER TABLE operations ADD COLUMN cluster_id uuid;

UPDATE operations o SET cluster_id = CASE o.target_type
        WHEN 'cluster' THEN o.target_id
        WHEN 'node_pool' THEN (SELECT n.cluster_id FROM node_pools n WHERE n.id = o.target_id)
        WHEN 'deployment' THEN (SELECT d.cluster_id FROM deployments d WHERE d.id = o.target_id)
    END
WHERE o.target_type IN ('cluster', 'node_pool', 'deployment');

CREATE INDEX operations_cluster_idx ON operations (cluster_id, id) WHERE cluster_id IS NOT NULL;
