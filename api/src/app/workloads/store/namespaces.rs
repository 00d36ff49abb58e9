//! The `namespaces` table (every cluster's `default` is made by a trigger
//! when the cluster is inserted).

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::authz::Lock;
use crate::app::error::or_unique;
use crate::app::{Error, PageRequest, Result};

/// A stored namespace; the cluster names it. Its id orders the list and
/// never leaves the gateway.
pub(in crate::app) struct NamespaceRow {
    pub id: Uuid,
    pub name: String,
    pub created_at: DateTime<Utc>,
    /// `moke` or `kubectl` (listed from the cluster's reports).
    pub made_with: String,
}

/// `sqlx::query_as!` over `namespaces` with `NamespaceRow`'s columns and
/// the rest of the statement given; `locked` adds `FOR UPDATE`.
macro_rules! select {
    (locked $rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            NamespaceRow,
            "SELECT id, name, created_at, made_with FROM namespaces " + $rest + " FOR UPDATE" $(, $arg)*
        )
    };
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(NamespaceRow, "SELECT id, name, created_at, made_with FROM namespaces " + $rest $(, $arg)*)
    };
}

/// A namespace of a cluster by name.
pub(in crate::app::workloads) async fn find(
    conn: &mut PgConnection,
    cluster: Uuid,
    name: &str,
    lock: Lock,
) -> Result<Option<NamespaceRow>> {
    Ok(match lock {
        Lock::None => select!("WHERE cluster_id = $1 AND name = $2", cluster, name).fetch_optional(conn).await?,
        Lock::ForUpdate => {
            select!(locked "WHERE cluster_id = $1 AND name = $2", cluster, name).fetch_optional(conn).await?
        }
    })
}

/// A page of a cluster's namespaces in id (creation) order.
pub(in crate::app) async fn list(
    conn: &mut PgConnection,
    cluster: Uuid,
    page: &PageRequest,
) -> Result<Vec<NamespaceRow>> {
    Ok(select!(
        "WHERE cluster_id = $1 AND ($2::uuid IS NULL OR id > $2) ORDER BY id LIMIT $3",
        cluster,
        page.after,
        page.fetch_limit(),
    )
    .fetch_all(conn)
    .await?)
}

/// A new namespace; a name the cluster has is `409 already_exists`.
pub(in crate::app) async fn insert(
    conn: &mut PgConnection,
    cluster: Uuid,
    org: Uuid,
    name: &str,
) -> Result<NamespaceRow> {
    sqlx::query_as!(
        NamespaceRow,
        "INSERT INTO namespaces (cluster_id, org_id, name) VALUES ($1, $2, $3) RETURNING id, name, created_at, made_with",
        cluster,
        org,
        name,
    )
    .fetch_one(conn)
    .await
    .map_err(or_unique(|| Error::conflict("already_exists", format!("namespace {name:?} exists"))))
}

/// How many deployments and services (those being deleted included) the
/// namespace holds.
pub(in crate::app) async fn resource_count(conn: &mut PgConnection, cluster: Uuid, name: &str) -> Result<i64> {
    Ok(sqlx::query_scalar!(
        r#"SELECT (SELECT count(*) FROM deployments WHERE cluster_id = $1 AND namespace = $2)
                + (SELECT count(*) FROM services WHERE cluster_id = $1 AND namespace = $2) AS "n!""#,
        cluster,
        name
    )
    .fetch_one(conn)
    .await?)
}

/// Replaces the cluster's kubectl-made namespaces with what its region
/// reports: the new ones added, and those no longer reported dropped unless
/// Moke's deployments or services are in them (the region makes those
/// again). Moke's own are kept. The caller has locked the cluster
/// ([`lock_for_report`](crate::app::infra::store::clusters::lock_for_report)),
/// as every change in its namespaces locks it, so that no deployment lands
/// in a namespace this drops.
pub(in crate::app) async fn replace_kubectl_made(
    conn: &mut PgConnection,
    cluster: Uuid,
    reported: &[&str],
) -> Result<()> {
    sqlx::query!(
        "WITH gone AS (
             DELETE FROM namespaces n
             WHERE n.cluster_id = $1 AND n.made_with = 'kubectl' AND n.name <> ALL($2::text[])
               AND NOT EXISTS (SELECT 1 FROM deployments d WHERE d.cluster_id = n.cluster_id AND d.namespace = n.name)
               AND NOT EXISTS (SELECT 1 FROM services s WHERE s.cluster_id = n.cluster_id AND s.namespace = n.name)
         )
         INSERT INTO namespaces (cluster_id, org_id, name, made_with)
         SELECT c.id, c.org_id, r.name, 'kubectl' FROM clusters c, unnest($2::text[]) AS r(name)
         WHERE c.id = $1
         ON CONFLICT (cluster_id, name) DO NOTHING",
        cluster,
        reported as &[&str],
    )
    .execute(conn)
    .await?;
    Ok(())
}

pub(in crate::app) async fn delete(conn: &mut PgConnection, cluster: Uuid, name: &str) -> Result<()> {
    sqlx::query!("DELETE FROM namespaces WHERE cluster_id = $1 AND name = $2", cluster, name).execute(conn).await?;
    Ok(())
}

/// Up to `limit` namespaces made before namespace commands existed and not
/// yet looked at by the backfill (`sent_to_cluster` NULL), in no set order
/// (so rows a pass must leave do not keep the others waiting).
pub(in crate::app::workloads) async fn unchecked(conn: &mut PgConnection, limit: i64) -> Result<Vec<Unchecked>> {
    Ok(sqlx::query_as!(
        Unchecked,
        "SELECT id, cluster_id, org_id, name FROM namespaces WHERE sent_to_cluster IS NULL ORDER BY random() LIMIT $1",
        limit
    )
    .fetch_all(conn)
    .await?)
}

/// A namespace or service the backfill has yet to look at.
pub(in crate::app::workloads) struct Unchecked {
    pub id: Uuid,
    pub cluster_id: Uuid,
    pub org_id: Uuid,
    pub name: String,
}

/// Marks namespace `id` looked at, if it was not: the row, locked, when
/// this call is the one that marks it.
pub(in crate::app::workloads) async fn take_unchecked(
    conn: &mut PgConnection,
    id: Uuid,
) -> Result<Option<NamespaceRow>> {
    Ok(sqlx::query_as!(
        NamespaceRow,
        "UPDATE namespaces SET sent_to_cluster = true WHERE id = $1 AND sent_to_cluster IS NULL
         RETURNING id, name, created_at, made_with",
        id
    )
    .fetch_optional(conn)
    .await?)
}
