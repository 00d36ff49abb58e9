//! Per-organization quotas, checked inside the mutation's transaction while
//! the organization row is locked, so concurrent creates cannot overshoot.

use moke_iam::Action;
use sqlx::PgConnection;
use uuid::Uuid;

use super::{App, Error, RequestContext, Result};
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

async fn load(conn: &mut PgConnection, defaults: &QuotaDefaults, org: Uuid) -> Result<QuotaState> {
    let row = sqlx::query!(
        r#"SELECT
             (SELECT count(*) FROM clusters WHERE org_id = $1) AS "clusters!",
             (SELECT COALESCE(max(n), 0) FROM (SELECT count(*) AS n FROM node_pools
                  WHERE org_id = $1 GROUP BY cluster_id) per_cluster) AS "max_pools!",
             (SELECT COALESCE(sum(reserved_nodes), 0)::bigint FROM node_pools WHERE org_id = $1) AS "nodes!",
             (SELECT COALESCE(sum(reserved_vcpus), 0)::bigint FROM node_pools WHERE org_id = $1) AS "vcpus!",
             q.max_clusters, q.max_node_pools_per_cluster, q.max_nodes, q.max_vcpus
           FROM (SELECT 1) one LEFT JOIN org_quotas q ON q.org_id = $1"#,
        org,
    )
    .fetch_one(conn)
    .await?;
    Ok(QuotaState {
        limits: QuotaDefaults {
            max_clusters: row.max_clusters.unwrap_or(defaults.max_clusters),
            max_node_pools_per_cluster: row.max_node_pools_per_cluster.unwrap_or(defaults.max_node_pools_per_cluster),
            max_nodes: row.max_nodes.unwrap_or(defaults.max_nodes),
            max_vcpus: row.max_vcpus.unwrap_or(defaults.max_vcpus),
        },
        clusters: row.clusters,
        max_pools_in_a_cluster: row.max_pools,
        nodes: row.nodes,
        vcpus: row.vcpus,
    })
}

/// Serializes quota-checked writes of one organization until the transaction ends.
pub(super) async fn lock_org(tx: &mut PgConnection, org: Uuid) -> Result<()> {
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
pub(super) struct Demand {
    pub clusters: i64,
    /// Node pools added to one cluster, with that cluster's current count.
    pub node_pools: Option<(i64, i64)>,
    pub nodes: i64,
    pub vcpus: i64,
}

/// Checks `demand` against the organization's quotas; call with the org locked.
pub(super) async fn check(conn: &mut PgConnection, defaults: &QuotaDefaults, org: Uuid, demand: Demand) -> Result<()> {
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
        Ok(QuotasView {
            clusters: QuotaItem { limit: state.limits.max_clusters, usage: state.clusters },
            node_pools_per_cluster: QuotaItem {
                limit: state.limits.max_node_pools_per_cluster,
                usage: state.max_pools_in_a_cluster,
            },
            nodes: QuotaItem { limit: state.limits.max_nodes, usage: state.nodes },
            vcpus: QuotaItem { limit: state.limits.max_vcpus, usage: state.vcpus },
        })
    }

    /// Sets an organization's quota overrides (operators and tests; the
    /// billing issue brings plans that set these).
    pub async fn set_quota_overrides(&self, org: OrgId, limits: QuotaDefaults) -> Result<()> {
        sqlx::query!(
            "INSERT INTO org_quotas (org_id, max_clusters, max_node_pools_per_cluster, max_nodes, max_vcpus)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (org_id) DO UPDATE SET max_clusters = $2, max_node_pools_per_cluster = $3,
                 max_nodes = $4, max_vcpus = $5, updated_at = now()",
            org.uuid(),
            limits.max_clusters,
            limits.max_node_pools_per_cluster,
            limits.max_nodes,
            limits.max_vcpus,
        )
        .execute(self.db())
        .await?;
        Ok(())
    }
}
