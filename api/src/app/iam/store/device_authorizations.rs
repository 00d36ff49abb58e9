//! The `device_authorizations` table (RFC 8628 device sign-ins: device
//! codes stored only as their SHA-256, user codes normalized) and
//! `device_code_attempts` (how many user codes each person tried lately).

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::Result;

/// A device sign-in as its confirmation and its polling read it.
pub(in crate::app) struct DeviceAuthorizationRow {
    pub id: Uuid,
    /// Normalized: 8 characters, no `-`.
    pub user_code: String,
    pub client_name: Option<String>,
    /// `pending`, `approved`, `denied` or `issued`.
    pub status: String,
    pub interval_seconds: i32,
    /// Seconds since the last poll, if the device polled.
    pub since_last_poll: Option<f64>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// `expires_at` has passed (by the database's clock).
    pub expired: bool,
    pub decided_by: Option<Uuid>,
    pub org_id: Option<Uuid>,
    pub session_id: Option<Uuid>,
}

/// `sqlx::query_as!` over `device_authorizations` with
/// `DeviceAuthorizationRow`'s columns, the rest of the statement given and
/// `FOR UPDATE`: every reader decides from the row and then changes it.
macro_rules! select_locked {
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            DeviceAuthorizationRow,
            r#"SELECT id, user_code, client_name, status, interval_seconds,
                      EXTRACT(EPOCH FROM now() - last_polled_at)::float8 AS since_last_poll,
                      created_at, expires_at, expires_at <= now() AS "expired!",
                      decided_by, org_id, session_id
               FROM device_authorizations "# + $rest + " FOR UPDATE"
            $(, $arg)*
        )
    };
}

/// Locks the sign-in whose user code is `user_code` (normalized).
pub(in crate::app) async fn lock_by_user_code(
    conn: &mut PgConnection,
    user_code: &str,
) -> Result<Option<DeviceAuthorizationRow>> {
    Ok(select_locked!("WHERE user_code = $1", user_code).fetch_optional(conn).await?)
}

/// Locks the sign-in of a device code (by its hash): two polls of one
/// device serialize here, so only one of them can collect the token.
pub(in crate::app) async fn lock_by_device_code(
    conn: &mut PgConnection,
    device_code_hash: &[u8],
) -> Result<Option<DeviceAuthorizationRow>> {
    Ok(select_locked!("WHERE device_code_hash = $1", device_code_hash).fetch_optional(conn).await?)
}

/// A device sign-in asked for.
pub(in crate::app) struct NewDeviceAuthorization<'a> {
    pub id: Uuid,
    pub device_code_hash: &'a [u8],
    pub user_code: &'a str,
    pub client_name: Option<&'a str>,
    pub interval_seconds: i32,
    pub expires_at: DateTime<Utc>,
    pub source_ip: Option<&'a str>,
    pub user_agent: Option<&'a str>,
}

/// Stores a new sign-in; false (and nothing stored) when its user code is
/// already taken by another sign-in still in the table: draw another.
pub(in crate::app) async fn insert(conn: &mut PgConnection, new: NewDeviceAuthorization<'_>) -> Result<bool> {
    let inserted = sqlx::query!(
        "INSERT INTO device_authorizations (id, device_code_hash, user_code, client_name, interval_seconds,
             expires_at, source_ip, user_agent)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT DO NOTHING",
        new.id,
        new.device_code_hash,
        new.user_code,
        new.client_name,
        new.interval_seconds,
        new.expires_at,
        new.source_ip,
        new.user_agent,
    )
    .execute(conn)
    .await?;
    Ok(inserted.rows_affected() == 1)
}

/// Approves a pending sign-in for `user` acting in `org` through
/// `session`; false when it was no longer pending.
pub(in crate::app) async fn approve(
    conn: &mut PgConnection,
    id: Uuid,
    user: Uuid,
    org: Uuid,
    session: Uuid,
) -> Result<bool> {
    let approved = sqlx::query!(
        "UPDATE device_authorizations
         SET status = 'approved', decided_by = $2, org_id = $3, session_id = $4, decided_at = now()
         WHERE id = $1 AND status = 'pending'",
        id,
        user,
        org,
        session,
    )
    .execute(conn)
    .await?;
    Ok(approved.rows_affected() == 1)
}

/// Denies a pending sign-in; false when it was no longer pending.
pub(in crate::app) async fn deny(conn: &mut PgConnection, id: Uuid, user: Uuid) -> Result<bool> {
    let denied = sqlx::query!(
        "UPDATE device_authorizations SET status = 'denied', decided_by = $2, decided_at = now()
         WHERE id = $1 AND status = 'pending'",
        id,
        user,
    )
    .execute(conn)
    .await?;
    Ok(denied.rows_affected() == 1)
}

/// Records a poll: now is its time, and `interval_seconds` the wait the
/// device is told to keep from now on.
pub(in crate::app) async fn polled(conn: &mut PgConnection, id: Uuid, interval_seconds: i32) -> Result<()> {
    sqlx::query!(
        "UPDATE device_authorizations SET last_polled_at = now(), interval_seconds = $2 WHERE id = $1",
        id,
        interval_seconds,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Spends an approved sign-in on the token it yielded; false when it was
/// not approved (so no second token can come of it).
pub(in crate::app) async fn issue(conn: &mut PgConnection, id: Uuid, token: Uuid) -> Result<bool> {
    let issued = sqlx::query!(
        "UPDATE device_authorizations SET status = 'issued', token_id = $2, issued_at = now(), last_polled_at = now()
         WHERE id = $1 AND status = 'approved'",
        id,
        token,
    )
    .execute(conn)
    .await?;
    Ok(issued.rows_affected() == 1)
}

/// Counts one more user code `user` tries, in windows of `window_seconds`
/// (a window older than that starts again at one). Answers the attempts of
/// the current window, this one included, and the seconds it has left.
/// Counted before the code is looked at, in its own statement, so
/// concurrent guesses are all counted.
pub(in crate::app) async fn count_attempt(
    conn: &mut PgConnection,
    user: Uuid,
    window_seconds: i32,
) -> Result<(i32, f64)> {
    let row = sqlx::query!(
        r#"INSERT INTO device_code_attempts AS a (user_id, window_started_at, attempts) VALUES ($1, now(), 1)
           ON CONFLICT (user_id) DO UPDATE SET
               attempts = CASE WHEN a.window_started_at > now() - make_interval(secs => $2)
                               THEN a.attempts + 1 ELSE 1 END,
               window_started_at = CASE WHEN a.window_started_at > now() - make_interval(secs => $2)
                                        THEN a.window_started_at ELSE now() END
           RETURNING attempts,
                     EXTRACT(EPOCH FROM window_started_at + make_interval(secs => $2) - now())::float8 AS "left!""#,
        user,
        f64::from(window_seconds),
    )
    .fetch_one(conn)
    .await?;
    Ok((row.attempts, row.left))
}

/// Gives back an attempt that found its sign-in (only wrong codes count).
pub(in crate::app) async fn refund_attempt(conn: &mut PgConnection, user: Uuid) -> Result<()> {
    sqlx::query!("UPDATE device_code_attempts SET attempts = GREATEST(attempts - 1, 0) WHERE user_id = $1", user)
        .execute(conn)
        .await?;
    Ok(())
}

/// Forgets sign-ins a day after they expired (an expired device code only
/// ever earns `expired_token`), and attempt windows long over.
pub(in crate::app) async fn purge_expired(conn: &mut PgConnection) -> Result<u64> {
    let sign_ins = sqlx::query!("DELETE FROM device_authorizations WHERE expires_at < now() - interval '1 day'")
        .execute(&mut *conn)
        .await?
        .rows_affected();
    let windows = sqlx::query!("DELETE FROM device_code_attempts WHERE window_started_at < now() - interval '1 day'")
        .execute(conn)
        .await?
        .rows_affected();
    Ok(sign_ins + windows)
}
