//! The `cluster_upgrade_notices` table: the automatic upgrades the owners
//! of a cluster were told of (once per cluster and version), the upgrade
//! each started, and whether they were told how it ended.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::Result;

/// The database's clock: one clock for every gateway's notice periods.
pub(in crate::app) async fn now(conn: &mut PgConnection) -> Result<DateTime<Utc>> {
    Ok(sqlx::query_scalar!(r#"SELECT now() AS "now!""#).fetch_one(conn).await?)
}

/// Holds the automatic-upgrade round for the caller's transaction: false
/// when another gateway runs one (a transaction-scoped lock, freed with the
/// connection if the gateway dies).
pub(in crate::app) async fn claim_round(conn: &mut PgConnection) -> Result<bool> {
    Ok(sqlx::query_scalar!(
        r#"SELECT pg_try_advisory_xact_lock(hashtextextended('moke.automatic_upgrades', 0)) AS "claimed!""#
    )
    .fetch_one(conn)
    .await?)
}

/// A notice of an automatic upgrade of one cluster to one version, with
/// the status of the upgrade it started.
pub(in crate::app) struct NoticeRow {
    pub reason: String,
    pub noticed_at: DateTime<Utc>,
    pub operation_id: Option<Uuid>,
    pub operation_status: Option<String>,
    pub finish_told_at: Option<DateTime<Utc>>,
}

/// A cluster that may be due an automatic upgrade: one on a release
/// channel, or on a version outside `supported` (past its end of life or
/// out of the catalog), not being deleted, in a region that reported in
/// the last `fresh_seconds` (nothing is started where nothing would act).
pub(in crate::app) struct CandidateRow {
    pub id: Uuid,
    pub spec: serde_json::Value,
}

/// Every cluster that may be due an automatic upgrade (see [`CandidateRow`]).
pub(in crate::app) async fn candidates(
    conn: &mut PgConnection,
    supported: &[String],
    fresh_seconds: f64,
) -> Result<Vec<CandidateRow>> {
    Ok(sqlx::query_as!(
        CandidateRow,
        "SELECT c.id, c.spec FROM clusters c
         WHERE c.deletion_requested_at IS NULL
           AND (c.spec ? 'release_channel' OR NOT (c.spec->>'kubernetes_version' = ANY($1)))
           AND EXISTS (SELECT 1 FROM region_health h WHERE h.region = c.region
                         AND h.last_heartbeat_at > now() - make_interval(secs => $2))
         ORDER BY c.id",
        supported,
        fresh_seconds,
    )
    .fetch_all(conn)
    .await?)
}

/// The notice of `cluster`'s upgrade to `version`, if one was sent.
pub(in crate::app) async fn find(conn: &mut PgConnection, cluster: Uuid, version: &str) -> Result<Option<NoticeRow>> {
    Ok(sqlx::query_as!(
        NoticeRow,
        r#"SELECT n.reason, n.noticed_at, n.operation_id, o.status AS "operation_status?", n.finish_told_at
           FROM cluster_upgrade_notices n LEFT JOIN operations o ON o.id = n.operation_id
           WHERE n.cluster_id = $1 AND n.kubernetes_version = $2"#,
        cluster,
        version,
    )
    .fetch_optional(conn)
    .await?)
}

/// Forgets a notice: one that no longer counts (its reason changed, it is
/// too old) or whose upgrade failed and was told of, so that the owners
/// are told again before another try.
pub(in crate::app) async fn delete(conn: &mut PgConnection, cluster: Uuid, version: &str) -> Result<()> {
    sqlx::query!(
        "DELETE FROM cluster_upgrade_notices WHERE cluster_id = $1 AND kubernetes_version = $2",
        cluster,
        version,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Records a notice at `at`; false if one was already recorded (by this
/// gateway earlier or another one now), which then is the one that counts.
pub(in crate::app) async fn insert(
    conn: &mut PgConnection,
    cluster: Uuid,
    version: &str,
    reason: &str,
    at: DateTime<Utc>,
) -> Result<bool> {
    let inserted = sqlx::query!(
        "INSERT INTO cluster_upgrade_notices (cluster_id, kubernetes_version, reason, noticed_at)
         VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        cluster,
        version,
        reason,
        at,
    )
    .execute(conn)
    .await?;
    Ok(inserted.rows_affected() == 1)
}

/// Names the upgrade a notice started; false if it had started one already.
pub(in crate::app) async fn mark_started(
    conn: &mut PgConnection,
    cluster: Uuid,
    version: &str,
    operation: Uuid,
) -> Result<bool> {
    let marked = sqlx::query!(
        "UPDATE cluster_upgrade_notices SET operation_id = $3
         WHERE cluster_id = $1 AND kubernetes_version = $2 AND operation_id IS NULL",
        cluster,
        version,
        operation,
    )
    .execute(conn)
    .await?;
    Ok(marked.rows_affected() == 1)
}

/// An automatic upgrade that ended and whose owners were not told yet.
pub(in crate::app) struct EndedRow {
    pub cluster_id: Uuid,
    pub kubernetes_version: String,
    pub org_id: Uuid,
    pub cluster_name: String,
    pub status: String,
    pub error: Option<serde_json::Value>,
}

/// Up to 100 automatic upgrades that ended untold.
pub(in crate::app) async fn ended_untold(conn: &mut PgConnection) -> Result<Vec<EndedRow>> {
    Ok(sqlx::query_as!(
        EndedRow,
        "SELECT n.cluster_id, n.kubernetes_version, o.org_id, o.target_name AS cluster_name, o.status, o.error
         FROM cluster_upgrade_notices n JOIN operations o ON o.id = n.operation_id
         WHERE n.operation_id IS NOT NULL AND n.finish_told_at IS NULL
           AND o.status IN ('succeeded', 'failed')
         ORDER BY o.updated_at LIMIT 100",
    )
    .fetch_all(conn)
    .await?)
}

/// Records that the owners were told how the upgrade ended; false if they
/// had been already.
pub(in crate::app) async fn mark_told(conn: &mut PgConnection, cluster: Uuid, version: &str) -> Result<bool> {
    let marked = sqlx::query!(
        "UPDATE cluster_upgrade_notices SET finish_told_at = now()
         WHERE cluster_id = $1 AND kubernetes_version = $2 AND finish_told_at IS NULL",
        cluster,
        version,
    )
    .execute(conn)
    .await?;
    Ok(marked.rows_affected() == 1)
}
