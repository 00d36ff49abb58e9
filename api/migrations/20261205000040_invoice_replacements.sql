-- Voiding a finalized invoice issues a replacement for the same month: the
-- replacement names the invoice it replaces (a void invoice never changes
-- again, so the link lives on the new one), and a void one says why.
-- Nullable columns only.

ALTER TABLE invoices
    ADD COLUMN replaces    uuid REFERENCES invoices(id),
    ADD COLUMN void_reason text;
CREATE UNIQUE INDEX invoices_replaces_once ON invoices (replaces) WHERE replaces IS NOT NULL;
