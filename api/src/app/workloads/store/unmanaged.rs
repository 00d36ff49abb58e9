//! The `unmanaged_deployments` table: a cluster's kubectl-made Deployments
//! as its region last reported them.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::{PageRequest, Result};

/// One reported Deployment.
pub(in crate::app) struct UnmanagedRow {
    pub id: Uuid,
    pub namespace: String,
    pub name: String,
    pub image: String,
    pub replicas: i64,
    pub current_replicas: i64,
    pub ready_replicas: i64,
    pub updated_replicas: i64,
    pub phase: String,
    pub created_in_cluster_at: Option<DateTime<Utc>>,
    pub observed_at: DateTime<Utc>,
}

/// What a region reports of one.
pub(in crate::app) struct Reported<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
    pub image: &'a str,
    pub replicas: i64,
    pub current_replicas: i64,
    pub ready_replicas: i64,
    pub updated_replicas: i64,
    pub phase: &'a str,
    pub created_at: Option<DateTime<Utc>>,
}

/// Replaces a cluster's list with what its region (`region`, which must be
/// the cluster's) reports: the reported ones upserted (keeping their ids;
/// a row is written only when something in it changed), the others removed.
pub(in crate::app) async fn replace(
    conn: &mut PgConnection,
    cluster: Uuid,
    region: &str,
    reported: &[Reported<'_>],
) -> Result<()> {
    let ids: Vec<Uuid> = reported.iter().map(|_| Uuid::now_v7()).collect();
    let namespaces: Vec<&str> = reported.iter().map(|r| r.namespace).collect();
    let names: Vec<&str> = reported.iter().map(|r| r.name).collect();
    let images: Vec<&str> = reported.iter().map(|r| r.image).collect();
    let phases: Vec<&str> = reported.iter().map(|r| r.phase).collect();
    let count = |of: fn(&Reported) -> i64| reported.iter().map(of).collect::<Vec<i64>>();
    let created: Vec<Option<DateTime<Utc>>> = reported.iter().map(|r| r.created_at).collect();
    sqlx::query!(
        "WITH cluster AS (SELECT id FROM clusters WHERE id = $1 AND region = $2),
         gone AS (
             DELETE FROM unmanaged_deployments u USING cluster
             WHERE u.cluster_id = cluster.id
               AND (u.namespace, u.name) NOT IN (SELECT * FROM unnest($4::text[], $5::text[]))
         )
         INSERT INTO unmanaged_deployments (id, cluster_id, namespace, name, image, phase, replicas,
                                            current_replicas, ready_replicas, updated_replicas, created_in_cluster_at)
         SELECT r.id, cluster.id, r.namespace, r.name, r.image, r.phase, r.replicas, r.current_replicas,
                r.ready_replicas, r.updated_replicas, r.created_at
         FROM cluster, unnest($3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::bigint[],
                              $10::bigint[], $11::bigint[], $12::timestamptz[])
              AS r(id, namespace, name, image, phase, replicas, current_replicas, ready_replicas, updated_replicas,
                   created_at)
         ON CONFLICT (cluster_id, namespace, name) DO UPDATE SET
             image = excluded.image, phase = excluded.phase, replicas = excluded.replicas,
             current_replicas = excluded.current_replicas, ready_replicas = excluded.ready_replicas,
             updated_replicas = excluded.updated_replicas, created_in_cluster_at = excluded.created_in_cluster_at,
             observed_at = now()
         WHERE (unmanaged_deployments.image, unmanaged_deployments.phase, unmanaged_deployments.replicas,
                unmanaged_deployments.current_replicas, unmanaged_deployments.ready_replicas,
                unmanaged_deployments.updated_replicas, unmanaged_deployments.created_in_cluster_at)
               IS DISTINCT FROM (excluded.image, excluded.phase, excluded.replicas, excluded.current_replicas,
                                 excluded.ready_replicas, excluded.updated_replicas, excluded.created_in_cluster_at)",
        cluster,
        region,
        &ids,
        &namespaces as &[&str],
        &names as &[&str],
        &images as &[&str],
        &phases as &[&str],
        &count(|r| r.replicas),
        &count(|r| r.current_replicas),
        &count(|r| r.ready_replicas),
        &count(|r| r.updated_replicas),
        &created as &[Option<DateTime<Utc>>],
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A page of a cluster's list (of one namespace's, when given) in id
/// (first reported) order.
pub(in crate::app) async fn list(
    conn: &mut PgConnection,
    cluster: Uuid,
    namespace: Option<&str>,
    page: &PageRequest,
) -> Result<Vec<UnmanagedRow>> {
    Ok(sqlx::query_as!(
        UnmanagedRow,
        "SELECT id, namespace, name, image, replicas, current_replicas, ready_replicas, updated_replicas, phase,
                created_in_cluster_at, observed_at
         FROM unmanaged_deployments
         WHERE cluster_id = $1 AND ($2::uuid IS NULL OR id > $2) AND ($4::text IS NULL OR namespace = $4)
         ORDER BY id LIMIT $3",
        cluster,
        page.after,
        page.fetch_limit(),
        namespace,
    )
    .fetch_all(conn)
    .await?)
}

/// How many kubectl-made Deployments its region reported in a namespace.
pub(in crate::app) async fn count_in(conn: &mut PgConnection, cluster: Uuid, namespace: &str) -> Result<i64> {
    Ok(sqlx::query_scalar!(
        r#"SELECT count(*) AS "n!" FROM unmanaged_deployments WHERE cluster_id = $1 AND namespace = $2"#,
        cluster,
        namespace
    )
    .fetch_one(conn)
    .await?)
}
