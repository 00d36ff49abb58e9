//! The `sessions` and `refresh_tokens` tables.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::{PageRequest, Result};

/// A session starting now; `source_ip` is also its last address.
pub(in crate::app) struct NewSession<'a> {
    pub id: Uuid,
    pub user: Uuid,
    pub org: Uuid,
    pub expires_at: DateTime<Utc>,
    pub source_ip: Option<&'a str>,
    pub user_agent: Option<&'a str>,
    pub method: &'a str,
    /// The organization whose identity provider started it: it acts there only.
    pub sso_org: Option<Uuid>,
}

pub(in crate::app) async fn insert(conn: &mut PgConnection, new: NewSession<'_>) -> Result<()> {
    sqlx::query!(
        "INSERT INTO sessions (id, user_id, org_id, expires_at, source_ip, user_agent, method, sso_org_id,
             last_used_at, last_ip)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now(), $5)",
        new.id,
        new.user,
        new.org,
        new.expires_at,
        new.source_ip,
        new.user_agent,
        new.method,
        new.sso_org,
    )
    .execute(conn)
    .await?;
    Ok(())
}

pub(in crate::app) async fn insert_refresh_token(
    conn: &mut PgConnection,
    token_hash: &[u8],
    session: Uuid,
) -> Result<()> {
    sqlx::query!("INSERT INTO refresh_tokens (token_hash, session_id) VALUES ($1, $2)", token_hash, session)
        .execute(conn)
        .await?;
    Ok(())
}

/// A refresh token and its session, as a refresh judges them.
pub(in crate::app) struct RefreshRow {
    pub used_at: Option<DateTime<Utc>>,
    pub session_id: Uuid,
    pub user_id: Uuid,
    pub org_id: Uuid,
    pub revoked_at: Option<DateTime<Utc>>,
    pub expires_at: DateTime<Utc>,
    pub sso_org_id: Option<Uuid>,
}

/// Locks a refresh token and its session (`FOR UPDATE OF r, s`): two
/// refreshes with one token serialize, and the second sees it used.
pub(in crate::app) async fn lock_by_refresh_token(
    conn: &mut PgConnection,
    token_hash: &[u8],
) -> Result<Option<RefreshRow>> {
    Ok(sqlx::query_as!(
        RefreshRow,
        "SELECT r.used_at, s.id AS session_id, s.user_id, s.org_id, s.revoked_at, s.expires_at, s.sso_org_id
         FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id
         WHERE r.token_hash = $1 FOR UPDATE OF r, s",
        token_hash,
    )
    .fetch_optional(conn)
    .await?)
}

pub(in crate::app) async fn spend_refresh_token(conn: &mut PgConnection, token_hash: &[u8]) -> Result<()> {
    sqlx::query!("UPDATE refresh_tokens SET used_at = now() WHERE token_hash = $1", token_hash).execute(conn).await?;
    Ok(())
}

/// The session a refresh token belongs to, used or not.
pub(in crate::app) async fn of_refresh_token(conn: &mut PgConnection, token_hash: &[u8]) -> Result<Option<Uuid>> {
    Ok(sqlx::query_scalar!("SELECT session_id FROM refresh_tokens WHERE token_hash = $1", token_hash)
        .fetch_optional(conn)
        .await?)
}

/// Moves a refreshed session to `org` and records its use from `ip`.
pub(in crate::app) async fn touch(conn: &mut PgConnection, id: Uuid, org: Uuid, ip: Option<&str>) -> Result<()> {
    sqlx::query!("UPDATE sessions SET org_id = $2, last_used_at = now(), last_ip = $3 WHERE id = $1", id, org, ip)
        .execute(conn)
        .await?;
    Ok(())
}

/// Ends a session whose refresh token was replayed; false if it had ended
/// already (so the reuse is acted on once).
pub(in crate::app) async fn revoke_for_reuse(conn: &mut PgConnection, id: Uuid) -> Result<bool> {
    Ok(sqlx::query!(
        "UPDATE sessions SET revoked_at = now(), revoked_reason = 'refresh_token_reuse'
         WHERE id = $1 AND revoked_at IS NULL RETURNING id",
        id,
    )
    .fetch_optional(conn)
    .await?
    .is_some())
}

/// Who a session ended by logout belonged to, and where it acted.
pub(in crate::app) struct EndedSession {
    pub user_id: Uuid,
    pub org_id: Uuid,
}

/// Ends a session at logout; `None` if it had ended already.
pub(in crate::app) async fn revoke_for_logout(conn: &mut PgConnection, id: Uuid) -> Result<Option<EndedSession>> {
    Ok(sqlx::query_as!(
        EndedSession,
        "UPDATE sessions SET revoked_at = now(), revoked_reason = 'logout'
         WHERE id = $1 AND revoked_at IS NULL RETURNING user_id, org_id",
        id,
    )
    .fetch_optional(conn)
    .await?)
}

/// A session ended by its owner, and where it acted.
pub(in crate::app) struct RevokedSession {
    pub id: Uuid,
    pub org_id: Uuid,
}

/// Ends `user`'s live sessions: only `only`, or all but `except`, and only
/// those from `bound`'s identity provider if given (a session from one sees
/// no others).
pub(in crate::app) async fn revoke_by_owner(
    conn: &mut PgConnection,
    user: Uuid,
    bound: Option<Uuid>,
    only: Option<Uuid>,
    except: Option<Uuid>,
) -> Result<Vec<RevokedSession>> {
    Ok(sqlx::query_as!(
        RevokedSession,
        "UPDATE sessions SET revoked_at = now(), revoked_reason = 'revoked_by_owner'
         WHERE user_id = $1 AND revoked_at IS NULL AND ($2::uuid IS NULL OR sso_org_id = $2)
           AND ($3::uuid IS NULL OR id = $3) AND ($4::uuid IS NULL OR id <> $4)
         RETURNING id, org_id",
        user,
        bound,
        only,
        except,
    )
    .fetch_all(conn)
    .await?)
}

/// Ends every live session of `user`, recording `reason`.
pub(in crate::app) async fn revoke_all_of_user(conn: &mut PgConnection, user: Uuid, reason: &str) -> Result<()> {
    sqlx::query!(
        "UPDATE sessions SET revoked_at = now(), revoked_reason = $2
         WHERE user_id = $1 AND revoked_at IS NULL",
        user,
        reason,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Ends every live session `org`'s identity provider started (its maker
/// was evicted: whoever signed in through it signs in that way no more).
pub(in crate::app) async fn revoke_through_sso(conn: &mut PgConnection, org: Uuid) -> Result<()> {
    sqlx::query!(
        "UPDATE sessions SET revoked_at = now(), revoked_reason = 'address_proven'
         WHERE sso_org_id = $1 AND revoked_at IS NULL",
        org,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A live session as its owner sees it.
pub(in crate::app) struct SessionRow {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub source_ip: Option<String>,
    pub last_ip: Option<String>,
    pub user_agent: Option<String>,
    pub method: String,
    pub org_id: Uuid,
    pub org_name: String,
}

/// A page of `user`'s live sessions, newest first; only those from
/// `bound`'s identity provider if given.
pub(in crate::app) async fn list_live(
    conn: &mut PgConnection,
    user: Uuid,
    bound: Option<Uuid>,
    page: &PageRequest,
) -> Result<Vec<SessionRow>> {
    Ok(sqlx::query_as!(
        SessionRow,
        "SELECT s.id, s.created_at, s.expires_at, s.last_used_at, s.source_ip, s.last_ip, s.user_agent, s.method,
                s.org_id, o.name AS org_name
         FROM sessions s JOIN organizations o ON o.id = s.org_id
         WHERE s.user_id = $1 AND s.revoked_at IS NULL AND s.expires_at > now()
           AND ($2::uuid IS NULL OR s.sso_org_id = $2) AND ($3::uuid IS NULL OR s.id < $3)
         ORDER BY s.id DESC LIMIT $4",
        user,
        bound,
        page.after,
        page.fetch_limit(),
    )
    .fetch_all(conn)
    .await?)
}
