-- Organizations beyond the one made at sign-up, renamed and deleted when
-- empty. A deleted organization keeps its row (its invoices and audit log
-- stay on record); nothing can act in it any more.
ALTER TABLE organizations
    ADD COLUMN deleted_at timestamptz,
    -- The person who made it (none for sign-up's and bootstrap's).
    ADD COLUMN created_by uuid;

-- Every name an organization ever had stays its own, renamed or deleted,
-- so a sign-in link that named it never leads to someone else's.
CREATE TABLE org_names (
    name     text PRIMARY KEY,
    org_id   uuid NOT NULL REFERENCES organizations(id),
    taken_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO org_names (name, org_id) SELECT name, id FROM organizations;

CREATE FUNCTION org_names_hold() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO org_names (name, org_id) VALUES (NEW.name, NEW.id) ON CONFLICT (name) DO NOTHING;
    IF (SELECT org_id FROM org_names WHERE name = NEW.name) <> NEW.id THEN
        RAISE EXCEPTION 'the organization name % is taken', NEW.name USING ERRCODE = 'unique_violation';
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER organizations_names AFTER INSERT OR UPDATE OF name ON organizations
    FOR EACH ROW EXECUTE FUNCTION org_names_hold();

-- Nothing that acts in an organization is made once it is deleted. The
-- row lock waits for a delete under way and then reads what it left.
CREATE FUNCTION refuse_deleted_org() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.org_id IS NOT NULL AND
       (SELECT deleted_at FROM organizations WHERE id = NEW.org_id FOR KEY SHARE) IS NOT NULL THEN
        RAISE EXCEPTION 'organization % is deleted', NEW.org_id USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER api_tokens_live_org BEFORE INSERT ON api_tokens
    FOR EACH ROW EXECUTE FUNCTION refuse_deleted_org();
CREATE TRIGGER service_accounts_live_org BEFORE INSERT ON service_accounts
    FOR EACH ROW EXECUTE FUNCTION refuse_deleted_org();
CREATE TRIGGER memberships_live_org BEFORE INSERT ON memberships
    FOR EACH ROW EXECUTE FUNCTION refuse_deleted_org();
CREATE TRIGGER sessions_live_org BEFORE INSERT OR UPDATE OF org_id ON sessions
    FOR EACH ROW EXECUTE FUNCTION refuse_deleted_org();
CREATE TRIGGER projects_live_org BEFORE INSERT ON projects
    FOR EACH ROW EXECUTE FUNCTION refuse_deleted_org();
CREATE TRIGGER invitations_live_org BEFORE INSERT ON invitations
    FOR EACH ROW EXECUTE FUNCTION refuse_deleted_org();
CREATE TRIGGER webhook_endpoints_live_org BEFORE INSERT ON webhook_endpoints
    FOR EACH ROW EXECUTE FUNCTION refuse_deleted_org();
