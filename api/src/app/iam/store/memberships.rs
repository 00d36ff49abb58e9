//! The `memberships` and `project_members` tables: who holds which role in
//! an organization and in its projects.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::{PageRequest, Result};

/// A member as the organization sees them.
pub(in crate::app) struct MemberRow {
    pub user_id: Uuid,
    pub email: String,
    pub display_name: String,
    pub role: String,
    /// Moves on every change (the ETag is made from it).
    pub version: i64,
    pub created_at: DateTime<Utc>,
}

/// A page of `org`'s members in user-id order.
pub(in crate::app) async fn list(conn: &mut PgConnection, org: Uuid, page: &PageRequest) -> Result<Vec<MemberRow>> {
    Ok(sqlx::query_as!(
        MemberRow,
        "SELECT m.user_id, u.email, u.display_name, m.role, m.version, m.created_at
         FROM memberships m JOIN users u ON u.id = m.user_id
         WHERE m.org_id = $1 AND ($2::uuid IS NULL OR m.user_id > $2)
         ORDER BY m.user_id LIMIT $3",
        org,
        page.after,
        page.fetch_limit(),
    )
    .fetch_all(conn)
    .await?)
}

/// `user`'s role in `org`, if a member.
pub(in crate::app) async fn role(conn: &mut PgConnection, org: Uuid, user: Uuid) -> Result<Option<String>> {
    Ok(sqlx::query_scalar!("SELECT role FROM memberships WHERE org_id = $1 AND user_id = $2", org, user)
        .fetch_optional(conn)
        .await?)
}

/// `user`'s role in `org` and its version, if a member, locked `FOR UPDATE`
/// until the transaction ends (the membership is about to change).
pub(in crate::app) async fn lock(conn: &mut PgConnection, org: Uuid, user: Uuid) -> Result<Option<(String, i64)>> {
    Ok(sqlx::query!("SELECT role, version FROM memberships WHERE org_id = $1 AND user_id = $2 FOR UPDATE", org, user)
        .fetch_optional(conn)
        .await?
        .map(|row| (row.role, row.version)))
}

/// `user`'s role in `org`, held `FOR SHARE` until the transaction ends: a
/// promotion meanwhile waits for the caller's change.
pub(in crate::app) async fn share_role(
    conn: &mut PgConnection,
    org: Uuid,
    user: Uuid,
) -> Result<Option<(Uuid, String)>> {
    Ok(sqlx::query!(
        "SELECT user_id AS id, role FROM memberships WHERE org_id = $1 AND user_id = $2 FOR SHARE",
        org,
        user
    )
    .fetch_optional(conn)
    .await?
    .map(|row| (row.id, row.role)))
}

pub(in crate::app) async fn owner_count(conn: &mut PgConnection, org: Uuid) -> Result<i64> {
    Ok(sqlx::query_scalar!(r#"SELECT count(*) AS "n!" FROM memberships WHERE org_id = $1 AND role = 'owner'"#, org)
        .fetch_one(conn)
        .await?)
}

/// Sets a member's role and moves its version; the member as it now is.
/// `updated_at` says since when the role is held (approvals compare it
/// with a request's time), so it moves only when the role does, by the
/// clock rather than the transaction's start (which may have waited).
pub(in crate::app) async fn set_role(conn: &mut PgConnection, org: Uuid, user: Uuid, role: &str) -> Result<MemberRow> {
    Ok(sqlx::query_as!(
        MemberRow,
        "WITH changed AS (
             UPDATE memberships SET role = $3, version = version + 1,
                    updated_at = CASE WHEN role IS DISTINCT FROM $3 THEN clock_timestamp() ELSE updated_at END
             WHERE org_id = $1 AND user_id = $2
             RETURNING user_id, role, version, created_at
         )
         SELECT c.user_id, u.email, u.display_name, c.role, c.version, c.created_at
         FROM changed c JOIN users u ON u.id = c.user_id",
        org,
        user,
        role,
    )
    .fetch_one(conn)
    .await?)
}

/// Makes `user` the first owner of the organization they just made.
pub(in crate::app) async fn insert_owner(conn: &mut PgConnection, org: Uuid, user: Uuid) -> Result<()> {
    sqlx::query!("INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'owner')", org, user)
        .execute(conn)
        .await?;
    Ok(())
}

/// Makes `user` a member with `role`; a member already keeps their role.
pub(in crate::app) async fn join(conn: &mut PgConnection, org: Uuid, user: Uuid, role: &str) -> Result<()> {
    sqlx::query!(
        "INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        org,
        user,
        role,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Makes `user` a member with `role` through an invitation; false if they
/// were a member already (their role stays).
pub(in crate::app) async fn join_invited(conn: &mut PgConnection, org: Uuid, user: Uuid, role: &str) -> Result<bool> {
    Ok(sqlx::query!(
        "INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING role",
        org,
        user,
        role,
    )
    .fetch_optional(conn)
    .await?
    .is_some())
}

pub(in crate::app) async fn delete(conn: &mut PgConnection, org: Uuid, user: Uuid) -> Result<()> {
    sqlx::query!("DELETE FROM memberships WHERE org_id = $1 AND user_id = $2", org, user).execute(conn).await?;
    Ok(())
}

/// Every organization `user` belongs to, with their role there.
pub(in crate::app) struct UserMembership {
    pub org_id: Uuid,
    pub role: String,
}

pub(in crate::app) async fn of_user(conn: &mut PgConnection, user: Uuid) -> Result<Vec<UserMembership>> {
    Ok(sqlx::query_as!(UserMembership, "SELECT org_id, role FROM memberships WHERE user_id = $1", user)
        .fetch_all(conn)
        .await?)
}

pub(in crate::app) async fn org_ids_of_user(conn: &mut PgConnection, user: Uuid) -> Result<Vec<Uuid>> {
    Ok(sqlx::query_scalar!("SELECT org_id FROM memberships WHERE user_id = $1", user).fetch_all(conn).await?)
}

/// The organizations `user` belongs to, or only `bound` if given (a
/// session from an identity provider reaches that organization only).
pub(in crate::app) async fn org_ids_of_user_in(
    conn: &mut PgConnection,
    user: Uuid,
    bound: Option<Uuid>,
) -> Result<Vec<Uuid>> {
    Ok(sqlx::query_scalar!(
        "SELECT org_id FROM memberships WHERE user_id = $1 AND ($2::uuid IS NULL OR org_id = $2)",
        user,
        bound
    )
    .fetch_all(conn)
    .await?)
}

/// A membership as its holder sees it.
pub(in crate::app) struct MembershipSummaryRow {
    pub org_id: Uuid,
    pub name: String,
    pub role: String,
}

/// `user`'s memberships, oldest first; only `bound` if given.
pub(in crate::app) async fn summaries(
    conn: &mut PgConnection,
    user: Uuid,
    bound: Option<Uuid>,
) -> Result<Vec<MembershipSummaryRow>> {
    Ok(sqlx::query_as!(
        MembershipSummaryRow,
        "SELECT m.org_id, o.name, m.role FROM memberships m JOIN organizations o ON o.id = m.org_id
         WHERE m.user_id = $1 AND ($2::uuid IS NULL OR m.org_id = $2) ORDER BY m.created_at",
        user,
        bound,
    )
    .fetch_all(conn)
    .await?)
}

/// A membership a password sign-in may act in, with what its
/// organization's credential policy asks.
pub(in crate::app) struct SignInOrgRow {
    pub org_id: Uuid,
    pub role: String,
    pub require_sso: bool,
    pub require_verified_email: bool,
    /// Whether the person's address was proven.
    pub verified: bool,
}

/// `user`'s memberships, oldest first, limited to the organization a
/// reference names (by id or name) if given.
pub(in crate::app) async fn password_sign_in_orgs(
    conn: &mut PgConnection,
    user: Uuid,
    ref_id: Option<Uuid>,
    ref_name: Option<&str>,
) -> Result<Vec<SignInOrgRow>> {
    Ok(sqlx::query_as!(
        SignInOrgRow,
        r#"SELECT m.org_id, m.role, COALESCE(p.require_sso, false) AS "require_sso!",
                  COALESCE(p.require_verified_email, false) AS "require_verified_email!",
                  (u.email_verified_at IS NOT NULL) AS "verified!"
           FROM memberships m JOIN organizations o ON o.id = m.org_id JOIN users u ON u.id = m.user_id
           LEFT JOIN org_credential_policies p ON p.org_id = m.org_id
           WHERE m.user_id = $1 AND ($2::uuid IS NULL OR o.id = $2) AND ($3::text IS NULL OR o.name = $3)
           ORDER BY m.created_at"#,
        user,
        ref_id,
        ref_name,
    )
    .fetch_all(conn)
    .await?)
}

/// A project role and whether its holder is a person (else a service account).
pub(in crate::app) struct ProjectMemberRow {
    pub principal_id: Uuid,
    pub role: String,
    /// Moves on every change (the ETag is made from it).
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub is_user: bool,
}

/// A page of who holds a role in `project`, in principal-id order.
pub(in crate::app) async fn project_members(
    conn: &mut PgConnection,
    project: Uuid,
    page: &PageRequest,
) -> Result<Vec<ProjectMemberRow>> {
    Ok(sqlx::query_as!(
        ProjectMemberRow,
        r#"SELECT pm.principal_id, pm.role, pm.version, pm.created_at,
                  EXISTS (SELECT 1 FROM users u WHERE u.id = pm.principal_id) AS "is_user!"
           FROM project_members pm
           WHERE pm.project_id = $1 AND ($2::uuid IS NULL OR pm.principal_id > $2)
           ORDER BY pm.principal_id LIMIT $3"#,
        project,
        page.after,
        page.fetch_limit(),
    )
    .fetch_all(conn)
    .await?)
}

/// Locks `principal`'s role in `project` and its version, if any, before it changes.
pub(in crate::app) async fn lock_project_role(
    conn: &mut PgConnection,
    project: Uuid,
    principal: Uuid,
) -> Result<Option<(String, i64)>> {
    Ok(sqlx::query!(
        "SELECT role, version FROM project_members WHERE project_id = $1 AND principal_id = $2 FOR UPDATE",
        project,
        principal
    )
    .fetch_optional(conn)
    .await?
    .map(|row| (row.role, row.version)))
}

/// A project role as it stands after a grant.
pub(in crate::app) struct ProjectRoleSet {
    /// When it was first granted.
    pub created_at: DateTime<Utc>,
    pub version: i64,
}

/// Grants a project role (version 1) or changes it (its version moves).
pub(in crate::app) async fn set_project_role(
    conn: &mut PgConnection,
    project: Uuid,
    org: Uuid,
    principal: Uuid,
    role: &str,
) -> Result<ProjectRoleSet> {
    Ok(sqlx::query_as!(
        ProjectRoleSet,
        "INSERT INTO project_members (project_id, org_id, principal_id, role) VALUES ($1, $2, $3, $4)
         ON CONFLICT (project_id, principal_id)
             DO UPDATE SET role = EXCLUDED.role, version = project_members.version + 1
         RETURNING created_at, version",
        project,
        org,
        principal,
        role,
    )
    .fetch_one(conn)
    .await?)
}

/// Takes a project role away; the role it was, or `None` if none was held.
pub(in crate::app) async fn delete_project_role(
    conn: &mut PgConnection,
    project: Uuid,
    principal: Uuid,
) -> Result<Option<String>> {
    Ok(sqlx::query_scalar!(
        "DELETE FROM project_members WHERE project_id = $1 AND principal_id = $2 RETURNING role",
        project,
        principal
    )
    .fetch_optional(conn)
    .await?)
}

/// Takes every project role in `org` away from `principal` (who left it).
pub(in crate::app) async fn delete_project_roles_in(conn: &mut PgConnection, org: Uuid, principal: Uuid) -> Result<()> {
    sqlx::query!("DELETE FROM project_members WHERE org_id = $1 AND principal_id = $2", org, principal)
        .execute(conn)
        .await?;
    Ok(())
}

/// Every project role `principal` holds, in any project.
pub(in crate::app) async fn project_roles_of(conn: &mut PgConnection, principal: Uuid) -> Result<Vec<(Uuid, String)>> {
    Ok(sqlx::query!("SELECT project_id, role FROM project_members WHERE principal_id = $1", principal)
        .fetch_all(conn)
        .await?
        .into_iter()
        .map(|r| (r.project_id, r.role))
        .collect())
}

/// The addresses of `org`'s members holding one of `roles`, verified ones only.
pub(in crate::app) async fn verified_addresses_of(
    conn: &mut PgConnection,
    org: Uuid,
    roles: &[&str],
) -> Result<Vec<String>> {
    let roles: Vec<String> = roles.iter().map(|r| r.to_string()).collect();
    Ok(sqlx::query_scalar!(
        "SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id
         WHERE m.org_id = $1 AND m.role = ANY($2) AND u.email_verified_at IS NOT NULL ORDER BY u.email",
        org,
        &roles
    )
    .fetch_all(conn)
    .await?)
}
