//! The `organizations` table.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::error::or_unique;
use crate::app::{Error, PageRequest, Result};

/// A stored organization.
pub(in crate::app) struct OrgRow {
    pub id: Uuid,
    pub name: String,
    pub display_name: String,
    pub labels: serde_json::Value,
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// `sqlx::query_as!` over `organizations` with `OrgRow`'s columns and the
/// rest of the statement given.
macro_rules! select {
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            OrgRow,
            "SELECT id, name, display_name, labels, version, created_at, updated_at
             FROM organizations " + $rest
            $(, $arg)*
        )
    };
}

/// An organization that is not deleted.
pub(in crate::app) async fn find(conn: &mut PgConnection, id: Uuid) -> Result<Option<OrgRow>> {
    Ok(select!("WHERE id = $1 AND deleted_at IS NULL", id).fetch_optional(conn).await?)
}

/// [`find`], locked for a change (`FOR UPDATE`).
pub(in crate::app) async fn find_for_update(conn: &mut PgConnection, id: Uuid) -> Result<Option<OrgRow>> {
    Ok(select!("WHERE id = $1 AND deleted_at IS NULL FOR UPDATE", id).fetch_optional(conn).await?)
}

/// A new organization made by `person` (whom the caller makes its owner);
/// a name any organization has or had is an invalid `name`.
pub(in crate::app) async fn insert(
    conn: &mut PgConnection,
    id: Uuid,
    person: Uuid,
    name: &str,
    display_name: &str,
    labels: &serde_json::Value,
) -> Result<OrgRow> {
    sqlx::query_as!(
        OrgRow,
        "INSERT INTO organizations (id, name, display_name, labels, created_by) VALUES ($1, $2, $3, $4, $5)
         RETURNING id, name, display_name, labels, version, created_at, updated_at",
        id,
        name,
        display_name,
        labels,
        person,
    )
    .fetch_one(conn)
    .await
    .map_err(or_unique(|| Error::invalid_field("name", "taken", "an organization with this name exists")))
}

/// Renames or relabels an organization; each `None` keeps what it has.
pub(in crate::app) async fn update(
    conn: &mut PgConnection,
    id: Uuid,
    name: Option<&str>,
    display_name: Option<&str>,
    labels: Option<&serde_json::Value>,
) -> Result<OrgRow> {
    sqlx::query_as!(
        OrgRow,
        "UPDATE organizations SET name = COALESCE($2, name), display_name = COALESCE($3, display_name),
                labels = COALESCE($4, labels), version = version + 1, updated_at = now()
         WHERE id = $1
         RETURNING id, name, display_name, labels, version, created_at, updated_at",
        id,
        name,
        display_name,
        labels,
    )
    .fetch_one(conn)
    .await
    .map_err(or_unique(|| Error::invalid_field("name", "taken", "an organization with this name exists")))
}

/// How many organizations `user` owns now, and how many they made in the
/// last 30 days (deleted ones too), with their account locked so two
/// requests count one after the other.
pub(in crate::app) async fn made_by(conn: &mut PgConnection, user: Uuid) -> Result<(i64, i64)> {
    sqlx::query!("SELECT id FROM users WHERE id = $1 FOR UPDATE", user).fetch_one(&mut *conn).await?;
    let row = sqlx::query!(
        r#"SELECT (SELECT count(*) FROM memberships m JOIN organizations o ON o.id = m.org_id
                   WHERE m.user_id = $1 AND m.role = 'owner' AND o.deleted_at IS NULL) AS "owned!",
                  (SELECT count(*) FROM organizations
                   WHERE created_by = $1 AND created_at > now() - interval '30 days') AS "recent!""#,
        user
    )
    .fetch_one(conn)
    .await?;
    Ok((row.owned, row.recent))
}

/// How many names `org` has taken (its current one among them) since
/// `since`; `None` when `name` is already one of its names.
pub(in crate::app) async fn names_taken_since(
    conn: &mut PgConnection,
    org: Uuid,
    name: &str,
    since: chrono::DateTime<chrono::Utc>,
) -> Result<Option<i64>> {
    let row = sqlx::query!(
        r#"SELECT count(*) FILTER (WHERE taken_at > $3) AS "taken!", bool_or(name = $2) AS "held!"
           FROM org_names WHERE org_id = $1"#,
        org,
        name,
        since
    )
    .fetch_one(conn)
    .await?;
    Ok((!row.held).then_some(row.taken))
}

/// What stands in the way of deleting an organization.
pub(in crate::app) struct BeforeDelete {
    pub projects: i64,
    /// Whether the person deleting it belongs to another organization.
    pub elsewhere: bool,
    /// Whether usage is recorded that no finalized invoice holds yet.
    pub unbilled: bool,
}

/// Locks the person's row first, so two deletes of their last two
/// organizations at once take turns and the second sees the first done.
pub(in crate::app) async fn before_delete(conn: &mut PgConnection, org: Uuid, user: Uuid) -> Result<BeforeDelete> {
    sqlx::query!("SELECT id FROM users WHERE id = $1 FOR UPDATE", user).fetch_one(&mut *conn).await?;
    let row = sqlx::query!(
        r#"SELECT (SELECT count(*) FROM projects WHERE org_id = $1) AS "projects!",
                  EXISTS (SELECT 1 FROM memberships m JOIN organizations o ON o.id = m.org_id
                          WHERE m.user_id = $2 AND m.org_id <> $1 AND o.deleted_at IS NULL) AS "elsewhere!",
                  EXISTS (SELECT 1 FROM usage_records u JOIN invoices i ON i.id = u.invoice_id
                          WHERE u.org_id = $1 AND i.status <> 'finalized')
                  OR EXISTS (SELECT 1 FROM usage_records u
                          WHERE u.org_id = $1
                            AND u.period_end > COALESCE((SELECT max(i.period_end) FROM invoices i
                                                         WHERE i.org_id = $1 AND i.status = 'finalized'),
                                                        '-infinity'::timestamptz)) AS "unbilled!""#,
        org,
        user
    )
    .fetch_one(conn)
    .await?;
    Ok(BeforeDelete { projects: row.projects, elsewhere: row.elsewhere, unbilled: row.unbilled })
}

/// Who could act in an organization as it is deleted.
pub(in crate::app) struct Closed {
    pub members: Vec<Uuid>,
    pub service_accounts: Vec<Uuid>,
}

/// Deletes an organization: every way to act in it ends (memberships,
/// invitations and service accounts deleted, their tokens with them; API
/// tokens and sessions revoked, which tells every gateway's cache; single
/// sign-on, claimed domains and device grants deleted; event-webhook
/// endpoints deleted so nothing more is sent), and the row is marked
/// deleted, keeping its name, invoices and audit log.
pub(in crate::app) async fn close(conn: &mut PgConnection, org: Uuid) -> Result<Closed> {
    let members = sqlx::query_scalar!("DELETE FROM memberships WHERE org_id = $1 RETURNING user_id", org)
        .fetch_all(&mut *conn)
        .await?;
    let service_accounts = sqlx::query_scalar!("DELETE FROM service_accounts WHERE org_id = $1 RETURNING id", org)
        .fetch_all(&mut *conn)
        .await?;
    sqlx::query!("UPDATE api_tokens SET revoked_at = now() WHERE org_id = $1 AND revoked_at IS NULL", org)
        .execute(&mut *conn)
        .await?;
    sqlx::query!(
        "UPDATE sessions SET revoked_at = now(), revoked_reason = 'org_deleted'
         WHERE org_id = $1 AND revoked_at IS NULL",
        org
    )
    .execute(&mut *conn)
    .await?;
    for statement in [
        "DELETE FROM invitations WHERE org_id = $1",
        "DELETE FROM device_authorizations WHERE org_id = $1",
        "DELETE FROM sso_link_requests WHERE org_id = $1",
        "DELETE FROM sso_logins WHERE org_id = $1",
        "DELETE FROM sso_identities WHERE org_id = $1",
        "DELETE FROM sso_providers WHERE org_id = $1",
        "DELETE FROM org_domains WHERE org_id = $1",
        "DELETE FROM webhook_endpoints WHERE org_id = $1",
    ] {
        sqlx::query(statement).bind(org).execute(&mut *conn).await?;
    }
    sqlx::query!(
        "UPDATE organizations SET deleted_at = now(), version = version + 1, updated_at = now() WHERE id = $1",
        org
    )
    .execute(&mut *conn)
    .await?;
    Ok(Closed { members, service_accounts })
}

/// The caller's one organization as a page (a credential acts in one).
pub(in crate::app) async fn list_own(conn: &mut PgConnection, org: Uuid, page: &PageRequest) -> Result<Vec<OrgRow>> {
    Ok(select!(
        "WHERE id = $1 AND ($2::uuid IS NULL OR id > $2)
             ORDER BY id LIMIT $3",
        org,
        page.after,
        page.fetch_limit()
    )
    .fetch_all(conn)
    .await?)
}

/// A new organization, or the one already named `name` (bootstrap is
/// idempotent by name).
pub(in crate::app) async fn insert_or_get(
    conn: &mut PgConnection,
    id: Uuid,
    name: &str,
    display_name: &str,
) -> Result<OrgRow> {
    sqlx::query_as!(
        OrgRow,
        "INSERT INTO organizations (id, name, display_name) VALUES ($1, $2, $3)
         ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name WHERE organizations.deleted_at IS NULL
         RETURNING id, name, display_name, labels, version, created_at, updated_at",
        id,
        name,
        display_name,
    )
    .fetch_optional(conn)
    .await
    .map_err(or_unique(|| Error::conflict("name_taken", format!("another organization had the name {name}"))))?
    .ok_or_else(|| Error::conflict("org_deleted", format!("organization {name} was deleted; its name stays taken")))
}

/// A new organization made at sign-up (named `name`, displayed as it); a
/// name taken since the request was checked is an invalid field.
pub(in crate::app) async fn insert_for_signup(conn: &mut PgConnection, id: Uuid, name: &str) -> Result<Uuid> {
    Ok(sqlx::query!(
        "INSERT INTO organizations (id, name, display_name) VALUES ($1, $2, $3) RETURNING id",
        id,
        name,
        name
    )
    .fetch_one(conn)
    .await
    .map_err(or_unique(|| {
        Error::invalid_field(
            "organization_name",
            "taken",
            "an organization with this name was made meanwhile; confirm again with another organization_name",
        )
    }))?
    .id)
}

/// The organization that has or had `name` (a name once taken stays its own).
pub(in crate::app) async fn id_by_name(conn: &mut PgConnection, name: &str) -> Result<Option<Uuid>> {
    Ok(sqlx::query_scalar!("SELECT org_id FROM org_names WHERE name = $1", name).fetch_optional(conn).await?)
}

pub(in crate::app) async fn name(conn: &mut PgConnection, id: Uuid) -> Result<String> {
    Ok(sqlx::query_scalar!("SELECT name FROM organizations WHERE id = $1", id).fetch_one(conn).await?)
}

pub(in crate::app) async fn display_name(conn: &mut PgConnection, id: Uuid) -> Result<String> {
    Ok(sqlx::query_scalar!("SELECT display_name FROM organizations WHERE id = $1", id).fetch_one(conn).await?)
}

/// Whether organization `id` is the one a reference names (by id or name;
/// both `None` matches).
pub(in crate::app) async fn is_named(
    conn: &mut PgConnection,
    id: Uuid,
    ref_id: Option<Uuid>,
    ref_name: Option<&str>,
) -> Result<bool> {
    Ok(sqlx::query_scalar!(
        "SELECT id FROM organizations WHERE id = $1 AND ($2::uuid IS NULL OR id = $2)
         AND ($3::text IS NULL OR name = $3)",
        id,
        ref_id,
        ref_name,
    )
    .fetch_optional(conn)
    .await?
    .is_some())
}

/// Locks the organization (`FOR NO KEY UPDATE`, as quota checks do) so
/// owner changes serialize and the last owner stays; a missing one is an
/// error.
pub(in crate::app) async fn lock_for_owner_change(conn: &mut PgConnection, id: Uuid) -> Result<()> {
    sqlx::query!("SELECT id FROM organizations WHERE id = $1 FOR NO KEY UPDATE", id).fetch_one(conn).await?;
    Ok(())
}
