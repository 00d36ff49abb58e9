//! The organization's change policy: immutable, effective-dated versions
//! (`org_policies`). Every regional change reads the version in force in
//! its transaction: its disruption limits refuse a change past them (409
//! `policy_limit`, naming the rule and version), its approval rules hold
//! changes for approval (`infra::approvals`), and the change's audit event
//! records the version that allowed it (`policy_version`). Its deploy rules
//! refuse a Deployment's image from elsewhere ([`check_image`], on every
//! path that sets one) and narrow the branches CI webhooks deploy from.

use chrono::{DateTime, Duration, Utc};
use moke_iam::Action;
use serde::{Deserialize, Serialize};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::error::Validator;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::region::command::ChangeKind;
use crate::app::{App, Error, PageRequest, RequestContext, Result};
use crate::ids::OrgId;
use crate::model::{
    ApprovalPolicy, DeployRules, DisruptionLimits, OrgPolicyUpdate, OrgPolicyVersion, OrgPolicyView, Page,
    is_branch_name, is_image_prefix,
};

/// How far ahead a version may be scheduled.
const MAX_SCHEDULE_DAYS: i64 = 90;

/// The stored document of a version.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct PolicyStored {
    approvals: ApprovalPolicy,
    limits: DisruptionLimits,
    /// Absent from versions written before deploy rules: none.
    #[serde(default)]
    deploy: DeployRules,
}

/// A version of an organization's policy, as a change evaluates it.
#[derive(Debug, Clone)]
pub(in crate::app) struct PolicyInForce {
    pub version: i64,
    pub approvals: ApprovalPolicy,
    pub limits: DisruptionLimits,
    pub deploy: DeployRules,
}

#[derive(sqlx::FromRow)]
struct PolicyRow {
    version: i32,
    effective_at: DateTime<Utc>,
    document: serde_json::Value,
    created_by: String,
    created_at: DateTime<Utc>,
}

impl PolicyRow {
    fn document(&self) -> Result<PolicyStored> {
        crate::app::kernel::jsonb::from_column("organization policy", &self.document)
    }

    fn into_view(self) -> Result<OrgPolicyVersion> {
        let PolicyStored { approvals, limits, deploy } = self.document()?;
        Ok(OrgPolicyVersion {
            version: i64::from(self.version),
            effective_at: self.effective_at,
            approvals,
            limits,
            deploy,
            created_by: self.created_by,
            created_at: self.created_at,
        })
    }
}

/// The version of `org`'s policy in force now, if any took effect.
pub(in crate::app) async fn in_force(conn: &mut PgConnection, org: Uuid) -> Result<Option<PolicyInForce>> {
    let row = sqlx::query_as::<_, PolicyRow>(
        "SELECT version, effective_at, document, created_by, created_at FROM org_policies
         WHERE org_id = $1 AND effective_at <= now() ORDER BY version DESC LIMIT 1",
    )
    .bind(org)
    .fetch_optional(conn)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let PolicyStored { approvals, limits, deploy } = row.document()?;
    Ok(Some(PolicyInForce { version: i64::from(row.version), approvals, limits, deploy }))
}

/// Refuses `image` (the Deployment's `field`) unless the deploy rules of
/// `org`'s policy in force allow it; the version whose rules it passed.
pub(in crate::app) async fn check_image(
    conn: &mut PgConnection,
    org: Uuid,
    image: &str,
    field: &str,
) -> Result<Option<i64>> {
    let Some(policy) = in_force(conn, org).await? else { return Ok(None) };
    let prefixes = &policy.deploy.allowed_image_prefixes;
    let named = full_image_name(image);
    let repository = named.split('@').next().unwrap_or_default();
    let repository = match repository.rsplit_once(':') {
        Some((repository, tag)) if !tag.contains('/') => repository,
        _ => repository,
    };
    // A path that climbs out of its prefix is no path a registry serves.
    let walks = repository.split('/').any(|part| part == "." || part == "..");
    if !prefixes.is_empty() && (walks || !prefixes.iter().any(|prefix| named.starts_with(prefix.as_str()))) {
        return Err(Error::invalid_field(
            field,
            "not_allowed",
            format!(
                "{image:?} is not from a registry that deploy.allowed_image_prefixes of the organization's policy \
                 (version {}) allows: {}",
                policy.version,
                prefixes.join(", ")
            ),
        ));
    }
    Ok(Some(policy.version))
}

/// `image` as a registry resolves it: one named without a registry host
/// (no `.` or `:` in its first part, and not `localhost`) is Docker Hub's,
/// `docker.io/…`, and a single name there is under `library/`.
fn full_image_name(image: &str) -> String {
    match image.split_once('/') {
        Some((first, _)) if first.contains(['.', ':']) || first == "localhost" => image.to_string(),
        Some(_) => format!("docker.io/{image}"),
        None => format!("docker.io/library/{image}"),
    }
}

/// Why a CI delivery from `branch` (none for a tag, a package or a plain
/// delivery) may not deploy under `org`'s policy in force; `None` when it may.
pub(in crate::app) async fn refuse_branch(
    conn: &mut PgConnection,
    org: Uuid,
    branch: Option<&str>,
) -> Result<Option<String>> {
    let Some(policy) = in_force(conn, org).await? else { return Ok(None) };
    let allowed = &policy.deploy.allowed_branches;
    if allowed.is_empty() || branch.is_some_and(|b| allowed.iter().any(|a| a == b)) {
        return Ok(None);
    }
    let what = branch.map_or_else(|| "a delivery that names no branch".to_string(), |b| format!("branch {b:?}"));
    Ok(Some(format!(
        "{what} may not deploy: deploy.allowed_branches of the organization's policy (version {}) allows {}",
        policy.version,
        allowed.join(", ")
    )))
}

/// Every version of `org`'s policy, newest first.
async fn versions(conn: &mut PgConnection, org: Uuid) -> Result<Vec<PolicyRow>> {
    Ok(sqlx::query_as::<_, PolicyRow>(
        "SELECT version, effective_at, document, created_by, created_at FROM org_policies
         WHERE org_id = $1 ORDER BY version DESC",
    )
    .bind(org)
    .fetch_all(conn)
    .await?)
}

/// Whether an Operation of `kind` disrupts what runs in the cluster (its
/// nodes or its control plane go away or are replaced), which the
/// policy's limits count.
pub(in crate::app) fn is_disruptive(kind: ChangeKind) -> bool {
    use ChangeKind::*;
    matches!(kind, ClusterUpgrade | ClusterRestore | ClusterDelete | NodePoolRecycle | NodePoolDelete | NodeDelete)
}

/// The operation kinds [`is_disruptive`] counts, as stored.
fn disruptive_kinds() -> Vec<&'static str> {
    use ChangeKind::*;
    [ClusterUpgrade, ClusterRestore, ClusterDelete, NodePoolRecycle, NodePoolDelete, NodeDelete]
        .into_iter()
        .map(ChangeKind::operation_kind)
        .collect()
}

/// Refuses a disruptive change of `kind` in `cluster` (in `region`) that
/// would pass a limit of `policy`. Per region, the organization's
/// disruptive changes are serialized by a transaction-scoped lock, so two
/// at once cannot both pass the last free place.
pub(in crate::app) async fn check_limits(
    conn: &mut PgConnection,
    policy: &PolicyInForce,
    org: Uuid,
    cluster: Uuid,
    region: &str,
) -> Result<()> {
    let limits = &policy.limits;
    let kinds = disruptive_kinds();
    if let Some(max) = limits.max_per_cluster {
        let running: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM operations
             WHERE cluster_id = $1 AND kind = ANY($2) AND status IN ('pending', 'running')",
        )
        .bind(cluster)
        .bind(&kinds)
        .fetch_one(&mut *conn)
        .await?;
        if running >= max {
            return Err(limit_reached("limits.max_per_cluster", policy.version, max, "in this cluster"));
        }
    }
    if let Some(max) = limits.max_per_region {
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('moke.disruptive:' || $1::text || ':' || $2, 0))")
            .bind(org)
            .bind(region)
            .execute(&mut *conn)
            .await?;
        let running: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM operations o JOIN clusters c ON c.id = o.cluster_id
             WHERE o.org_id = $1 AND c.spec->>'region' = $2 AND o.kind = ANY($3)
               AND o.status IN ('pending', 'running')",
        )
        .bind(org)
        .bind(region)
        .bind(&kinds)
        .fetch_one(&mut *conn)
        .await?;
        if running >= max {
            return Err(limit_reached("limits.max_per_region", policy.version, max, &format!("in {region}")));
        }
    }
    Ok(())
}

fn limit_reached(rule: &str, version: i64, max: i64, place: &str) -> Error {
    Error::conflict(
        "policy_limit",
        format!(
            "{rule} of the organization's policy (version {version}) allows {max} disruptive operation(s) at once \
             {place}; wait for one to finish"
        ),
    )
}

/// Checks a list of the deploy rules: at most 20 distinct items, each
/// `valid` (else `hint`), as the document states.
fn check_list(v: &mut Validator, field: &str, items: &[String], valid: fn(&str) -> bool, hint: &str) {
    v.check(items.len() <= 20, field, "too_many", "at most 20");
    for (i, item) in items.iter().enumerate() {
        v.check(valid(item), format!("{field}[{i}]"), "invalid", hint);
        v.check(!items[..i].contains(item), format!("{field}[{i}]"), "duplicate", "listed twice");
    }
}

/// Checks a new version's rules, naming each bad field.
fn check(input: &OrgPolicyUpdate, now: DateTime<Utc>) -> Result<()> {
    let mut v = Validator::new();
    let approvals = &input.approvals;
    v.check(approvals.required_for.len() <= 12, "approvals.required_for", "too_many", "at most 12 rules");
    v.check(
        (1..=99).contains(&approvals.scale_down_over_percent),
        "approvals.scale_down_over_percent",
        "out_of_range",
        "must be between 1 and 99",
    );
    v.check(
        (1..=168).contains(&approvals.expires_after_hours),
        "approvals.expires_after_hours",
        "out_of_range",
        "must be between 1 and 168",
    );
    if let Some(max) = input.limits.max_per_cluster {
        v.check((1..=50).contains(&max), "limits.max_per_cluster", "out_of_range", "must be between 1 and 50");
    }
    if let Some(max) = input.limits.max_per_region {
        v.check((1..=1000).contains(&max), "limits.max_per_region", "out_of_range", "must be between 1 and 1000");
    }
    let deploy = &input.deploy;
    // A bare host would also allow "host.evil.example": prefixes end at a path separator.
    let prefix_hint = "a registry host and path ending in '/', lowercase, e.g. registry.acme.com/shop/";
    check_list(&mut v, "deploy.allowed_image_prefixes", &deploy.allowed_image_prefixes, is_image_prefix, prefix_hint);
    let branch_hint = "a branch name: letters, digits and . _ / @ + -";
    check_list(&mut v, "deploy.allowed_branches", &deploy.allowed_branches, is_branch_name, branch_hint);
    if let Some(at) = input.effective_at {
        v.check(
            at <= now + Duration::days(MAX_SCHEDULE_DAYS),
            "effective_at",
            "too_far",
            format!("at most {MAX_SCHEDULE_DAYS} days ahead"),
        );
        v.check(at >= now - Duration::minutes(5), "effective_at", "in_the_past", "not before now");
    }
    v.finish()
}

impl App {
    /// `org_policy_view`: the version in force and those scheduled.
    pub async fn org_policy_view(&self, ctx: &RequestContext, org: OrgId) -> Result<OrgPolicyView> {
        self.org_authorized(ctx, org, Action::Read).await?;
        let mut conn = self.db().acquire().await?;
        policy_view(&mut conn, org).await
    }

    /// `org_policy_version_list`: every version, newest first.
    pub async fn org_policy_version_list(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        page: PageRequest,
    ) -> Result<Page<OrgPolicyVersion>> {
        self.org_authorized(ctx, org, Action::Read).await?;
        let mut conn = self.db().acquire().await?;
        let rows = versions(&mut conn, org.uuid()).await?;
        let views = rows.into_iter().map(PolicyRow::into_view).collect::<Result<Vec<_>>>()?;
        // Newest first: the key falls as the version rises.
        Ok(page.page_sorted(views, |v| Uuid::from_u128(u128::MAX - v.version as u128)))
    }

    /// `org_policy_update` (owners): writes the next version, in force from
    /// its `effective_at` (now by default). A version is never changed.
    pub async fn org_policy_update(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        mut input: OrgPolicyUpdate,
        if_match: Option<&str>,
    ) -> Result<OrgPolicyView> {
        self.org_authorized(ctx, org, Action::ManagePolicies).await?;
        if ctx.principal.kind != moke_iam::PrincipalKind::User {
            // Approvals are decided by people: their rules are written by people too.
            return Err(Error::refused("not_a_person", "the change policy is written by people, not service accounts"));
        }
        let mut tx = self.db().begin().await?;
        crate::app::kernel::quotas::lock_org(&mut tx, org.uuid()).await?;
        let now: DateTime<Utc> = sqlx::query_scalar("SELECT now()").fetch_one(&mut *tx).await?;
        let latest = versions(&mut tx, org.uuid()).await?.into_iter().next();
        crate::app::check_if_match(if_match, &etag(org, latest.as_ref().map_or(0, |l| l.version)))?;
        check(&input, now)?;
        input.approvals.required_for.sort();
        input.approvals.required_for.dedup();
        let version = latest.as_ref().map_or(1, |l| l.version + 1);
        // Never in the past: an audit event names the version in force when it was written.
        let effective_at = input.effective_at.unwrap_or(now).max(now);
        let stored = PolicyStored { approvals: input.approvals, limits: input.limits, deploy: input.deploy };
        let document = serde_json::to_value(&stored).map_err(|e| Error::Internal(e.into()))?;
        sqlx::query(
            "INSERT INTO org_policies (org_id, version, effective_at, document, created_by)
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(org.uuid())
        .bind(version)
        .bind(effective_at)
        .bind(&document)
        .bind(crate::app::actor_ref(&ctx.principal))
        .execute(&mut *tx)
        .await?;
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: "org.policy_update",
                resource_type: "org",
                resource_id: Some(org.to_string()),
                details: json!({ "policy_version": version, "effective_at": effective_at, "policy": document }),
            },
        )
        .await?;
        let view = policy_view(&mut tx, org).await?;
        self.commit(ctx, tx).await?;
        Ok(view)
    }
}

fn etag(org: OrgId, version: i32) -> String {
    crate::app::etag(org.uuid(), i64::from(version))
}

async fn policy_view(conn: &mut PgConnection, org: OrgId) -> Result<OrgPolicyView> {
    let now: DateTime<Utc> = sqlx::query_scalar("SELECT now()").fetch_one(&mut *conn).await?;
    let rows = versions(conn, org.uuid()).await?;
    let latest = rows.first().map_or(0, |r| r.version);
    // Newest first: those after the one in force that are still to come.
    let mut scheduled = Vec::new();
    let mut in_force = None;
    for row in rows {
        if row.effective_at > now {
            scheduled.push(row.into_view()?);
        } else {
            in_force = Some(row.into_view()?);
            break;
        }
    }
    // A later version supersedes one scheduled before it: only those that will take effect.
    let mut upcoming: Vec<OrgPolicyVersion> = Vec::new();
    for version in scheduled {
        if upcoming.last().is_none_or(|later| version.effective_at < later.effective_at) {
            upcoming.push(version);
        }
    }
    upcoming.reverse();
    let scheduled = upcoming;
    Ok(OrgPolicyView { in_force, scheduled, etag: etag(org, latest) })
}
