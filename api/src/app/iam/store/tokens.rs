//! The `api_tokens` table. Tokens are stored only as a peppered hash.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::{PageRequest, Result};

/// A stored token as it is shown, never its secret. `role` is its owner's
/// current role (a service account's, or the person's membership), or the
/// role it was minted with when the owner holds none.
pub(in crate::app) struct TokenRow {
    pub id: Uuid,
    pub name: String,
    pub kind: String,
    pub service_account_id: Option<Uuid>,
    pub user_id: Option<Uuid>,
    pub project_id: Option<Uuid>,
    pub scopes: Option<Vec<String>>,
    pub role: String,
    pub token_hint: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// `sqlx::query_as!` over `api_tokens t` (with its owner's service account
/// `sa` and membership `m`) with `TokenRow`'s columns and the rest of the
/// statement given.
macro_rules! select {
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            TokenRow,
            r#"SELECT t.id, t.name, t.kind, t.service_account_id, t.user_id, t.project_id, t.scopes,
                      COALESCE(sa.role, m.role, t.role) AS "role!", t.token_hint, t.created_at, t.expires_at,
                      t.last_used_at, t.revoked_at
               FROM api_tokens t
               LEFT JOIN service_accounts sa ON sa.id = t.service_account_id
               LEFT JOIN memberships m ON m.user_id = t.user_id AND m.org_id = t.org_id "# + $rest
            $(, $arg)*
        )
    };
}

pub(in crate::app) async fn find(conn: &mut PgConnection, org: Uuid, id: Uuid) -> Result<Option<TokenRow>> {
    Ok(select!("WHERE t.org_id = $1 AND t.id = $2", org, id).fetch_optional(conn).await?)
}

/// A page of `org`'s tokens in id order.
pub(in crate::app) async fn list(conn: &mut PgConnection, org: Uuid, page: &PageRequest) -> Result<Vec<TokenRow>> {
    Ok(select!(
        "WHERE t.org_id = $1 AND ($2::uuid IS NULL OR t.id > $2)
               ORDER BY t.id LIMIT $3",
        org,
        page.after,
        page.fetch_limit()
    )
    .fetch_all(conn)
    .await?)
}

/// A page of `user`'s personal tokens in `org`, in id order.
pub(in crate::app) async fn list_personal(
    conn: &mut PgConnection,
    org: Uuid,
    user: Uuid,
    page: &PageRequest,
) -> Result<Vec<TokenRow>> {
    Ok(sqlx::query_as!(
        TokenRow,
        r#"SELECT t.id, t.name, t.kind, t.service_account_id, t.user_id, t.project_id, t.scopes,
                  COALESCE(m.role, t.role) AS "role!", t.token_hint, t.created_at, t.expires_at,
                  t.last_used_at, t.revoked_at
           FROM api_tokens t LEFT JOIN memberships m ON m.user_id = t.user_id AND m.org_id = t.org_id
           WHERE t.org_id = $1 AND t.user_id = $2 AND ($3::uuid IS NULL OR t.id > $3)
           ORDER BY t.id LIMIT $4"#,
        org,
        user,
        page.after,
        page.fetch_limit(),
    )
    .fetch_all(conn)
    .await?)
}

/// Whether token `id` of `org` is `user`'s personal token.
pub(in crate::app) async fn is_personal_of(conn: &mut PgConnection, org: Uuid, id: Uuid, user: Uuid) -> Result<bool> {
    Ok(sqlx::query_scalar!("SELECT id FROM api_tokens WHERE id = $1 AND org_id = $2 AND user_id = $3", id, org, user)
        .fetch_optional(conn)
        .await?
        .is_some())
}

/// A new token; `kind` is `pat` or `sat`, and exactly one of
/// `service_account` and `user` is its owner.
pub(in crate::app) struct NewToken<'a> {
    pub id: Uuid,
    pub org: Uuid,
    pub name: &'a str,
    pub role: &'a str,
    pub token_hash: &'a [u8],
    pub token_hint: &'a str,
    pub created_by: Option<Uuid>,
    pub expires_at: Option<DateTime<Utc>>,
    pub kind: &'a str,
    pub service_account: Option<Uuid>,
    pub user: Option<Uuid>,
    pub project: Option<Uuid>,
    pub scopes: Option<&'a [String]>,
    /// How the credential that minted it was obtained.
    pub issued_via: &'a str,
}

/// Stores a new token; the row answers with the role it was minted with.
pub(in crate::app) async fn insert(conn: &mut PgConnection, new: NewToken<'_>) -> Result<TokenRow> {
    Ok(sqlx::query_as!(
        TokenRow,
        r#"INSERT INTO api_tokens (id, org_id, name, role, token_hash, token_hint, created_by, expires_at,
                                  kind, service_account_id, user_id, project_id, scopes, issued_via)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
           RETURNING id, name, kind, service_account_id, user_id, project_id, scopes, role, token_hint,
                     created_at, expires_at, last_used_at, revoked_at"#,
        new.id,
        new.org,
        new.name,
        new.role,
        new.token_hash,
        new.token_hint,
        new.created_by,
        new.expires_at,
        new.kind,
        new.service_account,
        new.user,
        new.project,
        new.scopes,
        new.issued_via,
    )
    .fetch_one(conn)
    .await?)
}

/// A token's owner and its owner's current role, as a revocation judges them.
pub(in crate::app) struct OwnerRow {
    pub service_account_id: Option<Uuid>,
    pub user_id: Option<Uuid>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub role: String,
}

/// Locks token `id` of `org` (`FOR UPDATE OF t`) and answers its owner.
pub(in crate::app) async fn lock_owner(conn: &mut PgConnection, org: Uuid, id: Uuid) -> Result<Option<OwnerRow>> {
    Ok(sqlx::query_as!(
        OwnerRow,
        r#"SELECT t.service_account_id, t.user_id, t.revoked_at,
                  COALESCE(sa.role, m.role, t.role) AS "role!"
           FROM api_tokens t
           LEFT JOIN service_accounts sa ON sa.id = t.service_account_id
           LEFT JOIN memberships m ON m.user_id = t.user_id AND m.org_id = t.org_id
           WHERE t.org_id = $1 AND t.id = $2 FOR UPDATE OF t"#,
        org,
        id,
    )
    .fetch_optional(conn)
    .await?)
}

/// Revokes a token (a revoked one keeps its first revocation time);
/// answers its name.
pub(in crate::app) async fn revoke(conn: &mut PgConnection, org: Uuid, id: Uuid) -> Result<String> {
    Ok(sqlx::query_scalar!(
        "UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, now())
         WHERE org_id = $1 AND id = $2 RETURNING name",
        org,
        id,
    )
    .fetch_one(conn)
    .await?)
}

/// Revokes every live personal token of `user`.
pub(in crate::app) async fn revoke_personal(conn: &mut PgConnection, user: Uuid) -> Result<()> {
    sqlx::query!("UPDATE api_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL", user)
        .execute(conn)
        .await?;
    Ok(())
}

/// Revokes every live token `user` holds or made, and those of `accounts`
/// (service accounts an evicted maker reached).
pub(in crate::app) async fn revoke_held_or_made_by(
    conn: &mut PgConnection,
    user: Uuid,
    accounts: &[Uuid],
) -> Result<()> {
    sqlx::query!(
        "UPDATE api_tokens SET revoked_at = now()
         WHERE (user_id = $1 OR created_by = $1 OR service_account_id = ANY($2)) AND revoked_at IS NULL",
        user,
        accounts,
    )
    .execute(conn)
    .await?;
    Ok(())
}
