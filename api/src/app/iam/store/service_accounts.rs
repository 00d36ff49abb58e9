//! The `service_accounts`, `trust_policies` and `exchanged_tokens` tables.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::authz::Lock;
use crate::app::error::or_unique;
use crate::app::{Error, PageRequest, Result};

/// A stored service account.
pub(in crate::app) struct AccountRow {
    pub id: Uuid,
    pub name: String,
    pub description: String,
    pub role: String,
    pub created_at: DateTime<Utc>,
}

/// `sqlx::query_as!` over `service_accounts` with `AccountRow`'s columns
/// and the rest of the statement given; `locked` adds `FOR UPDATE`.
macro_rules! select {
    (locked $rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            AccountRow,
            "SELECT id, name, description, role, created_at FROM service_accounts " + $rest + " FOR UPDATE"
            $(, $arg)*
        )
    };
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(AccountRow, "SELECT id, name, description, role, created_at FROM service_accounts " + $rest $(, $arg)*)
    };
}

/// Service account `id` of `org`; a deletion takes it `ForUpdate`.
pub(in crate::app) async fn find(
    conn: &mut PgConnection,
    org: Uuid,
    id: Uuid,
    lock: Lock,
) -> Result<Option<AccountRow>> {
    Ok(match lock {
        Lock::None => select!("WHERE org_id = $1 AND id = $2", org, id).fetch_optional(conn).await?,
        Lock::ForUpdate => select!(locked "WHERE org_id = $1 AND id = $2", org, id).fetch_optional(conn).await?,
    })
}

/// A page of `org`'s service accounts in id order.
pub(in crate::app) async fn list(conn: &mut PgConnection, org: Uuid, page: &PageRequest) -> Result<Vec<AccountRow>> {
    Ok(select!(
        "WHERE org_id = $1 AND ($2::uuid IS NULL OR id > $2) ORDER BY id LIMIT $3",
        org,
        page.after,
        page.fetch_limit()
    )
    .fetch_all(conn)
    .await?)
}

/// A new service account made by `created_by`; a taken name is an invalid field.
pub(in crate::app) async fn insert(
    conn: &mut PgConnection,
    id: Uuid,
    org: Uuid,
    name: &str,
    description: &str,
    role: &str,
    created_by: Uuid,
) -> Result<AccountRow> {
    sqlx::query_as!(
        AccountRow,
        "INSERT INTO service_accounts (id, org_id, name, description, role, created_by)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, name, description, role, created_at",
        id,
        org,
        name,
        description,
        role,
        created_by,
    )
    .fetch_one(conn)
    .await
    .map_err(or_unique(|| Error::conflict("already_exists", "a service account with this name exists")))
}

/// A new service account named `name`, or `name-2`, `name-3`… up to
/// `name-1000`, the first free in `org`; `None` when all are taken.
pub(in crate::app) async fn insert_with_free_name(
    conn: &mut PgConnection,
    id: Uuid,
    org: Uuid,
    name: &str,
    description: &str,
    role: &str,
    created_by: Option<Uuid>,
) -> Result<Option<Uuid>> {
    Ok(sqlx::query_scalar!(
        r#"INSERT INTO service_accounts (id, org_id, name, description, role, created_by)
           SELECT $1, $2, candidate, $4, $5, $6
           FROM (SELECT CASE WHEN n = 1 THEN $3 ELSE $3 || '-' || n END AS candidate, n
                 FROM generate_series(1, 1000) AS n) c
           WHERE NOT EXISTS (SELECT 1 FROM service_accounts s WHERE s.org_id = $2 AND s.name = c.candidate)
           ORDER BY n LIMIT 1
           RETURNING id"#,
        id,
        org,
        name,
        description,
        role,
        created_by,
    )
    .fetch_optional(conn)
    .await?)
}

/// Deletes a service account (its tokens and trust policies go with it).
pub(in crate::app) async fn delete(conn: &mut PgConnection, org: Uuid, id: Uuid) -> Result<()> {
    sqlx::query!("DELETE FROM service_accounts WHERE id = $1 AND org_id = $2", id, org).execute(conn).await?;
    Ok(())
}

/// A service account of `org` and its role, held `FOR SHARE` until the
/// transaction ends: a promotion meanwhile waits for the caller's change.
pub(in crate::app) async fn share_role(conn: &mut PgConnection, org: Uuid, id: Uuid) -> Result<Option<(Uuid, String)>> {
    Ok(sqlx::query!("SELECT id, role FROM service_accounts WHERE org_id = $1 AND id = $2 FOR SHARE", org, id)
        .fetch_optional(conn)
        .await?
        .map(|row| (row.id, row.role)))
}

/// Deletes the trust policies `makers` made or that let `accounts` be
/// exchanged for.
pub(in crate::app) async fn delete_trust_policies_made_by(
    conn: &mut PgConnection,
    makers: &[Uuid],
    accounts: &[Uuid],
) -> Result<()> {
    sqlx::query!(
        "DELETE FROM trust_policies WHERE created_by = ANY($1) OR service_account_id = ANY($2)",
        makers,
        accounts
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Revokes every live CI token exchanged for one of `accounts`.
pub(in crate::app) async fn revoke_exchanged_tokens(conn: &mut PgConnection, accounts: &[Uuid]) -> Result<()> {
    sqlx::query!(
        "UPDATE exchanged_tokens SET revoked_at = now() WHERE service_account_id = ANY($1) AND revoked_at IS NULL",
        accounts
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A stored trust policy: which CI identity tokens may be exchanged for a
/// service account's.
pub(in crate::app) struct PolicyRow {
    pub id: Uuid,
    pub service_account_id: Uuid,
    pub issuer: String,
    pub audience: String,
    pub claims: serde_json::Value,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
}

/// A new trust policy; `created_by` is `None` for the system.
pub(in crate::app) struct NewPolicy<'a> {
    pub id: Uuid,
    pub org: Uuid,
    pub account: Uuid,
    pub issuer: &'a str,
    pub audience: &'a str,
    pub claims: serde_json::Value,
    pub expires_at: Option<DateTime<Utc>>,
    pub created_by: Option<Uuid>,
}

pub(in crate::app) async fn insert_trust_policy(conn: &mut PgConnection, new: NewPolicy<'_>) -> Result<PolicyRow> {
    Ok(sqlx::query_as!(
        PolicyRow,
        "INSERT INTO trust_policies (id, org_id, service_account_id, issuer, audience, claims, expires_at,
             created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         RETURNING id, service_account_id, issuer, audience, claims, created_at, expires_at",
        new.id,
        new.org,
        new.account,
        new.issuer,
        new.audience,
        new.claims,
        new.expires_at,
        new.created_by,
    )
    .fetch_one(conn)
    .await?)
}

/// A page of a service account's trust policies in id order.
pub(in crate::app) async fn trust_policies(
    conn: &mut PgConnection,
    org: Uuid,
    account: Uuid,
    page: &PageRequest,
) -> Result<Vec<PolicyRow>> {
    Ok(sqlx::query_as!(
        PolicyRow,
        "SELECT id, service_account_id, issuer, audience, claims, created_at, expires_at FROM trust_policies
         WHERE org_id = $1 AND service_account_id = $2 AND ($3::uuid IS NULL OR id > $3) ORDER BY id LIMIT $4",
        org,
        account,
        page.after,
        page.fetch_limit(),
    )
    .fetch_all(conn)
    .await?)
}

/// Deletes trust policy `id` of a service account; false if there was none.
pub(in crate::app) async fn delete_trust_policy(
    conn: &mut PgConnection,
    org: Uuid,
    account: Uuid,
    id: Uuid,
) -> Result<bool> {
    Ok(sqlx::query!(
        "DELETE FROM trust_policies WHERE org_id = $1 AND service_account_id = $2 AND id = $3 RETURNING id",
        org,
        account,
        id,
    )
    .fetch_optional(conn)
    .await?
    .is_some())
}

/// A live trust policy of a service account, with the account's
/// organization and role, as an exchange judges it.
pub(in crate::app) struct ExchangePolicyRow {
    pub org_id: Uuid,
    pub role: String,
    pub policy_id: Uuid,
    pub issuer: String,
    pub audience: String,
    pub claims: serde_json::Value,
    pub expires_at: Option<DateTime<Utc>>,
}

/// Every unexpired trust policy of service account `account`.
pub(in crate::app) async fn live_trust_policies(
    conn: &mut PgConnection,
    account: Uuid,
) -> Result<Vec<ExchangePolicyRow>> {
    Ok(sqlx::query_as!(
        ExchangePolicyRow,
        "SELECT sa.org_id, sa.role, p.id AS policy_id, p.issuer, p.audience, p.claims, p.expires_at
         FROM service_accounts sa JOIN trust_policies p ON p.service_account_id = sa.id
         WHERE sa.id = $1 AND (p.expires_at IS NULL OR p.expires_at > now())",
        account,
    )
    .fetch_all(conn)
    .await?)
}

/// Whether a trust policy still stands, held `FOR SHARE` until the token
/// exchanged through it is recorded: an eviction deleting it either commits
/// first (seen here) or waits, and then revokes the recorded token.
pub(in crate::app) async fn share_standing_policy(conn: &mut PgConnection, id: Uuid) -> Result<bool> {
    Ok(sqlx::query_scalar!(
        "SELECT id FROM trust_policies WHERE id = $1 AND (expires_at IS NULL OR expires_at > now()) FOR SHARE",
        id
    )
    .fetch_optional(conn)
    .await?
    .is_some())
}

/// Records an exchange: the CI token's `jti` (kept an hour past the later
/// of its expiry and ours, so it cannot be replayed meanwhile) and the
/// token issued for it, revocable. False if this `jti` was exchanged before.
pub(in crate::app) async fn record_exchange(
    conn: &mut PgConnection,
    issuer: &str,
    jti: &str,
    exp: f64,
    lifetime: f64,
    account: Uuid,
    issued_jti: Uuid,
) -> Result<bool> {
    Ok(sqlx::query!(
        "INSERT INTO exchanged_tokens (issuer, jti, expires_at, service_account_id, issued_jti)
         VALUES ($1, $2, GREATEST(to_timestamp($3::float8), now() + make_interval(secs => $4)) + interval '1 hour',
                 $5, $6)
         ON CONFLICT DO NOTHING RETURNING jti",
        issuer,
        jti,
        exp,
        lifetime,
        account,
        issued_jti,
    )
    .fetch_optional(conn)
    .await?
    .is_some())
}

/// Forgets exchanged CI tokens past their expiry; answers how many.
pub(in crate::app) async fn purge_exchanged_tokens(conn: &mut PgConnection) -> Result<u64> {
    Ok(sqlx::query!("DELETE FROM exchanged_tokens WHERE expires_at < now()").execute(conn).await?.rows_affected())
}
