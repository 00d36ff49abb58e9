//! The `deployment_revisions` table: one immutable row per spec a
//! deployment had, so reads take no lock.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use super::deployments::{read_spec, write_spec};
use crate::app::Result;
use crate::model::DeploymentSpec;

/// A stored revision; `created_by` is a principal reference or `system`.
pub(in crate::app) struct RevisionRow {
    pub revision: i64,
    pub spec: serde_json::Value,
    pub cause: String,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
}

impl RevisionRow {
    pub fn spec(&self) -> Result<DeploymentSpec> {
        read_spec(&self.spec)
    }
}

/// `sqlx::query_as!` over `deployment_revisions` with `RevisionRow`'s
/// columns and the rest of the statement given.
macro_rules! select {
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            RevisionRow,
            "SELECT revision, spec, cause, created_by, created_at FROM deployment_revisions " + $rest
            $(, $arg)*
        )
    };
}

/// One revision of a deployment.
pub(in crate::app) async fn find(
    conn: &mut PgConnection,
    deployment: Uuid,
    revision: i64,
) -> Result<Option<RevisionRow>> {
    Ok(select!("WHERE deployment_id = $1 AND revision = $2", deployment, revision).fetch_optional(conn).await?)
}

/// Up to `limit` revisions of a deployment older than `before` (all when
/// `None`), newest first.
pub(in crate::app) async fn list(
    conn: &mut PgConnection,
    deployment: Uuid,
    before: Option<i64>,
    limit: i64,
) -> Result<Vec<RevisionRow>> {
    Ok(select!(
        "WHERE deployment_id = $1 AND ($2::bigint IS NULL OR revision < $2) ORDER BY revision DESC LIMIT $3",
        deployment,
        before,
        limit,
    )
    .fetch_all(conn)
    .await?)
}

/// A new revision of a deployment.
pub(in crate::app) struct NewRevision<'a> {
    pub deployment: Uuid,
    pub revision: i64,
    pub spec: &'a DeploymentSpec,
    /// What made it, e.g. `scale` or `rollback to 3`.
    pub cause: &'a str,
    pub created_by: &'a str,
}

pub(in crate::app) async fn insert(conn: &mut PgConnection, new: NewRevision<'_>) -> Result<()> {
    sqlx::query!(
        "INSERT INTO deployment_revisions (deployment_id, revision, spec, cause, created_by) VALUES ($1, $2, $3, $4, $5)",
        new.deployment,
        new.revision,
        write_spec(new.spec),
        new.cause,
        new.created_by,
    )
    .execute(conn)
    .await?;
    Ok(())
}
