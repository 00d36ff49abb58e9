//! The `org_domains` table: domains an organization claims, and proves by DNS.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::error::or_unique;
use crate::app::{Error, PageRequest, Result};

/// A claimed domain and the state of its proof.
pub(in crate::app) struct DomainRow {
    pub id: Uuid,
    pub domain: String,
    /// The token the TXT record must carry.
    pub challenge: String,
    pub verified_at: Option<DateTime<Utc>>,
    pub last_checked_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// `sqlx::query_as!` over `org_domains` with `DomainRow`'s columns and the
/// rest of the statement given.
macro_rules! select {
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            DomainRow,
            "SELECT id, domain, challenge, verified_at, last_checked_at, last_error, created_at
             FROM org_domains " + $rest
            $(, $arg)*
        )
    };
}

/// `org`'s claim on `domain`, proven or not.
pub(in crate::app) async fn find(conn: &mut PgConnection, org: Uuid, domain: &str) -> Result<Option<DomainRow>> {
    Ok(select!("WHERE org_id = $1 AND domain = $2", org, domain).fetch_optional(conn).await?)
}

/// A page of the domains `org` claims, in id (claim) order.
pub(in crate::app) async fn list(conn: &mut PgConnection, org: Uuid, page: &PageRequest) -> Result<Vec<DomainRow>> {
    Ok(select!(
        "WHERE org_id = $1 AND ($2::uuid IS NULL OR id > $2) ORDER BY id LIMIT $3",
        org,
        page.after,
        page.fetch_limit()
    )
    .fetch_all(conn)
    .await?)
}

/// The domains `org` proved.
pub(in crate::app) async fn verified(conn: &mut PgConnection, org: Uuid) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar!("SELECT domain FROM org_domains WHERE org_id = $1 AND verified_at IS NOT NULL", org)
        .fetch_all(conn)
        .await?)
}

/// How many domains `org` claims.
pub(in crate::app) async fn count(conn: &mut PgConnection, org: Uuid) -> Result<i64> {
    Ok(sqlx::query_scalar!(r#"SELECT count(*) AS "n!" FROM org_domains WHERE org_id = $1"#, org)
        .fetch_one(conn)
        .await?)
}

/// A new claim with its challenge; a domain `org` claims already is an
/// invalid field.
pub(in crate::app) async fn insert(
    conn: &mut PgConnection,
    id: Uuid,
    org: Uuid,
    domain: &str,
    challenge: &str,
) -> Result<DomainRow> {
    sqlx::query_as!(
        DomainRow,
        "INSERT INTO org_domains (id, org_id, domain, challenge) VALUES ($1, $2, $3, $4)
         RETURNING id, domain, challenge, verified_at, last_checked_at, last_error, created_at",
        id,
        org,
        domain,
        challenge,
    )
    .fetch_one(conn)
    .await
    .map_err(or_unique(|| Error::conflict("already_exists", "this organization already claims this domain")))
}

/// Records a check of the challenge: `problem` if it failed; otherwise the
/// domain is proven (by `checker`, whom an eviction may reach, unless it was
/// proven before). A domain another organization proved is `409
/// domain_claimed` (a unique index allows one proof per domain).
pub(in crate::app) async fn record_check(
    conn: &mut PgConnection,
    id: Uuid,
    org: Uuid,
    problem: Option<&str>,
    checker: Uuid,
) -> Result<DomainRow> {
    sqlx::query_as!(
        DomainRow,
        "UPDATE org_domains SET last_checked_at = now(), last_error = $3,
             verified_by = CASE WHEN $3::text IS NULL AND verified_at IS NULL THEN $4 ELSE verified_by END,
             verified_at = CASE WHEN $3::text IS NULL THEN COALESCE(verified_at, now()) ELSE verified_at END
         WHERE id = $1 AND org_id = $2
         RETURNING id, domain, challenge, verified_at, last_checked_at, last_error, created_at",
        id,
        org,
        problem,
        checker,
    )
    .fetch_one(conn)
    .await
    .map_err(or_unique(|| Error::conflict("domain_claimed", "another organization has verified this domain")))
}

/// Gives up `org`'s claim on `domain`; its id, or `None` if there was none.
pub(in crate::app) async fn delete(conn: &mut PgConnection, org: Uuid, domain: &str) -> Result<Option<Uuid>> {
    Ok(sqlx::query_scalar!("DELETE FROM org_domains WHERE org_id = $1 AND domain = $2 RETURNING id", org, domain)
        .fetch_optional(conn)
        .await?)
}

/// Whether `org` proved it owns `domain`.
pub(in crate::app) async fn is_verified(conn: &mut PgConnection, org: Uuid, domain: &str) -> Result<bool> {
    Ok(sqlx::query_scalar!(
        "SELECT id FROM org_domains WHERE org_id = $1 AND domain = $2 AND verified_at IS NOT NULL",
        org,
        domain
    )
    .fetch_optional(conn)
    .await?
    .is_some())
}

/// A domain an eviction deleted.
pub(in crate::app) struct DeletedDomain {
    pub org_id: Uuid,
    pub domain: String,
}

/// Deletes the domains `makers` proved.
pub(in crate::app) async fn delete_verified_by(conn: &mut PgConnection, makers: &[Uuid]) -> Result<Vec<DeletedDomain>> {
    Ok(sqlx::query_as!(
        DeletedDomain,
        "DELETE FROM org_domains WHERE verified_by = ANY($1) RETURNING org_id, domain",
        makers
    )
    .fetch_all(conn)
    .await?)
}
