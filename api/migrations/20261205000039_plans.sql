-- Plans: an organization's chosen plan (its quota limits are configured,
-- billing.plans), and why an operator overrode a limit. Nullable columns
-- only: NULL plan is billing.default_plan.

ALTER TABLE organizations
    ADD COLUMN plan            text,
    ADD COLUMN plan_changed_at timestamptz;

-- Overrides now say why they were set and by whom (also in the audit log).
ALTER TABLE org_quotas
    ADD COLUMN reason text,
    ADD COLUMN set_by text;
COMMENT ON TABLE org_quotas IS
    'Per-organization quota overrides set by operators; NULL means the plan''s limit';
