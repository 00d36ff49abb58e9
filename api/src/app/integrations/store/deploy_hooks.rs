//! The `deploy_hooks`, `hook_deliveries` and `project_deploy_policies` tables.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use super::HookRuleStored;
use crate::app::error::or_unique;
use crate::app::kernel::jsonb::{from_column, to_column};
use crate::app::{Error, PageRequest, Result};
use crate::model::{DeployPolicy, HookRule};

/// A stored hook; the secrets are Vault transit ciphertext.
pub(in crate::app) struct HookRow {
    pub id: Uuid,
    pub org_id: Uuid,
    pub project_id: Uuid,
    pub name: String,
    pub deployment_id: Option<Uuid>,
    pub rules: serde_json::Value,
    pub image_template: Option<String>,
    pub secret_enc: String,
    pub previous_secret_enc: Option<String>,
    pub previous_secret_expires_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub last_delivery_at: Option<DateTime<Utc>>,
}

impl HookRow {
    pub fn rules(&self) -> Result<Vec<HookRule>> {
        let stored: Vec<HookRuleStored> = from_column("hook rules", &self.rules)?;
        Ok(stored.into_iter().map(HookRule::from).collect())
    }
}

/// `sqlx::query_as!` over `deploy_hooks` with `HookRow`'s columns and the
/// rest of the statement given.
macro_rules! select {
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            HookRow,
            "SELECT id, org_id, project_id, name, deployment_id, rules, image_template, secret_enc, previous_secret_enc,
                    previous_secret_expires_at, created_at, last_delivery_at
             FROM deploy_hooks " + $rest
            $(, $arg)*
        )
    };
}

/// A hook by id, whatever its project (deliveries name only the hook).
pub(in crate::app) async fn find(conn: &mut PgConnection, id: Uuid) -> Result<Option<HookRow>> {
    Ok(select!("WHERE id = $1", id).fetch_optional(conn).await?)
}

/// A page of a project's hooks, in id order.
pub(in crate::app) async fn list(conn: &mut PgConnection, project: Uuid, page: &PageRequest) -> Result<Vec<HookRow>> {
    Ok(select!(
        "WHERE project_id = $1 AND ($2::uuid IS NULL OR id > $2) ORDER BY id LIMIT $3",
        project,
        page.after,
        page.fetch_limit(),
    )
    .fetch_all(conn)
    .await?)
}

/// A new hook; a taken name is `409 already_exists`.
pub(in crate::app) struct NewHook<'a> {
    pub id: Uuid,
    pub org: Uuid,
    pub project: Uuid,
    pub name: &'a str,
    pub deployment: Option<Uuid>,
    pub rules: &'a [HookRule],
    pub image_template: Option<&'a str>,
    pub secret_enc: &'a str,
    /// Who made it: the secret is issued to them.
    pub created_by: Uuid,
}

pub(in crate::app) async fn insert(conn: &mut PgConnection, new: NewHook<'_>) -> Result<HookRow> {
    sqlx::query_as!(
        HookRow,
        "INSERT INTO deploy_hooks (id, org_id, project_id, name, deployment_id, rules, image_template, secret_enc,
                                   created_by, secret_issued_to)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
         RETURNING id, org_id, project_id, name, deployment_id, rules, image_template, secret_enc, previous_secret_enc,
                   previous_secret_expires_at, created_at, last_delivery_at",
        new.id,
        new.org,
        new.project,
        new.name,
        new.deployment,
        to_column(&new.rules.iter().map(HookRuleStored::from).collect::<Vec<_>>()),
        new.image_template,
        new.secret_enc,
        new.created_by,
    )
    .fetch_one(conn)
    .await
    .map_err(or_unique(|| Error::conflict("already_exists", format!("a hook named {:?} exists", new.name))))
}

/// Locks a hook of `project` and answers its current secret's ciphertext.
pub(in crate::app) async fn lock_secret(conn: &mut PgConnection, id: Uuid, project: Uuid) -> Result<Option<String>> {
    Ok(sqlx::query_scalar!(
        "SELECT secret_enc FROM deploy_hooks WHERE id = $1 AND project_id = $2 FOR UPDATE",
        id,
        project
    )
    .fetch_optional(conn)
    .await?)
}

/// Makes `secret_enc` (issued to `issued_to`) the hook's secret; `current`
/// stays accepted for `keep_seconds` (0: not at all).
pub(in crate::app) async fn rotate_secret(
    conn: &mut PgConnection,
    id: Uuid,
    secret_enc: &str,
    current: &str,
    keep_seconds: i64,
    issued_to: Uuid,
) -> Result<HookRow> {
    Ok(sqlx::query_as!(
        HookRow,
        "UPDATE deploy_hooks SET secret_enc = $2, secret_issued_to = $5,
             previous_secret_enc = CASE WHEN $4 > 0 THEN $3 END,
             previous_secret_issued_to = CASE WHEN $4 > 0 THEN secret_issued_to END,
             previous_secret_expires_at = CASE WHEN $4 > 0 THEN now() + make_interval(secs => $4) END
         WHERE id = $1
         RETURNING id, org_id, project_id, name, deployment_id, rules, image_template, secret_enc,
                   previous_secret_enc, previous_secret_expires_at, created_at, last_delivery_at",
        id,
        secret_enc,
        current,
        keep_seconds as f64,
        issued_to,
    )
    .fetch_one(conn)
    .await?)
}

/// Deletes a hook of `project`; false if there was none.
pub(in crate::app) async fn delete(conn: &mut PgConnection, id: Uuid, project: Uuid) -> Result<bool> {
    let deleted = sqlx::query!("DELETE FROM deploy_hooks WHERE id = $1 AND project_id = $2", id, project)
        .execute(conn)
        .await?
        .rows_affected();
    Ok(deleted > 0)
}

/// A delivery as received; false if this delivery id, or for unsigned
/// timestamps the same body, was received before.
pub(in crate::app) struct NewDelivery<'a> {
    pub hook: Uuid,
    pub delivery_id: &'a str,
    pub provider: &'a str,
    pub event: &'a str,
    pub body_digest: Option<&'a [u8]>,
}

pub(in crate::app) async fn record_delivery(conn: &mut PgConnection, new: NewDelivery<'_>) -> Result<bool> {
    let fresh = sqlx::query!(
        "INSERT INTO hook_deliveries (hook_id, delivery_id, provider, event, outcome, body_digest)
         VALUES ($1, $2, $3, $4, 'deploying', $5)
         ON CONFLICT DO NOTHING",
        new.hook,
        new.delivery_id,
        new.provider,
        new.event,
        new.body_digest,
    )
    .execute(conn)
    .await?
    .rows_affected();
    Ok(fresh > 0)
}

/// Links a delivery to the rollout it started.
pub(in crate::app) async fn set_delivery_operation(
    conn: &mut PgConnection,
    hook: Uuid,
    delivery_id: &str,
    operation: Uuid,
) -> Result<()> {
    sqlx::query!(
        "UPDATE hook_deliveries SET operation_id = $3 WHERE hook_id = $1 AND delivery_id = $2",
        hook,
        delivery_id,
        operation,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Marks a delivery time, only while `signed_with` (a ciphertext) is still
/// a secret the hook accepts; false if it no longer is.
pub(in crate::app) async fn touch_if_still_valid(conn: &mut PgConnection, id: Uuid, signed_with: &str) -> Result<bool> {
    let touched = sqlx::query_scalar!(
        "UPDATE deploy_hooks SET last_delivery_at = now()
         WHERE id = $1 AND (secret_enc = $2 OR (previous_secret_enc = $2 AND previous_secret_expires_at > now()))
         RETURNING id",
        id,
        signed_with,
    )
    .fetch_optional(conn)
    .await?;
    Ok(touched.is_some())
}

/// A stored deploy policy; its version moves with every update (the etag).
pub(in crate::app) struct PolicyRow {
    pub allowed_image_prefixes: Vec<String>,
    pub allowed_branches: Vec<String>,
    pub version: i64,
    pub updated_at: DateTime<Utc>,
}

impl PolicyRow {
    pub fn policy(self) -> DeployPolicy {
        DeployPolicy { allowed_image_prefixes: self.allowed_image_prefixes, allowed_branches: self.allowed_branches }
    }
}

/// A project's deploy policy, if one was ever set.
pub(in crate::app) async fn policy(conn: &mut PgConnection, project: Uuid) -> Result<Option<PolicyRow>> {
    Ok(sqlx::query_as!(
        PolicyRow,
        "SELECT allowed_image_prefixes, allowed_branches, version, updated_at
         FROM project_deploy_policies WHERE project_id = $1",
        project
    )
    .fetch_optional(conn)
    .await?)
}

/// Sets (or replaces) the project's policy; its version moves.
pub(in crate::app) async fn set_policy(
    conn: &mut PgConnection,
    org: Uuid,
    project: Uuid,
    policy: &DeployPolicy,
) -> Result<PolicyRow> {
    Ok(sqlx::query_as!(
        PolicyRow,
        "INSERT INTO project_deploy_policies (project_id, org_id, allowed_image_prefixes, allowed_branches)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (project_id) DO UPDATE SET allowed_image_prefixes = $3, allowed_branches = $4,
             version = project_deploy_policies.version + 1, updated_at = now()
         RETURNING allowed_image_prefixes, allowed_branches, version, updated_at",
        project,
        org,
        &policy.allowed_image_prefixes,
        &policy.allowed_branches,
    )
    .fetch_one(conn)
    .await?)
}
