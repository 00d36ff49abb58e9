//! `/v1/operations/{operation}`: poll or long-poll long-running work.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::ApiResult;
use super::extract::{Ctx, IdempotencyKeyHeader, ListParams, Query};
use super::orgs::path_id;
use super::problem::{ApiError, Problems};
use crate::app::region::operations::OperationFilter;
use crate::app::{App, Error, ResourceRef};
use crate::model::{OperationStatus, OperationSteps, OperationView, Page};

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new()
        .routes(routes!(operation_view))
        .routes(routes!(operation_step_list))
        .routes(routes!(operation_cancel))
        .routes(routes!(project_operation_list))
}

#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WaitParams {
    /// Block until the operation finishes or this long passes: seconds, or
    /// minutes with `m` (`30s`, `30`, `1m`). Longer waits are cut to the
    /// server's `http.max_wait_seconds` (60 s by default).
    #[param(pattern = r"^[0-9]{1,6}[sm]?$")]
    pub wait: Option<String>,
}

/// Parses `30s`, `30` or `1m` (1 to 6 digits), cut to `max_seconds`.
fn parse_wait(text: &str, max_seconds: u64) -> Result<Duration, ApiError> {
    let (digits, unit) = match text.strip_suffix('m') {
        Some(minutes) => (minutes, 60),
        None => (text.strip_suffix('s').unwrap_or(text), 1),
    };
    if digits.is_empty() || digits.len() > 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError(Error::invalid_field("wait", "invalid", "must be a duration like 30s or 1m")));
    }
    let seconds = digits.parse::<u64>().unwrap_or(u64::MAX).saturating_mul(unit);
    Ok(Duration::from_secs(seconds.min(max_seconds)))
}

/// View an operation; with `wait`, answer when it finishes or the wait runs out.
#[utoipa::path(get, path = "/v1/operations/{operation}", operation_id = "operation_view", tag = "operations",
    params(("operation" = String, Path, description = "Operation id (`op_…`)"), WaitParams),
    security(("bearer" = [])),
    responses((status = 200, body = OperationView), Problems))]
async fn operation_view(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(operation): Path<String>,
    Query(params): Query<WaitParams>,
) -> ApiResult {
    let wait = params.wait.as_deref().map(|w| parse_wait(w, app.config().http.max_wait_seconds)).transpose()?;
    Ok(axum::Json(app.operation_view(&ctx, path_id(&operation)?, wait).await?).into_response())
}

/// The steps the operation went through, oldest first, each with when it
/// was reported (a step is listed when it differs from the one before).
#[utoipa::path(get, path = "/v1/operations/{operation}/steps", operation_id = "operation_step_list", tag = "operations",
    params(("operation" = String, Path, description = "Operation id (`op_…`)")),
    security(("bearer" = [])),
    responses((status = 200, body = OperationSteps), Problems))]
async fn operation_step_list(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Path(operation): Path<String>) -> ApiResult {
    Ok(axum::Json(app.operation_step_list(&ctx, path_id(&operation)?).await?).into_response())
}

/// Cancel a spec change (`cluster_update`, `node_pool_update`), or a
/// `cluster_upgrade`, `node_pool_recycle`, `cluster_snapshot` or
/// `cluster_restore` the region has not received: the spec it replaced is
/// written back as the next generation, by an Operation of its own, so a
/// region that had not started does nothing and one part-way through stops
/// between steps and converges back. The operation fails with error code
/// `cancelled`; cancelling it again answers it again. 409 `not_cancellable`
/// (with the reason) for other kinds, `operation_finished` once it has
/// ended, `superseded` when a later change of the same resource followed,
/// `operation_started` for one of the four the region already has.
/// Cancelling takes the rights starting the work takes (cluster-admin rights
/// for a restore).
#[utoipa::path(post, path = "/v1/operations/{operation}/cancel", operation_id = "operation_cancel", tag = "operations",
    params(("operation" = String, Path, description = "Operation id (`op_…`)"), IdempotencyKeyHeader),
    security(("bearer" = [])),
    responses((status = 200, body = OperationView), Problems))]
async fn operation_cancel(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Path(operation): Path<String>) -> ApiResult {
    Ok(axum::Json(app.operation_cancel(&ctx, path_id(&operation)?).await?).into_response())
}

/// `target`, `kind` and `status` of a project's operation list.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct OperationFilterParams {
    /// Only those on this cluster, node pool or deployment (its id); empty matches all.
    #[param(pattern = r"^((cl|np|dep)_[0-9a-f]{32})?$")]
    target: Option<String>,
    /// Only those of this kind, e.g. `cluster_upgrade`, `node_pool_recycle`; empty matches all.
    #[param(pattern = r"^[a-z_]{0,64}$")]
    kind: Option<String>,
    /// Only those in this status.
    status: Option<OperationStatus>,
}

/// The project's operations, newest first (also those on resources since
/// deleted), optionally only those on one resource, of one kind or in one status.
#[utoipa::path(get, path = "/v1/projects/{project}/operations", operation_id = "project_operation_list",
    tag = "operations",
    params(("project" = String, Path, description = "Project id or name"), ListParams, OperationFilterParams),
    security(("bearer" = [])),
    responses((status = 200, body = Page<OperationView>), Problems))]
async fn project_operation_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(project): Path<String>,
    Query(list): Query<ListParams>,
    Query(filter): Query<OperationFilterParams>,
) -> ApiResult {
    let filter = OperationFilter::parse(filter.target.as_deref(), filter.kind.as_deref(), filter.status)?;
    let page = app.project_operation_list(&ctx, &ResourceRef::parse(&project), filter, list.page()?).await?;
    Ok(axum::Json(page).into_response())
}

#[cfg(test)]
mod tests {
    use super::parse_wait;

    #[test]
    fn waits() {
        assert_eq!(parse_wait("30s", 60).unwrap().as_secs(), 30);
        assert_eq!(parse_wait("5", 60).unwrap().as_secs(), 5);
        assert_eq!(parse_wait("1m", 60).unwrap().as_secs(), 60);
        assert_eq!(parse_wait("2m", 60).unwrap().as_secs(), 60, "cut to the most the server waits");
        assert!(parse_wait("1234567", 60).is_err());
        assert!(parse_wait("", 60).is_err());
        assert!(parse_wait("soon", 60).is_err());
    }
}
