-- Follow-ups of the security review: sign-up confirmation counts wrong
-- passwords; events about an address carry it in a column of their own
-- (indexed), so an account finds what happened to its address before it
-- existed without scanning every event.

ALTER TABLE signup_requests ADD COLUMN attempts integer NOT NULL DEFAULT 0;

ALTER TABLE audit_events ADD COLUMN subject_email text;
UPDATE audit_events SET subject_email = details->>'email'
    WHERE org_id IS NULL AND details ? 'email';
CREATE INDEX audit_events_subject_email_idx ON audit_events (subject_email, id) WHERE subject_email IS NOT NULL;
