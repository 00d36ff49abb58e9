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

pub(in crate::app) async fn find(conn: &mut PgConnection, id: Uuid) -> Result<Option<OrgRow>> {
    Ok(select!("WHERE id = $1", id).fetch_optional(conn).await?)
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
    Ok(sqlx::query_as!(
        OrgRow,
        "INSERT INTO organizations (id, name, display_name) VALUES ($1, $2, $3)
         ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
         RETURNING id, name, display_name, labels, version, created_at, updated_at",
        id,
        name,
        display_name,
    )
    .fetch_one(conn)
    .await?)
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

pub(in crate::app) async fn id_by_name(conn: &mut PgConnection, name: &str) -> Result<Option<Uuid>> {
    Ok(sqlx::query_scalar!("SELECT id FROM organizations WHERE name = $1", name).fetch_optional(conn).await?)
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
