//! `/v1/orgs/{org}/webhooks`: customer event webhook endpoints, their
//! deliveries with every attempt, and redelivery.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::ApiResult;
use super::extract::{Ctx, IdempotencyKeyHeader, Json, ListParams, Query};
use super::orgs::path_id;
use super::problem::Problems;
use crate::app::App;
use crate::model::*;

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new()
        .routes(routes!(webhook_endpoint_list, webhook_endpoint_create))
        .routes(routes!(webhook_endpoint_view, webhook_endpoint_update, webhook_endpoint_delete))
        .routes(routes!(webhook_endpoint_secret_rotate))
        .routes(routes!(webhook_delivery_list))
        .routes(routes!(webhook_redelivery_create))
}

/// List the organization's webhook endpoints (never their secrets).
#[utoipa::path(get, path = "/v1/orgs/{org}/webhooks", operation_id = "webhook_endpoint_list", tag = "webhooks",
    params(("org" = String, Path, description = "Organization id"), ListParams),
    security(("bearer" = [])), responses((status = 200, body = Page<WebhookEndpointView>), Problems))]
async fn webhook_endpoint_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    Ok(axum::Json(app.webhook_endpoint_list(&ctx, path_id(&org)?, list.page()?).await?).into_response())
}

/// Subscribe an endpoint to events; the answer holds its signing secret, shown only once.
/// A retry with the same Idempotency-Key answers the endpoint again, without its secret.
#[utoipa::path(post, path = "/v1/orgs/{org}/webhooks", operation_id = "webhook_endpoint_create", tag = "webhooks",
    params(("org" = String, Path, description = "Organization id"), IdempotencyKeyHeader),
    request_body = WebhookEndpointCreate, security(("bearer" = [])),
    responses((status = 201, body = WebhookEndpointCreated), Problems))]
async fn webhook_endpoint_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Json(input): Json<WebhookEndpointCreate>,
) -> ApiResult {
    let created = app.webhook_endpoint_create(&ctx, path_id(&org)?, input).await?;
    Ok((StatusCode::CREATED, axum::Json(created)).into_response())
}

/// View a webhook endpoint (never its secret).
#[utoipa::path(get, path = "/v1/orgs/{org}/webhooks/{endpoint}", operation_id = "webhook_endpoint_view",
    tag = "webhooks",
    params(("org" = String, Path, description = "Organization id"),
           ("endpoint" = String, Path, description = "Webhook endpoint id")),
    security(("bearer" = [])), responses((status = 200, body = WebhookEndpointView), Problems))]
async fn webhook_endpoint_view(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, endpoint)): Path<(String, String)>,
) -> ApiResult {
    Ok(axum::Json(app.webhook_endpoint_view(&ctx, path_id(&org)?, path_id(&endpoint)?).await?).into_response())
}

/// Change a webhook endpoint: only the fields given change. The URL is checked as on create; `enabled: true`
/// turns a disabled endpoint back on (clearing `disabled_at`, `disabled_reason` and `failing_since`), `false`
/// disables it.
#[utoipa::path(patch, path = "/v1/orgs/{org}/webhooks/{endpoint}", operation_id = "webhook_endpoint_update",
    tag = "webhooks",
    params(("org" = String, Path, description = "Organization id"),
           ("endpoint" = String, Path, description = "Webhook endpoint id")),
    request_body = WebhookEndpointUpdate, security(("bearer" = [])),
    responses((status = 200, body = WebhookEndpointView), Problems))]
async fn webhook_endpoint_update(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, endpoint)): Path<(String, String)>,
    Json(input): Json<WebhookEndpointUpdate>,
) -> ApiResult {
    let view = app.webhook_endpoint_update(&ctx, path_id(&org)?, path_id(&endpoint)?, input).await?;
    Ok(axum::Json(view).into_response())
}

/// Rotate a webhook endpoint's signing secret. The answer holds the new secret, shown only once; deliveries are
/// signed with it from now on and, for `previous_secret_valid_seconds` (24 h by default; 0: not at all), with the
/// previous one too (two `v1,` signatures in `webhook-signature`), so the receiver can switch without refusing one.
/// A retry with the same Idempotency-Key answers the endpoint again, without its secret.
#[utoipa::path(post, path = "/v1/orgs/{org}/webhooks/{endpoint}/rotate-secret",
    operation_id = "webhook_endpoint_secret_rotate", tag = "webhooks",
    params(("org" = String, Path, description = "Organization id"),
           ("endpoint" = String, Path, description = "Webhook endpoint id"), IdempotencyKeyHeader),
    request_body = WebhookEndpointSecretRotate, security(("bearer" = [])),
    responses((status = 200, body = WebhookEndpointCreated), Problems))]
async fn webhook_endpoint_secret_rotate(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, endpoint)): Path<(String, String)>,
    Json(input): Json<WebhookEndpointSecretRotate>,
) -> ApiResult {
    let rotated = app.webhook_endpoint_secret_rotate(&ctx, path_id(&org)?, path_id(&endpoint)?, input).await?;
    Ok(axum::Json(rotated).into_response())
}

/// Remove a webhook endpoint and its pending deliveries.
#[utoipa::path(delete, path = "/v1/orgs/{org}/webhooks/{endpoint}", operation_id = "webhook_endpoint_delete",
    tag = "webhooks",
    params(("org" = String, Path, description = "Organization id"),
           ("endpoint" = String, Path, description = "Webhook endpoint id")),
    security(("bearer" = [])), responses((status = 204), Problems))]
async fn webhook_endpoint_delete(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, endpoint)): Path<(String, String)>,
) -> ApiResult {
    app.webhook_endpoint_delete(&ctx, path_id(&org)?, path_id(&endpoint)?).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// The endpoint's deliveries, newest first, each with its attempts (status and latency).
#[utoipa::path(get, path = "/v1/orgs/{org}/webhooks/{endpoint}/deliveries", operation_id = "webhook_delivery_list",
    tag = "webhooks",
    params(("org" = String, Path, description = "Organization id"),
           ("endpoint" = String, Path, description = "Webhook endpoint id"), ListParams),
    security(("bearer" = [])), responses((status = 200, body = Page<WebhookDeliveryView>), Problems))]
async fn webhook_delivery_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, endpoint)): Path<(String, String)>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    let page = app.webhook_delivery_list(&ctx, path_id(&org)?, path_id(&endpoint)?, list.page()?).await?;
    Ok(axum::Json(page).into_response())
}

/// Send an event to the endpoint again.
#[utoipa::path(post, path = "/v1/orgs/{org}/webhooks/{endpoint}/redeliveries",
    operation_id = "webhook_redelivery_create", tag = "webhooks",
    params(("org" = String, Path, description = "Organization id"),
           ("endpoint" = String, Path, description = "Webhook endpoint id"), IdempotencyKeyHeader),
    request_body = RedeliveryCreate, security(("bearer" = [])),
    responses((status = 202, body = WebhookDeliveryView), Problems))]
async fn webhook_redelivery_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, endpoint)): Path<(String, String)>,
    Json(input): Json<RedeliveryCreate>,
) -> ApiResult {
    let delivery = app.webhook_redelivery_create(&ctx, path_id(&org)?, path_id(&endpoint)?, input).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(delivery)).into_response())
}
