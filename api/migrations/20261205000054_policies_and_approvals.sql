-- Organization policies: immutable versions, each in force from its
-- `effective_at` until a later version's. A change writes the next version;
-- none is edited or deleted, so an audit event's `policy_version` always
-- names a document that can still be read.
CREATE TABLE org_policies (
    org_id       uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    version      integer NOT NULL CHECK (version > 0),
    effective_at timestamptz NOT NULL,
    document     jsonb NOT NULL,
    created_by   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, version)
);

-- A change the approval policy held: its Operation waits in
-- `awaiting_approval` (nothing is written to the resource and nothing is
-- queued for the region) until someone else with the approver role
-- approves it, which carries out `request` then, or it is rejected,
-- withdrawn or expires. `plan` is the request's dry run when it was made,
-- what the approver is shown.
CREATE TABLE approval_requests (
    operation_id   uuid PRIMARY KEY REFERENCES operations (id) ON DELETE CASCADE,
    org_id         uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    target_id      uuid NOT NULL,
    rule           text NOT NULL,
    policy_version integer NOT NULL,
    approver_role  text NOT NULL CHECK (approver_role IN ('owner', 'admin')),
    request        jsonb NOT NULL,
    plan           jsonb NOT NULL,
    requested_by   uuid NOT NULL,
    requested_by_ref text NOT NULL,
    -- Who may not decide it: the requester and, for a service account, who
    -- made it (and who made that one, …), so nobody approves their own
    -- change through a credential of their making.
    accountable    uuid[] NOT NULL,
    state          text NOT NULL DEFAULT 'awaiting'
                   CHECK (state IN ('awaiting', 'approved', 'rejected', 'expired', 'withdrawn')),
    expires_at     timestamptz NOT NULL,
    decided_by     text,
    decided_at     timestamptz,
    reason         text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CHECK (state = 'awaiting' OR decided_at IS NOT NULL)
);

-- One request awaits per resource: a second change of it is answered with
-- the first (the same request) or refused (another).
CREATE UNIQUE INDEX approval_requests_one_awaiting_idx ON approval_requests (target_id) WHERE state = 'awaiting';
-- The expiry sweep.
CREATE INDEX approval_requests_expiry_idx ON approval_requests (expires_at) WHERE state = 'awaiting';
