-- Moke's namespaces and services reach the cluster's own API through a
-- command each change sends. Those made before their kind's commands
-- existed were never sent: they are marked here, and the gateway's
-- backfill sends each once (as a change the system makes). Rows made from
-- now on are sent when they are made.
ALTER TABLE namespaces ADD COLUMN sent_to_cluster boolean NOT NULL DEFAULT true;
ALTER TABLE services ADD COLUMN sent_to_cluster boolean NOT NULL DEFAULT true;
-- Since namespace commands came (migration 60), each namespace create is
-- audited with the Operation that carried its command: Moke's namespaces
-- (but `default`, every cluster's own) without such an event were never sent.
UPDATE namespaces n SET sent_to_cluster = false
WHERE made_with = 'moke' AND name <> 'default'
  AND NOT EXISTS (
    SELECT 1 FROM audit_events a
    WHERE a.org_id = n.org_id AND a.action = 'namespace.create'
      AND a.resource_id = 'cl_' || replace(n.cluster_id::text, '-', '') || '/' || n.name
      AND a.details ? 'operation_id');
-- Likewise each service change since service commands came. (A row whose
-- events were pruned is sent again, which changes nothing in the cluster.)
UPDATE services s SET sent_to_cluster = false
WHERE NOT EXISTS (
    SELECT 1 FROM audit_events a
    WHERE a.org_id = s.org_id AND a.resource_type = 'service'
      AND a.resource_id = 'svc_' || replace(s.id::text, '-', '')
      AND a.details ? 'operation_id');
-- The backfill finds what is left to send without a scan.
CREATE INDEX namespaces_unsent_idx ON namespaces (id) WHERE NOT sent_to_cluster;
CREATE INDEX services_unsent_idx ON services (id) WHERE NOT sent_to_cluster;
