//! The `spec_revisions` table: every generation of a cluster's and a node
//! pool's desired spec, one immutable row each. The database writes them (a
//! trigger on `clusters` and `node_pools`, migration 50) whenever a
//! generation moves; [`attribute`] names who made one and by which Operation.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::Result;

/// A stored revision: the spec in its stored shape, the Operation that made
/// it with its kind, and who asked (a principal reference or `system`).
pub(in crate::app) struct SpecRevisionRow {
    pub generation: i64,
    pub spec: serde_json::Value,
    pub operation_id: Option<Uuid>,
    pub operation_kind: Option<String>,
    pub created_by: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// `sqlx::query_as!` over `spec_revisions r` (with the Operation that made
/// each) with `SpecRevisionRow`'s columns and the rest of the statement given.
macro_rules! select {
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            SpecRevisionRow,
            r#"SELECT r.generation, r.spec, r.operation_id, o.kind AS "operation_kind?", r.created_by, r.created_at
               FROM spec_revisions r LEFT JOIN operations o ON o.id = r.operation_id "# + $rest
            $(, $arg)*
        )
    };
}

/// One revision of a cluster or node pool.
pub(in crate::app) async fn find(
    conn: &mut PgConnection,
    resource: Uuid,
    generation: i64,
) -> Result<Option<SpecRevisionRow>> {
    Ok(select!("WHERE r.resource_id = $1 AND r.generation = $2", resource, generation).fetch_optional(conn).await?)
}

/// The newest revision of a resource older than `generation`.
pub(in crate::app) async fn previous(
    conn: &mut PgConnection,
    resource: Uuid,
    generation: i64,
) -> Result<Option<SpecRevisionRow>> {
    Ok(select!(
        "WHERE r.resource_id = $1 AND r.generation < $2 ORDER BY r.generation DESC LIMIT 1",
        resource,
        generation,
    )
    .fetch_optional(conn)
    .await?)
}

/// Up to `limit` revisions of a resource older than generation `before`
/// (all when `None`), newest first.
pub(in crate::app) async fn list(
    conn: &mut PgConnection,
    resource: Uuid,
    before: Option<i64>,
    limit: i64,
) -> Result<Vec<SpecRevisionRow>> {
    Ok(select!(
        "WHERE r.resource_id = $1 AND ($2::bigint IS NULL OR r.generation < $2) ORDER BY r.generation DESC LIMIT $3",
        resource,
        before,
        limit,
    )
    .fetch_all(conn)
    .await?)
}

/// Names the Operation and principal that brought `generation` of
/// `resource` about, on the revision the trigger just wrote (only once: a
/// later Operation at the same generation, such as a snapshot, made no
/// revision).
pub(in crate::app) async fn attribute(
    conn: &mut PgConnection,
    resource: Uuid,
    generation: i64,
    operation: Uuid,
    created_by: &str,
) -> Result<()> {
    sqlx::query!(
        "UPDATE spec_revisions SET operation_id = $3, created_by = $4
         WHERE resource_id = $1 AND generation = $2 AND created_at = now() AND operation_id IS NULL",
        resource,
        generation,
        operation,
        created_by,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// The most nodes node pool `pool`'s spec asked for (its `count`, while not
/// autoscaled) in the last `hours`: in the revisions written since, and the
/// one in force when they began. What a scale-down is measured from, so one
/// made in steps counts whole.
pub(in crate::app) async fn largest_count_since(
    conn: &mut PgConnection,
    pool: Uuid,
    hours: i64,
) -> Result<Option<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT max((r.spec->>'count')::bigint) FROM (
             SELECT spec FROM spec_revisions
             WHERE resource_id = $1 AND created_at > now() - make_interval(hours => $2::int)
             UNION ALL
             (SELECT spec FROM spec_revisions
              WHERE resource_id = $1 AND created_at <= now() - make_interval(hours => $2::int)
              ORDER BY generation DESC LIMIT 1)
         ) r
         WHERE jsonb_typeof(r.spec->'autoscaling') IS DISTINCT FROM 'object'",
    )
    .bind(pool)
    .bind(hours as i32)
    .fetch_one(conn)
    .await?)
}
