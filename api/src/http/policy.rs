//! The organization's change policy (`/v1/orgs/{org}/policy`) and the
//! approvals it asks for (`/v1/operations/{operation}/approval|approve|reject`).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{Ctx, IfMatch, IfMatchHeader, Json, ListParams, Query};
use super::orgs::path_id;
use super::problem::Problems;
use super::{ApiResult, with_etag};
use crate::app::App;
use crate::model::*;

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new()
        .routes(routes!(org_policy_view, org_policy_update))
        .routes(routes!(org_policy_version_list))
        .routes(routes!(operation_approval_view))
        .routes(routes!(operation_approve))
        .routes(routes!(operation_reject))
}

/// View the organization's change policy: the version in force (none
/// before the first takes effect) and those scheduled.
#[utoipa::path(get, path = "/v1/orgs/{org}/policy", operation_id = "org_policy_view", tag = "policy",
    params(("org" = String, Path, description = "Organization id")), security(("bearer" = [])),
    responses((status = 200, body = OrgPolicyView), Problems))]
async fn org_policy_view(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Path(org): Path<String>) -> ApiResult {
    let policy = app.org_policy_view(&ctx, path_id(&org)?).await?;
    Ok(with_etag(&policy.etag.clone(), policy))
}

/// Write the next version of the organization's change policy (owners who
/// are people; a service account is refused, 403 `not_a_person`):
/// which changes wait for approval and who approves them, how many
/// disruptive operations run at once, and what may be deployed. The body
/// is the whole version: a part left out takes its defaults (no rule), so
/// send the parts to keep as `GET` shows them, with its ETag as
/// `If-Match`. It takes effect at `effective_at` (now by default);
/// versions are never changed, and every change's audit event names the
/// version that allowed it.
#[utoipa::path(put, path = "/v1/orgs/{org}/policy", operation_id = "org_policy_update", tag = "policy",
    params(("org" = String, Path, description = "Organization id"), IfMatchHeader),
    request_body = OrgPolicyUpdate, security(("bearer" = [])),
    responses((status = 200, body = OrgPolicyView), Problems))]
async fn org_policy_update(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    IfMatch(if_match): IfMatch,
    Json(input): Json<OrgPolicyUpdate>,
) -> ApiResult {
    let policy = app.org_policy_update(&ctx, path_id(&org)?, input, if_match.as_deref()).await?;
    Ok(with_etag(&policy.etag.clone(), policy))
}

/// List every version of the organization's change policy, newest first.
#[utoipa::path(get, path = "/v1/orgs/{org}/policy/versions", operation_id = "org_policy_version_list", tag = "policy",
    params(("org" = String, Path, description = "Organization id"), ListParams), security(("bearer" = [])),
    responses((status = 200, body = Page<OrgPolicyVersion>), Problems))]
async fn org_policy_version_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    Ok(axum::Json(app.org_policy_version_list(&ctx, path_id(&org)?, list.page()?).await?).into_response())
}

/// View the approval request of an Operation the policy held: the rule,
/// who asked, until when, the decision, and the change's plan (its dry run
/// when asked for). 404 for an Operation never held.
#[utoipa::path(get, path = "/v1/operations/{operation}/approval", operation_id = "operation_approval_view",
    tag = "policy",
    params(("operation" = String, Path, description = "Operation id (`op_…`)")), security(("bearer" = [])),
    responses((status = 200, body = ApprovalView), Problems))]
async fn operation_approval_view(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(operation): Path<String>,
) -> ApiResult {
    Ok(axum::Json(app.operation_approval_view(&ctx, path_id(&operation)?).await?).into_response())
}

/// Approve a held change: it is made now, as the approver (who needs the
/// rights it takes), on the resource as it is now, and its Operation
/// starts. The approver is a person with the policy's approver role other
/// than who asked, who held that role before the request was made (403
/// `own_request`, `approver_role`, `approver_not_a_person`,
/// `approver_too_recent`); 409 `not_awaiting_approval` for an Operation
/// never held, `approval_closed` once rejected, withdrawn
/// or expired, `approval_stale` once the resource changed since the request,
/// `approval_moot` when the change no longer changes anything. Approving it
/// again answers the Operation again.
#[utoipa::path(post, path = "/v1/operations/{operation}/approve", operation_id = "operation_approve", tag = "policy",
    params(("operation" = String, Path, description = "Operation id (`op_…`)")),
    request_body = ApprovalDecision, security(("bearer" = [])),
    responses((status = 200, body = OperationView), Problems))]
async fn operation_approve(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(operation): Path<String>,
    Json(decision): Json<ApprovalDecision>,
) -> ApiResult {
    Ok(axum::Json(app.operation_approve(&ctx, path_id(&operation)?, decision).await?).into_response())
}

/// Reject a held change: it never acts, and its Operation fails with
/// `rejected`. Who may reject is who may approve; the requester withdraws
/// their own with `POST …/cancel`. 409 `not_awaiting_approval` for an
/// Operation never held, `approval_closed` once approved, withdrawn or
/// expired. Rejecting it again answers it again.
#[utoipa::path(post, path = "/v1/operations/{operation}/reject", operation_id = "operation_reject", tag = "policy",
    params(("operation" = String, Path, description = "Operation id (`op_…`)")),
    request_body = ApprovalDecision, security(("bearer" = [])),
    responses((status = 200, body = OperationView), Problems))]
async fn operation_reject(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(operation): Path<String>,
    Json(decision): Json<ApprovalDecision>,
) -> ApiResult {
    Ok(axum::Json(app.operation_reject(&ctx, path_id(&operation)?, decision).await?).into_response())
}
