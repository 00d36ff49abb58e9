//! Per-organization quotas, checked inside the mutation's transaction while
//! the organization row is locked, so concurrent creates cannot overshoot.

use moke_iam::Action;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::{App, Error, RequestContext, Result};
use crate::config::QuotaDefaults;
use crate::ids::OrgId;
use crate::model::{QuotaItem, QuotasView};

/// Effective limits and current usage of one organization.
struct QuotaState {
    limits: QuotaDefaults,
    clusters: i64,
    max_pools_in_a_cluster: i64,
    nodes: i64,
    vcpus: i64,
}

/// The organization's limits: its overrides, else the configured defaults.
async fn limits(conn: &mut PgConnection, defaults: &QuotaDefaults, org: Uuid) -> Result<QuotaDefaults> {
    let row = sqlx::query!(
        "SELECT max_clusters, max_node_pools_per_cluster, max_nodes, max_vcpus, max_webhook_endpoints,
                max_pending_invitations, max_service_accounts, max_api_tokens, max_trust_policies,
                max_deploy_hooks, max_namespaces_per_cluster, max_invitations_per_hour
         FROM org_quotas WHERE org_id = $1",
        org,
    )
    .fetch_optional(conn)
    .await?;
    let Some(row) = row else { return Ok(*defaults) };
    Ok(QuotaDefaults {
        max_clusters: row.max_clusters.unwrap_or(defaults.max_clusters),
        max_node_pools_per_cluster: row.max_node_pools_per_cluster.unwrap_or(defaults.max_node_pools_per_cluster),
        max_nodes: row.max_nodes.unwrap_or(defaults.max_nodes),
        max_vcpus: row.max_vcpus.unwrap_or(defaults.max_vcpus),
        max_webhook_endpoints: row.max_webhook_endpoints.unwrap_or(defaults.max_webhook_endpoints),
        max_pending_invitations: row.max_pending_invitations.unwrap_or(defaults.max_pending_invitations),
        max_service_accounts: row.max_service_accounts.unwrap_or(defaults.max_service_accounts),
        max_api_tokens: row.max_api_tokens.unwrap_or(defaults.max_api_tokens),
        max_trust_policies: row.max_trust_policies.unwrap_or(defaults.max_trust_policies),
        max_deploy_hooks: row.max_deploy_hooks.unwrap_or(defaults.max_deploy_hooks),
        max_namespaces_per_cluster: row.max_namespaces_per_cluster.unwrap_or(defaults.max_namespaces_per_cluster),
        max_invitations_per_hour: row.max_invitations_per_hour.unwrap_or(defaults.max_invitations_per_hour),
    })
}

async fn load(conn: &mut PgConnection, defaults: &QuotaDefaults, org: Uuid) -> Result<QuotaState> {
    let limits = limits(&mut *conn, defaults, org).await?;
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
                sqlx::query_scalar!(r#"SELECT count(*) AS "n!" FROM namespaces WHERE cluster_id = $1"#, cluster)
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
    defaults: &QuotaDefaults,
    org: Uuid,
    what: Counted,
    requested: i64,
) -> Result<()> {
    lock_org(&mut *tx, org).await?;
    let limits = limits(&mut *tx, defaults, org).await?;
    let usage = what.usage(&mut *tx, org).await?;
    within(what.quota(), what.limit(&limits), usage, requested)
}

/// Serializes quota-checked writes of one organization until the transaction ends.
pub(in crate::app) async fn lock_org(tx: &mut PgConnection, org: Uuid) -> Result<()> {
    // NO KEY UPDATE: serializes quota checks of one organization without
    // blocking the foreign-key checks (KEY SHARE) every other write of it makes.
    sqlx::query!("SELECT id FROM organizations WHERE id = $1 FOR NO KEY UPDATE", org)
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
pub(in crate::app) async fn check(
    conn: &mut PgConnection,
    defaults: &QuotaDefaults,
    org: Uuid,
    demand: Demand,
) -> Result<()> {
    let state = load(conn, defaults, org).await?;
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
    /// `quota_view`: limits and usage of an organization.
    pub async fn quota_view(&self, ctx: &RequestContext, org: OrgId) -> Result<QuotasView> {
        self.org_authorized(ctx, org, Action::ReadQuotas).await?;
        let mut conn = self.db().acquire().await?;
        let state = load(&mut conn, &self.config().quotas, org.uuid()).await?;
        let mut counted = Vec::new();
        for what in Counted::ALL_ORG_WIDE {
            counted
                .push(QuotaItem { limit: what.limit(&state.limits), usage: what.usage(&mut conn, org.uuid()).await? });
        }
        let busiest_cluster = sqlx::query_scalar!(
            r#"SELECT COALESCE(max(n), 0) AS "n!" FROM (SELECT count(*) AS n FROM namespaces s
                   JOIN clusters c ON c.id = s.cluster_id WHERE c.org_id = $1 GROUP BY s.cluster_id) per_cluster"#,
            org.uuid()
        )
        .fetch_one(&mut *conn)
        .await?;
        let [
            webhook_endpoints,
            pending_invitations,
            invitations_per_hour,
            service_accounts,
            api_tokens,
            trust_policies,
            deploy_hooks,
        ] = counted.try_into().expect("one item per counted quota");
        Ok(QuotasView {
            clusters: QuotaItem { limit: state.limits.max_clusters, usage: state.clusters },
            node_pools_per_cluster: QuotaItem {
                limit: state.limits.max_node_pools_per_cluster,
                usage: state.max_pools_in_a_cluster,
            },
            nodes: QuotaItem { limit: state.limits.max_nodes, usage: state.nodes },
            vcpus: QuotaItem { limit: state.limits.max_vcpus, usage: state.vcpus },
            webhook_endpoints,
            pending_invitations,
            invitations_per_hour,
            service_accounts,
            api_tokens,
            trust_policies,
            deploy_hooks,
            namespaces_per_cluster: QuotaItem {
                limit: state.limits.max_namespaces_per_cluster,
                usage: busiest_cluster,
            },
        })
    }

    /// Sets an organization's quota overrides (operators and tests; the
    /// billing issue brings plans that set these).
    pub async fn set_quota_overrides(&self, org: OrgId, limits: QuotaDefaults) -> Result<()> {
        sqlx::query!(
            "INSERT INTO org_quotas (org_id, max_clusters, max_node_pools_per_cluster, max_nodes, max_vcpus,
                 max_webhook_endpoints, max_pending_invitations, max_service_accounts, max_api_tokens,
                 max_trust_policies, max_deploy_hooks, max_namespaces_per_cluster, max_invitations_per_hour)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
             ON CONFLICT (org_id) DO UPDATE SET max_clusters = $2, max_node_pools_per_cluster = $3,
                 max_nodes = $4, max_vcpus = $5, max_webhook_endpoints = $6, max_pending_invitations = $7,
                 max_service_accounts = $8, max_api_tokens = $9, max_trust_policies = $10,
                 max_deploy_hooks = $11, max_namespaces_per_cluster = $12, max_invitations_per_hour = $13,
                 updated_at = now()",
            org.uuid(),
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
        )
        .execute(self.db())
        .await?;
        Ok(())
    }
}
