//! The `clusters` table.

use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use super::ClusterSpecStored;
use crate::app::authz::Lock;
use crate::app::error::or_unique;
use crate::app::kernel::jsonb;
use crate::app::{Error, PageRequest, Result};
use crate::model::{ClusterSpec, Labels};

/// A stored cluster: desired spec and the status its region last observed.
pub(in crate::app) struct ClusterRow {
    pub id: Uuid,
    pub org_id: Uuid,
    pub project_id: Uuid,
    pub name: String,
    pub labels: serde_json::Value,
    pub spec: serde_json::Value,
    pub generation: i64,
    pub version: i64,
    pub status: serde_json::Value,
    pub observed_generation: i64,
    pub observed_at: Option<DateTime<Utc>>,
    pub deletion_requested_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl ClusterRow {
    pub fn spec(&self) -> Result<ClusterSpec> {
        jsonb::from_column::<ClusterSpecStored>("cluster spec", &self.spec).map(ClusterSpec::from)
    }

    /// The region the cluster lives in.
    pub fn region(&self) -> Result<String> {
        Ok(self.spec()?.region)
    }
}

/// `sqlx::query_as!` over `clusters c` with `ClusterRow`'s columns and the
/// rest of the statement given; `locked` adds `FOR UPDATE OF c`.
macro_rules! select {
    (locked $rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            ClusterRow,
            "SELECT c.id, c.org_id, c.project_id, c.name, c.labels, c.spec, c.generation, c.version, c.status,
                    c.observed_generation, c.observed_at, c.deletion_requested_at, c.created_at, c.updated_at
             FROM clusters c " + $rest + " FOR UPDATE OF c"
            $(, $arg)*
        )
    };
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            ClusterRow,
            "SELECT c.id, c.org_id, c.project_id, c.name, c.labels, c.spec, c.generation, c.version, c.status,
                    c.observed_generation, c.observed_at, c.deletion_requested_at, c.created_at, c.updated_at
             FROM clusters c " + $rest
            $(, $arg)*
        )
    };
}

/// Locks a cluster by id, for work the server does on its own.
pub(in crate::app::infra) async fn find_by_id(conn: &mut PgConnection, id: Uuid) -> Result<Option<ClusterRow>> {
    Ok(select!(locked "WHERE c.id = $1", id).fetch_optional(conn).await?)
}

/// How a caller names a cluster: its project and itself, each by id or name.
pub(in crate::app) struct ClusterKey<'a> {
    pub org: Uuid,
    pub project_id: Option<Uuid>,
    pub project_name: Option<&'a str>,
    pub cluster_id: Option<Uuid>,
    pub cluster_name: Option<&'a str>,
    /// The one project a credential is limited to, if it is.
    pub only_project: Option<Uuid>,
}

/// A cluster by [`ClusterKey`], the project resolved in the same query
/// (one round trip on the hot path).
pub(in crate::app::infra) async fn find(
    conn: &mut PgConnection,
    key: ClusterKey<'_>,
    lock: Lock,
) -> Result<Option<ClusterRow>> {
    let ClusterKey { org, project_id, project_name, cluster_id, cluster_name, only_project } = key;
    Ok(match lock {
        Lock::None => {
            select!(
                "JOIN projects p ON p.id = c.project_id
                 WHERE p.org_id = $1 AND (p.id = $2 OR p.name = $3) AND (c.id = $4 OR c.name = $5)
                   AND ($6::uuid IS NULL OR p.id = $6)",
                org,
                project_id,
                project_name,
                cluster_id,
                cluster_name,
                only_project,
            )
            .fetch_optional(conn)
            .await?
        }
        Lock::ForUpdate => {
            select!(locked
                "JOIN projects p ON p.id = c.project_id
                 WHERE p.org_id = $1 AND (p.id = $2 OR p.name = $3) AND (c.id = $4 OR c.name = $5)
                   AND ($6::uuid IS NULL OR p.id = $6)",
                org, project_id, project_name, cluster_id, cluster_name, only_project,
            )
            .fetch_optional(conn)
            .await?
        }
    })
}

/// A page of a project's clusters in id order.
pub(in crate::app) async fn list(
    conn: &mut PgConnection,
    project: Uuid,
    page: &PageRequest,
) -> Result<Vec<ClusterRow>> {
    Ok(select!(
        "WHERE c.project_id = $1 AND ($2::uuid IS NULL OR c.id > $2) ORDER BY c.id LIMIT $3",
        project,
        page.after,
        page.fetch_limit(),
    )
    .fetch_all(conn)
    .await?)
}

/// The first `per_project` clusters (in id order) of each of several
/// projects of `org`, for a batch loader.
pub(in crate::app) async fn first_of_projects(
    conn: &mut PgConnection,
    org: Uuid,
    projects: &[Uuid],
    per_project: i64,
) -> Result<Vec<ClusterRow>> {
    Ok(select!(
        "WHERE c.id IN (
             SELECT id FROM (
                 SELECT id, row_number() OVER (PARTITION BY project_id ORDER BY id) AS n
                 FROM clusters WHERE project_id = ANY($1) AND org_id = $2
             ) ranked WHERE n <= $3
         ) ORDER BY c.id",
        projects,
        org,
        per_project,
    )
    .fetch_all(conn)
    .await?)
}

/// A new cluster, pending until its region reports; a taken name is
/// `409 already_exists`.
pub(in crate::app) struct NewCluster<'a> {
    pub id: Uuid,
    pub org: Uuid,
    pub project: Uuid,
    pub name: &'a str,
    pub labels: &'a Labels,
    pub spec: &'a ClusterSpec,
}

pub(in crate::app) async fn insert(conn: &mut PgConnection, new: NewCluster<'_>) -> Result<()> {
    sqlx::query!(
        "INSERT INTO clusters (id, org_id, project_id, name, region, labels, spec, status)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        new.id,
        new.org,
        new.project,
        new.name,
        new.spec.region,
        json!(new.labels),
        jsonb::to_column(&ClusterSpecStored::from(new.spec)),
        jsonb::to_column(&crate::app::region::observed::ObservedStored::default()),
    )
    .execute(conn)
    .await
    .map_err(or_unique(|| {
        Error::conflict("already_exists", format!("a cluster named {:?} already exists in this project", new.name))
    }))?;
    Ok(())
}

/// Sets the labels (if given), the spec and the generation.
pub(in crate::app) async fn update_spec(
    conn: &mut PgConnection,
    id: Uuid,
    labels: Option<&Labels>,
    spec: &ClusterSpec,
    generation: i64,
) -> Result<()> {
    sqlx::query!(
        "UPDATE clusters SET labels = COALESCE($2, labels), spec = $3, generation = $4,
             version = version + 1, updated_at = now()
         WHERE id = $1",
        id,
        labels.map(|l| json!(l)),
        jsonb::to_column(&ClusterSpecStored::from(spec)),
        generation,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Marks the cluster as being deleted, at `generation`.
pub(in crate::app) async fn request_deletion(conn: &mut PgConnection, id: Uuid, generation: i64) -> Result<()> {
    sqlx::query!(
        "UPDATE clusters SET deletion_requested_at = now(), generation = $2, version = version + 1, updated_at = now()
         WHERE id = $1",
        id,
        generation,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Records what `region` observed of a cluster at `generation`; a report
/// older than one recorded, or from another region, changes nothing.
pub(in crate::app) async fn observe(
    conn: &mut PgConnection,
    id: Uuid,
    region: &str,
    status: serde_json::Value,
    generation: i64,
) -> Result<()> {
    sqlx::query!(
        "UPDATE clusters SET status = $2, observed_generation = $3, observed_at = now()
         WHERE id = $1 AND observed_generation <= $3 AND region = $4",
        id,
        status,
        generation,
        region,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Removes a cluster its region reports gone, if its deletion was requested
/// (a region cannot delete what no one asked to delete) and it lives there.
/// Locks the cluster `id` of `region` for its report, before any row the
/// report changes (the order every change of the cluster locks in); false
/// when it is not there, not of that region, or being deleted.
pub(in crate::app) async fn lock_for_report(conn: &mut PgConnection, id: Uuid, region: &str) -> Result<bool> {
    let locked = sqlx::query_scalar!(
        "SELECT id FROM clusters WHERE id = $1 AND region = $2 AND deletion_requested_at IS NULL FOR UPDATE",
        id,
        region
    )
    .fetch_optional(conn)
    .await?;
    Ok(locked.is_some())
}

pub(in crate::app) async fn remove_gone(conn: &mut PgConnection, id: Uuid, region: &str) -> Result<()> {
    sqlx::query!(
        "DELETE FROM clusters WHERE id = $1 AND deletion_requested_at IS NOT NULL AND region = $2",
        id,
        region
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A row of `cluster_events`, which the database's triggers write.
pub(in crate::app) struct ClusterEventRow {
    pub seq: i64,
    pub at: DateTime<Utc>,
    pub kind: String,
    pub resource_type: String,
    pub resource_id: Uuid,
    pub resource_name: String,
    pub message: String,
    pub operation_id: Option<Uuid>,
}

/// Up to `limit` events of `cluster`, newest first: those before sequence
/// `before` when given, and none older than `since`.
pub(in crate::app) async fn events(
    conn: &mut PgConnection,
    cluster: Uuid,
    since: Option<DateTime<Utc>>,
    before: Option<i64>,
    limit: i64,
) -> Result<Vec<ClusterEventRow>> {
    Ok(sqlx::query_as!(
        ClusterEventRow,
        "SELECT seq, at, kind, resource_type, resource_id, resource_name, message, operation_id
         FROM cluster_events
         WHERE cluster_id = $1 AND ($2::timestamptz IS NULL OR at > $2) AND ($3::bigint IS NULL OR seq < $3)
         ORDER BY seq DESC LIMIT $4",
        cluster,
        since,
        before,
        limit,
    )
    .fetch_all(conn)
    .await?)
}
