//! Per-organization quotas, checked inside the mutation's transaction while
//! the organization row is locked, so concurrent creates cannot overshoot.

use moke_iam::Action;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::{App, Error, RequestContext, Result};
use crate::config::{Config, Plan, QuotaDefaults, QuotaLimits};
use crate::ids::OrgId;
use crate::model::{QuotaItem, QuotaSource, QuotasView};

/// Effective limits and current usage of one organization.
struct QuotaState {
    limits: QuotaDefaults,
    /// The organization's plan.
    plan: String,
    /// Quotas (as `quota_view` names them) an operator overrode.
    overridden: Vec<&'static str>,
    clusters: i64,
    max_pools_in_a_cluster: i64,
    nodes: i64,
    vcpus: i64,
}

/// An organization's limits: `[quotas]`, under its plan's, under its
/// overrides; with its plan's id and the quotas overridden.
pub(in crate::app) async fn limits(
    conn: &mut PgConnection,
    config: &Config,
    org: Uuid,
) -> Result<(QuotaDefaults, String, Vec<&'static str>)> {
    let row = sqlx::query!(
        r#"SELECT o.plan, q.max_clusters AS "max_clusters?", q.max_node_pools_per_cluster AS "max_node_pools_per_cluster?",
                  q.max_nodes AS "max_nodes?", q.max_vcpus AS "max_vcpus?",
                  q.max_webhook_endpoints AS "max_webhook_endpoints?",
                  q.max_pending_invitations AS "max_pending_invitations?",
                  q.max_service_accounts AS "max_service_accounts?", q.max_api_tokens AS "max_api_tokens?",
                  q.max_trust_policies AS "max_trust_policies?", q.max_deploy_hooks AS "max_deploy_hooks?",
                  q.max_namespaces_per_cluster AS "max_namespaces_per_cluster?",
                  q.max_invitations_per_hour AS "max_invitations_per_hour?"
           FROM organizations o LEFT JOIN org_quotas q ON q.org_id = o.id WHERE o.id = $1"#,
        org,
    )
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| Error::not_found("organization", OrgId::from_uuid(org).to_string()))?;
    let plan = config.billing.plan(row.plan.as_deref());
    let (by_plan, _) = plan.quotas.over(&config.quotas);
    let overrides = QuotaLimits {
        max_clusters: row.max_clusters,
        max_node_pools_per_cluster: row.max_node_pools_per_cluster,
        max_nodes: row.max_nodes,
        max_vcpus: row.max_vcpus,
        max_webhook_endpoints: row.max_webhook_endpoints,
        max_pending_invitations: row.max_pending_invitations,
        max_service_accounts: row.max_service_accounts,
        max_api_tokens: row.max_api_tokens,
        max_trust_policies: row.max_trust_policies,
        max_deploy_hooks: row.max_deploy_hooks,
        max_namespaces_per_cluster: row.max_namespaces_per_cluster,
        max_invitations_per_hour: row.max_invitations_per_hour,
    };
    let (limits, overridden) = overrides.over(&by_plan);
    Ok((limits, plan.id.clone(), overridden))
}

async fn load(conn: &mut PgConnection, config: &Config, org: Uuid) -> Result<QuotaState> {
    let (limits, plan, overridden) = limits(&mut *conn, config, org).await?;
    let row = sqlx::query!(
        r#"SELECT
             (SELECT count(*) FROM clusters WHERE org_id = $1) AS "clusters!",
             (SELECT COALESCE(max(n), 0) FROM (SELECT count(*) AS n FROM node_pools
                  WHERE org_id = $1 GROUP BY cluster_id) per_cluster) AS "max_pools!",
             (SELECT COALESCE(sum(reserved_nodes), 0)::bigint FROM node_pools WHERE org_id = $1) AS "nodes!",
             (SELECT COALESCE(sum(reserved_vcpus), 0)::bigint FROM node_pools WHERE org_id = $1) AS "vcpus!""#,
        org,
    )
    .fetch_one(conn)
    .await?;
    Ok(QuotaState {
        limits,
        plan,
        overridden,
        clusters: row.clusters,
        max_pools_in_a_cluster: row.max_pools,
        nodes: row.nodes,
        vcpus: row.vcpus,
    })
}

/// What tenants create, limited by count per organization (namespaces per cluster).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::app) enum Counted {
    WebhookEndpoints,
    PendingInvitations,
    /// Invitations sent in the last hour: a limit on mail, not on members.
    InvitationsLastHour,
    ServiceAccounts,
    /// Tokens neither revoked nor expired.
    ApiTokens,
    TrustPolicies,
    DeployHooks,
    NamespacesInCluster(Uuid),
}

impl Counted {
    const ALL_ORG_WIDE: [Counted; 7] = [
        Counted::WebhookEndpoints,
        Counted::PendingInvitations,
        Counted::InvitationsLastHour,
        Counted::ServiceAccounts,
        Counted::ApiTokens,
        Counted::TrustPolicies,
        Counted::DeployHooks,
    ];

    /// The quota's name in errors and in `quota_view`.
    fn quota(self) -> &'static str {
        match self {
            Counted::WebhookEndpoints => "webhook_endpoints",
            Counted::PendingInvitations => "pending_invitations",
            Counted::InvitationsLastHour => "invitations_per_hour",
            Counted::ServiceAccounts => "service_accounts",
            Counted::ApiTokens => "api_tokens",
            Counted::TrustPolicies => "trust_policies",
            Counted::DeployHooks => "deploy_hooks",
            Counted::NamespacesInCluster(_) => "namespaces_per_cluster",
        }
    }

    fn limit(self, limits: &QuotaDefaults) -> i64 {
        match self {
            Counted::WebhookEndpoints => limits.max_webhook_endpoints,
            Counted::PendingInvitations => limits.max_pending_invitations,
            Counted::InvitationsLastHour => limits.max_invitations_per_hour,
            Counted::ServiceAccounts => limits.max_service_accounts,
            Counted::ApiTokens => limits.max_api_tokens,
            Counted::TrustPolicies => limits.max_trust_policies,
            Counted::DeployHooks => limits.max_deploy_hooks,
            Counted::NamespacesInCluster(_) => limits.max_namespaces_per_cluster,
        }
    }

    async fn usage(self, conn: &mut PgConnection, org: Uuid) -> Result<i64> {
        let count = match self {
            Counted::WebhookEndpoints => {
                sqlx::query_scalar!(r#"SELECT count(*) AS "n!" FROM webhook_endpoints WHERE org_id = $1"#, org)
                    .fetch_one(conn)
                    .await?
            }
            Counted::PendingInvitations => {
                sqlx::query_scalar!(
                    r#"SELECT count(*) AS "n!" FROM invitations WHERE org_id = $1 AND accepted_at IS NULL
                       AND revoked_at IS NULL AND expires_at > now()"#,
                    org
                )
                .fetch_one(conn)
                .await?
            }
            Counted::InvitationsLastHour => {
                sqlx::query_scalar!(
                    r#"SELECT count(*) AS "n!" FROM invitations WHERE org_id = $1
                       AND created_at > now() - interval '1 hour'"#,
                    org
                )
                .fetch_one(conn)
                .await?
            }
            Counted::ServiceAccounts => {
                sqlx::query_scalar!(r#"SELECT count(*) AS "n!" FROM service_accounts WHERE org_id = $1"#, org)
                    .fetch_one(conn)
                    .await?
            }
            Counted::ApiTokens => {
                sqlx::query_scalar!(
                    r#"SELECT count(*) AS "n!" FROM api_tokens WHERE org_id = $1 AND revoked_at IS NULL
                       AND (expires_at IS NULL OR expires_at > now())"#,
                    org
                )
                .fetch_one(conn)
                .await?
            }
            Counted::TrustPolicies => {
                sqlx::query_scalar!(r#"SELECT count(*) AS "n!" FROM trust_policies WHERE org_id = $1"#, org)
                    .fetch_one(conn)
                    .await?
            }
            Counted::DeployHooks => {
                sqlx::query_scalar!(r#"SELECT count(*) AS "n!" FROM deploy_hooks WHERE org_id = $1"#, org)
                    .fetch_one(conn)
                    .await?
            }
            Counted::NamespacesInCluster(cluster) => {
                // Those made with kubectl are the cluster's users' own: not counted.
                sqlx::query_scalar!(
                    r#"SELECT count(*) AS "n!" FROM namespaces WHERE cluster_id = $1 AND made_with = 'moke'"#,
                    cluster
                )
                .fetch_one(conn)
                .await?
            }
        };
        Ok(count)
    }
}

/// Locks the organization and checks that `requested` more of `what` fit
/// its quota; call inside the write's transaction, before the insert.
pub(in crate::app) async fn check_count(
    tx: &mut PgConnection,
    config: &Config,
    org: Uuid,
    what: Counted,
    requested: i64,
) -> Result<()> {
    lock_org(&mut *tx, org).await?;
    let (limits, _, _) = limits(&mut *tx, config, org).await?;
    let usage = what.usage(&mut *tx, org).await?;
    within(what.quota(), what.limit(&limits), usage, requested)
}

/// Serializes quota-checked writes of one organization until the transaction ends.
pub(in crate::app) async fn lock_org(tx: &mut PgConnection, org: Uuid) -> Result<()> {
    // NO KEY UPDATE: serializes quota checks of one organization without
    // blocking the foreign-key checks (KEY SHARE) every other write of it makes.
    // A deleted organization is gone: a write that waited for its delete
    // reads the row again after the lock and finds it no more.
    sqlx::query!("SELECT id FROM organizations WHERE id = $1 AND deleted_at IS NULL FOR NO KEY UPDATE", org)
        .fetch_optional(tx)
        .await?
        .ok_or_else(|| Error::not_found("organization", OrgId::from_uuid(org).to_string()))?;
    Ok(())
}

fn within(quota: &'static str, limit: i64, usage: i64, requested: i64) -> Result<()> {
    if usage + requested > limit { Err(Error::QuotaExceeded { quota, limit, usage, requested }) } else { Ok(()) }
}

/// What a mutation adds to an organization's usage.
#[derive(Debug, Default, Clone, Copy)]
pub(in crate::app) struct Demand {
    pub clusters: i64,
    /// Node pools added to one cluster, with that cluster's current count.
    pub node_pools: Option<(i64, i64)>,
    pub nodes: i64,
    pub vcpus: i64,
}

/// Checks `demand` against the organization's quotas; call with the org locked.
pub(in crate::app) async fn check(conn: &mut PgConnection, config: &Config, org: Uuid, demand: Demand) -> Result<()> {
    let state = load(conn, config, org).await?;
    if demand.clusters > 0 {
        within("clusters", state.limits.max_clusters, state.clusters, demand.clusters)?;
    }
    if let Some((existing, added)) = demand.node_pools {
        within("node_pools_per_cluster", state.limits.max_node_pools_per_cluster, existing, added)?;
    }
    if demand.nodes > 0 {
        within("nodes", state.limits.max_nodes, state.nodes, demand.nodes)?;
    }
    if demand.vcpus > 0 {
        within("vcpus", state.limits.max_vcpus, state.vcpus, demand.vcpus)?;
    }
    Ok(())
}

impl App {
    /// `quota_view`: limits and usage of an organization, each limit with
    /// where it comes from (the plan, or an operator's override).
    pub async fn quota_view(&self, ctx: &RequestContext, org: OrgId) -> Result<QuotasView> {
        self.org_authorized(ctx, org, Action::ReadQuotas).await?;
        let mut conn = self.db().acquire().await?;
        let state = load(&mut conn, self.config(), org.uuid()).await?;
        let items = items(&mut conn, org.uuid(), &state).await?;
        let item = |wanted: &str| {
            let (quota, limit, usage) = items.iter().find(|(quota, ..)| *quota == wanted).copied().unwrap_or_default();
            let source = if state.overridden.contains(&quota) { QuotaSource::Override } else { QuotaSource::Plan };
            QuotaItem { limit, usage, source }
        };
        Ok(QuotasView {
            plan: state.plan.clone(),
            clusters: item("clusters"),
            node_pools_per_cluster: item("node_pools_per_cluster"),
            nodes: item("nodes"),
            vcpus: item("vcpus"),
            webhook_endpoints: item(Counted::WebhookEndpoints.quota()),
            pending_invitations: item(Counted::PendingInvitations.quota()),
            invitations_per_hour: item(Counted::InvitationsLastHour.quota()),
            service_accounts: item(Counted::ServiceAccounts.quota()),
            api_tokens: item(Counted::ApiTokens.quota()),
            trust_policies: item(Counted::TrustPolicies.quota()),
            deploy_hooks: item(Counted::DeployHooks.quota()),
            namespaces_per_cluster: item("namespaces_per_cluster"),
        })
    }

    /// Overrides some of `org`'s quota limits (an operator's act, with
    /// `moke-server billing set-quota`): each change names a quota (as
    /// `quota_view` does, or by its `max_…` configuration name) and a new
    /// limit, or `None` to give it back to the plan. `reason` is kept with
    /// the overrides and in the organization's audit log; `set_by` only
    /// with the overrides.
    pub async fn override_quotas(
        &self,
        org: OrgId,
        changes: &[(String, Option<i64>)],
        reason: &str,
        set_by: &str,
    ) -> Result<QuotaLimits> {
        let mut v = crate::app::error::Validator::new();
        let mut overrides = QuotaLimits::default();
        for (name, limit) in changes {
            v.check(overrides.put(name, Some(0)), name, "unknown_quota", "not a quota (see `quota_view`)");
            v.check(limit.is_none_or(|l| (0..=1_000_000).contains(&l)), name, "invalid", "0 to 1000000");
        }
        v.check(!changes.is_empty(), "changes", "missing_field", "name at least one quota");
        v.check((1..=500).contains(&reason.chars().count()), "reason", "invalid", "1 to 500 characters");
        v.finish()?;
        let mut tx = self.db().begin().await?;
        lock_org(&mut tx, org.uuid()).await?;
        let mut overrides = stored_overrides(&mut tx, org.uuid()).await?;
        for (name, limit) in changes {
            overrides.put(name, *limit);
        }
        write_overrides(&mut tx, org.uuid(), &overrides, Some((reason, set_by))).await?;
        let record = AuditRecord {
            action: "quota.override",
            resource_type: "organization",
            resource_id: Some(org.to_string()),
            details: serde_json::json!({
                "changes": changes.iter().map(|(name, limit)| {
                    serde_json::json!({ "quota": name.strip_prefix("max_").unwrap_or(name), "limit": limit })
                }).collect::<Vec<_>>(),
                "reason": reason,
            }),
        };
        audit::record(&mut tx, &RequestContext::system(org.uuid()), record).await?;
        tx.commit().await?;
        Ok(overrides)
    }

    /// Sets all of an organization's quota overrides at once (tests).
    pub async fn set_quota_overrides(&self, org: OrgId, limits: QuotaDefaults) -> Result<()> {
        let all = QuotaLimits {
            max_clusters: Some(limits.max_clusters),
            max_node_pools_per_cluster: Some(limits.max_node_pools_per_cluster),
            max_nodes: Some(limits.max_nodes),
            max_vcpus: Some(limits.max_vcpus),
            max_webhook_endpoints: Some(limits.max_webhook_endpoints),
            max_pending_invitations: Some(limits.max_pending_invitations),
            max_service_accounts: Some(limits.max_service_accounts),
            max_api_tokens: Some(limits.max_api_tokens),
            max_trust_policies: Some(limits.max_trust_policies),
            max_deploy_hooks: Some(limits.max_deploy_hooks),
            max_namespaces_per_cluster: Some(limits.max_namespaces_per_cluster),
            max_invitations_per_hour: Some(limits.max_invitations_per_hour),
        };
        let mut tx = self.db().begin().await?;
        write_overrides(&mut tx, org.uuid(), &all, None).await?;
        tx.commit().await?;
        Ok(())
    }
}

/// `org`'s overrides as stored, locked until the transaction ends (none
/// when it has no row).
async fn stored_overrides(tx: &mut PgConnection, org: Uuid) -> Result<QuotaLimits> {
    let row = sqlx::query_as!(
        QuotaLimits,
        "SELECT max_clusters, max_node_pools_per_cluster, max_nodes, max_vcpus, max_webhook_endpoints,
                max_pending_invitations, max_service_accounts, max_api_tokens, max_trust_policies,
                max_deploy_hooks, max_namespaces_per_cluster, max_invitations_per_hour
         FROM org_quotas WHERE org_id = $1 FOR UPDATE",
        org,
    )
    .fetch_optional(tx)
    .await?;
    Ok(row.unwrap_or_default())
}

/// Writes all of `org`'s overrides (`None`: the plan's limit), and who set
/// them and why when an operator did.
async fn write_overrides(
    tx: &mut PgConnection,
    org: Uuid,
    limits: &QuotaLimits,
    why: Option<(&str, &str)>,
) -> Result<()> {
    let (reason, set_by) = why.unzip();
    sqlx::query!(
        "INSERT INTO org_quotas (org_id, max_clusters, max_node_pools_per_cluster, max_nodes, max_vcpus,
             max_webhook_endpoints, max_pending_invitations, max_service_accounts, max_api_tokens,
             max_trust_policies, max_deploy_hooks, max_namespaces_per_cluster, max_invitations_per_hour, reason,
             set_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
         ON CONFLICT (org_id) DO UPDATE SET max_clusters = $2, max_node_pools_per_cluster = $3,
             max_nodes = $4, max_vcpus = $5, max_webhook_endpoints = $6, max_pending_invitations = $7,
             max_service_accounts = $8, max_api_tokens = $9, max_trust_policies = $10,
             max_deploy_hooks = $11, max_namespaces_per_cluster = $12, max_invitations_per_hour = $13,
             reason = $14, set_by = $15, updated_at = now()",
        org,
        limits.max_clusters,
        limits.max_node_pools_per_cluster,
        limits.max_nodes,
        limits.max_vcpus,
        limits.max_webhook_endpoints,
        limits.max_pending_invitations,
        limits.max_service_accounts,
        limits.max_api_tokens,
        limits.max_trust_policies,
        limits.max_deploy_hooks,
        limits.max_namespaces_per_cluster,
        limits.max_invitations_per_hour,
        reason,
        set_by,
    )
    .execute(tx)
    .await?;
    Ok(())
}

/// Every quota of `org` as (name, limit, usage), with `state`'s limits.
async fn items(conn: &mut PgConnection, org: Uuid, state: &QuotaState) -> Result<Vec<(&'static str, i64, i64)>> {
    let limits = &state.limits;
    let mut items = vec![
        ("clusters", limits.max_clusters, state.clusters),
        ("node_pools_per_cluster", limits.max_node_pools_per_cluster, state.max_pools_in_a_cluster),
        ("nodes", limits.max_nodes, state.nodes),
        ("vcpus", limits.max_vcpus, state.vcpus),
    ];
    for what in Counted::ALL_ORG_WIDE {
        items.push((what.quota(), what.limit(limits), what.usage(&mut *conn, org).await?));
    }
    let busiest_cluster = sqlx::query_scalar!(
        r#"SELECT COALESCE(max(n), 0) AS "n!" FROM (SELECT count(*) AS n FROM namespaces s
               JOIN clusters c ON c.id = s.cluster_id WHERE c.org_id = $1 AND s.made_with = 'moke'
               GROUP BY s.cluster_id) per_cluster"#,
        org
    )
    .fetch_one(conn)
    .await?;
    items.push(("namespaces_per_cluster", limits.max_namespaces_per_cluster, busiest_cluster));
    Ok(items)
}

/// Every quota of `org` as (name, limit, usage) were it on `plan` (its
/// operators' overrides still applying): what a plan change checks.
pub(in crate::app) async fn usage_under_plan(
    conn: &mut PgConnection,
    config: &Config,
    org: Uuid,
    plan: &Plan,
) -> Result<Vec<(&'static str, i64, i64)>> {
    let mut state = load(&mut *conn, config, org).await?;
    let (by_plan, _) = plan.quotas.over(&config.quotas);
    let (limits, _) = stored_overrides(&mut *conn, org).await?.over(&by_plan);
    state.limits = limits;
    items(conn, org, &state).await
}
