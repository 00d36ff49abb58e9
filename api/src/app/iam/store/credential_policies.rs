//! The `org_credential_policies` table: what an organization asks of its
//! members' and service accounts' credentials.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::Result;

/// A stored policy; an organization without one asks nothing.
pub(in crate::app) struct PolicyRow {
    pub max_token_lifetime_seconds: Option<i64>,
    pub require_sso: bool,
    pub require_verified_email: bool,
    pub version: i64,
    pub updated_at: DateTime<Utc>,
}

pub(in crate::app) async fn find(conn: &mut PgConnection, org: Uuid) -> Result<Option<PolicyRow>> {
    Ok(sqlx::query_as!(
        PolicyRow,
        "SELECT max_token_lifetime_seconds, require_sso, require_verified_email, version, updated_at
         FROM org_credential_policies WHERE org_id = $1",
        org
    )
    .fetch_optional(conn)
    .await?)
}

/// The organization's longest token lifetime, if it sets one.
pub(in crate::app) async fn max_token_lifetime(conn: &mut PgConnection, org: Uuid) -> Result<Option<i64>> {
    Ok(sqlx::query_scalar!("SELECT max_token_lifetime_seconds FROM org_credential_policies WHERE org_id = $1", org)
        .fetch_optional(conn)
        .await?
        .flatten())
}

/// The new version of a policy set, and when.
pub(in crate::app) struct PolicyVersion {
    pub version: i64,
    pub updated_at: DateTime<Utc>,
}

/// Sets (or replaces) the policy; its version moves (the etag).
pub(in crate::app) async fn upsert(
    conn: &mut PgConnection,
    org: Uuid,
    max_token_lifetime_seconds: Option<i64>,
    require_sso: bool,
    require_verified_email: bool,
) -> Result<PolicyVersion> {
    Ok(sqlx::query_as!(
        PolicyVersion,
        "INSERT INTO org_credential_policies (org_id, max_token_lifetime_seconds, require_sso, require_verified_email)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (org_id) DO UPDATE SET max_token_lifetime_seconds = $2, require_sso = $3,
             require_verified_email = $4, version = org_credential_policies.version + 1, updated_at = now()
         RETURNING version, updated_at",
        org,
        max_token_lifetime_seconds,
        require_sso,
        require_verified_email,
    )
    .fetch_one(conn)
    .await?)
}
