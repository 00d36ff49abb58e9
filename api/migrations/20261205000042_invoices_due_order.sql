-- The month close walks due drafts in (period_end, id) order with a cursor,
-- passing over those that failed in one index step each. New index only, on
-- a table of one row an organization and month.

CREATE INDEX invoices_due_order_idx ON invoices (period_end, id) WHERE status = 'draft';
