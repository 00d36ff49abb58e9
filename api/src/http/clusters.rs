//! `/v1/projects/{project}/clusters` and their node pools.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{Ctx, IdempotencyKeyHeader, IfMatch, IfMatchHeader, Json, ListParams, Query};
use super::problem::Problems;
use super::{ApiResult, accepted, with_etag};
use crate::app::{App, ResourceRef};
use crate::model::*;

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new()
        .routes(routes!(cluster_list, cluster_create))
        .routes(routes!(cluster_estimate))
        .routes(routes!(cluster_view, cluster_update, cluster_delete))
        .routes(routes!(cluster_upgrade_list))
        .routes(routes!(cluster_upgrade))
        .routes(routes!(cluster_snapshot_list, cluster_snapshot_create))
        .routes(routes!(cluster_snapshot_restore))
        .routes(routes!(node_pool_list, node_pool_create))
        .routes(routes!(node_pool_view, node_pool_update, node_pool_delete))
        .routes(routes!(node_pool_estimate))
        .routes(routes!(node_pool_update_estimate))
        .routes(routes!(node_pool_recycle))
        .routes(routes!(node_pool_node_delete))
        .routes(routes!(cluster_kubeconfig_view))
        .routes(routes!(cluster_credentials_create))
        .routes(routes!(cluster_credentials_revoke))
        .routes(routes!(cluster_node_list))
        .routes(routes!(cluster_operation_list))
        .routes(routes!(cluster_event_list))
        .routes(routes!(cluster_metrics_view))
        .routes(routes!(cluster_revision_list))
        .routes(routes!(cluster_revision_diff))
        .routes(routes!(node_pool_revision_list))
        .routes(routes!(node_pool_revision_diff))
}

/// `from` of a revision diff.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct DiffParams {
    /// The generation to compare with (default: the revision before).
    #[param(minimum = 1)]
    from: Option<i64>,
}

/// The cluster's spec revisions, newest first: one per generation (the
/// newest 100), with the Operation and principal that made each.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/revisions",
    operation_id = "cluster_revision_list", tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"), ListParams),
    security(("bearer" = [])), responses((status = 200, body = Page<ClusterRevisionView>), Problems))]
async fn cluster_revision_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    Ok(axum::Json(app.cluster_revision_list(&ctx, &project, &cluster, list.page()?).await?).into_response())
}

/// What changed in the cluster's spec at a generation: each value that
/// differs from the revision before (or from `from`), by JSON Pointer.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/revisions/{generation}/diff",
    operation_id = "cluster_revision_diff", tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("generation" = i64, Path, description = "The generation of the revision", minimum = 1),
           DiffParams),
    security(("bearer" = [])), responses((status = 200, body = SpecDiff), Problems))]
async fn cluster_revision_diff(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, generation)): Path<(String, String, String)>,
    Query(diff): Query<DiffParams>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    Ok(axum::Json(app.cluster_revision_diff(&ctx, &project, &cluster, &generation, diff.from).await?).into_response())
}

/// The node pool's spec revisions, newest first: one per generation (the
/// newest 100), with the Operation and principal that made each.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}/revisions",
    operation_id = "node_pool_revision_list", tag = "node-pools",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("node_pool" = String, Path, description = "Node pool id or name"), ListParams),
    security(("bearer" = [])), responses((status = 200, body = Page<NodePoolRevisionView>), Problems))]
async fn node_pool_revision_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, pool)): Path<(String, String, String)>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    let (project, cluster, pool) =
        (ResourceRef::parse(&project), ResourceRef::parse(&cluster), ResourceRef::parse(&pool));
    Ok(axum::Json(app.node_pool_revision_list(&ctx, &project, &cluster, &pool, list.page()?).await?).into_response())
}

/// What changed in the node pool's spec at a generation: each value that
/// differs from the revision before (or from `from`), by JSON Pointer.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}/revisions/{generation}/diff",
    operation_id = "node_pool_revision_diff", tag = "node-pools",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("node_pool" = String, Path, description = "Node pool id or name"),
           ("generation" = i64, Path, description = "The generation of the revision", minimum = 1),
           DiffParams),
    security(("bearer" = [])), responses((status = 200, body = SpecDiff), Problems))]
async fn node_pool_revision_diff(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, pool, generation)): Path<(String, String, String, String)>,
    Query(diff): Query<DiffParams>,
) -> ApiResult {
    let (project, cluster, pool) =
        (ResourceRef::parse(&project), ResourceRef::parse(&cluster), ResourceRef::parse(&pool));
    let diff = app.node_pool_revision_diff(&ctx, &project, &cluster, &pool, &generation, diff.from).await?;
    Ok(axum::Json(diff).into_response())
}

/// The cluster's worker nodes as its region last observed them, with the pods placed on each.
/// Nodes come grouped by the first 8 bytes of their names (a pool's nodes together).
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/nodes", operation_id = "cluster_node_list",
    tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"), ListParams),
    security(("bearer" = [])), responses((status = 200, body = Page<NodeView>), Problems))]
async fn cluster_node_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    Ok(axum::Json(app.cluster_node_list(&ctx, &project, &cluster, list.page()?).await?).into_response())
}

/// What a cluster and its node pools would cost a month, at the prices in effect now. Writes nothing.
#[utoipa::path(post, path = "/v1/projects/{project}/clusters/estimate", operation_id = "cluster_estimate",
    tag = "clusters",
    params(("project" = String, Path, description = "Project id or name")),
    request_body = ClusterEstimateRequest, security(("bearer" = [])),
    responses((status = 200, body = PriceEstimate), Problems))]
async fn cluster_estimate(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(project): Path<String>,
    Json(input): Json<ClusterEstimateRequest>,
) -> ApiResult {
    Ok(axum::Json(app.cluster_estimate(&ctx, &ResourceRef::parse(&project), input).await?).into_response())
}

/// The operations on the cluster, its node pools and its deployments (also those since deleted), newest first.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/operations",
    operation_id = "cluster_operation_list", tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"), ListParams),
    security(("bearer" = [])), responses((status = 200, body = Page<OperationView>), Problems))]
async fn cluster_operation_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    Ok(axum::Json(app.cluster_operation_list(&ctx, &project, &cluster, list.page()?).await?).into_response())
}

/// `since` of a cluster's events.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct EventParams {
    /// Only events after this time (RFC 3339).
    since: Option<chrono::DateTime<chrono::Utc>>,
}

/// What happened in the cluster, newest first: the steps of the operations
/// on it, its node pools and deployments, phase changes, and nodes joining,
/// leaving, failing and recovering.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/events", operation_id = "cluster_event_list",
    tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"), ListParams, EventParams),
    security(("bearer" = [])), responses((status = 200, body = Page<ClusterEventView>), Problems))]
async fn cluster_event_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
    Query(list): Query<ListParams>,
    Query(events): Query<EventParams>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    let page = app.cluster_event_list(&ctx, &project, &cluster, events.since, list.page()?).await?;
    Ok(axum::Json(page).into_response())
}

/// Capacity against the CPU and memory the cluster's pods request, cluster-wide and per deployment.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/metrics", operation_id = "cluster_metrics_view",
    tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name")),
    security(("bearer" = [])), responses((status = 200, body = ClusterMetrics), Problems))]
async fn cluster_metrics_view(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
) -> ApiResult {
    let metrics = app.cluster_metrics_view(&ctx, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster)).await?;
    Ok(axum::Json(metrics).into_response())
}

/// `expiry_seconds`, `access` and `format` of a kubeconfig.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct KubeconfigParams {
    /// Lifetime of the client certificate, 600 to 2592000 (default 604800, 7 days).
    #[param(minimum = 600, maximum = 2592000)]
    expiry_seconds: Option<i64>,
    /// `admin`, `edit` or `view`; the highest your roles allow if omitted.
    access: Option<ClusterAccess>,
    /// `certificate` (default) or `exec`.
    format: Option<KubeconfigFormat>,
}

/// Get a kubeconfig for the cluster: a client certificate from the
/// cluster's own CA naming you (CN) and your groups (O), derived from your role.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/kubeconfig", operation_id = "cluster_kubeconfig_view",
    tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"), KubeconfigParams),
    security(("bearer" = [])),
    responses((status = 200, body = KubeconfigView), Problems))]
async fn cluster_kubeconfig_view(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
    Query(params): Query<KubeconfigParams>,
) -> ApiResult {
    let view = app
        .cluster_kubeconfig(
            &ctx,
            &ResourceRef::parse(&project),
            &ResourceRef::parse(&cluster),
            params.expiry_seconds,
            params.access,
            params.format.unwrap_or_default(),
        )
        .await?;
    Ok(axum::Json(view).into_response())
}

/// `access` of exec credentials.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct CredentialParams {
    /// `admin`, `edit` or `view`; the highest your roles allow if omitted.
    access: Option<ClusterAccess>,
}

/// Short-lived cluster credentials as a kubectl ExecCredential (what an
/// exec-format kubeconfig's `moke kubeconfig token` prints). Safe to retry
/// without an `Idempotency-Key`: nothing is stored, and each call signs a
/// fresh short-lived certificate (a stored replay could not hold its key).
#[utoipa::path(post, path = "/v1/projects/{project}/clusters/{cluster}/credentials", operation_id = "cluster_credentials_create",
    tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"), CredentialParams),
    security(("bearer" = [])),
    responses((status = 200, body = ExecCredential), Problems))]
async fn cluster_credentials_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
    Query(params): Query<CredentialParams>,
) -> ApiResult {
    let credential = app
        .cluster_credentials_create(&ctx, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster), params.access)
        .await?;
    Ok(axum::Json(credential).into_response())
}

/// Revoke every credential issued for the cluster so far (kubeconfigs and
/// exec credentials); the control plane refuses them once the Operation succeeds.
#[utoipa::path(post, path = "/v1/projects/{project}/clusters/{cluster}/credentials/revoke",
    operation_id = "cluster_credentials_revoke", tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"), IdempotencyKeyHeader),
    security(("bearer" = [])),
    responses((status = 202, body = OperationView), Problems))]
async fn cluster_credentials_revoke(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
) -> ApiResult {
    let op = app.cluster_credentials_revoke(&ctx, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster)).await?;
    Ok(accepted(op))
}

/// List a project's clusters.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters", operation_id = "cluster_list", tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"), ListParams), security(("bearer" = [])),
    responses((status = 200, body = Page<ClusterView>), Problems))]
async fn cluster_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(project): Path<String>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    Ok(axum::Json(app.cluster_list(&ctx, &ResourceRef::parse(&project), list.page()?).await?).into_response())
}

/// Create a cluster; answers with the Operation that builds it.
#[utoipa::path(post, path = "/v1/projects/{project}/clusters", operation_id = "cluster_create", tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           IdempotencyKeyHeader),
    request_body = ClusterCreate, security(("bearer" = [])),
    responses((status = 202, body = OperationView), Problems))]
async fn cluster_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(project): Path<String>,
    Json(input): Json<ClusterCreate>,
) -> ApiResult {
    Ok(accepted(app.cluster_create(&ctx, &ResourceRef::parse(&project), input).await?))
}

/// View a cluster: desired spec and last observed status.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}", operation_id = "cluster_view", tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id (`cl_…`) or name")),
    security(("bearer" = [])),
    responses((status = 200, body = ClusterView), Problems))]
async fn cluster_view(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
) -> ApiResult {
    let view = app.cluster_view(&ctx, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster)).await?;
    Ok(with_etag(&view.etag.clone(), view))
}

/// Change a cluster (labels, version upgrade, control plane, maintenance window, deletion protection,
/// snapshot policy, control-plane firewall). Changing the firewall takes cluster-admin rights
/// (organization owners and admins, project admins). A spec change during a restore from an etcd
/// snapshot answers 409 `restore_in_progress`; a second upgrade, 409 `upgrade_in_progress`.
#[utoipa::path(patch, path = "/v1/projects/{project}/clusters/{cluster}", operation_id = "cluster_update", tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           IfMatchHeader),
    request_body = ClusterUpdate, security(("bearer" = [])),
    responses((status = 202, body = OperationView), Problems))]
async fn cluster_update(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
    IfMatch(if_match): IfMatch,
    Json(input): Json<ClusterUpdate>,
) -> ApiResult {
    let op = app
        .cluster_update(&ctx, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster), if_match.as_deref(), input)
        .await?;
    Ok(accepted(op))
}

/// The cluster's Kubernetes version, the versions it can be upgraded
/// to (one minor version up, if offered and not past its end of life), and
/// the upgrade it will get on its own (its release channel, or its
/// version's end of life), with when its owners were told and its earliest start.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/upgrades", operation_id = "cluster_upgrade_list",
    tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name")),
    security(("bearer" = [])),
    responses((status = 200, body = ClusterUpgrades), Problems))]
async fn cluster_upgrade_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
) -> ApiResult {
    let upgrades = app.cluster_upgrade_list(&ctx, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster)).await?;
    Ok(axum::Json(upgrades).into_response())
}

/// Upgrade the cluster to one of its available versions: the control plane
/// blue-green, then each node pool by surge as its upgrade policy says. The
/// Operation's `step` says where it is. Refused with 409
/// `upgrade_in_progress` while another runs and `restore_in_progress`
/// during a restore from an etcd snapshot.
#[utoipa::path(post, path = "/v1/projects/{project}/clusters/{cluster}/upgrade", operation_id = "cluster_upgrade",
    tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           IfMatchHeader, IdempotencyKeyHeader),
    request_body = ClusterUpgradeRequest, security(("bearer" = [])),
    responses((status = 202, body = OperationView), Problems))]
async fn cluster_upgrade(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
    IfMatch(if_match): IfMatch,
    Json(input): Json<ClusterUpgradeRequest>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    let op = app.cluster_upgrade(&ctx, &project, &cluster, if_match.as_deref(), input).await?;
    Ok(accepted(op))
}

/// The etcd snapshots the cluster's region keeps, newest first: those its
/// `snapshot_policy` schedules and those taken on request.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/snapshots",
    operation_id = "cluster_snapshot_list", tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name")),
    security(("bearer" = [])),
    responses((status = 200, body = EtcdSnapshots), Problems))]
async fn cluster_snapshot_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    Ok(axum::Json(app.cluster_snapshot_list(&ctx, &project, &cluster).await?).into_response())
}

/// Take an etcd snapshot now. It is kept with the scheduled ones, under the
/// same `snapshot_policy.keep`. Refused with 409 `not_ready` before the
/// control plane runs, `deleting` while the cluster is deleted,
/// `snapshot_in_progress` while another is taken and `restore_in_progress`
/// during a restore.
#[utoipa::path(post, path = "/v1/projects/{project}/clusters/{cluster}/snapshots",
    operation_id = "cluster_snapshot_create", tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           IfMatchHeader, IdempotencyKeyHeader),
    security(("bearer" = [])),
    responses((status = 202, body = OperationView), Problems))]
async fn cluster_snapshot_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
    IfMatch(if_match): IfMatch,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    Ok(accepted(app.cluster_snapshot_create(&ctx, &project, &cluster, if_match.as_deref()).await?))
}

/// Restore the cluster's etcd from one of its snapshots: the API servers
/// stop, a single member is restored, etcd is scaled back to three and the
/// API servers start on the snapshot's state. What the cluster's API held
/// since is lost, so it takes cluster-admin rights (organization owners and
/// admins, project admins). A name the cluster keeps no snapshot of is 404.
/// Refused with 409 `version_mismatch` for a snapshot of another Kubernetes
/// version than the cluster runs, `upgrade_in_progress`,
/// `restore_in_progress`, `not_ready` before the control plane runs and
/// `deleting`, and `update_in_progress` while a change of the cluster has
/// not reached its region yet. While it runs, changes to the cluster's spec
/// are refused with 409 `restore_in_progress`.
#[utoipa::path(post, path = "/v1/projects/{project}/clusters/{cluster}/snapshots/{snapshot}/restore",
    operation_id = "cluster_snapshot_restore", tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("snapshot" = String, Path, description = "Snapshot name, as `GET …/snapshots` lists it",
            pattern = r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$", max_length = 253),
           IfMatchHeader, IdempotencyKeyHeader),
    security(("bearer" = [])),
    responses((status = 202, body = OperationView), Problems))]
async fn cluster_snapshot_restore(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, snapshot)): Path<(String, String, String)>,
    IfMatch(if_match): IfMatch,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    let op = app.cluster_snapshot_restore(&ctx, &project, &cluster, &snapshot, if_match.as_deref()).await?;
    Ok(accepted(op))
}

/// Delete a cluster and its node pools.
#[utoipa::path(delete, path = "/v1/projects/{project}/clusters/{cluster}", operation_id = "cluster_delete", tag = "clusters",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           IfMatchHeader),
    security(("bearer" = [])),
    responses((status = 202, body = OperationView), Problems))]
async fn cluster_delete(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
    IfMatch(if_match): IfMatch,
) -> ApiResult {
    let op = app
        .cluster_delete(&ctx, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster), if_match.as_deref())
        .await?;
    Ok(accepted(op))
}

/// List a cluster's node pools.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/node-pools", operation_id = "node_pool_list",
    tag = "node-pools",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"), ListParams),
    security(("bearer" = [])),
    responses((status = 200, body = Page<NodePoolView>), Problems))]
async fn node_pool_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    let page =
        app.node_pool_list(&ctx, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster), list.page()?).await?;
    Ok(axum::Json(page).into_response())
}

/// Add a node pool to a cluster.
#[utoipa::path(post, path = "/v1/projects/{project}/clusters/{cluster}/node-pools", operation_id = "node_pool_create",
    tag = "node-pools",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           IdempotencyKeyHeader),
    request_body = NodePoolCreate, security(("bearer" = [])),
    responses((status = 202, body = OperationView), Problems))]
async fn node_pool_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
    Json(input): Json<NodePoolCreate>,
) -> ApiResult {
    let op = app.node_pool_create(&ctx, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster), input).await?;
    Ok(accepted(op))
}

/// What adding a node pool would do to the cluster's monthly price: the cluster as it is, with the pool, and
/// the difference. The pool is checked as `node_pool_create` checks it. Writes nothing.
#[utoipa::path(post, path = "/v1/projects/{project}/clusters/{cluster}/node-pools/estimate",
    operation_id = "node_pool_estimate", tag = "node-pools",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name")),
    request_body = NodePoolCreate, security(("bearer" = [])),
    responses((status = 200, body = PriceChange), Problems))]
async fn node_pool_estimate(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
    Json(input): Json<NodePoolCreate>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    Ok(axum::Json(app.node_pool_estimate(&ctx, &project, &cluster, input).await?).into_response())
}

/// What a change to a node pool (the body of `node_pool_update`) would do to the cluster's monthly price: the
/// cluster as it is, as it would be, and the difference. Writes nothing.
#[utoipa::path(post, path = "/v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}/estimate",
    operation_id = "node_pool_update_estimate", tag = "node-pools",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("node_pool" = String, Path, description = "Node pool id or name")),
    request_body = NodePoolUpdate, security(("bearer" = [])),
    responses((status = 200, body = PriceChange), Problems))]
async fn node_pool_update_estimate(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, pool)): Path<(String, String, String)>,
    Json(input): Json<NodePoolUpdate>,
) -> ApiResult {
    let (project, cluster, pool) =
        (ResourceRef::parse(&project), ResourceRef::parse(&cluster), ResourceRef::parse(&pool));
    Ok(axum::Json(app.node_pool_update_estimate(&ctx, &project, &cluster, &pool, input).await?).into_response())
}

/// View a node pool.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}",
    operation_id = "node_pool_view", tag = "node-pools",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("node_pool" = String, Path, description = "Node pool id (`np_…`) or name")),
    security(("bearer" = [])),
    responses((status = 200, body = NodePoolView), Problems))]
async fn node_pool_view(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, pool)): Path<(String, String, String)>,
) -> ApiResult {
    let view = app
        .node_pool_view(&ctx, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster), &ResourceRef::parse(&pool))
        .await?;
    Ok(with_etag(&view.etag.clone(), view))
}

/// Change a node pool (count, autoscaling, machine type, node labels, taints). A new machine
/// type, node labels or taints replace the nodes by surge, cordon and drain, as the pool's `upgrade_policy` says.
#[utoipa::path(patch, path = "/v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}",
    operation_id = "node_pool_update", tag = "node-pools",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("node_pool" = String, Path, description = "Node pool id or name"),
           IfMatchHeader),
    request_body = NodePoolUpdate, security(("bearer" = [])),
    responses((status = 202, body = OperationView), Problems))]
async fn node_pool_update(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, pool)): Path<(String, String, String)>,
    IfMatch(if_match): IfMatch,
    Json(input): Json<NodePoolUpdate>,
) -> ApiResult {
    let op = app
        .node_pool_update(
            &ctx,
            &ResourceRef::parse(&project),
            &ResourceRef::parse(&cluster),
            &ResourceRef::parse(&pool),
            if_match.as_deref(),
            input,
        )
        .await?;
    Ok(accepted(op))
}

/// Replace nodes of the pool, or all of them, one at a time: a new node
/// joins first, then the old one is cordoned, drained and deleted, so pods
/// move rather than stop. The Operation's `step` names each node. One node
/// change of a pool runs at a time: another under way answers 409 `nodes_changing`.
#[utoipa::path(post, path = "/v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}/recycle",
    operation_id = "node_pool_recycle", tag = "node-pools",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("node_pool" = String, Path, description = "Node pool id or name"),
           IfMatchHeader, IdempotencyKeyHeader),
    request_body = NodePoolRecycleRequest, security(("bearer" = [])),
    responses((status = 202, body = OperationView), Problems))]
async fn node_pool_recycle(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, pool)): Path<(String, String, String)>,
    IfMatch(if_match): IfMatch,
    Json(input): Json<NodePoolRecycleRequest>,
) -> ApiResult {
    let (project, cluster, pool) =
        (ResourceRef::parse(&project), ResourceRef::parse(&cluster), ResourceRef::parse(&pool));
    let op = app.node_pool_recycle(&ctx, &project, &cluster, &pool, if_match.as_deref(), input).await?;
    Ok(accepted(op))
}

/// `replace` of a node delete.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct NodeDeleteParams {
    /// `true`: a new node takes its place and the pool's count stays.
    /// `false` (default): the count goes one lower, refused at the
    /// autoscaling minimum.
    replace: Option<bool>,
}

/// Delete one node of the pool: it is cordoned and drained first. Asking
/// again for a node already on its way out answers with that Operation;
/// another node change of the pool under way answers 409 `nodes_changing`,
/// and removing a node at the autoscaling minimum 409 `at_minimum`.
#[utoipa::path(delete, path = "/v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}/nodes/{node}",
    operation_id = "node_pool_node_delete", tag = "node-pools",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("node_pool" = String, Path, description = "Node pool id or name"),
           ("node" = String, Path, description = "Node name, as `GET …/clusters/{cluster}/nodes` lists it",
            pattern = r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$", max_length = 253),
           NodeDeleteParams, IfMatchHeader),
    security(("bearer" = [])),
    responses((status = 202, body = OperationView), Problems))]
async fn node_pool_node_delete(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, pool, node)): Path<(String, String, String, String)>,
    Query(params): Query<NodeDeleteParams>,
    IfMatch(if_match): IfMatch,
) -> ApiResult {
    let (project, cluster, pool) =
        (ResourceRef::parse(&project), ResourceRef::parse(&cluster), ResourceRef::parse(&pool));
    let replace = params.replace.unwrap_or(false);
    let op = app.node_pool_node_delete(&ctx, &project, &cluster, &pool, &node, replace, if_match.as_deref()).await?;
    Ok(accepted(op))
}

/// Delete a node pool.
#[utoipa::path(delete, path = "/v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}",
    operation_id = "node_pool_delete", tag = "node-pools",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("node_pool" = String, Path, description = "Node pool id or name"),
           IfMatchHeader),
    security(("bearer" = [])),
    responses((status = 202, body = OperationView), Problems))]
async fn node_pool_delete(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, pool)): Path<(String, String, String)>,
    IfMatch(if_match): IfMatch,
) -> ApiResult {
    let op = app
        .node_pool_delete(
            &ctx,
            &ResourceRef::parse(&project),
            &ResourceRef::parse(&cluster),
            &ResourceRef::parse(&pool),
            if_match.as_deref(),
        )
        .await?;
    Ok(accepted(op))
}
