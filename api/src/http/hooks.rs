//! Deploy webhooks: managing a project's hooks and policy, and the public
//! delivery endpoint `POST /v1/hooks/{hook}` CI systems call.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{Ctx, IdempotencyKeyHeader, IfMatch, IfMatchHeader, Json, ListParams, Query};
use super::orgs::path_id;
use super::problem::Problems;
use super::{ApiResult, accepted, with_etag};
use crate::app::integrations::deploy_hooks::{Delivery, HookOutcome};
use crate::app::{App, ResourceRef};
use crate::model::*;

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new()
        .routes(routes!(deploy_policy_view, deploy_policy_update))
        .routes(routes!(deploy_hook_list, deploy_hook_create))
        .routes(routes!(deploy_hook_delete))
        .routes(routes!(deploy_hook_secret_rotate))
        .routes(routes!(hook_delivery_create))
}

/// The project's deploy policy: registries and branches webhooks may deploy from.
#[utoipa::path(get, path = "/v1/projects/{project}/deploy-policy", operation_id = "deploy_policy_view",
    tag = "deploy-hooks", params(("project" = String, Path, description = "Project id or name")),
    security(("bearer" = [])), responses((status = 200, body = DeployPolicyView), Problems))]
async fn deploy_policy_view(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Path(project): Path<String>) -> ApiResult {
    let view = app.deploy_policy_view(&ctx, &ResourceRef::parse(&project)).await?;
    Ok(with_etag(&view.etag.clone(), view))
}

/// Replace the project's deploy policy.
#[utoipa::path(put, path = "/v1/projects/{project}/deploy-policy", operation_id = "deploy_policy_update",
    tag = "deploy-hooks", params(("project" = String, Path, description = "Project id or name"), IfMatchHeader),
    request_body = DeployPolicy, security(("bearer" = [])),
    responses((status = 200, body = DeployPolicyView), Problems))]
async fn deploy_policy_update(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(project): Path<String>,
    IfMatch(if_match): IfMatch,
    Json(policy): Json<DeployPolicy>,
) -> ApiResult {
    let view = app.deploy_policy_update(&ctx, &ResourceRef::parse(&project), policy, if_match.as_deref()).await?;
    Ok(with_etag(&view.etag.clone(), view))
}

/// List the project's deploy webhooks (never their secrets).
#[utoipa::path(get, path = "/v1/projects/{project}/hooks", operation_id = "deploy_hook_list", tag = "deploy-hooks",
    params(("project" = String, Path, description = "Project id or name"), ListParams),
    security(("bearer" = [])), responses((status = 200, body = Page<DeployHookView>), Problems))]
async fn deploy_hook_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(project): Path<String>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    Ok(axum::Json(app.deploy_hook_list(&ctx, &ResourceRef::parse(&project), list.page()?).await?).into_response())
}

/// Create a deploy webhook; the answer holds its secret, shown only once.
/// A retry with the same Idempotency-Key answers the hook again, without its secret.
#[utoipa::path(post, path = "/v1/projects/{project}/hooks", operation_id = "deploy_hook_create", tag = "deploy-hooks",
    params(("project" = String, Path, description = "Project id or name"), IdempotencyKeyHeader),
    request_body = DeployHookCreate, security(("bearer" = [])),
    responses((status = 201, body = DeployHookCreated), Problems))]
async fn deploy_hook_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(project): Path<String>,
    Json(input): Json<DeployHookCreate>,
) -> ApiResult {
    let created = app.deploy_hook_create(&ctx, &ResourceRef::parse(&project), input).await?;
    Ok((StatusCode::CREATED, axum::Json(created)).into_response())
}

/// Rotate a deploy webhook's secret. The answer holds the new secret, shown
/// only once; the previous one keeps being accepted for
/// `previous_secret_valid_seconds` (24 h by default; 0 revokes it now, and
/// within a minute on every gateway process), so
/// CI can switch over without a refused delivery.
#[utoipa::path(post, path = "/v1/projects/{project}/hooks/{hook}/rotate-secret",
    operation_id = "deploy_hook_secret_rotate", tag = "deploy-hooks",
    params(("project" = String, Path, description = "Project id or name"), ("hook" = String, Path, description = "Hook id"),
           IdempotencyKeyHeader),
    request_body = DeployHookSecretRotate, security(("bearer" = [])),
    responses((status = 200, body = DeployHookCreated), Problems))]
async fn deploy_hook_secret_rotate(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, hook)): Path<(String, String)>,
    Json(input): Json<DeployHookSecretRotate>,
) -> ApiResult {
    let rotated = app.deploy_hook_secret_rotate(&ctx, &ResourceRef::parse(&project), path_id(&hook)?, input).await?;
    Ok(axum::Json(rotated).into_response())
}

/// Delete a deploy webhook; its deliveries are refused from now on.
#[utoipa::path(delete, path = "/v1/projects/{project}/hooks/{hook}", operation_id = "deploy_hook_delete",
    tag = "deploy-hooks",
    params(("project" = String, Path, description = "Project id or name"), ("hook" = String, Path, description = "Hook id")),
    security(("bearer" = [])), responses((status = 204), Problems))]
async fn deploy_hook_delete(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, hook)): Path<(String, String)>,
) -> ApiResult {
    app.deploy_hook_delete(&ctx, &ResourceRef::parse(&project), path_id(&hook)?).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Deliver a deploy event. Signed per Standard Webhooks (`webhook-id`,
/// `webhook-timestamp`, `webhook-signature`) with a body of `image`, `tag`
/// or `digest`; or a GitHub (`X-Hub-Signature-256`) or GitLab
/// (`X-Gitlab-Token`, or the signed form) delivery. 202 with the rollout's
/// Operation (wait on it with `GET /v1/operations/{id}?wait=60s`); 200 for
/// pings and events that do not deploy.
#[utoipa::path(post, path = "/v1/hooks/{hook}", operation_id = "hook_delivery_create", tag = "deploy-hooks",
    params(("hook" = String, Path, description = "Hook id")),
    request_body(content = Object, description = "The provider's event payload"),
    responses((status = 202, body = OperationView), (status = 200, body = HookAnswer), Problems))]
async fn hook_delivery_create(
    State(app): State<Arc<App>>,
    Path(hook): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    let outcome = app.hook_deliver(path_id(&hook)?, Delivery { header: &header, body: &body }).await?;
    let answer =
        |outcome: &str, detail: String| axum::Json(HookAnswer { outcome: outcome.to_string(), detail }).into_response();
    Ok(match outcome {
        HookOutcome::Deploying(op) => accepted(*op),
        HookOutcome::Pong => answer("pong", "the hook is ready".into()),
        HookOutcome::Ignored(why) => answer("ignored", why),
    })
}
