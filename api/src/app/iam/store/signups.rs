//! The `signup_requests` table: sign-ups waiting for their address's owner
//! to follow the mailed link.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

use crate::app::Result;

/// A sign-up asked for; the token is stored hashed.
pub(in crate::app) struct NewSignup<'a> {
    pub token_hash: &'a [u8],
    pub email: &'a str,
    pub display_name: &'a str,
    pub password_hash: &'a str,
    pub organization_name: &'a str,
    pub expires_at: DateTime<Utc>,
}

pub(in crate::app) async fn insert(conn: &mut PgConnection, new: NewSignup<'_>) -> Result<()> {
    sqlx::query!(
        "INSERT INTO signup_requests (token_hash, email, display_name, password_hash, organization_name,
             expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
        new.token_hash,
        new.email,
        new.display_name,
        new.password_hash,
        new.organization_name,
        new.expires_at,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// What a sign-up link creates.
pub(in crate::app) struct SignupRow {
    pub email: String,
    pub display_name: String,
    pub password_hash: String,
    pub organization_name: String,
}

/// Locks the live (unused, unexpired) request of a link, so two
/// confirmations of it serialize.
pub(in crate::app) async fn lock_live(conn: &mut PgConnection, token_hash: &[u8]) -> Result<Option<SignupRow>> {
    Ok(sqlx::query_as!(
        SignupRow,
        "SELECT email, display_name, password_hash, organization_name FROM signup_requests
         WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() FOR UPDATE",
        token_hash,
    )
    .fetch_optional(conn)
    .await?)
}

/// Counts a wrong password; the `max_attempts`th spends the link.
pub(in crate::app) async fn wrong_password(
    conn: &mut PgConnection,
    token_hash: &[u8],
    max_attempts: i32,
) -> Result<()> {
    sqlx::query!(
        "UPDATE signup_requests SET attempts = attempts + 1,
             used_at = CASE WHEN attempts + 1 >= $2 THEN now() END
         WHERE token_hash = $1",
        token_hash,
        max_attempts,
    )
    .execute(conn)
    .await?;
    Ok(())
}

pub(in crate::app) async fn spend(conn: &mut PgConnection, token_hash: &[u8]) -> Result<()> {
    sqlx::query!("UPDATE signup_requests SET used_at = now() WHERE token_hash = $1", token_hash).execute(conn).await?;
    Ok(())
}

/// Sign-up messages (to a new address or an existing account) sent to
/// `email` in the last hour.
pub(in crate::app) async fn mails_this_hour(conn: &mut PgConnection, email: &str) -> Result<i64> {
    Ok(sqlx::query_scalar!(
        r#"SELECT count(*) AS "n!" FROM mail_outbox WHERE to_address = $1
           AND kind IN ('signup', 'signup_existing') AND created_at > now() - interval '1 hour'"#,
        email
    )
    .fetch_one(conn)
    .await?)
}

/// Forgets requests a day after they expired; answers how many.
pub(in crate::app) async fn purge_expired(conn: &mut PgConnection) -> Result<u64> {
    Ok(sqlx::query!("DELETE FROM signup_requests WHERE expires_at < now() - interval '1 day'")
        .execute(conn)
        .await?
        .rows_affected())
}
