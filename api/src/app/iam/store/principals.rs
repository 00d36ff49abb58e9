//! The reads that authenticate a request: a credential with its owner's
//! roles and the organization's credential policy, each in one round trip
//! (the hot path), and whether a credential is still live.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::Result;

/// Whether the API token or session `id` is neither revoked nor expired.
pub(in crate::app) async fn token_or_session_live(conn: &mut PgConnection, id: Uuid) -> Result<bool> {
    Ok(sqlx::query_scalar!(
        r#"SELECT (EXISTS (SELECT 1 FROM api_tokens WHERE id = $1 AND revoked_at IS NULL
                          AND (expires_at IS NULL OR expires_at > now()))
                   OR EXISTS (SELECT 1 FROM sessions WHERE id = $1 AND revoked_at IS NULL AND expires_at > now()))
              AS "live!""#,
        id
    )
    .fetch_one(conn)
    .await?)
}

/// Whether the token exchanged as `jti` was not revoked (expiry is the
/// caller's to check).
pub(in crate::app) async fn exchanged_not_revoked(conn: &mut PgConnection, jti: Uuid) -> Result<bool> {
    Ok(sqlx::query_scalar!(
        r#"SELECT NOT EXISTS (SELECT 1 FROM exchanged_tokens WHERE issued_jti = $1 AND revoked_at IS NOT NULL)
           AS "live!""#,
        jti
    )
    .fetch_one(conn)
    .await?)
}

/// An API token as authentication judges it.
pub(in crate::app) struct TokenAuthRow {
    pub id: Uuid,
    pub org_id: Uuid,
    #[allow(dead_code)]
    pub kind: String,
    pub service_account_id: Option<Uuid>,
    pub user_id: Option<Uuid>,
    pub project_id: Option<Uuid>,
    pub scopes: Option<Vec<String>>,
    /// The owner's current role; `None` when a person's token outlived
    /// their membership.
    pub role: Option<String>,
    /// Neither revoked nor expired.
    pub usable: bool,
    pub revoked_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
    pub issued_via: Option<String>,
    /// Whether a person owner's address was proven.
    pub verified: Option<bool>,
    pub require_sso: bool,
    pub require_verified_email: bool,
    pub project_ids: Vec<Uuid>,
    pub project_roles: Vec<String>,
}

/// The token with this peppered hash; a usable one is stamped as used at
/// most once a minute, in the same statement.
pub(in crate::app) async fn token_by_hash(conn: &mut PgConnection, hash: &[u8]) -> Result<Option<TokenAuthRow>> {
    Ok(sqlx::query_as!(
        TokenAuthRow,
        r#"WITH found AS (
               SELECT t.id, t.org_id, t.kind, t.service_account_id, t.user_id, t.project_id, t.scopes,
                      t.revoked_at, t.expires_at, t.last_used_at, t.issued_via,
                      COALESCE(sa.role, m.role, CASE WHEN t.kind = 'legacy' THEN t.role END) AS role,
                      (t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())) AS usable,
                      (u.email_verified_at IS NOT NULL) AS verified
               FROM api_tokens t
               LEFT JOIN service_accounts sa ON sa.id = t.service_account_id
               LEFT JOIN memberships m ON m.user_id = t.user_id AND m.org_id = t.org_id
               LEFT JOIN users u ON u.id = t.user_id
               WHERE t.token_hash = $1
           ), stamped AS (
               UPDATE api_tokens SET last_used_at = now()
               WHERE id = (SELECT id FROM found WHERE usable
                           AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds'))
               RETURNING id
           )
           SELECT f.id AS "id!", f.org_id AS "org_id!", f.kind AS "kind!", f.service_account_id, f.user_id,
                  f.project_id, f.scopes, f.role, f.usable AS "usable!", f.revoked_at, f.expires_at,
                  f.issued_via, f.verified,
                  COALESCE(p.require_sso, false) AS "require_sso!",
                  COALESCE(p.require_verified_email, false) AS "require_verified_email!",
                  ARRAY(SELECT pm.project_id FROM project_members pm
                        WHERE pm.principal_id = COALESCE(f.service_account_id, f.user_id)
                          AND pm.org_id = f.org_id ORDER BY pm.project_id) AS "project_ids!",
                  ARRAY(SELECT pm.role FROM project_members pm
                        WHERE pm.principal_id = COALESCE(f.service_account_id, f.user_id)
                          AND pm.org_id = f.org_id ORDER BY pm.project_id) AS "project_roles!"
           FROM found f LEFT JOIN org_credential_policies p ON p.org_id = f.org_id"#,
        hash,
    )
    .fetch_optional(conn)
    .await?)
}

/// A person's membership seen through a live session of theirs.
pub(in crate::app) struct SessionAuthRow {
    pub role: String,
    /// The organization whose identity provider started the session.
    pub sso_org_id: Option<Uuid>,
    pub verified: bool,
    pub require_sso: bool,
    pub require_verified_email: bool,
    pub project_ids: Vec<Uuid>,
    pub project_roles: Vec<String>,
}

/// `user`'s membership of `org`, only while `session` is theirs and live.
pub(in crate::app) async fn session_member(
    conn: &mut PgConnection,
    user: Uuid,
    org: Uuid,
    session: Uuid,
) -> Result<Option<SessionAuthRow>> {
    Ok(sqlx::query_as!(
        SessionAuthRow,
        r#"SELECT m.role, s.sso_org_id, (u.email_verified_at IS NOT NULL) AS "verified!",
                  COALESCE(p.require_sso, false) AS "require_sso!",
                  COALESCE(p.require_verified_email, false) AS "require_verified_email!",
                  ARRAY(SELECT pm.project_id FROM project_members pm
                        WHERE pm.principal_id = m.user_id AND pm.org_id = m.org_id
                        ORDER BY pm.project_id) AS "project_ids!",
                  ARRAY(SELECT pm.role FROM project_members pm
                        WHERE pm.principal_id = m.user_id AND pm.org_id = m.org_id
                        ORDER BY pm.project_id) AS "project_roles!"
           FROM memberships m
           JOIN sessions s ON s.id = $3 AND s.user_id = m.user_id
                              AND s.revoked_at IS NULL AND s.expires_at > now()
           JOIN users u ON u.id = m.user_id
           LEFT JOIN org_credential_policies p ON p.org_id = m.org_id
           WHERE m.user_id = $1 AND m.org_id = $2"#,
        user,
        org,
        session,
    )
    .fetch_optional(conn)
    .await?)
}

/// A service account's roles, as an exchanged token authenticates.
pub(in crate::app) struct AccountAuthRow {
    pub role: String,
    pub project_ids: Vec<Uuid>,
    pub project_roles: Vec<String>,
}

/// Service account `account` of `org`, unless the token exchanged as
/// `jti` was revoked.
pub(in crate::app) async fn exchanged_account(
    conn: &mut PgConnection,
    account: Uuid,
    org: Uuid,
    jti: Option<Uuid>,
) -> Result<Option<AccountAuthRow>> {
    Ok(sqlx::query_as!(
        AccountAuthRow,
        r#"SELECT sa.role,
                  ARRAY(SELECT pm.project_id FROM project_members pm
                        WHERE pm.principal_id = sa.id AND pm.org_id = sa.org_id
                        ORDER BY pm.project_id) AS "project_ids!",
                  ARRAY(SELECT pm.role FROM project_members pm
                        WHERE pm.principal_id = sa.id AND pm.org_id = sa.org_id
                        ORDER BY pm.project_id) AS "project_roles!"
           FROM service_accounts sa WHERE sa.id = $1 AND sa.org_id = $2
             AND NOT EXISTS (SELECT 1 FROM exchanged_tokens
                             WHERE issued_jti = $3 AND revoked_at IS NOT NULL)"#,
        account,
        org,
        jti,
    )
    .fetch_optional(conn)
    .await?)
}
