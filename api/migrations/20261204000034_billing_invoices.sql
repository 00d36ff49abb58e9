-- Billing: an invoice per organization per calendar month (UTC), numbered
-- gap-free per year when it is finalized, and the usage records rated
-- into it. New tables only.

CREATE TABLE invoices (
    id            uuid PRIMARY KEY,
    org_id        uuid NOT NULL REFERENCES organizations(id),
    -- The calendar month, [start, end).
    period_start  timestamptz NOT NULL,
    period_end    timestamptz NOT NULL,
    -- draft: a live month-to-date preview, rated from its records on read;
    -- finalized: numbered, its lines and totals stored and immutable;
    -- void: withdrawn (it keeps its number).
    status        text NOT NULL CHECK (status IN ('draft', 'finalized', 'void')),
    number        text UNIQUE,
    currency      text NOT NULL,
    lines         jsonb,
    subtotal      numeric(20, 4),
    credits       numeric(20, 4),
    total         numeric(20, 4),
    created_at    timestamptz NOT NULL DEFAULT now(),
    finalized_at  timestamptz,
    voided_at     timestamptz,
    CHECK ((status = 'draft') = (number IS NULL)),
    CHECK ((status = 'draft') = (lines IS NULL))
);
-- One live invoice (draft or finalized) per organization and month: usage
-- arriving for a finalized month goes to the open month's draft.
CREATE UNIQUE INDEX invoices_one_per_month ON invoices (org_id, period_start) WHERE status <> 'void';
CREATE INDEX invoices_due_idx ON invoices (period_end) WHERE status = 'draft';

-- A finalized invoice never changes again, except to be voided.
CREATE FUNCTION invoices_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'invoice % is %, and is kept', OLD.id, OLD.status;
    END IF;
    IF OLD.status = 'void'
       OR (OLD.status = 'finalized' AND NOT (NEW.status = 'void'
           AND (NEW.id, NEW.org_id, NEW.period_start, NEW.period_end, NEW.number, NEW.currency, NEW.lines,
                NEW.subtotal, NEW.credits, NEW.total, NEW.finalized_at)
               IS NOT DISTINCT FROM
               (OLD.id, OLD.org_id, OLD.period_start, OLD.period_end, OLD.number, OLD.currency, OLD.lines,
                OLD.subtotal, OLD.credits, OLD.total, OLD.finalized_at))) THEN
        RAISE EXCEPTION 'invoice % is %, and cannot change', OLD.id, OLD.status;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER invoices_immutable BEFORE UPDATE OR DELETE ON invoices
    FOR EACH ROW WHEN (OLD.status <> 'draft') EXECUTE FUNCTION invoices_immutable();

-- The last invoice number given out in each year; taken under this row's
-- lock in the finalizing transaction, so numbers have no gaps.
CREATE TABLE invoice_numbers (
    year        integer PRIMARY KEY,
    last_number bigint NOT NULL
);

-- Usage as regions report it, one row per resource instance, meter and
-- sampling period: the key makes a repeated sample a no-op in the same
-- transaction that records it.
CREATE TABLE usage_records (
    resource_id    uuid NOT NULL,
    -- A node's name, or 'control-plane'.
    instance       text NOT NULL,
    meter          text NOT NULL CHECK (meter IN ('control_plane', 'node')),
    period_start   timestamptz NOT NULL,
    period_end     timestamptz NOT NULL,
    org_id         uuid NOT NULL REFERENCES organizations(id),
    project_id     uuid NOT NULL,
    -- Names as they were when the usage was recorded (invoices outlive renames and deletes).
    project_name   text NOT NULL,
    cluster_id     uuid NOT NULL,
    -- The region that reported it.
    region         text NOT NULL,
    resource_kind  text NOT NULL CHECK (resource_kind IN ('cluster', 'node_pool')),
    resource_name  text NOT NULL,
    -- The catalog SKU that prices it.
    sku            text NOT NULL,
    seconds        numeric(20, 3) NOT NULL CHECK (seconds >= 0),
    sample_id      text NOT NULL,
    invoice_id     uuid NOT NULL REFERENCES invoices(id),
    recorded_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (resource_id, instance, meter, period_start)
);
CREATE INDEX usage_records_invoice_idx ON usage_records (invoice_id);
