//! GraphQL objects over the public resource model, and the query, mutation
//! and subscription roots. Each resolver calls one app-layer function.

use std::sync::Arc;

use async_graphql::connection::{Connection, Edge};
use async_graphql::dataloader::DataLoader;
use async_graphql::{ComplexObject, Context, ID, InputObject, Json, MaybeUndefined, Object, Result, SimpleObject};
use chrono::{DateTime, Utc};
use futures::Stream;

use super::error;
use super::loaders;
use crate::app::kernel::watch::Watcher;
use crate::app::{App, Error, PageRequest, RequestContext, ResourceRef};
use crate::ids::{Id, IdKind, OperationId};
use crate::model::*;

pub(super) fn app<'a>(ctx: &Context<'a>) -> &'a Arc<App> {
    ctx.data_unchecked::<Arc<App>>()
}

pub(super) fn caller<'a>(ctx: &Context<'a>) -> Result<&'a RequestContext> {
    ctx.data::<RequestContext>().map_err(|_| error(Error::Unauthenticated))
}

/// The caller of a mutation, asking for a dry run when its `dryRun`
/// argument is true (answered as an error with code `dry_run` and the plan
/// in `extensions.plan`: nothing was changed).
pub(super) fn caller_for(ctx: &Context<'_>, dry_run: Option<bool>) -> Result<RequestContext> {
    let caller = caller(ctx)?.clone();
    Ok(if dry_run == Some(true) { caller.dry_run() } else { caller })
}

/// [`caller_for`], with the client's idempotency key for one create.
pub(super) fn caller_with_key(ctx: &Context<'_>, key: Option<String>, dry_run: Option<bool>) -> Result<RequestContext> {
    let mut caller = caller_for(ctx, dry_run)?;
    caller.idempotency_key = key;
    Ok(caller)
}

pub(super) fn id<K: IdKind>(text: &str) -> Result<Id<K>> {
    crate::app::parse_id(text).map_err(error)
}

pub(super) fn page(first: Option<i32>, after: Option<String>) -> Result<PageRequest> {
    PageRequest::parse(first.map(i64::from), after.as_deref()).map_err(error)
}

/// A page as a Relay connection whose cursors are the REST page tokens.
pub(super) fn connection<V>(page: Page<V>, id_of: impl Fn(&V) -> uuid::Uuid) -> Connection<String, V>
where
    V: async_graphql::OutputType,
{
    let mut connection = Connection::new(false, page.next_page.is_some());
    connection.edges.extend(page.items.into_iter().map(|item| Edge::new(PageRequest::cursor(id_of(&item)), item)));
    connection
}

/// The request's batch loader `L`. Loaders come with a caller, so where there
/// is none (a subscription's nested fields, which belong on HTTP) this is the
/// same refusal [`caller`] gives.
pub(super) fn batch<'a, L: super::loaders::Batched>(ctx: &Context<'a>) -> Result<&'a DataLoader<L>> {
    caller(ctx)?;
    Ok(ctx.data::<super::loaders::Batches>()?.get::<L>())
}

/// Complexity of a list field: its page size times the cost of one item.
pub(super) fn list_complexity(child: usize, first: Option<i32>) -> usize {
    let size = first.map_or(PageRequest::DEFAULT_LIMIT as usize, |f| f.max(0) as usize);
    size.saturating_mul(child.max(1))
}

// ---------------------------------------------------------------- objects

// The resource objects are the model's views (`#[derive(SimpleObject)]` in
// `model.rs`, named Org, Project, Cluster, NodePool and Operation); what
// follows are only the fields a view does not hold itself.

#[ComplexObject]
impl OrgView {
    async fn labels(&self) -> Json<&Labels> {
        Json(&self.labels)
    }
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn projects(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, ProjectView>> {
        let result = app(ctx).project_list(caller(ctx)?, self.id, page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |p| p.id.uuid()))
    }
    async fn quotas(&self, ctx: &Context<'_>) -> Result<QuotasView> {
        app(ctx).quota_view(caller(ctx)?, self.id).await.map_err(error)
    }
    /// The change policy: the version in force and those scheduled.
    async fn policy(&self, ctx: &Context<'_>) -> Result<OrgPolicyView> {
        app(ctx).org_policy_view(caller(ctx)?, self.id).await.map_err(error)
    }
    /// Every version of the change policy, newest first.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn policy_versions(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, OrgPolicyVersion>> {
        let result =
            app(ctx).org_policy_version_list(caller(ctx)?, self.id, page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |v| uuid::Uuid::from_u128(u128::MAX - v.version as u128)))
    }
    /// The organization's invoices, newest first (drafts with their totals
    /// so far). Needs the `read_billing` permission.
    #[graphql(complexity = "100 + list_complexity(child_complexity, first)")]
    async fn invoices(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, InvoiceSummary>> {
        let result = app(ctx).invoice_list(caller(ctx)?, self.id, page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |i| i.id.uuid()))
    }
    /// The organization's budgets, with this month's spend and alerts.
    #[graphql(complexity = "100 + list_complexity(child_complexity, first)")]
    async fn budgets(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, BudgetView>> {
        let result = app(ctx).budget_list(caller(ctx)?, self.id, page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |b| b.id.uuid()))
    }
    /// The organization's API tokens (never their secrets). Needs `read_credentials`.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn tokens(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, Token>> {
        let result = app(ctx).token_list(caller(ctx)?, self.id, page(first, after)?).await.map_err(error)?;
        let mut connection = Connection::new(false, result.next_page.is_some());
        connection
            .edges
            .extend(result.items.into_iter().map(|t| Edge::new(PageRequest::cursor(t.id.uuid()), Token::from(t))));
        Ok(connection)
    }
    /// Usage per UTC day, project, resource and price at list price, on
    /// days `[start, end)` (this month so far by default; at most 366
    /// days, 20 000 rows). Needs the `read_billing` permission.
    #[graphql(complexity = 2000)]
    async fn usage(
        &self,
        ctx: &Context<'_>,
        start: Option<chrono::NaiveDate>,
        end: Option<chrono::NaiveDate>,
    ) -> Result<UsageReport> {
        app(ctx).billing_usage_view(caller(ctx)?, self.id, start, end).await.map_err(error)
    }
    /// The organization's plan. Needs the `read_billing` permission.
    async fn plan(&self, ctx: &Context<'_>) -> Result<OrgPlanView> {
        app(ctx).billing_plan_view(caller(ctx)?, self.id).await.map_err(error)
    }
    /// This month's usage so far, the credits left, and the balance after them.
    #[graphql(complexity = 100)]
    async fn billing_balance(&self, ctx: &Context<'_>) -> Result<BillingBalanceView> {
        app(ctx).billing_balance_view(caller(ctx)?, self.id).await.map_err(error)
    }
    /// The organization's credits, newest first.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn credits(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, CreditGrantView>> {
        let result = app(ctx).credit_grant_list(caller(ctx)?, self.id, page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |g| g.id.uuid()))
    }
}

#[ComplexObject]
impl ProjectView {
    async fn labels(&self) -> Json<&Labels> {
        Json(&self.labels)
    }
    /// The project's operations, newest first (also those on resources since
    /// deleted): only those on `target` (a cluster, node pool or deployment
    /// id), of `kind` or in `status` when given.
    #[graphql(complexity = "100 + list_complexity(child_complexity, first)")]
    async fn operations(
        &self,
        ctx: &Context<'_>,
        target: Option<ID>,
        kind: Option<String>,
        status: Option<OperationStatus>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, OperationView>> {
        let filter = crate::app::region::operations::OperationFilter::parse(
            target.as_ref().map(|t| t.as_str()),
            kind.as_deref(),
            status,
        )
        .map_err(error)?;
        let result = app(ctx)
            .project_operation_list(caller(ctx)?, &ResourceRef::Id(self.id), filter, page(first, after)?)
            .await
            .map_err(error)?;
        Ok(connection(result, |o| o.id.uuid()))
    }
    /// The project's clusters in creation order. The first page of every
    /// project on a page is one query; `after` reads on.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn clusters(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, ClusterView>> {
        let request = page(first, after)?;
        if request.after.is_some() {
            let result =
                app(ctx).cluster_list(caller(ctx)?, &ResourceRef::Id(self.id), request).await.map_err(error)?;
            return Ok(connection(result, |c| c.id.uuid()));
        }
        let loader = batch::<loaders::Clusters>(ctx)?;
        let first_page = loader.load_one((self.id.uuid(), request.fetch_limit())).await.map_err(|e| (*e).clone())?;
        Ok(connection(request.page(first_page.unwrap_or_default(), |c| c.id.uuid()), |c| c.id.uuid()))
    }
}

#[ComplexObject]
impl ClusterView {
    async fn labels(&self) -> Json<&Labels> {
        Json(&self.labels)
    }
    /// What happened in the cluster, newest first, none older than `since`.
    #[graphql(complexity = "100 + list_complexity(child_complexity, first)")]
    async fn events(
        &self,
        ctx: &Context<'_>,
        since: Option<DateTime<Utc>>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, ClusterEventView>> {
        let (project, cluster) = (ResourceRef::Id(self.project_id), ResourceRef::Id(self.id));
        let result = app(ctx)
            .cluster_event_list(caller(ctx)?, &project, &cluster, since, page(first, after)?)
            .await
            .map_err(error)?;
        Ok(connection(result, ClusterEventView::cursor_key))
    }
    /// The cluster's node pools in creation order. The first page of every
    /// cluster on a page is one query; `after` reads on.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn node_pools(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, NodePoolView>> {
        let request = page(first, after)?;
        if request.after.is_some() {
            let (project, cluster) = (ResourceRef::Id(self.project_id), ResourceRef::Id(self.id));
            let result = app(ctx).node_pool_list(caller(ctx)?, &project, &cluster, request).await.map_err(error)?;
            return Ok(connection(result, |p| p.id.uuid()));
        }
        let loader = batch::<loaders::NodePools>(ctx)?;
        let pools = loader.load_one(self.id.uuid()).await.map_err(|e| (*e).clone())?;
        Ok(connection(request.page(pools.unwrap_or_default(), |p| p.id.uuid()), |p| p.id.uuid()))
    }
    /// The operations on the cluster, its node pools and its deployments
    /// (those since deleted too), newest first, as `clusterOperations` pages
    /// them. The first page of every cluster on a page is one query; `after`
    /// reads on.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn operations(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, OperationView>> {
        let request = page(first, after)?;
        if request.after.is_some() {
            let (project, cluster) = (ResourceRef::Id(self.project_id), ResourceRef::Id(self.id));
            let result =
                app(ctx).cluster_operation_list(caller(ctx)?, &project, &cluster, request).await.map_err(error)?;
            return Ok(connection(result, |o| o.id.uuid()));
        }
        let loader = batch::<loaders::Operations>(ctx)?;
        let newest = loader.load_one((self.id.uuid(), request.fetch_limit())).await.map_err(|e| (*e).clone())?;
        Ok(connection(request.page(newest.unwrap_or_default(), |o| o.id.uuid()), |o| o.id.uuid()))
    }
}

#[ComplexObject]
impl NodePoolView {
    async fn labels(&self) -> Json<&Labels> {
        Json(&self.labels)
    }
}

#[ComplexObject]
impl OperationView {
    /// Whether the operation has finished (succeeded or failed).
    async fn done(&self) -> bool {
        self.status.is_terminal()
    }

    /// The steps it went through (the newest 1000), oldest first, each with
    /// when it was reported, as REST's `operation_step_list` gives them: a
    /// bounded history rather than a paged list, priced as a list of 100
    /// (most operations take fewer steps). The steps of every operation on a
    /// page are one query.
    #[graphql(complexity = "100 * child_complexity")]
    async fn steps(&self, ctx: &Context<'_>) -> Result<Vec<crate::model::OperationStepView>> {
        let loader = batch::<loaders::OperationSteps>(ctx)?;
        let steps = loader.load_one(self.id.uuid()).await.map_err(|e| (*e).clone())?;
        Ok(steps.unwrap_or_default())
    }
}

/// An API token (never its secret).
#[derive(SimpleObject)]
pub struct Token {
    id: ID,
    name: String,
    role: String,
    hint: String,
    created_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    last_used_at: Option<DateTime<Utc>>,
    revoked_at: Option<DateTime<Utc>>,
}

impl From<TokenView> for Token {
    fn from(t: TokenView) -> Token {
        Token {
            id: ID(t.id.to_string()),
            name: t.name,
            role: t.role.as_str().to_string(),
            hint: t.hint,
            created_at: t.created_at,
            expires_at: t.expires_at,
            last_used_at: t.last_used_at,
            revoked_at: t.revoked_at,
        }
    }
}

/// A new token; `secret` is shown only in this answer.
#[derive(SimpleObject)]
pub struct TokenCreated {
    token: Token,
    secret: String,
}

// ---------------------------------------------------------------- inputs

/// A change to a project; omitted fields stay as they are.
#[derive(InputObject)]
pub struct ProjectPatch {
    /// Renames the project (a DNS label unique in the organization).
    name: Option<String>,
    labels: Option<Json<Labels>>,
    spec: Option<ProjectSpec>,
}

/// A change to a cluster; omitted fields stay as they are, `null` clears the window.
#[derive(InputObject)]
pub struct ClusterPatch {
    labels: Option<Json<Labels>>,
    region: Option<String>,
    kubernetes_version: Option<String>,
    control_plane_replicas: Option<i64>,
    maintenance_window: MaybeUndefined<MaintenanceWindow>,
    deletion_protection: Option<bool>,
    snapshot_policy: Option<SnapshotPolicy>,
    control_plane_firewall: Option<ControlPlaneFirewall>,
    release_channel: Option<ReleaseChannel>,
    /// Replaces the whole list.
    maintenance_exclusions: Option<Vec<MaintenanceExclusion>>,
}

/// A change to a node pool; omitted fields stay as they are, `null` turns autoscaling off.
#[derive(InputObject)]
pub struct NodePoolPatch {
    labels: Option<Json<Labels>>,
    machine_type: Option<String>,
    count: Option<i64>,
    autoscaling: MaybeUndefined<Autoscaling>,
    zones: Option<Vec<String>>,
    node_labels: Option<Json<Labels>>,
    taints: Option<Vec<Taint>>,
    upgrade_policy: Option<UpgradePolicy>,
}

impl From<NodePoolPatch> for NodePoolUpdate {
    fn from(patch: NodePoolPatch) -> Self {
        let spec = NodePoolSpecPatch {
            machine_type: patch.machine_type,
            count: patch.count,
            autoscaling: maybe(patch.autoscaling),
            zones: patch.zones,
            node_labels: patch.node_labels.map(|l| l.0),
            taints: patch.taints,
            upgrade_policy: patch.upgrade_policy,
        };
        let touches_spec = spec.machine_type.is_some()
            || spec.count.is_some()
            || spec.autoscaling.is_some()
            || spec.zones.is_some()
            || spec.node_labels.is_some()
            || spec.taints.is_some()
            || spec.upgrade_policy.is_some();
        NodePoolUpdate { labels: patch.labels.map(|l| l.0), spec: touches_spec.then_some(spec) }
    }
}

fn maybe<T>(value: MaybeUndefined<T>) -> Option<Option<T>> {
    match value {
        MaybeUndefined::Undefined => None,
        MaybeUndefined::Null => Some(None),
        MaybeUndefined::Value(v) => Some(Some(v)),
    }
}

// ---------------------------------------------------------------- roots

#[derive(Default)]
pub struct CoreQuery;

#[Object]
impl CoreQuery {
    /// The organizations the caller belongs to.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn orgs(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, OrgView>> {
        let result = app(ctx).org_list(caller(ctx)?, page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |o| o.id.uuid()))
    }

    async fn org(&self, ctx: &Context<'_>, id: ID) -> Result<OrgView> {
        app(ctx).org_view(caller(ctx)?, self::id(&id)?).await.map_err(error)
    }

    /// A project by id or name.
    async fn project(&self, ctx: &Context<'_>, project: String) -> Result<ProjectView> {
        let view = app(ctx).project_view(caller(ctx)?, &ResourceRef::parse(&project)).await.map_err(error)?;
        Ok(view)
    }

    /// A cluster by id or name, in a project given by id or name.
    async fn cluster(&self, ctx: &Context<'_>, project: String, cluster: String) -> Result<ClusterView> {
        let view = app(ctx)
            .cluster_view(caller(ctx)?, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster))
            .await
            .map_err(error)?;
        Ok(view)
    }

    async fn node_pool(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        node_pool: String,
    ) -> Result<NodePoolView> {
        let view = app(ctx)
            .node_pool_view(
                caller(ctx)?,
                &ResourceRef::parse(&project),
                &ResourceRef::parse(&cluster),
                &ResourceRef::parse(&node_pool),
            )
            .await
            .map_err(error)?;
        Ok(view)
    }

    async fn operation(&self, ctx: &Context<'_>, id: ID) -> Result<OperationView> {
        app(ctx).operation_view(caller(ctx)?, self::id(&id)?, None).await.map_err(error)
    }

    /// The approval request of an Operation the change policy held, with
    /// the change's plan.
    async fn operation_approval(&self, ctx: &Context<'_>, id: ID) -> Result<ApprovalView> {
        app(ctx).operation_approval_view(caller(ctx)?, self::id(&id)?).await.map_err(error)
    }

    /// An invoice of an organization, with its lines.
    #[graphql(complexity = 100)]
    async fn invoice(&self, ctx: &Context<'_>, org: ID, id: ID) -> Result<InvoiceView> {
        app(ctx).invoice_view(caller(ctx)?, self::id(&org)?, self::id(&id)?).await.map_err(error)
    }

    /// An invoice as a PDF, base64-encoded.
    #[graphql(complexity = 100)]
    async fn invoice_pdf(&self, ctx: &Context<'_>, org: ID, id: ID) -> Result<String> {
        use base64::Engine;
        let (_, pdf) = app(ctx).invoice_pdf(caller(ctx)?, self::id(&org)?, self::id(&id)?).await.map_err(error)?;
        Ok(base64::engine::general_purpose::STANDARD.encode(pdf))
    }

    /// An invoice's lines as CSV text.
    #[graphql(complexity = 100)]
    async fn invoice_csv(&self, ctx: &Context<'_>, org: ID, id: ID) -> Result<String> {
        let (_, csv) = app(ctx).invoice_csv(caller(ctx)?, self::id(&org)?, self::id(&id)?).await.map_err(error)?;
        String::from_utf8(csv).map_err(|e| error(crate::app::Error::Internal(e.into())))
    }

    /// The usage report of days `[start, end)` as CSV (one row per day,
    /// project, resource and price), as REST's download. Needs `read_billing`.
    #[graphql(complexity = 2000)]
    async fn usage_csv(
        &self,
        ctx: &Context<'_>,
        org: ID,
        start: Option<chrono::NaiveDate>,
        end: Option<chrono::NaiveDate>,
    ) -> Result<String> {
        let (_, csv) = app(ctx).billing_usage_csv(caller(ctx)?, self::id(&org)?, start, end).await.map_err(error)?;
        String::from_utf8(csv).map_err(|e| error(crate::app::Error::Internal(e.into())))
    }

    /// One budget. Needs `read_billing`.
    async fn budget(&self, ctx: &Context<'_>, org: ID, id: ID) -> Result<BudgetView> {
        app(ctx).budget_view(caller(ctx)?, self::id(&org)?, self::id(&id)?).await.map_err(error)
    }

    /// One API token of the organization (never its secret). Needs `read_credentials`.
    async fn token(&self, ctx: &Context<'_>, org: ID, id: ID) -> Result<Token> {
        app(ctx).token_view(caller(ctx)?, self::id(&org)?, self::id(&id)?).await.map(Token::from).map_err(error)
    }

    /// What a cluster and its node pools would cost a month, at the prices
    /// in effect now (checked as the creates check them; at most 10 node
    /// pools; writes nothing).
    #[graphql(complexity = 100)]
    async fn cluster_estimate(
        &self,
        ctx: &Context<'_>,
        project: String,
        input: ClusterEstimateRequest,
    ) -> Result<PriceEstimate> {
        app(ctx).cluster_estimate(caller(ctx)?, &ResourceRef::parse(&project), input).await.map_err(error)
    }

    /// The cluster's Kubernetes version and those it can be upgraded to
    /// (one minor version up, if offered and not past its end of life).
    async fn cluster_upgrades(&self, ctx: &Context<'_>, project: String, cluster: String) -> Result<ClusterUpgrades> {
        app(ctx)
            .cluster_upgrade_list(caller(ctx)?, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster))
            .await
            .map_err(error)
    }

    /// The etcd snapshots the cluster's region keeps, newest first.
    async fn cluster_snapshots(&self, ctx: &Context<'_>, project: String, cluster: String) -> Result<EtcdSnapshots> {
        app(ctx)
            .cluster_snapshot_list(caller(ctx)?, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster))
            .await
            .map_err(error)
    }

    /// The plans on offer and the quota limits each sets.
    async fn plans(&self, ctx: &Context<'_>) -> Vec<PlanView> {
        app(ctx).plan_list()
    }

    /// What adding a node pool would do to the cluster's monthly price
    /// (the pool checked as `createNodePool` checks it; writes nothing).
    #[graphql(complexity = 100)]
    async fn node_pool_estimate(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        input: NodePoolCreate,
    ) -> Result<PriceChange> {
        app(ctx)
            .node_pool_estimate(caller(ctx)?, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster), input)
            .await
            .map_err(error)
    }

    /// What a change to a node pool (as `updateNodePool` takes it) would do
    /// to the cluster's monthly price; writes nothing.
    #[graphql(complexity = 100)]
    async fn node_pool_update_estimate(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        node_pool: String,
        patch: NodePoolPatch,
    ) -> Result<PriceChange> {
        app(ctx)
            .node_pool_update_estimate(
                caller(ctx)?,
                &ResourceRef::parse(&project),
                &ResourceRef::parse(&cluster),
                &ResourceRef::parse(&node_pool),
                patch.into(),
            )
            .await
            .map_err(error)
    }

    /// The operations on a cluster, its node pools and its deployments (also
    /// those since deleted), newest first.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn cluster_operations(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, OperationView>> {
        let result = app(ctx)
            .cluster_operation_list(
                caller(ctx)?,
                &ResourceRef::parse(&project),
                &ResourceRef::parse(&cluster),
                page(first, after)?,
            )
            .await
            .map_err(error)?;
        Ok(connection(result, |o| o.id.uuid()))
    }

    /// The cluster's spec revisions, newest first (the newest 100).
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn cluster_revisions(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, ClusterRevisionView>> {
        let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
        let result = app(ctx)
            .cluster_revision_list(caller(ctx)?, &project, &cluster, page(first, after)?)
            .await
            .map_err(error)?;
        Ok(connection(result, ClusterRevisionView::cursor_key))
    }

    /// What changed in the cluster's spec at `generation`, against `from`
    /// (by default the revision before).
    async fn cluster_revision_diff(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        generation: i64,
        from: Option<i64>,
    ) -> Result<SpecDiff> {
        let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
        app(ctx)
            .cluster_revision_diff(caller(ctx)?, &project, &cluster, &generation.to_string(), from)
            .await
            .map_err(error)
    }

    /// The node pool's spec revisions, newest first (the newest 100).
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn node_pool_revisions(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        node_pool: String,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, NodePoolRevisionView>> {
        let (project, cluster, pool) =
            (ResourceRef::parse(&project), ResourceRef::parse(&cluster), ResourceRef::parse(&node_pool));
        let result = app(ctx)
            .node_pool_revision_list(caller(ctx)?, &project, &cluster, &pool, page(first, after)?)
            .await
            .map_err(error)?;
        Ok(connection(result, NodePoolRevisionView::cursor_key))
    }

    /// What changed in the node pool's spec at `generation`, against `from`
    /// (by default the revision before).
    async fn node_pool_revision_diff(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        node_pool: String,
        generation: i64,
        from: Option<i64>,
    ) -> Result<SpecDiff> {
        let (project, cluster, pool) =
            (ResourceRef::parse(&project), ResourceRef::parse(&cluster), ResourceRef::parse(&node_pool));
        app(ctx)
            .node_pool_revision_diff(caller(ctx)?, &project, &cluster, &pool, &generation.to_string(), from)
            .await
            .map_err(error)
    }
}

#[derive(Default)]
pub struct CoreMutation;

#[Object]
impl CoreMutation {
    async fn create_project(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        input: ProjectCreate,
        idempotency_key: Option<String>,
    ) -> Result<ProjectView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        app(ctx).project_create(&caller, id(&org)?, input).await.map_err(error)
    }

    async fn update_project(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        patch: ProjectPatch,
        if_match: Option<String>,
    ) -> Result<ProjectView> {
        let update = ProjectUpdate { name: patch.name, labels: patch.labels.map(|l| l.0), spec: patch.spec };
        let view = app(ctx)
            .project_update(&caller_for(ctx, dry_run)?, &ResourceRef::parse(&project), if_match.as_deref(), update)
            .await
            .map_err(error)?;
        Ok(view)
    }

    /// Move the organization to another plan (refused while it uses more
    /// than a smaller plan allows).
    async fn change_plan(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        input: PlanChange,
    ) -> Result<OrgPlanView> {
        app(ctx).billing_plan_update(&caller_for(ctx, dry_run)?, id(&org)?, input).await.map_err(error)
    }

    /// Set a monthly budget with alert thresholds (percent).
    async fn create_budget(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        input: BudgetCreate,
        idempotency_key: Option<String>,
    ) -> Result<BudgetView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        app(ctx).budget_create(&caller, id(&org)?, input).await.map_err(error)
    }

    /// Change a budget: only the fields given change.
    async fn update_budget(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        budget: ID,
        patch: BudgetUpdate,
    ) -> Result<BudgetView> {
        app(ctx).budget_update(&caller_for(ctx, dry_run)?, id(&org)?, id(&budget)?, patch).await.map_err(error)
    }

    async fn delete_budget(&self, ctx: &Context<'_>, dry_run: Option<bool>, org: ID, budget: ID) -> Result<bool> {
        app(ctx).budget_delete(&caller_for(ctx, dry_run)?, id(&org)?, id(&budget)?).await.map_err(error)?;
        Ok(true)
    }

    /// Another organization, owned by the person asking (at most 10 each;
    /// a person only, signed in or with a token neither limited nor
    /// expiring). The caller's credential stays where it acts.
    async fn create_org(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        idempotency_key: Option<String>,
        input: OrgCreate,
    ) -> Result<OrgView> {
        app(ctx).org_create(&caller_with_key(ctx, idempotency_key, dry_run)?, input).await.map_err(error)
    }

    /// Renames or relabels an organization (owners); `ifMatch` refuses a stale change.
    async fn update_org(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        if_match: Option<String>,
        input: OrgUpdate,
    ) -> Result<OrgView> {
        app(ctx).org_update(&caller_for(ctx, dry_run)?, id(&org)?, if_match.as_deref(), input).await.map_err(error)
    }

    /// Deletes an empty organization (no projects, no usage a finalized
    /// invoice does not hold yet): an owner signed in (a session, not a
    /// token) who belongs to another organization. Everything that could act
    /// in it stops at once; its name stays taken, its invoices and audit log kept.
    async fn delete_org(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        if_match: Option<String>,
    ) -> Result<bool> {
        app(ctx).org_delete(&caller_for(ctx, dry_run)?, id(&org)?, if_match.as_deref()).await.map_err(error)?;
        Ok(true)
    }

    async fn delete_project(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        if_match: Option<String>,
    ) -> Result<bool> {
        app(ctx)
            .project_delete(&caller_for(ctx, dry_run)?, &ResourceRef::parse(&project), if_match.as_deref())
            .await
            .map_err(error)?;
        Ok(true)
    }

    async fn create_cluster(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        input: ClusterCreate,
        idempotency_key: Option<String>,
    ) -> Result<OperationView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        let op = app(ctx).cluster_create(&caller, &ResourceRef::parse(&project), input).await.map_err(error)?;
        Ok(op)
    }

    async fn update_cluster(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        patch: ClusterPatch,
        if_match: Option<String>,
    ) -> Result<OperationView> {
        let spec = ClusterSpecPatch {
            region: patch.region,
            kubernetes_version: patch.kubernetes_version,
            control_plane: patch.control_plane_replicas.map(|replicas| ControlPlaneInput { replicas }),
            maintenance_window: maybe(patch.maintenance_window),
            deletion_protection: patch.deletion_protection,
            snapshot_policy: patch.snapshot_policy,
            control_plane_firewall: patch.control_plane_firewall,
            release_channel: patch.release_channel,
            maintenance_exclusions: patch.maintenance_exclusions,
        };
        let touches_spec = spec.region.is_some()
            || spec.kubernetes_version.is_some()
            || spec.control_plane.is_some()
            || spec.maintenance_window.is_some()
            || spec.deletion_protection.is_some()
            || spec.snapshot_policy.is_some()
            || spec.control_plane_firewall.is_some()
            || spec.release_channel.is_some()
            || spec.maintenance_exclusions.is_some();
        let update = ClusterUpdate { labels: patch.labels.map(|l| l.0), spec: touches_spec.then_some(spec) };
        let op = app(ctx)
            .cluster_update(
                &caller_for(ctx, dry_run)?,
                &ResourceRef::parse(&project),
                &ResourceRef::parse(&cluster),
                if_match.as_deref(),
                update,
            )
            .await
            .map_err(error)?;
        Ok(op)
    }

    /// Upgrades the cluster to one of `clusterUpgrades.available`: the
    /// control plane blue-green, then each node pool a node at a time.
    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn upgrade_cluster(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        idempotency_key: Option<String>,
        project: String,
        cluster: String,
        input: ClusterUpgradeRequest,
        if_match: Option<String>,
    ) -> Result<OperationView> {
        let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
        app(ctx)
            .cluster_upgrade(
                &caller_with_key(ctx, idempotency_key, dry_run)?,
                &project,
                &cluster,
                if_match.as_deref(),
                input,
            )
            .await
            .map_err(error)
    }

    async fn delete_cluster(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        if_match: Option<String>,
    ) -> Result<OperationView> {
        let op = app(ctx)
            .cluster_delete(
                &caller_for(ctx, dry_run)?,
                &ResourceRef::parse(&project),
                &ResourceRef::parse(&cluster),
                if_match.as_deref(),
            )
            .await
            .map_err(error)?;
        Ok(op)
    }

    async fn create_node_pool(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        input: NodePoolCreate,
        idempotency_key: Option<String>,
    ) -> Result<OperationView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        let op = app(ctx)
            .node_pool_create(&caller, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster), input)
            .await
            .map_err(error)?;
        Ok(op)
    }

    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn update_node_pool(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        node_pool: String,
        patch: NodePoolPatch,
        if_match: Option<String>,
    ) -> Result<OperationView> {
        let op = app(ctx)
            .node_pool_update(
                &caller_for(ctx, dry_run)?,
                &ResourceRef::parse(&project),
                &ResourceRef::parse(&cluster),
                &ResourceRef::parse(&node_pool),
                if_match.as_deref(),
                patch.into(),
            )
            .await
            .map_err(error)?;
        Ok(op)
    }

    /// Takes an etcd snapshot of the cluster now, kept under its snapshot policy.
    async fn create_cluster_snapshot(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        idempotency_key: Option<String>,
        project: String,
        cluster: String,
        if_match: Option<String>,
    ) -> Result<OperationView> {
        let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
        app(ctx)
            .cluster_snapshot_create(
                &caller_with_key(ctx, idempotency_key, dry_run)?,
                &project,
                &cluster,
                if_match.as_deref(),
            )
            .await
            .map_err(error)
    }

    /// Cancels a spec change (`cluster_update`, `node_pool_update`), or an
    /// upgrade, recycle, etcd snapshot or restore the region has not
    /// received: the spec it replaced is written back by an Operation of its
    /// own; this one fails with `cancelled`.
    async fn cancel_operation(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        id: ID,
        idempotency_key: Option<String>,
    ) -> Result<OperationView> {
        app(ctx).operation_cancel(&caller_with_key(ctx, idempotency_key, dry_run)?, self::id(&id)?).await.map_err(error)
    }

    /// Writes the next version of the organization's change policy (owners),
    /// in force from `input.effectiveAt` (now by default).
    async fn update_org_policy(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        input: OrgPolicyUpdate,
        if_match: Option<String>,
    ) -> Result<OrgPolicyView> {
        app(ctx)
            .org_policy_update(&caller_for(ctx, dry_run)?, id(&org)?, input, if_match.as_deref())
            .await
            .map_err(error)
    }

    /// Approves a held change: it is made now, as the approver, and its
    /// Operation starts.
    async fn approve_operation(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        id: ID,
        reason: Option<String>,
        idempotency_key: Option<String>,
    ) -> Result<OperationView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        app(ctx).operation_approve(&caller, self::id(&id)?, ApprovalDecision { reason }).await.map_err(error)
    }

    /// Rejects a held change: it never acts; its Operation fails with `rejected`.
    async fn reject_operation(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        id: ID,
        reason: Option<String>,
        idempotency_key: Option<String>,
    ) -> Result<OperationView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        app(ctx).operation_reject(&caller, self::id(&id)?, ApprovalDecision { reason }).await.map_err(error)
    }

    /// Restores the cluster's etcd from `snapshot` (cluster-admin rights):
    /// API servers stopped, one member restored, etcd back to three.
    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn restore_cluster_snapshot(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        idempotency_key: Option<String>,
        project: String,
        cluster: String,
        snapshot: String,
        if_match: Option<String>,
    ) -> Result<OperationView> {
        let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
        app(ctx)
            .cluster_snapshot_restore(
                &caller_with_key(ctx, idempotency_key, dry_run)?,
                &project,
                &cluster,
                &snapshot,
                if_match.as_deref(),
            )
            .await
            .map_err(error)
    }

    /// Replaces `input.nodes` of the pool (all of them when left out) one at
    /// a time: a new node first, then the old one cordoned, drained, deleted.
    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn recycle_node_pool(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        idempotency_key: Option<String>,
        project: String,
        cluster: String,
        node_pool: String,
        input: NodePoolRecycleRequest,
        if_match: Option<String>,
    ) -> Result<OperationView> {
        let (project, cluster, pool) =
            (ResourceRef::parse(&project), ResourceRef::parse(&cluster), ResourceRef::parse(&node_pool));
        app(ctx)
            .node_pool_recycle(
                &caller_with_key(ctx, idempotency_key, dry_run)?,
                &project,
                &cluster,
                &pool,
                if_match.as_deref(),
                input,
            )
            .await
            .map_err(error)
    }

    /// Deletes one node, cordoned and drained first: with `replace` a new
    /// node takes its place, without it the pool's count goes one lower.
    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn delete_node(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        node_pool: String,
        node: String,
        #[graphql(default = false)] replace: bool,
        if_match: Option<String>,
    ) -> Result<OperationView> {
        let (project, cluster, pool) =
            (ResourceRef::parse(&project), ResourceRef::parse(&cluster), ResourceRef::parse(&node_pool));
        app(ctx)
            .node_pool_node_delete(
                &caller_for(ctx, dry_run)?,
                &project,
                &cluster,
                &pool,
                &node,
                replace,
                if_match.as_deref(),
            )
            .await
            .map_err(error)
    }

    async fn delete_node_pool(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        node_pool: String,
        if_match: Option<String>,
    ) -> Result<OperationView> {
        let op = app(ctx)
            .node_pool_delete(
                &caller_for(ctx, dry_run)?,
                &ResourceRef::parse(&project),
                &ResourceRef::parse(&cluster),
                &ResourceRef::parse(&node_pool),
                if_match.as_deref(),
            )
            .await
            .map_err(error)?;
        Ok(op)
    }

    async fn create_token(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        input: TokenCreate,
        idempotency_key: Option<String>,
    ) -> Result<TokenCreated> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        let created = app(ctx).token_create(&caller, id(&org)?, input).await.map_err(error)?;
        Ok(TokenCreated { token: created.view.into(), secret: created.token })
    }

    async fn delete_token(&self, ctx: &Context<'_>, dry_run: Option<bool>, org: ID, token: ID) -> Result<bool> {
        app(ctx).token_delete(&caller_for(ctx, dry_run)?, id(&org)?, id(&token)?).await.map_err(error)?;
        Ok(true)
    }
}

pub struct Subscription;

/// A watch for this subscription's caller. Over a WebSocket its credential
/// is checked again before every read, and it holds one of the socket's
/// subscription slots as well as one of the principal's watches.
async fn watcher(ctx: &Context<'_>, app: &Arc<App>) -> Result<(Watcher, Option<super::SubscriptionSlot>)> {
    match ctx.data_opt::<super::WsSession>() {
        Some(session) => {
            let slot = session.take_slot().map_err(error)?;
            let caller = session.caller(app).await.map_err(error)?;
            let watcher = Watcher::start(app, session.bearer().to_string(), caller).map_err(error)?;
            session.mark_started();
            Ok((watcher, Some(slot)))
        }
        // A watch checks its credential again as it goes: only a socket holds one to check.
        None => Err(error(Error::Unauthenticated)),
    }
}

/// A watch's updates as a subscription: the first read's error is the
/// field's own (an unknown id is refused, not an empty stream), and a later
/// error (a revoked credential) is the last item.
async fn follow<T, S>(
    updates: S,
    slot: Option<super::SubscriptionSlot>,
) -> Result<impl Stream<Item = Result<T>> + use<T, S>>
where
    T: Send + 'static,
    S: Stream<Item = Result<T, Error>> + Send + 'static,
{
    use futures::StreamExt;
    let mut updates = Box::pin(updates);
    let first = match updates.next().await {
        Some(first) => first.map_err(error)?,
        None => {
            return Err(error(Error::Unavailable {
                detail: "the server is shutting down".into(),
                retry_after_seconds: 1,
            }));
        }
    };
    Ok(futures::stream::once(async move { Ok(first) }).chain(updates.map(move |update| {
        // The socket's slot is held as long as the stream lives.
        let _held = &slot;
        update.map_err(error)
    })))
}

#[async_graphql::Subscription]
impl Subscription {
    /// An operation's state now and at every change, ending when it is done.
    async fn operation(&self, ctx: &Context<'_>, id: ID) -> Result<impl Stream<Item = Result<OperationView>> + use<>> {
        let app = app(ctx).clone();
        let id: OperationId = self::id(&id)?;
        let (watcher, slot) = watcher(ctx, &app).await?;
        follow(crate::app::kernel::watch::operation_updates(watcher, id), slot).await
    }

    /// A cluster (id or name) now and whenever it changed (its status,
    /// conditions, version), read every second, for as long as it exists: a
    /// dashboard follows clusters without polling the API itself.
    async fn cluster(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
    ) -> Result<impl Stream<Item = Result<ClusterView>> + use<>> {
        use crate::app::kernel::watch::{ClusterAt, polled_updates};
        let app = app(ctx).clone();
        let (watcher, slot) = watcher(ctx, &app).await?;
        follow(polled_updates(watcher, ClusterAt { project, cluster }), slot).await
    }

    /// The organization's audit events the filter selects, up to now,
    /// oldest first, in batches of 1 000, as REST's export: each batch read
    /// as the caller's credential stands then; more than 100 000 events or
    /// 10 minutes end it with an error (narrow it with `since` and `until`).
    async fn audit_event_export(
        &self,
        ctx: &Context<'_>,
        org: ID,
        filter: Option<super::iam::AuditEventFilter>,
    ) -> Result<impl Stream<Item = Result<Vec<crate::model::AuditEventView>>> + use<>> {
        let app = app(ctx).clone();
        let org = self::id(&org)?;
        let filter = crate::app::kernel::audit::AuditFilter::from(filter.unwrap_or_default());
        let (watcher, slot) = watcher(ctx, &app).await?;
        let batches = crate::app::kernel::watch::audit_event_export(watcher, org, filter).await.map_err(error)?;
        follow(batches, slot).await
    }

    /// A deployment (id or name) now and at every change, ending when its
    /// rollout is complete (`running` at its current generation) or failed.
    /// Nothing broadcasts deployment changes, so it is read every second
    /// (and sent only when it changed).
    async fn deployment_rollout(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        namespace: String,
        deployment: String,
    ) -> Result<impl Stream<Item = Result<DeploymentView>> + use<>> {
        use crate::app::kernel::watch::{DeploymentAt, deployment_rollout_updates};
        let app = app(ctx).clone();
        let (watcher, slot) = watcher(ctx, &app).await?;
        let at = DeploymentAt { project, cluster, namespace, deployment };
        follow(deployment_rollout_updates(watcher, at), slot).await
    }
}
