//! Device sign-in routes (OAuth 2.0 Device Authorization Grant, RFC 8628):
//! how `moke auth login` gets a credential without a browser beside it.

use std::sync::Arc;

use axum::extract::State;
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::ApiResult;
use super::extract::{Ctx, IdempotencyKeyHeader, Json, Meta};
use super::problem::{Problem, Problems};
use crate::app::App;
use crate::model::*;

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new()
        .routes(routes!(device_authorization_create))
        .routes(routes!(device_authorization_confirm))
        .routes(routes!(device_authorization_deny))
        .routes(routes!(device_token_create))
}

/// Start signing a device in (RFC 8628 §3.1): answers a device code to
/// poll `POST /v1/device/token` with, and a user code for the person to
/// confirm at `verification_uri` (or with `POST /v1/device/confirm`). Both
/// expire in 10 minutes. Needs no credential; limited per address like
/// sign-in. Each call starts a new sign-in (no `Idempotency-Key`: an
/// abandoned one just expires).
#[utoipa::path(post, path = "/v1/device/auth", operation_id = "device_authorization_create", tag = "auth",
    request_body = DeviceAuthorizationCreate,
    responses((status = 200, body = DeviceAuthorizationCreated), Problems))]
async fn device_authorization_create(
    State(app): State<Arc<App>>,
    Meta(meta): Meta,
    Json(input): Json<DeviceAuthorizationCreate>,
) -> ApiResult {
    Ok(axum::Json(app.device_authorization_create(&meta, input).await?).into_response())
}

/// Approve a device's sign-in: its next poll receives a personal token
/// (`moke_pat_…`) acting as you in `organization` (your current one if
/// omitted), within the organization's credential policy. Signed in as a
/// person only (an API token or a service account is refused, 403
/// `session_required`). Each code is decided once; 10 wrong codes in 10
/// minutes and you wait (429).
#[utoipa::path(post, path = "/v1/device/confirm", operation_id = "device_authorization_confirm", tag = "auth",
    params(IdempotencyKeyHeader),
    request_body = DeviceConfirm, security(("bearer" = [])),
    responses((status = 200, body = DeviceAuthorizationView),
              (status = 410, description = "The code expired (`code_expired`) or was already confirmed or denied \
                                            (`code_used`); `errors` names `user_code`",
               body = Problem, content_type = "application/problem+json"),
              Problems))]
async fn device_authorization_confirm(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Json(input): Json<DeviceConfirm>,
) -> ApiResult {
    Ok(axum::Json(app.device_authorization_confirm(&ctx, input).await?).into_response())
}

/// Refuse a device's sign-in: its polling answers `access_denied`. As for
/// confirming: a person signed in, each code decided once, wrong codes
/// limited.
#[utoipa::path(post, path = "/v1/device/deny", operation_id = "device_authorization_deny", tag = "auth",
    params(IdempotencyKeyHeader),
    request_body = DeviceDeny, security(("bearer" = [])),
    responses((status = 200, body = DeviceAuthorizationView),
              (status = 410, description = "The code expired (`code_expired`) or was already confirmed or denied \
                                            (`code_used`); `errors` names `user_code`",
               body = Problem, content_type = "application/problem+json"),
              Problems))]
async fn device_authorization_deny(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Json(input): Json<DeviceDeny>,
) -> ApiResult {
    Ok(axum::Json(app.device_authorization_deny(&ctx, input).await?).into_response())
}

/// Poll for a device's credential (RFC 8628 §3.4), every `interval`
/// seconds. Until the sign-in is decided the answer is 400 with `code`
/// `authorization_pending`, or `slow_down` when polled too soon (wait 5
/// seconds longer from then on); then `access_denied` if it was denied,
/// `expired_token` once it expired or its token was collected, and
/// `invalid_grant` for an unknown device code. Approved, it answers the
/// token once. No `Idempotency-Key`: a replay could not hold the token.
#[utoipa::path(post, path = "/v1/device/token", operation_id = "device_token_create", tag = "auth",
    request_body = DeviceTokenRequest,
    responses((status = 200, body = DeviceToken), Problems))]
async fn device_token_create(
    State(app): State<Arc<App>>,
    Meta(meta): Meta,
    Json(input): Json<DeviceTokenRequest>,
) -> ApiResult {
    Ok(axum::Json(app.device_token_create(&meta, input).await?).into_response())
}
