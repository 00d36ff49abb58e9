//! `/v1/projects/{project}/clusters/{cluster}/namespaces` and the
//! Deployments in them. Actions are sub-resources (`.../rollback`), like
//! `/credentials/revoke`.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{Ctx, IdempotencyKeyHeader, IfMatch, IfMatchHeader, Json, ListParams, Query};
use super::problem::Problems;
use super::{ApiResult, accepted, with_etag};
use crate::app::workloads::deployments::{DeploymentChange, DeploymentPath};
use crate::app::{App, RequestContext, ResourceRef};
use crate::model::*;

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new()
        .routes(routes!(namespace_list, namespace_create))
        .routes(routes!(namespace_delete))
        .routes(routes!(unmanaged_deployment_list))
        .routes(routes!(deployment_list, deployment_create))
        .routes(routes!(deployment_view, deployment_update, deployment_delete))
        .routes(routes!(deployment_revision_list))
        .routes(routes!(deployment_scale))
        .routes(routes!(deployment_pause))
        .routes(routes!(deployment_resume))
        .routes(routes!(deployment_restart))
        .routes(routes!(deployment_rollback))
        .routes(routes!(service_list, service_create))
        .routes(routes!(service_view, service_update, service_delete))
}

/// A path's project, cluster and namespace.
fn place<'a>(
    project: &'a ResourceRef<crate::ids::ProjectKind>,
    cluster: &'a ResourceRef<crate::ids::ClusterKind>,
    namespace: &'a str,
) -> DeploymentPath<'a> {
    DeploymentPath { project, cluster, namespace }
}

/// List the services of a namespace in creation order, each with its endpoints.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services",
    operation_id = "service_list", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name"), ListParams),
    security(("bearer" = [])), responses((status = 200, body = Page<ServiceView>), Problems))]
async fn service_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, namespace)): Path<(String, String, String)>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    Ok(axum::Json(app.service_list(&ctx, &place(&project, &cluster, &namespace), list.page()?).await?).into_response())
}

/// Create a service from the portable `spec` or a Kubernetes `manifest`.
/// Its address comes from 10.96.0.10 to 10.103.255.255 and its node ports
/// from 30000 up (the cluster gives Services made with kubectl the upper
/// half of 10.96.0.0/12 and node ports from 32767 down). It reaches the
/// cluster's API (kubectl), labelled `moke.dev/managed-by=moke`, through an
/// Operation of kind `service_create` listed among the cluster's
/// operations; while a Service made with kubectl holds its name or a node
/// port asked for, that Operation runs, its step saying which, and the
/// service goes in once they let go.
#[utoipa::path(post, path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services",
    operation_id = "service_create", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name"),
           IdempotencyKeyHeader),
    request_body = ServiceCreate, security(("bearer" = [])),
    responses((status = 201, body = ServiceView), Problems))]
async fn service_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, namespace)): Path<(String, String, String)>,
    Json(input): Json<ServiceCreate>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    let view = app.service_create(&ctx, &place(&project, &cluster, &namespace), input).await?;
    Ok((StatusCode::CREATED, with_etag(&view.etag.clone(), view)).into_response())
}

/// Get a service with its endpoints (the observed pods it selects).
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services/{service}",
    operation_id = "service_view", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name"),
           ("service" = String, Path, description = "Service id or name")),
    security(("bearer" = [])), responses((status = 200, body = ServiceView), Problems))]
async fn service_view(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, namespace, service)): Path<DeploymentPathParams>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    let view = app.service_get(&ctx, &place(&project, &cluster, &namespace), &ResourceRef::parse(&service)).await?;
    Ok(with_etag(&view.etag.clone(), view))
}

/// Change a service: labels, and a merge patch of its `spec` or a new
/// `manifest`. The change reaches the cluster's API through an Operation of
/// kind `service_update` on the cluster (held up as `service_create`'s can
/// be; one a later change overtakes fails as `superseded`).
#[utoipa::path(patch, path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services/{service}",
    operation_id = "service_update", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name"),
           ("service" = String, Path, description = "Service id or name"),
           IfMatchHeader),
    request_body = ServiceUpdate, security(("bearer" = [])),
    responses((status = 200, body = ServiceView), Problems))]
async fn service_update(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, namespace, service)): Path<DeploymentPathParams>,
    IfMatch(if_match): IfMatch,
    Json(input): Json<ServiceUpdate>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    let at = place(&project, &cluster, &namespace);
    let view = app.service_update(&ctx, &at, &ResourceRef::parse(&service), if_match.as_deref(), input).await?;
    Ok(with_etag(&view.etag.clone(), view))
}

/// Delete a service. It leaves the cluster's API through an Operation of
/// kind `service_delete` on the cluster.
#[utoipa::path(delete, path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services/{service}",
    operation_id = "service_delete", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name"),
           ("service" = String, Path, description = "Service id or name"),
           IfMatchHeader),
    security(("bearer" = [])), responses((status = 204), Problems))]
async fn service_delete(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, namespace, service)): Path<DeploymentPathParams>,
    IfMatch(if_match): IfMatch,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    let at = place(&project, &cluster, &namespace);
    app.service_delete(&ctx, &at, &ResourceRef::parse(&service), if_match.as_deref()).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Path of a deployment: project, cluster, namespace, deployment.
type DeploymentPathParams = (String, String, String, String);

/// Runs `change` on the deployment named by the path.
async fn change(
    app: &App,
    ctx: &RequestContext,
    (project, cluster, namespace, deployment): DeploymentPathParams,
    if_match: Option<&str>,
    change: DeploymentChange,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    let at = DeploymentPath { project: &project, cluster: &cluster, namespace: &namespace };
    let op = app.deployment_change(ctx, &at, &ResourceRef::parse(&deployment), if_match, change).await?;
    Ok(accepted(op))
}

/// List the cluster's namespaces in creation order (`default` first):
/// those made through Moke and those made with kubectl (listed once the
/// cluster's region reports them; the cluster's own `kube-*` are not).
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/namespaces", operation_id = "namespace_list",
    tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"), ListParams),
    security(("bearer" = [])), responses((status = 200, body = Page<NamespaceView>), Problems))]
async fn namespace_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    Ok(axum::Json(app.namespace_list(&ctx, &project, &cluster, list.page()?).await?).into_response())
}

/// List the cluster's Deployments made with kubectl, in the order its
/// region first reported them. Moke shows them and never changes them.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/unmanaged-deployments",
    operation_id = "unmanaged_deployment_list", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"), ListParams, UnmanagedParams),
    security(("bearer" = [])), responses((status = 200, body = Page<UnmanagedDeploymentView>), Problems))]
async fn unmanaged_deployment_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
    Query(list): Query<ListParams>,
    Query(only): Query<UnmanagedParams>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    let namespace = only.namespace.as_deref();
    let page = app.unmanaged_deployment_list(&ctx, &project, &cluster, namespace, list.page()?).await?;
    Ok(axum::Json(page).into_response())
}

/// `namespace` of the kubectl-made Deployments listed.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct UnmanagedParams {
    /// Only those in this namespace.
    #[param(pattern = "^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$", max_length = 63)]
    namespace: Option<String>,
}

/// Create a namespace. It reaches the cluster's API (kubectl) through an
/// Operation of kind `namespace_create` on the cluster.
#[utoipa::path(post, path = "/v1/projects/{project}/clusters/{cluster}/namespaces", operation_id = "namespace_create",
    tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           IdempotencyKeyHeader),
    request_body = NamespaceCreate, security(("bearer" = [])),
    responses((status = 201, body = NamespaceView), Problems))]
async fn namespace_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster)): Path<(String, String)>,
    Json(input): Json<NamespaceCreate>,
) -> ApiResult {
    let view = app.namespace_create(&ctx, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster), input).await?;
    Ok((StatusCode::CREATED, axum::Json(view)).into_response())
}

/// Delete a namespace made through Moke: not `default`, and only one
/// holding none of Moke's deployments or services and no Deployment made
/// with kubectl (one made with kubectl is deleted with kubectl). It leaves
/// the cluster's API through an Operation of kind `namespace_delete`,
/// which fails with `not_empty`, leaving the namespace to the cluster's
/// users, if kubectl made objects in it.
#[utoipa::path(delete, path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}",
    operation_id = "namespace_delete", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name")),
    security(("bearer" = [])), responses((status = 204), Problems))]
async fn namespace_delete(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, namespace)): Path<(String, String, String)>,
) -> ApiResult {
    app.namespace_delete(&ctx, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster), &namespace).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// List the deployments of a namespace.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments",
    operation_id = "deployment_list", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name"), ListParams),
    security(("bearer" = [])), responses((status = 200, body = Page<DeploymentView>), Problems))]
async fn deployment_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, namespace)): Path<(String, String, String)>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    let at = DeploymentPath { project: &project, cluster: &cluster, namespace: &namespace };
    Ok(axum::Json(app.deployment_list(&ctx, &at, list.page()?).await?).into_response())
}

/// Create a deployment from the portable `spec` or a Kubernetes `manifest`;
/// answers with the Operation that rolls it out.
#[utoipa::path(post, path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments",
    operation_id = "deployment_create", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name"),
           IdempotencyKeyHeader),
    request_body = DeploymentCreate, security(("bearer" = [])),
    responses((status = 202, body = OperationView), Problems))]
async fn deployment_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, namespace)): Path<(String, String, String)>,
    Json(input): Json<DeploymentCreate>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    let at = DeploymentPath { project: &project, cluster: &cluster, namespace: &namespace };
    Ok(accepted(app.deployment_create(&ctx, &at, input).await?))
}

/// Get a deployment: its spec, revisions, and replicas as the region observes them.
#[utoipa::path(get, path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}",
    operation_id = "deployment_view", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name"),
           ("deployment" = String, Path, description = "Deployment id or name")),
    security(("bearer" = [])), responses((status = 200, body = DeploymentView), Problems))]
async fn deployment_view(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, namespace, deployment)): Path<DeploymentPathParams>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    let at = DeploymentPath { project: &project, cluster: &cluster, namespace: &namespace };
    let view = app.deployment_view(&ctx, &at, &ResourceRef::parse(&deployment)).await?;
    Ok(with_etag(&view.etag.clone(), view))
}

/// Change a deployment: a merge patch of its `spec`, or a new `manifest`.
#[utoipa::path(patch, path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}",
    operation_id = "deployment_update", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name"),
           ("deployment" = String, Path, description = "Deployment id or name"),
           IfMatchHeader),
    request_body = DeploymentUpdate, security(("bearer" = [])),
    responses((status = 202, body = OperationView), Problems))]
async fn deployment_update(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(path): Path<DeploymentPathParams>,
    IfMatch(if_match): IfMatch,
    Json(input): Json<DeploymentUpdate>,
) -> ApiResult {
    change(&app, &ctx, path, if_match.as_deref(), DeploymentChange::Update(input)).await
}

/// Delete a deployment; it goes once the region has removed its pods.
#[utoipa::path(delete, path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}",
    operation_id = "deployment_delete", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name"),
           ("deployment" = String, Path, description = "Deployment id or name"),
           IfMatchHeader),
    security(("bearer" = [])), responses((status = 202, body = OperationView), Problems))]
async fn deployment_delete(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, namespace, deployment)): Path<DeploymentPathParams>,
    IfMatch(if_match): IfMatch,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    let at = DeploymentPath { project: &project, cluster: &cluster, namespace: &namespace };
    let op = app.deployment_delete(&ctx, &at, &ResourceRef::parse(&deployment), if_match.as_deref()).await?;
    Ok(accepted(op))
}

/// The deployment's revisions, newest first; each is immutable.
#[utoipa::path(get,
    path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/revisions",
    operation_id = "deployment_revision_list", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name"),
           ("deployment" = String, Path, description = "Deployment id or name"), ListParams),
    security(("bearer" = [])), responses((status = 200, body = Page<RevisionView>), Problems))]
async fn deployment_revision_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, cluster, namespace, deployment)): Path<DeploymentPathParams>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
    let at = DeploymentPath { project: &project, cluster: &cluster, namespace: &namespace };
    let page = app.deployment_revision_list(&ctx, &at, &ResourceRef::parse(&deployment), list.page()?).await?;
    Ok(axum::Json(page).into_response())
}

/// Set the number of pods.
#[utoipa::path(post,
    path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/scale",
    operation_id = "deployment_scale", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name"),
           ("deployment" = String, Path, description = "Deployment id or name"),
           IfMatchHeader, IdempotencyKeyHeader),
    request_body = ScaleRequest, security(("bearer" = [])),
    responses((status = 202, body = OperationView), Problems))]
async fn deployment_scale(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(path): Path<DeploymentPathParams>,
    IfMatch(if_match): IfMatch,
    Json(input): Json<ScaleRequest>,
) -> ApiResult {
    change(&app, &ctx, path, if_match.as_deref(), DeploymentChange::Scale(input.replicas)).await
}

/// Pause rollouts: template changes wait until `resume`.
#[utoipa::path(post,
    path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/pause",
    operation_id = "deployment_pause", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name"),
           ("deployment" = String, Path, description = "Deployment id or name"),
           IfMatchHeader, IdempotencyKeyHeader),
    security(("bearer" = [])), responses((status = 202, body = OperationView), Problems))]
async fn deployment_pause(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(path): Path<DeploymentPathParams>,
    IfMatch(if_match): IfMatch,
) -> ApiResult {
    change(&app, &ctx, path, if_match.as_deref(), DeploymentChange::Pause).await
}

/// Resume rollouts.
#[utoipa::path(post,
    path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/resume",
    operation_id = "deployment_resume", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name"),
           ("deployment" = String, Path, description = "Deployment id or name"),
           IfMatchHeader, IdempotencyKeyHeader),
    security(("bearer" = [])), responses((status = 202, body = OperationView), Problems))]
async fn deployment_resume(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(path): Path<DeploymentPathParams>,
    IfMatch(if_match): IfMatch,
) -> ApiResult {
    change(&app, &ctx, path, if_match.as_deref(), DeploymentChange::Resume).await
}

/// Replace every pod, one rollout step at a time.
#[utoipa::path(post,
    path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/restart",
    operation_id = "deployment_restart", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name"),
           ("deployment" = String, Path, description = "Deployment id or name"),
           IfMatchHeader, IdempotencyKeyHeader),
    security(("bearer" = [])), responses((status = 202, body = OperationView), Problems))]
async fn deployment_restart(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(path): Path<DeploymentPathParams>,
    IfMatch(if_match): IfMatch,
) -> ApiResult {
    change(&app, &ctx, path, if_match.as_deref(), DeploymentChange::Restart).await
}

/// Roll back to a revision's pod template (the last good one by default).
#[utoipa::path(post,
    path = "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/rollback",
    operation_id = "deployment_rollback", tag = "workloads",
    params(("project" = String, Path, description = "Project id or name"),
           ("cluster" = String, Path, description = "Cluster id or name"),
           ("namespace" = String, Path, description = "Namespace name"),
           ("deployment" = String, Path, description = "Deployment id or name"),
           IfMatchHeader, IdempotencyKeyHeader),
    request_body = RollbackRequest, security(("bearer" = [])),
    responses((status = 202, body = OperationView), Problems))]
async fn deployment_rollback(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(path): Path<DeploymentPathParams>,
    IfMatch(if_match): IfMatch,
    Json(input): Json<RollbackRequest>,
) -> ApiResult {
    change(&app, &ctx, path, if_match.as_deref(), DeploymentChange::Rollback(input.revision)).await
}
