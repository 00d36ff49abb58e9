-- Credits an organization holds: promotional or prepaid grants, used at
-- invoice finalization in priority order. New table only.
CREATE TABLE credit_grants (
    id           uuid PRIMARY KEY,
    org_id       uuid NOT NULL REFERENCES organizations(id),
    kind         text NOT NULL CHECK (kind IN ('promotional', 'prepaid')),
    description  text NOT NULL,
    amount       numeric(20, 4) NOT NULL CHECK (amount > 0),
    -- What is left; only finalizing an invoice takes from it.
    remaining    numeric(20, 4) NOT NULL CHECK (remaining >= 0 AND remaining <= amount),
    -- Lower is used first.
    priority     integer NOT NULL DEFAULT 100,
    granted_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz,
    -- Who granted it (an operator's note).
    granted_by   text NOT NULL
);
CREATE INDEX credit_grants_org_idx ON credit_grants (org_id, id);
