-- The versions behind the ETags of memberships, project roles and SSO
-- configurations never repeat: a row deleted and made again starts where
-- no earlier row was, so an If-Match (or a pending SSO link) taken from the
-- old row cannot pass against the new one. Every insert and every update
-- draws the next value of one sequence, whatever the statement set.
CREATE SEQUENCE row_versions START WITH 4294967296;

CREATE FUNCTION draw_row_version() RETURNS trigger AS $$
BEGIN
    NEW.version := nextval('row_versions');
    RETURN NEW;
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER memberships_version BEFORE INSERT OR UPDATE ON memberships
    FOR EACH ROW EXECUTE FUNCTION draw_row_version();
CREATE TRIGGER project_members_version BEFORE INSERT OR UPDATE ON project_members
    FOR EACH ROW EXECUTE FUNCTION draw_row_version();
CREATE TRIGGER sso_providers_version BEFORE INSERT OR UPDATE ON sso_providers
    FOR EACH ROW EXECUTE FUNCTION draw_row_version();
