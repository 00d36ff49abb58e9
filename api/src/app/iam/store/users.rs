//! The `users`, `email_tokens` and `login_failures` tables.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::authz::Lock;
use crate::app::error::or_unique;
use crate::app::{Error, Result};

/// A stored person.
pub(in crate::app) struct UserRow {
    pub id: Uuid,
    pub email: String,
    pub display_name: String,
    pub email_verified_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

/// `sqlx::query_as!` over `users` with `UserRow`'s columns and the rest of
/// the statement given; `locked` adds `FOR UPDATE`.
macro_rules! select {
    (locked $rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            UserRow,
            "SELECT id, email, display_name, email_verified_at, created_at FROM users " + $rest + " FOR UPDATE"
            $(, $arg)*
        )
    };
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(UserRow, "SELECT id, email, display_name, email_verified_at, created_at FROM users " + $rest $(, $arg)*)
    };
}

pub(in crate::app) async fn find(conn: &mut PgConnection, id: Uuid) -> Result<Option<UserRow>> {
    Ok(select!("WHERE id = $1", id).fetch_optional(conn).await?)
}

/// An account known to exist (the caller's own); a missing one is an error.
pub(in crate::app) async fn get(conn: &mut PgConnection, id: Uuid) -> Result<UserRow> {
    Ok(select!("WHERE id = $1", id).fetch_one(conn).await?)
}

/// The account using `email`, if any; an SSO sign-in takes it `ForUpdate`
/// so a reset or an address proven meanwhile serializes with it.
pub(in crate::app) async fn find_by_email(conn: &mut PgConnection, email: &str, lock: Lock) -> Result<Option<UserRow>> {
    Ok(match lock {
        Lock::None => select!("WHERE email = $1", email).fetch_optional(conn).await?,
        Lock::ForUpdate => select!(locked "WHERE email = $1", email).fetch_optional(conn).await?,
    })
}

/// What a password sign-in checks: the hash, and the version that must
/// still be the account's when the session is made.
pub(in crate::app) struct PasswordRow {
    pub id: Uuid,
    pub password_hash: Option<String>,
    pub version: i64,
}

pub(in crate::app) async fn password_by_email(conn: &mut PgConnection, email: &str) -> Result<Option<PasswordRow>> {
    Ok(sqlx::query_as!(PasswordRow, "SELECT id, password_hash, version FROM users WHERE email = $1", email)
        .fetch_optional(conn)
        .await?)
}

pub(in crate::app) async fn id_by_email(conn: &mut PgConnection, email: &str) -> Result<Option<Uuid>> {
    Ok(sqlx::query_scalar!("SELECT id FROM users WHERE email = $1", email).fetch_optional(conn).await?)
}

pub(in crate::app) async fn email(conn: &mut PgConnection, id: Uuid) -> Result<String> {
    Ok(sqlx::query_scalar!("SELECT email FROM users WHERE id = $1", id).fetch_one(conn).await?)
}

/// Holds the account row (`FOR SHARE`) until the transaction ends: a
/// reset or an address proven, which take it `FOR UPDATE`, waits.
pub(in crate::app) async fn share(conn: &mut PgConnection, id: Uuid) -> Result<()> {
    sqlx::query!("SELECT id FROM users WHERE id = $1 FOR SHARE", id).fetch_optional(conn).await?;
    Ok(())
}

/// The account's version, held `FOR SHARE`: a password sign-in checks the
/// password it verified is still the account's.
pub(in crate::app) async fn share_version(conn: &mut PgConnection, id: Uuid) -> Result<i64> {
    Ok(sqlx::query_scalar!("SELECT version FROM users WHERE id = $1 FOR SHARE", id).fetch_one(conn).await?)
}

/// Locks the account and answers whether its address was ever proven.
pub(in crate::app) async fn lock_verified(conn: &mut PgConnection, id: Uuid) -> Result<bool> {
    Ok(sqlx::query_scalar!("SELECT email_verified_at FROM users WHERE id = $1 FOR UPDATE", id)
        .fetch_one(conn)
        .await?
        .is_some())
}

/// A new account whose address the sign-up link proved; a taken address is
/// `409 email_taken` (only the address's owner holds the link, so saying so
/// reveals nothing).
pub(in crate::app) async fn insert_verified(
    conn: &mut PgConnection,
    id: Uuid,
    email: &str,
    display_name: &str,
    password_hash: &str,
) -> Result<UserRow> {
    sqlx::query_as!(
        UserRow,
        "INSERT INTO users (id, email, display_name, password_hash, email_verified_at) VALUES ($1, $2, $3, $4, now())
         RETURNING id, email, display_name, email_verified_at, created_at",
        id,
        email,
        display_name,
        password_hash,
    )
    .fetch_one(conn)
    .await
    .map_err(or_unique(|| {
        Error::conflict("email_taken", "an account with this e-mail address exists; sign in instead")
    }))
}

/// A new account an organization's identity provider vouched for, made
/// just in time; it records which provider made it, so an eviction of that
/// provider's maker unproves it.
pub(in crate::app) async fn insert_through_sso(
    conn: &mut PgConnection,
    id: Uuid,
    email: &str,
    display_name: &str,
    org: Uuid,
    issuer: &str,
) -> Result<Uuid> {
    Ok(sqlx::query_scalar!(
        "INSERT INTO users (id, email, display_name, email_verified_at, made_through_sso_org,
                            made_through_sso_issuer)
         VALUES ($1, $2, $3, now(), $4, $5) RETURNING id",
        id,
        email,
        display_name,
        org,
        issuer,
    )
    .fetch_one(conn)
    .await?)
}

/// Marks the address proven by mail: the account no longer rests on an
/// identity provider's word for it.
pub(in crate::app) async fn mark_verified(conn: &mut PgConnection, id: Uuid) -> Result<UserRow> {
    Ok(sqlx::query_as!(
        UserRow,
        "UPDATE users SET email_verified_at = COALESCE(email_verified_at, now()), updated_at = now(),
             made_through_sso_org = NULL, made_through_sso_issuer = NULL
         WHERE id = $1 RETURNING id, email, display_name, email_verified_at, created_at",
        id,
    )
    .fetch_one(conn)
    .await?)
}

/// Sets the password a reset link chose; following the link proves the
/// address as well.
pub(in crate::app) async fn set_password_from_reset(conn: &mut PgConnection, id: Uuid, hash: &str) -> Result<()> {
    sqlx::query!(
        "UPDATE users SET password_hash = $2, email_verified_at = COALESCE(email_verified_at, now()),
             made_through_sso_org = NULL, made_through_sso_issuer = NULL,
             updated_at = now(), version = version + 1
         WHERE id = $1",
        id,
        hash,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Takes the password away from an evicted maker (the version moves, so a
/// sign-in checked against the old one fails).
pub(in crate::app) async fn clear_password(conn: &mut PgConnection, id: Uuid) -> Result<()> {
    sqlx::query!("UPDATE users SET password_hash = NULL, version = version + 1 WHERE id = $1", id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Makes an account an evicted identity provider vouched for unproven: no
/// password until someone proves the address by mail.
pub(in crate::app) async fn unprove(conn: &mut PgConnection, id: Uuid) -> Result<()> {
    sqlx::query!(
        "UPDATE users SET password_hash = NULL, email_verified_at = NULL, version = version + 1
         WHERE id = $1",
        id
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// The accounts the identity provider `(org, issuer)` made, but `except`.
pub(in crate::app) async fn made_through_sso(
    conn: &mut PgConnection,
    org: Uuid,
    issuer: &str,
    except: Uuid,
) -> Result<Vec<Uuid>> {
    Ok(sqlx::query_scalar!(
        "SELECT id FROM users WHERE made_through_sso_org = $1 AND made_through_sso_issuer = $2 AND id <> $3",
        org,
        issuer,
        except,
    )
    .fetch_all(conn)
    .await?)
}

/// A single-use e-mail token for `purpose`, stored hashed.
pub(in crate::app) async fn insert_email_token(
    conn: &mut PgConnection,
    token_hash: &[u8],
    user: Uuid,
    purpose: &str,
    expires_at: DateTime<Utc>,
) -> Result<()> {
    sqlx::query!(
        "INSERT INTO email_tokens (token_hash, user_id, purpose, expires_at) VALUES ($1, $2, $3, $4)",
        token_hash,
        user,
        purpose,
        expires_at,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Spends an unused, unexpired e-mail token for `purpose`; its user, or
/// `None` (the conditional update makes a second spend find nothing).
pub(in crate::app) async fn spend_email_token(
    conn: &mut PgConnection,
    token_hash: &[u8],
    purpose: &str,
) -> Result<Option<Uuid>> {
    Ok(sqlx::query_scalar!(
        "UPDATE email_tokens SET used_at = now()
         WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()
         RETURNING user_id",
        token_hash,
        purpose,
    )
    .fetch_optional(conn)
    .await?)
}

/// Password-reset messages (to an account or about none) sent to `email`
/// in the last hour.
pub(in crate::app) async fn reset_mails_this_hour(conn: &mut PgConnection, email: &str) -> Result<i64> {
    Ok(sqlx::query_scalar!(
        r#"SELECT count(*) AS "n!" FROM mail_outbox WHERE to_address = $1
           AND kind IN ('password_reset', 'password_reset_unknown') AND created_at > now() - interval '1 hour'"#,
        email
    )
    .fetch_one(conn)
    .await?)
}

/// Seconds until `email` may try a password again, if it is backing off.
pub(in crate::app) async fn blocked_seconds(conn: &mut PgConnection, email: &str) -> Result<Option<f64>> {
    Ok(sqlx::query_scalar!(
        r#"SELECT EXTRACT(EPOCH FROM blocked_until - now())::float8 AS "seconds!"
           FROM login_failures WHERE email = $1 AND blocked_until > now()"#,
        email,
    )
    .fetch_optional(conn)
    .await?)
}

/// Counts a wrong password for `email`; from the `before_backoff`th on, the
/// address is blocked for exponentially longer, at most `max_seconds`.
pub(in crate::app) async fn record_login_failure(
    conn: &mut PgConnection,
    email: &str,
    before_backoff: i32,
    max_seconds: f64,
) -> Result<()> {
    sqlx::query!(
        "INSERT INTO login_failures (email, failures) VALUES ($1, 1)
         ON CONFLICT (email) DO UPDATE SET
             failures = login_failures.failures + 1, last_failed = now(),
             blocked_until = CASE WHEN login_failures.failures + 1 >= $2
                 THEN now() + make_interval(secs => LEAST($3::float8,
                          power(2, login_failures.failures + 3 - $2)::float8))
                 ELSE NULL END",
        email,
        before_backoff,
        max_seconds,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Forgets `email`'s wrong passwords (a sign-in or a reset succeeded).
pub(in crate::app) async fn clear_login_failures(conn: &mut PgConnection, email: &str) -> Result<()> {
    sqlx::query!("DELETE FROM login_failures WHERE email = $1", email).execute(conn).await?;
    Ok(())
}
