-- Who voided an invoice: the operator named by `moke-server billing
-- void-invoice --voided-by` (not shown to the organization). Nullable column only.

ALTER TABLE invoices ADD COLUMN voided_by text;
