-- A project's deploy policy has a version, so its updates take If-Match
-- (its ETag); a project that never set one is at version 0.
ALTER TABLE project_deploy_policies ADD COLUMN version bigint NOT NULL DEFAULT 1;
