-- Memberships and project roles carry a version, so their updates can be
-- guarded by If-Match like every other update (the ETag is made from it).
-- Every update moves it; a row made anew starts at 1.
ALTER TABLE memberships ADD COLUMN version bigint NOT NULL DEFAULT 1;
ALTER TABLE project_members ADD COLUMN version bigint NOT NULL DEFAULT 1;
