-- A row version is drawn only when a statement moves it (every real change
-- of a membership, project role or SSO configuration sets `version`), not
-- on any UPDATE: re-encrypting an SSO client secret under a rotated Vault
-- key changes nothing a client or a pending sign-in depends on, and must
-- not change the ETag or refuse SSO logins and link requests in flight.
DROP TRIGGER memberships_version ON memberships;
DROP TRIGGER project_members_version ON project_members;
DROP TRIGGER sso_providers_version ON sso_providers;

CREATE TRIGGER memberships_version_insert BEFORE INSERT ON memberships
    FOR EACH ROW EXECUTE FUNCTION draw_row_version();
CREATE TRIGGER memberships_version_update BEFORE UPDATE ON memberships
    FOR EACH ROW WHEN (NEW.version IS DISTINCT FROM OLD.version) EXECUTE FUNCTION draw_row_version();
CREATE TRIGGER project_members_version_insert BEFORE INSERT ON project_members
    FOR EACH ROW EXECUTE FUNCTION draw_row_version();
CREATE TRIGGER project_members_version_update BEFORE UPDATE ON project_members
    FOR EACH ROW WHEN (NEW.version IS DISTINCT FROM OLD.version) EXECUTE FUNCTION draw_row_version();
CREATE TRIGGER sso_providers_version_insert BEFORE INSERT ON sso_providers
    FOR EACH ROW EXECUTE FUNCTION draw_row_version();
CREATE TRIGGER sso_providers_version_update BEFORE UPDATE ON sso_providers
    FOR EACH ROW WHEN (NEW.version IS DISTINCT FROM OLD.version) EXECUTE FUNCTION draw_row_version();
