//! The `node_pools` table.

use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use super::NodePoolSpecStored;
use crate::app::authz::Lock;
use crate::app::error::or_unique;
use crate::app::kernel::jsonb;
use crate::app::region::observed::ObservedStored;
use crate::app::{Error, PageRequest, Result};
use crate::model::{Labels, NodePoolSpec};

/// A stored node pool: desired spec and the status its region last observed.
pub(in crate::app) struct NodePoolRow {
    pub id: Uuid,
    pub org_id: Uuid,
    pub cluster_id: Uuid,
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
    /// Nodes asked to be removed with no replacement (maybe gone since).
    pub removing_nodes: Vec<String>,
}

impl NodePoolRow {
    pub fn spec(&self) -> Result<NodePoolSpec> {
        jsonb::from_column::<NodePoolSpecStored>("node pool spec", &self.spec).map(NodePoolSpec::from)
    }

    /// The pool's nodes as its region last reported them.
    pub fn observed_nodes(&self) -> Result<Vec<crate::app::region::observed::NodeObserved>> {
        let status: ObservedStored = jsonb::from_column("node pool status", &self.status)?;
        Ok(status.nodes.unwrap_or_default())
    }

    /// The nodes being removed with no replacement that are still there.
    pub fn still_removing(&self) -> Result<Vec<String>> {
        let observed = self.observed_nodes()?;
        Ok(self.removing_nodes.iter().filter(|name| observed.iter().any(|n| &&n.name == name)).cloned().collect())
    }
}

/// `sqlx::query_as!` over `node_pools` with `NodePoolRow`'s columns and the
/// rest of the statement given; `locked` adds `FOR UPDATE`.
macro_rules! select {
    (locked $rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            NodePoolRow,
            "SELECT id, org_id, cluster_id, name, labels, spec, generation, version, status,
                    observed_generation, observed_at, deletion_requested_at, created_at, updated_at,
                    removing_nodes
             FROM node_pools " + $rest + " FOR UPDATE"
            $(, $arg)*
        )
    };
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            NodePoolRow,
            "SELECT id, org_id, cluster_id, name, labels, spec, generation, version, status,
                    observed_generation, observed_at, deletion_requested_at, created_at, updated_at,
                    removing_nodes
             FROM node_pools " + $rest
            $(, $arg)*
        )
    };
}

/// A pool of `cluster` by id or name.
pub(in crate::app::infra) async fn find(
    conn: &mut PgConnection,
    cluster: Uuid,
    id: Option<Uuid>,
    name: Option<&str>,
    lock: Lock,
) -> Result<Option<NodePoolRow>> {
    Ok(match lock {
        Lock::None => {
            select!("WHERE cluster_id = $1 AND (id = $2 OR name = $3)", cluster, id, name).fetch_optional(conn).await?
        }
        Lock::ForUpdate => {
            select!(locked "WHERE cluster_id = $1 AND (id = $2 OR name = $3)", cluster, id, name)
                .fetch_optional(conn)
                .await?
        }
    })
}

/// A page of a cluster's pools in id order.
pub(in crate::app) async fn list(
    conn: &mut PgConnection,
    cluster: Uuid,
    page: &PageRequest,
) -> Result<Vec<NodePoolRow>> {
    Ok(select!(
        "WHERE cluster_id = $1 AND ($2::uuid IS NULL OR id > $2) ORDER BY id LIMIT $3",
        cluster,
        page.after,
        page.fetch_limit(),
    )
    .fetch_all(conn)
    .await?)
}

/// A cluster's pools not being deleted, by name.
pub(in crate::app) async fn live_in(conn: &mut PgConnection, cluster: Uuid) -> Result<Vec<NodePoolRow>> {
    Ok(select!("WHERE cluster_id = $1 AND deletion_requested_at IS NULL ORDER BY name", cluster)
        .fetch_all(conn)
        .await?)
}

/// Every pool of the given clusters of `org` (of `project` only, when
/// given), with each cluster's region.
pub(in crate::app) async fn of_clusters(
    conn: &mut PgConnection,
    org: Uuid,
    project: Option<Uuid>,
    clusters: &[Uuid],
) -> Result<(Vec<NodePoolRow>, Vec<(Uuid, String)>)> {
    let regions = sqlx::query!(
        "SELECT id, region FROM clusters WHERE id = ANY($1) AND org_id = $2 AND ($3::uuid IS NULL OR project_id = $3)",
        clusters,
        org,
        project
    )
    .fetch_all(&mut *conn)
    .await?;
    let clusters: Vec<Uuid> = regions.iter().map(|r| r.id).collect();
    let pools = select!("WHERE cluster_id = ANY($1) AND org_id = $2 ORDER BY id", clusters.as_slice(), org)
        .fetch_all(&mut *conn)
        .await?;
    let regions = regions.into_iter().map(|r| (r.id, r.region)).collect();
    Ok((pools, regions))
}

/// How many pools a cluster has (those being deleted included).
pub(in crate::app) async fn count_in(conn: &mut PgConnection, cluster: Uuid) -> Result<i64> {
    Ok(sqlx::query_scalar!(r#"SELECT count(*) AS "n!" FROM node_pools WHERE cluster_id = $1"#, cluster)
        .fetch_one(conn)
        .await?)
}

/// A new pool, pending until its region reports, holding `reserved` (nodes,
/// vCPUs) of the organization's quota; a taken name is `409 already_exists`.
pub(in crate::app) struct NewNodePool<'a> {
    pub id: Uuid,
    pub org: Uuid,
    pub cluster: Uuid,
    pub name: &'a str,
    pub labels: &'a Labels,
    pub spec: &'a NodePoolSpec,
    pub reserved: (i64, i64),
}

pub(in crate::app) async fn insert(conn: &mut PgConnection, new: NewNodePool<'_>) -> Result<()> {
    sqlx::query!(
        "INSERT INTO node_pools (id, org_id, cluster_id, name, labels, spec, reserved_nodes, reserved_vcpus, status)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        new.id,
        new.org,
        new.cluster,
        new.name,
        json!(new.labels),
        jsonb::to_column(&NodePoolSpecStored::from(new.spec)),
        new.reserved.0,
        new.reserved.1,
        jsonb::to_column(&ObservedStored::default()),
    )
    .execute(conn)
    .await
    .map_err(or_unique(|| {
        Error::conflict("already_exists", format!("a node pool named {:?} already exists in this cluster", new.name))
    }))?;
    Ok(())
}

/// Sets the labels (if given), the spec, the generation and the quota held.
pub(in crate::app) async fn update_spec(
    conn: &mut PgConnection,
    id: Uuid,
    labels: Option<&Labels>,
    spec: &NodePoolSpec,
    generation: i64,
    reserved: (i64, i64),
) -> Result<()> {
    sqlx::query!(
        "UPDATE node_pools SET labels = COALESCE($2, labels), spec = $3, generation = $4,
             reserved_nodes = $5, reserved_vcpus = $6, version = version + 1, updated_at = now()
         WHERE id = $1",
        id,
        labels.map(|l| json!(l)),
        jsonb::to_column(&NodePoolSpecStored::from(spec)),
        generation,
        reserved.0,
        reserved.1,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Records the machine type the pool was moved off (see [`crate::app::billing`]'s metering).
pub(in crate::app) async fn set_replaced_machine_type(conn: &mut PgConnection, id: Uuid, old: &str) -> Result<()> {
    sqlx::query!("UPDATE node_pools SET replaced_machine_type = $2 WHERE id = $1", id, old).execute(conn).await?;
    Ok(())
}

/// Replaces the list of nodes being removed with no replacement.
pub(in crate::app) async fn set_removing_nodes(conn: &mut PgConnection, id: Uuid, names: &[String]) -> Result<()> {
    sqlx::query!("UPDATE node_pools SET removing_nodes = $2 WHERE id = $1", id, names).execute(conn).await?;
    Ok(())
}

/// Marks the pool as being deleted, at `generation`.
pub(in crate::app) async fn request_deletion(conn: &mut PgConnection, id: Uuid, generation: i64) -> Result<()> {
    sqlx::query!(
        "UPDATE node_pools SET deletion_requested_at = now(), generation = $2, version = version + 1,
             updated_at = now()
         WHERE id = $1",
        id,
        generation,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Records what `region` observed of a pool at `generation`; a report older
/// than one recorded, or from a region its cluster is not in, changes nothing.
pub(in crate::app) async fn observe(
    conn: &mut PgConnection,
    id: Uuid,
    region: &str,
    status: serde_json::Value,
    generation: i64,
) -> Result<()> {
    sqlx::query!(
        "UPDATE node_pools n SET status = $2, observed_generation = $3, observed_at = now()
         FROM clusters c
         WHERE n.id = $1 AND n.observed_generation <= $3 AND c.id = n.cluster_id AND c.region = $4",
        id,
        status,
        generation,
        region,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Removes a pool its region reports gone, if its deletion was requested
/// and its cluster lives in that region.
pub(in crate::app) async fn remove_gone(conn: &mut PgConnection, id: Uuid, region: &str) -> Result<()> {
    sqlx::query!(
        "DELETE FROM node_pools n USING clusters c
         WHERE n.id = $1 AND n.deletion_requested_at IS NOT NULL AND c.id = n.cluster_id AND c.region = $2",
        id,
        region,
    )
    .execute(conn)
    .await?;
    Ok(())
}
