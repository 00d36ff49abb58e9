-- Organizations beyond the one made at sign-up, renamed and deleted when
-- empty. A deleted organization keeps its row (its invoices and audit log
-- stay on record) and its name (sign-in links that name it never lead to a
-- newcomer's organization); nothing can act in it any more.
ALTER TABLE organizations ADD COLUMN deleted_at timestamptz;
