//! The `services` table.

use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use super::ServiceSpecStored;
use crate::app::authz::Lock;
use crate::app::error::or_unique;
use crate::app::kernel::jsonb;
use crate::app::{Error, PageRequest, Result};
use crate::model::{Labels, ServiceSpec};

/// A stored service; `ip_index` is its cluster IP's host number in the
/// cluster's service network.
pub(in crate::app) struct ServiceRow {
    pub id: Uuid,
    pub cluster_id: Uuid,
    pub namespace: String,
    pub name: String,
    pub labels: serde_json::Value,
    pub spec: serde_json::Value,
    pub ip_index: i32,
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl ServiceRow {
    pub fn spec(&self) -> Result<ServiceSpec> {
        read_spec(&self.spec)
    }
}

fn read_spec(column: &serde_json::Value) -> Result<ServiceSpec> {
    jsonb::from_column::<ServiceSpecStored>("service spec", column).map(ServiceSpec::from)
}

/// `sqlx::query_as!` over `services` with `ServiceRow`'s columns and the
/// rest of the statement given; `locked` adds `FOR UPDATE`.
macro_rules! select {
    (locked $rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            ServiceRow,
            "SELECT id, cluster_id, namespace, name, labels, spec, ip_index, version, created_at, updated_at
             FROM services " + $rest + " FOR UPDATE"
            $(, $arg)*
        )
    };
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            ServiceRow,
            "SELECT id, cluster_id, namespace, name, labels, spec, ip_index, version, created_at, updated_at
             FROM services " + $rest
            $(, $arg)*
        )
    };
}

/// A service of a cluster's namespace by id or name.
pub(in crate::app::workloads) async fn find(
    conn: &mut PgConnection,
    cluster: Uuid,
    namespace: &str,
    id: Option<Uuid>,
    name: Option<&str>,
    lock: Lock,
) -> Result<Option<ServiceRow>> {
    Ok(match lock {
        Lock::None => {
            select!("WHERE cluster_id = $1 AND namespace = $2 AND (id = $3 OR name = $4)", cluster, namespace, id, name)
                .fetch_optional(conn)
                .await?
        }
        Lock::ForUpdate => {
            select!(locked "WHERE cluster_id = $1 AND namespace = $2 AND (id = $3 OR name = $4)",
                cluster, namespace, id, name)
            .fetch_optional(conn)
            .await?
        }
    })
}

/// A page of a namespace's services in id order.
pub(in crate::app) async fn list(
    conn: &mut PgConnection,
    cluster: Uuid,
    namespace: &str,
    page: &PageRequest,
) -> Result<Vec<ServiceRow>> {
    Ok(select!(
        "WHERE cluster_id = $1 AND namespace = $2 AND ($3::uuid IS NULL OR id > $3) ORDER BY id LIMIT $4",
        cluster,
        namespace,
        page.after,
        page.fetch_limit(),
    )
    .fetch_all(conn)
    .await?)
}

/// The node ports the cluster's services hold, but for `except`'s.
pub(in crate::app) async fn node_ports_in(
    conn: &mut PgConnection,
    cluster: Uuid,
    except: Option<Uuid>,
) -> Result<Vec<i64>> {
    let specs = sqlx::query_scalar!(
        "SELECT spec FROM services WHERE cluster_id = $1 AND ($2::uuid IS NULL OR id <> $2)",
        cluster,
        except,
    )
    .fetch_all(conn)
    .await?;
    let mut ports = Vec::new();
    for spec in &specs {
        let spec: ServiceSpecStored = jsonb::from_column("service spec", spec)?;
        ports.extend(spec.ports.into_iter().filter_map(|p| p.node_port));
    }
    Ok(ports)
}

/// The host number after the cluster's highest, or `first` if it has no
/// service yet.
pub(in crate::app) async fn next_ip_index(conn: &mut PgConnection, cluster: Uuid, first: i32) -> Result<i32> {
    Ok(sqlx::query_scalar!(
        r#"SELECT COALESCE(max(ip_index) + 1, $2) AS "next!" FROM services WHERE cluster_id = $1"#,
        cluster,
        first,
    )
    .fetch_one(conn)
    .await?)
}

/// The lowest host number in `first..=last` no service of the cluster holds.
pub(in crate::app) async fn lowest_free_ip_index(
    conn: &mut PgConnection,
    cluster: Uuid,
    first: i32,
    last: i32,
) -> Result<Option<i32>> {
    Ok(sqlx::query_scalar!(
        "SELECT min(i) FROM generate_series($2::int, $3::int) AS i
         WHERE NOT EXISTS (SELECT 1 FROM services WHERE cluster_id = $1 AND ip_index = i)",
        cluster,
        first,
        last,
    )
    .fetch_one(conn)
    .await?)
}

/// A new service; a name taken in the namespace is `409 already_exists`.
pub(in crate::app) struct NewService<'a> {
    pub id: Uuid,
    pub org: Uuid,
    pub project: Uuid,
    pub cluster: Uuid,
    pub namespace: &'a str,
    pub name: &'a str,
    pub labels: &'a Labels,
    pub spec: &'a ServiceSpec,
    pub ip_index: i32,
}

pub(in crate::app) async fn insert(conn: &mut PgConnection, new: NewService<'_>) -> Result<ServiceRow> {
    sqlx::query_as!(
        ServiceRow,
        "INSERT INTO services (id, org_id, project_id, cluster_id, namespace, name, labels, spec, ip_index)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         RETURNING id, cluster_id, namespace, name, labels, spec, ip_index, version, created_at, updated_at",
        new.id,
        new.org,
        new.project,
        new.cluster,
        new.namespace,
        new.name,
        json!(new.labels),
        jsonb::to_column(&ServiceSpecStored::from(new.spec)),
        new.ip_index,
    )
    .fetch_one(conn)
    .await
    .map_err(or_unique(|| {
        Error::conflict("already_exists", format!("service {:?} exists in this namespace", new.name))
    }))
}

/// Sets the labels (if given) and the spec.
pub(in crate::app::workloads) async fn update(
    conn: &mut PgConnection,
    id: Uuid,
    labels: Option<&Labels>,
    spec: &ServiceSpec,
) -> Result<ServiceRow> {
    Ok(sqlx::query_as!(
        ServiceRow,
        "UPDATE services SET labels = COALESCE($2, labels), spec = $3, version = version + 1, updated_at = now(),
                             sent_to_cluster = true
         WHERE id = $1
         RETURNING id, cluster_id, namespace, name, labels, spec, ip_index, version, created_at, updated_at",
        id,
        labels.map(|l| json!(l)),
        jsonb::to_column(&ServiceSpecStored::from(spec)),
    )
    .fetch_one(conn)
    .await?)
}

pub(in crate::app::workloads) async fn delete(conn: &mut PgConnection, id: Uuid) -> Result<()> {
    sqlx::query!("DELETE FROM services WHERE id = $1", id).execute(conn).await?;
    Ok(())
}

/// Up to `limit` services made before service commands existed and not
/// yet looked at by the backfill (`sent_to_cluster` NULL) whose namespace
/// was, in no set order (so rows a pass must leave do not keep the others waiting).
pub(in crate::app::workloads) async fn unchecked(
    conn: &mut PgConnection,
    limit: i64,
) -> Result<Vec<super::namespaces::Unchecked>> {
    Ok(sqlx::query_as!(
        super::namespaces::Unchecked,
        "SELECT s.id, s.cluster_id, s.org_id, s.name FROM services s
         WHERE s.sent_to_cluster IS NULL
           AND NOT EXISTS (SELECT 1 FROM namespaces n
                           WHERE n.cluster_id = s.cluster_id AND n.name = s.namespace AND n.sent_to_cluster IS NULL)
         ORDER BY random() LIMIT $1",
        limit
    )
    .fetch_all(conn)
    .await?)
}

/// Marks service `id` looked at, if it was not: the row, locked, when this
/// call is the one that marks it.
pub(in crate::app::workloads) async fn take_unchecked(conn: &mut PgConnection, id: Uuid) -> Result<Option<ServiceRow>> {
    Ok(sqlx::query_as!(
        ServiceRow,
        "UPDATE services SET sent_to_cluster = true WHERE id = $1 AND sent_to_cluster IS NULL
         RETURNING id, cluster_id, namespace, name, labels, spec, ip_index, version, created_at, updated_at",
        id
    )
    .fetch_optional(conn)
    .await?)
}
