-- Budgets: an amount a month with alert thresholds in percent, on spend or
-- forecast; each alert fires once per month and threshold. New tables only.
CREATE TABLE budgets (
    id          uuid PRIMARY KEY,
    org_id      uuid NOT NULL REFERENCES organizations(id),
    name        text NOT NULL,
    amount      numeric(20, 4) NOT NULL CHECK (amount > 0),
    -- Percent of the amount, ascending, each once.
    thresholds  integer[] NOT NULL,
    basis       text NOT NULL CHECK (basis IN ('spend', 'forecast')),
    version     bigint NOT NULL DEFAULT 1,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, name)
);

-- The alerts that fired: the key makes each fire once per month and threshold.
CREATE TABLE budget_alerts (
    budget_id     uuid NOT NULL REFERENCES budgets(id) ON DELETE CASCADE,
    period_start  timestamptz NOT NULL,
    threshold     integer NOT NULL,
    -- The spend or forecast that crossed it.
    value         numeric(20, 4) NOT NULL,
    fired_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (budget_id, period_start, threshold)
);
