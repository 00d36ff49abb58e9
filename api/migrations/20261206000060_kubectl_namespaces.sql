-- Namespaces made through a cluster's own API (kubectl) are among the
-- cluster's namespaces too: its region's reports add and drop them. Moke's
-- own are never dropped by a report. Earlier gateways read every row as
-- before.
ALTER TABLE namespaces ADD COLUMN made_with text NOT NULL DEFAULT 'moke'
    CHECK (made_with IN ('moke', 'kubectl'));
