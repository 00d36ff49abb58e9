-- The digest of the last kubectl edit a deployment that adopts them
-- refused (generation and edit), so that its refusal is audited once
-- however often its region reports it. Nullable and unread by earlier
-- gateways.
ALTER TABLE deployments ADD COLUMN refused_cluster_edit text;
