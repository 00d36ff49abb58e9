//! The `webhook_endpoints`, `webhook_deliveries` and `webhook_attempts`
//! tables (events themselves are written by `emit_event` in SQL).

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::authz::Lock;
use crate::app::error::or_unique;
use crate::app::{Error, PageRequest, Result};

/// A stored endpoint, without its secret.
pub(in crate::app) struct EndpointRow {
    pub id: Uuid,
    pub url: String,
    pub description: String,
    pub event_types: Vec<String>,
    pub failing_since: Option<DateTime<Utc>>,
    pub disabled_at: Option<DateTime<Utc>>,
    pub disabled_reason: Option<String>,
    /// Until when the previous secret also signs deliveries (may be past).
    pub previous_secret_expires_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

/// `sqlx::query_as!` over `webhook_endpoints` with `EndpointRow`'s columns
/// and the rest of the statement given; `locked` adds `FOR UPDATE`.
macro_rules! select {
    (locked $rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            EndpointRow,
            "SELECT id, url, description, event_types, failing_since, disabled_at, disabled_reason,
                    previous_secret_expires_at, created_at
             FROM webhook_endpoints " + $rest + " FOR UPDATE"
            $(, $arg)*
        )
    };
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            EndpointRow,
            "SELECT id, url, description, event_types, failing_since, disabled_at, disabled_reason,
                    previous_secret_expires_at, created_at
             FROM webhook_endpoints " + $rest
            $(, $arg)*
        )
    };
}

/// A page of `org`'s endpoints, in id order.
pub(in crate::app) async fn list(conn: &mut PgConnection, org: Uuid, page: &PageRequest) -> Result<Vec<EndpointRow>> {
    Ok(select!(
        "WHERE org_id = $1 AND ($2::uuid IS NULL OR id > $2) ORDER BY id LIMIT $3",
        org,
        page.after,
        page.fetch_limit(),
    )
    .fetch_all(conn)
    .await?)
}

/// An endpoint of `org`; a change takes it `ForUpdate`, so it reads the
/// endpoint it replaces.
pub(in crate::app) async fn find(
    conn: &mut PgConnection,
    org: Uuid,
    id: Uuid,
    lock: Lock,
) -> Result<Option<EndpointRow>> {
    Ok(match lock {
        Lock::None => select!("WHERE id = $1 AND org_id = $2", id, org).fetch_optional(conn).await?,
        Lock::ForUpdate => select!(locked "WHERE id = $1 AND org_id = $2", id, org).fetch_optional(conn).await?,
    })
}

/// What an endpoint change writes; `None` keeps a field as it is.
pub(in crate::app) struct EndpointChange<'a> {
    pub url: Option<&'a str>,
    pub description: Option<&'a str>,
    pub event_types: Option<&'a [String]>,
    /// Who pointed the endpoint at a new URL, when the change does.
    pub url_set_by: Option<Uuid>,
}

/// Changes an endpoint of `org` (found `ForUpdate`: it exists).
pub(in crate::app) async fn update(
    conn: &mut PgConnection,
    org: Uuid,
    id: Uuid,
    change: EndpointChange<'_>,
) -> Result<()> {
    sqlx::query!(
        "UPDATE webhook_endpoints SET url = COALESCE($3, url), description = COALESCE($4, description),
             event_types = COALESCE($5, event_types), url_set_by = COALESCE($6, url_set_by)
         WHERE id = $1 AND org_id = $2",
        id,
        org,
        change.url,
        change.description,
        change.event_types,
        change.url_set_by,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Fails the pending deliveries of an endpoint whose events it no longer
/// subscribes to (its types were just narrowed to `event_types`); returns
/// how many.
pub(in crate::app) async fn fail_unsubscribed(
    conn: &mut PgConnection,
    id: Uuid,
    event_types: &[String],
) -> Result<u64> {
    let failed = sqlx::query!(
        "UPDATE webhook_deliveries d SET status = 'failed', finished_at = now()
         FROM events e
         WHERE d.endpoint_id = $1 AND d.status = 'pending' AND e.id = d.event_id
           AND NOT event_type_subscribed(e.event_type, $2)",
        id,
        event_types,
    )
    .execute(conn)
    .await?
    .rows_affected();
    Ok(failed)
}

/// Forgets previous signing secrets whose grace period is over, of event
/// webhook endpoints and deploy hooks alike: nothing reads them any more,
/// and a secret kept is a secret that can leak. Returns how many.
pub(in crate::app) async fn purge_expired_previous_secrets(conn: &mut PgConnection) -> Result<u64> {
    let endpoints = sqlx::query!(
        "UPDATE webhook_endpoints SET previous_secret_enc = NULL, previous_secret_expires_at = NULL
         WHERE previous_secret_expires_at <= now()"
    )
    .execute(&mut *conn)
    .await?
    .rows_affected();
    let hooks = sqlx::query!(
        "UPDATE deploy_hooks SET previous_secret_enc = NULL, previous_secret_expires_at = NULL,
             previous_secret_issued_to = NULL
         WHERE previous_secret_expires_at <= now()"
    )
    .execute(conn)
    .await?
    .rows_affected();
    Ok(endpoints + hooks)
}

/// Enables a disabled endpoint again, with no failure behind it: its
/// disabled state and `failing_since` are cleared. False if it was enabled.
pub(in crate::app) async fn enable(conn: &mut PgConnection, id: Uuid) -> Result<bool> {
    let enabled = sqlx::query!(
        "UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL
         WHERE id = $1 AND disabled_at IS NOT NULL",
        id
    )
    .execute(conn)
    .await?
    .rows_affected();
    Ok(enabled > 0)
}

/// Replaces an endpoint's secret (Vault transit ciphertext); the one it
/// replaces keeps signing beside it for `keep_seconds` (0: not at all,
/// and a previous one still in its grace period ends). None if `org` has
/// no such endpoint.
pub(in crate::app) async fn rotate_secret(
    conn: &mut PgConnection,
    org: Uuid,
    id: Uuid,
    secret_enc: &str,
    keep_seconds: i64,
) -> Result<Option<EndpointRow>> {
    Ok(sqlx::query_as!(
        EndpointRow,
        "UPDATE webhook_endpoints SET
             previous_secret_enc = CASE WHEN $4 > 0 THEN secret_enc END,
             previous_secret_expires_at = CASE WHEN $4 > 0 THEN now() + make_interval(secs => $4) END,
             secret_enc = $3
         WHERE id = $1 AND org_id = $2
         RETURNING id, url, description, event_types, failing_since, disabled_at, disabled_reason,
                   previous_secret_expires_at, created_at",
        id,
        org,
        secret_enc,
        keep_seconds as f64,
    )
    .fetch_optional(conn)
    .await?)
}

/// A new endpoint; its secret is Vault transit ciphertext.
pub(in crate::app) struct NewEndpoint<'a> {
    pub id: Uuid,
    pub org: Uuid,
    pub url: &'a str,
    pub description: &'a str,
    pub event_types: &'a [String],
    pub secret_enc: &'a str,
    pub created_by: Uuid,
}

pub(in crate::app) async fn insert(conn: &mut PgConnection, new: NewEndpoint<'_>) -> Result<EndpointRow> {
    Ok(sqlx::query_as!(
        EndpointRow,
        "INSERT INTO webhook_endpoints (id, org_id, url, description, event_types, secret_enc, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         RETURNING id, url, description, event_types, failing_since, disabled_at, disabled_reason,
                   previous_secret_expires_at, created_at",
        new.id,
        new.org,
        new.url,
        new.description,
        new.event_types,
        new.secret_enc,
        new.created_by,
    )
    .fetch_one(conn)
    .await?)
}

/// Deletes an endpoint of `org`; false if there was none.
pub(in crate::app) async fn delete(conn: &mut PgConnection, org: Uuid, id: Uuid) -> Result<bool> {
    let deleted = sqlx::query!("DELETE FROM webhook_endpoints WHERE id = $1 AND org_id = $2", id, org)
        .execute(conn)
        .await?
        .rows_affected();
    Ok(deleted > 0)
}

/// A delivery with its attempts as JSON (`[{attempt, attempted_at,
/// status_code, error, latency_ms}]`, oldest first).
pub(in crate::app) struct DeliveryRow {
    pub id: Uuid,
    pub event_id: Uuid,
    pub event_type: String,
    pub status: String,
    pub next_attempt_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub attempts: serde_json::Value,
}

/// Up to `limit` of an endpoint's deliveries, newest first (by `created_at`,
/// then id, both descending): those before `before` when given.
///
/// The page is read first, by keyset on `webhook_deliveries_endpoint_created_idx`
/// (the bounds stand in for "no `before`" so the comparison stays an index
/// condition in a generic plan too), and only its deliveries' attempts are
/// then gathered: the work is the page's, not the endpoint's history.
pub(in crate::app) async fn deliveries(
    conn: &mut PgConnection,
    endpoint: Uuid,
    before: Option<(DateTime<Utc>, Uuid)>,
    limit: i64,
) -> Result<Vec<DeliveryRow>> {
    let (before_at, before_id) = before.unzip();
    Ok(sqlx::query_as!(
        DeliveryRow,
        r#"SELECT d.id AS "id!", d.event_id AS "event_id!", e.event_type, d.status AS "status!",
                  d.next_attempt_at AS "next_attempt_at!", d.created_at AS "created_at!", d.finished_at,
                  a.attempts AS "attempts!"
           FROM (SELECT id, event_id, status, next_attempt_at, created_at, finished_at
                 FROM webhook_deliveries
                 WHERE endpoint_id = $1
                   AND (created_at, id) < (COALESCE($2::timestamptz, 'infinity'),
                                           COALESCE($3::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
                 ORDER BY created_at DESC, id DESC
                 LIMIT $4) d
           JOIN events e ON e.id = d.event_id
           CROSS JOIN LATERAL (
               SELECT COALESCE(jsonb_agg(jsonb_build_object('attempt', attempt, 'attempted_at', attempted_at,
                          'status_code', status_code, 'error', error, 'latency_ms', latency_ms)
                          ORDER BY attempt), '[]') AS attempts
               FROM webhook_attempts WHERE delivery_id = d.id) a
           ORDER BY d.created_at DESC, d.id DESC"#,
        endpoint,
        before_at,
        before_id,
        limit,
    )
    .fetch_all(conn)
    .await?)
}

/// The type of an event of `org`, if it exists.
pub(in crate::app) async fn event_type(conn: &mut PgConnection, org: Uuid, event: Uuid) -> Result<Option<String>> {
    Ok(sqlx::query_scalar!("SELECT event_type FROM events WHERE id = $1 AND org_id = $2", event, org)
        .fetch_optional(conn)
        .await?)
}

/// Queues a delivery of an event to an endpoint and wakes the dispatchers;
/// answers when it was made.
pub(in crate::app) async fn insert_delivery(
    conn: &mut PgConnection,
    id: Uuid,
    event: Uuid,
    endpoint: Uuid,
) -> Result<DateTime<Utc>> {
    let created_at = sqlx::query_scalar!(
        "INSERT INTO webhook_deliveries (id, event_id, endpoint_id) VALUES ($1, $2, $3) RETURNING created_at",
        id,
        event,
        endpoint,
    )
    .fetch_one(&mut *conn)
    .await
    .map_err(or_unique(|| Error::conflict("already_exists", "delivery exists")))?;
    sqlx::query_scalar!("SELECT pg_notify('moke_webhooks', '')").fetch_one(conn).await?;
    Ok(created_at)
}

/// Disables an endpoint and fails its pending deliveries; false if it was
/// already disabled.
pub(in crate::app) async fn disable(conn: &mut PgConnection, id: Uuid, reason: &str) -> Result<bool> {
    let disabled = sqlx::query!(
        "UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = $2 WHERE id = $1 AND disabled_at IS NULL",
        id,
        reason
    )
    .execute(&mut *conn)
    .await?
    .rows_affected();
    if disabled == 0 {
        return Ok(false);
    }
    sqlx::query!(
        "UPDATE webhook_deliveries SET status = 'failed', finished_at = now() WHERE endpoint_id = $1 AND status = 'pending'",
        id
    )
    .execute(conn)
    .await?;
    Ok(true)
}

/// Writes an event of `org` (fanned out to its subscribed endpoints by `emit_event`).
pub(in crate::app) async fn emit_event(
    conn: &mut PgConnection,
    org: Uuid,
    event_type: &str,
    payload: serde_json::Value,
) -> Result<()> {
    sqlx::query_scalar!("SELECT emit_event($1, $2, $3)", org, event_type, payload).fetch_one(conn).await?;
    Ok(())
}

/// A delivery leased for sending, with what it needs.
pub(in crate::app) struct Due {
    pub id: Uuid,
    pub attempts: i32,
    pub event_id: Uuid,
    pub event_type: String,
    pub payload: serde_json::Value,
    pub created_at: DateTime<Utc>,
    pub endpoint_id: Uuid,
    pub org_id: Uuid,
    pub url: String,
    pub secret_enc: String,
    /// The previous secret while it still signs beside `secret_enc`.
    pub previous_secret_enc: Option<String>,
}

/// Leases up to `limit` due deliveries for `lease_seconds` (another
/// dispatcher takes them after that if this one dies).
pub(in crate::app) async fn lease_due(conn: &mut PgConnection, limit: i64, lease_seconds: f64) -> Result<Vec<Due>> {
    Ok(sqlx::query_as!(
        Due,
        r#"WITH leased AS (
               UPDATE webhook_deliveries SET next_attempt_at = now() + make_interval(secs => $2)
               WHERE id IN (SELECT id FROM webhook_deliveries
                            WHERE status = 'pending' AND next_attempt_at <= now()
                            ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
               RETURNING id, attempts, event_id, endpoint_id)
           SELECT l.id AS "id!", l.attempts AS "attempts!", l.event_id AS "event_id!", e.event_type, e.payload,
                  e.created_at, l.endpoint_id AS "endpoint_id!", w.org_id, w.url, w.secret_enc,
                  CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_enc END
                      AS previous_secret_enc
           FROM leased l JOIN events e ON e.id = l.event_id JOIN webhook_endpoints w ON w.id = l.endpoint_id"#,
        limit,
        lease_seconds,
    )
    .fetch_all(conn)
    .await?)
}

/// How one attempt ended, as recorded.
pub(in crate::app) struct AttemptRecord<'a> {
    pub delivery: Uuid,
    pub number: i32,
    pub status_code: Option<i32>,
    pub error: Option<&'a str>,
    pub latency_ms: i32,
    /// `succeeded`, `pending` (retried after `retry_in_seconds`) or `failed`.
    pub status: &'a str,
    pub retry_in_seconds: f64,
}

/// Records an attempt and what it makes of the delivery, unless the
/// delivery stopped being pending while it was in flight (its endpoint
/// disabled, or no longer subscribed to it): that stands.
pub(in crate::app) async fn record_attempt(conn: &mut PgConnection, attempt: AttemptRecord<'_>) -> Result<()> {
    sqlx::query!(
        "INSERT INTO webhook_attempts (delivery_id, attempt, status_code, error, latency_ms) VALUES ($1, $2, $3, $4, $5)",
        attempt.delivery,
        attempt.number,
        attempt.status_code,
        attempt.error,
        attempt.latency_ms,
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "UPDATE webhook_deliveries SET attempts = $2, status = $3,
             next_attempt_at = now() + make_interval(secs => $4),
             finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END
         WHERE id = $1 AND status = 'pending'",
        attempt.delivery,
        attempt.number,
        attempt.status,
        attempt.retry_in_seconds,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A delivery to the endpoint succeeded: it is no longer failing.
pub(in crate::app) async fn clear_failing(conn: &mut PgConnection, endpoint: Uuid) -> Result<()> {
    sqlx::query!("UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1", endpoint).execute(conn).await?;
    Ok(())
}

/// A delivery failed: answers since when the endpoint has been failing.
pub(in crate::app) async fn mark_failing(conn: &mut PgConnection, endpoint: Uuid) -> Result<Option<DateTime<Utc>>> {
    Ok(sqlx::query_scalar!(
        "UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, now()) WHERE id = $1
         RETURNING failing_since",
        endpoint
    )
    .fetch_one(conn)
    .await?)
}
