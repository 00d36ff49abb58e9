//! The `projects` table.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use super::ProjectSpecStored;
use crate::app::authz::Lock;
use crate::app::error::or_unique;
use crate::app::kernel::jsonb;
use crate::app::{Error, PageRequest, Result};
use crate::model::{Labels, ProjectSpec};

/// A stored project.
pub(in crate::app) struct ProjectRow {
    pub id: Uuid,
    pub org_id: Uuid,
    pub name: String,
    pub labels: serde_json::Value,
    pub spec: serde_json::Value,
    pub generation: i64,
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl ProjectRow {
    pub fn spec(&self) -> Result<ProjectSpec> {
        jsonb::from_column::<ProjectSpecStored>("project spec", &self.spec).map(ProjectSpec::from)
    }
}

/// `sqlx::query_as!` over `projects` with `ProjectRow`'s columns and the
/// rest of the statement given; `locked` adds `FOR UPDATE`.
macro_rules! select {
    (locked $rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            ProjectRow,
            "SELECT id, org_id, name, labels, spec, generation, version, created_at, updated_at FROM projects "
                + $rest + " FOR UPDATE"
            $(, $arg)*
        )
    };
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            ProjectRow,
            "SELECT id, org_id, name, labels, spec, generation, version, created_at, updated_at FROM projects " + $rest
            $(, $arg)*
        )
    };
}

/// A project of `org` by id or name, and only `only` if a credential is
/// limited to one project.
pub(in crate::app::infra) async fn find(
    conn: &mut PgConnection,
    org: Uuid,
    id: Option<Uuid>,
    name: Option<&str>,
    only: Option<Uuid>,
    lock: Lock,
) -> Result<Option<ProjectRow>> {
    Ok(match lock {
        Lock::None => {
            select!(
                "WHERE org_id = $1 AND (id = $2 OR name = $3) AND ($4::uuid IS NULL OR id = $4)",
                org,
                id,
                name,
                only
            )
            .fetch_optional(conn)
            .await?
        }
        Lock::ForUpdate => {
            select!(locked "WHERE org_id = $1 AND (id = $2 OR name = $3) AND ($4::uuid IS NULL OR id = $4)",
                org, id, name, only)
            .fetch_optional(conn)
            .await?
        }
    })
}

/// A page of `org`'s projects in id order (only `only` if given).
pub(in crate::app) async fn list(
    conn: &mut PgConnection,
    org: Uuid,
    only: Option<Uuid>,
    page: &PageRequest,
) -> Result<Vec<ProjectRow>> {
    Ok(select!(
        "WHERE org_id = $1 AND ($2::uuid IS NULL OR id > $2) AND ($4::uuid IS NULL OR id = $4) ORDER BY id LIMIT $3",
        org,
        page.after,
        page.fetch_limit(),
        only,
    )
    .fetch_all(conn)
    .await?)
}

/// A new project; a taken name is `409 already_exists`.
pub(in crate::app) async fn insert(
    conn: &mut PgConnection,
    id: Uuid,
    org: Uuid,
    name: &str,
    labels: &Labels,
    spec: &ProjectSpec,
) -> Result<ProjectRow> {
    sqlx::query_as!(
        ProjectRow,
        "INSERT INTO projects (id, org_id, name, labels, spec) VALUES ($1, $2, $3, $4, $5)
         RETURNING id, org_id, name, labels, spec, generation, version, created_at, updated_at",
        id,
        org,
        name,
        serde_json::json!(labels),
        jsonb::to_column(&ProjectSpecStored::from(spec)),
    )
    .fetch_one(conn)
    .await
    .map_err(or_unique(|| Error::conflict("already_exists", format!("a project named {name:?} already exists"))))
}

/// Sets the name and labels (if given) and the spec; the generation moves
/// only when the spec changed.
pub(in crate::app) async fn update(
    conn: &mut PgConnection,
    id: Uuid,
    name: Option<&str>,
    labels: Option<&Labels>,
    spec: &ProjectSpec,
    spec_changed: bool,
) -> Result<ProjectRow> {
    sqlx::query_as!(
        ProjectRow,
        "UPDATE projects SET labels = COALESCE($2, labels), spec = $3,
             generation = generation + CASE WHEN $4 THEN 1 ELSE 0 END,
             name = COALESCE($5, name), version = version + 1, updated_at = now()
         WHERE id = $1
         RETURNING id, org_id, name, labels, spec, generation, version, created_at, updated_at",
        id,
        labels.map(|l| serde_json::json!(l)),
        jsonb::to_column(&ProjectSpecStored::from(spec)),
        spec_changed,
        name,
    )
    .fetch_one(conn)
    .await
    .map_err(or_unique(|| {
        Error::conflict("already_exists", format!("a project named {:?} already exists", name.unwrap_or_default()))
    }))
}

/// How many clusters the project holds (deleted ones included until gone).
pub(in crate::app) async fn cluster_count(conn: &mut PgConnection, id: Uuid) -> Result<i64> {
    Ok(sqlx::query_scalar!(r#"SELECT count(*) AS "n!" FROM clusters WHERE project_id = $1"#, id)
        .fetch_one(conn)
        .await?)
}

pub(in crate::app) async fn delete(conn: &mut PgConnection, id: Uuid) -> Result<()> {
    sqlx::query!("DELETE FROM projects WHERE id = $1", id).execute(conn).await?;
    Ok(())
}
