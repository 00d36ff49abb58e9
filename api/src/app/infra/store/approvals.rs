//! The `approval_requests` table: a change the organization's policy held,
//! one row per held Operation, from `awaiting` to its decision. At most one
//! request of a resource awaits at a time (a partial unique index).

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::Result;
use crate::app::authz::Lock;

#[derive(sqlx::FromRow)]
pub(in crate::app) struct ApprovalRow {
    pub operation_id: Uuid,
    pub rule: String,
    pub policy_version: i32,
    pub approver_role: String,
    pub request: serde_json::Value,
    pub plan: serde_json::Value,
    pub requested_by_ref: String,
    /// Who may not decide it: the requester and who made or gave a
    /// credential to the requesting service account, up the chain.
    pub accountable: Vec<Uuid>,
    pub state: String,
    pub expires_at: DateTime<Utc>,
    pub decided_by: Option<String>,
    pub decided_at: Option<DateTime<Utc>>,
    pub reason: Option<String>,
    pub created_at: DateTime<Utc>,
}

const COLUMNS: &str = "operation_id, rule, policy_version, approver_role, request, plan, requested_by_ref, \
                       accountable, state, expires_at, decided_by, decided_at, reason, created_at";

/// A request to record, awaiting until `expires_after_hours` from now.
pub(in crate::app) struct NewApproval<'a> {
    pub operation_id: Uuid,
    pub org_id: Uuid,
    pub target_id: Uuid,
    pub rule: &'a str,
    pub policy_version: i64,
    pub approver_role: &'a str,
    pub request: &'a serde_json::Value,
    pub plan: &'a serde_json::Value,
    pub requested_by: Uuid,
    pub requested_by_ref: &'a str,
    pub expires_after_hours: i64,
}

/// The approval request of Operation `id`, if it has one.
pub(in crate::app) async fn find(conn: &mut PgConnection, id: Uuid, lock: Lock) -> Result<Option<ApprovalRow>> {
    let sql = match lock {
        Lock::None => format!("SELECT {COLUMNS} FROM approval_requests WHERE operation_id = $1"),
        Lock::ForUpdate => format!("SELECT {COLUMNS} FROM approval_requests WHERE operation_id = $1 FOR UPDATE"),
    };
    Ok(sqlx::query_as::<_, ApprovalRow>(&sql).bind(id).fetch_optional(conn).await?)
}

/// The request awaiting for `target`, if one does: its Operation, request
/// and requester.
pub(in crate::app) async fn awaiting_for(
    conn: &mut PgConnection,
    target: Uuid,
) -> Result<Option<(Uuid, serde_json::Value, Uuid)>> {
    Ok(sqlx::query_as(
        "SELECT operation_id, request, requested_by FROM approval_requests WHERE target_id = $1 AND state = 'awaiting'",
    )
    .bind(target)
    .fetch_optional(conn)
    .await?)
}

/// `principal` and, for a service account, everyone who made it or gave it
/// a credential (a token, a trust policy), and theirs in turn: anyone who
/// could have asked through it (the reverse of `iam::store::eviction::made_by`).
async fn accountable(conn: &mut PgConnection, principal: Uuid) -> Result<Vec<Uuid>> {
    Ok(sqlx::query_scalar(
        "WITH RECURSIVE makers (id) AS (
             SELECT $1::uuid
             UNION
             SELECT next.id FROM makers m, LATERAL (
                 SELECT s.created_by FROM service_accounts s WHERE s.id = m.id AND s.created_by IS NOT NULL
                 UNION ALL
                 SELECT t.created_by FROM api_tokens t WHERE t.service_account_id = m.id AND t.created_by IS NOT NULL
                 UNION ALL
                 SELECT p.created_by FROM trust_policies p
                 WHERE p.service_account_id = m.id AND p.created_by IS NOT NULL
             ) next (id)
         )
         SELECT id FROM makers",
    )
    .bind(principal)
    .fetch_all(conn)
    .await?)
}

/// Records `new`; false when another request of its target awaits.
pub(in crate::app) async fn insert(conn: &mut PgConnection, new: NewApproval<'_>) -> Result<bool> {
    let accountable = accountable(&mut *conn, new.requested_by).await?;
    let inserted = sqlx::query(
        "INSERT INTO approval_requests (operation_id, org_id, target_id, rule, policy_version, approver_role,
                                        request, plan, requested_by, requested_by_ref, accountable, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, now() + make_interval(hours => $12))
         ON CONFLICT (target_id) WHERE state = 'awaiting' DO NOTHING",
    )
    .bind(new.operation_id)
    .bind(new.org_id)
    .bind(new.target_id)
    .bind(new.rule)
    .bind(new.policy_version as i32)
    .bind(new.approver_role)
    .bind(new.request)
    .bind(new.plan)
    .bind(new.requested_by)
    .bind(new.requested_by_ref)
    .bind(&accountable)
    .bind(new.expires_after_hours as i32)
    .execute(conn)
    .await?
    .rows_affected();
    Ok(inserted == 1)
}

/// Closes the awaiting request of Operation `id` as `state` (rejected,
/// withdrawn, expired) by `by`; false when it no longer awaits.
pub(in crate::app) async fn close(
    conn: &mut PgConnection,
    id: Uuid,
    state: &str,
    by: &str,
    reason: Option<&str>,
) -> Result<bool> {
    let closed = sqlx::query(
        "UPDATE approval_requests SET state = $2, decided_by = $3, decided_at = now(), reason = $4
         WHERE operation_id = $1 AND state = 'awaiting'",
    )
    .bind(id)
    .bind(state)
    .bind(by)
    .bind(reason)
    .execute(conn)
    .await?
    .rows_affected();
    Ok(closed == 1)
}

/// Approves the request of Operation `id` by `by`; false when it no longer
/// awaits or has expired.
pub(in crate::app) async fn approve(conn: &mut PgConnection, id: Uuid, by: &str, reason: Option<&str>) -> Result<bool> {
    let approved = sqlx::query(
        "UPDATE approval_requests SET state = 'approved', decided_by = $2, decided_at = now(), reason = $3
         WHERE operation_id = $1 AND state = 'awaiting' AND expires_at > clock_timestamp()",
    )
    .bind(id)
    .bind(by)
    .bind(reason)
    .execute(conn)
    .await?
    .rows_affected();
    Ok(approved == 1)
}

/// Up to 100 awaiting requests past their expiry, locked (skipping those
/// another gateway's sweep holds): each Operation and its organization.
pub(in crate::app) async fn expired(conn: &mut PgConnection) -> Result<Vec<(Uuid, Uuid)>> {
    Ok(sqlx::query_as(
        "SELECT operation_id, org_id FROM approval_requests
         WHERE state = 'awaiting' AND expires_at <= now()
         ORDER BY expires_at LIMIT 100 FOR UPDATE SKIP LOCKED",
    )
    .fetch_all(conn)
    .await?)
}

/// Whether `user`'s role in the organization of Operation `id`'s request
/// was granted or changed after the request was made (or is gone): such a
/// role may have been made to approve it, by the requester or for them.
pub(in crate::app) async fn role_newer_than_request(conn: &mut PgConnection, id: Uuid, user: Uuid) -> Result<bool> {
    Ok(sqlx::query_scalar(
        "SELECT NOT EXISTS (
             SELECT 1 FROM approval_requests a
             JOIN memberships m ON m.org_id = a.org_id AND m.user_id = $2
             WHERE a.operation_id = $1 AND m.updated_at <= a.created_at)",
    )
    .bind(id)
    .bind(user)
    .fetch_one(conn)
    .await?)
}
