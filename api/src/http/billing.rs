//! `/v1/orgs/{org}/billing`: the month's balance, credits, and invoices as
//! JSON and as CSV.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use axum::http::StatusCode;

use super::ApiResult;
use super::extract::{Ctx, IdempotencyKeyHeader, Json, ListParams, Query};
use super::orgs::path_id;
use super::problem::Problems;
use crate::app::App;
use crate::model::*;

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new()
        .routes(routes!(billing_balance_view))
        .routes(routes!(billing_plan_view, billing_plan_update))
        .routes(routes!(billing_usage_view))
        .routes(routes!(billing_usage_csv))
        .routes(routes!(credit_grant_list))
        .routes(routes!(budget_list, budget_create))
        .routes(routes!(budget_view, budget_update, budget_delete))
        .routes(routes!(invoice_list))
        .routes(routes!(invoice_view))
        .routes(routes!(invoice_csv))
        .routes(routes!(invoice_pdf))
}

/// Show the organization's plan and the quota limits it sets (`quota_view` shows the limits in force, with any
/// override). Needs `read_billing`.
#[utoipa::path(get, path = "/v1/orgs/{org}/billing/plan", operation_id = "billing_plan_view", tag = "billing",
    params(("org" = String, Path, description = "Organization id")), security(("bearer" = [])),
    responses((status = 200, body = OrgPlanView), Problems))]
async fn billing_plan_view(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Path(org): Path<String>) -> ApiResult {
    Ok(axum::Json(app.billing_plan_view(&ctx, path_id(&org)?).await?).into_response())
}

/// Move the organization to another plan (`GET /v1/plans`). A plan with lower limits is refused with 409
/// `plan_limits_exceeded` while the organization uses more than it allows; the current plan again changes
/// nothing. Needs `manage_billing` and `read_billing`.
#[utoipa::path(put, path = "/v1/orgs/{org}/billing/plan", operation_id = "billing_plan_update", tag = "billing",
    params(("org" = String, Path, description = "Organization id")),
    request_body = PlanChange, security(("bearer" = [])),
    responses((status = 200, body = OrgPlanView), Problems))]
async fn billing_plan_update(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Json(input): Json<PlanChange>,
) -> ApiResult {
    Ok(axum::Json(app.billing_plan_update(&ctx, path_id(&org)?, input).await?).into_response())
}

/// The days of a usage report.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct UsageRange {
    /// The first UTC day (`YYYY-MM-DD`); the first of this month if omitted. Days before 2000-01-01 or after
    /// 9999-12-31 count as those.
    start: Option<chrono::NaiveDate>,
    /// The first day not included; tomorrow if omitted. A range of more than 366 days is cut there (the
    /// answer's `end` says where), and one that ends before it starts is empty.
    end: Option<chrono::NaiveDate>,
}

/// Show what the organization used per UTC day, project, resource and price, at list price (the invoice applies
/// each node's minimum and the monthly cap, so it can come to less). Needs `read_billing`.
#[utoipa::path(get, path = "/v1/orgs/{org}/billing/usage", operation_id = "billing_usage_view", tag = "billing",
    params(("org" = String, Path, description = "Organization id"), UsageRange), security(("bearer" = [])),
    responses((status = 200, body = UsageReport), Problems))]
async fn billing_usage_view(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Query(range): Query<UsageRange>,
) -> ApiResult {
    Ok(axum::Json(app.billing_usage_view(&ctx, path_id(&org)?, range.start, range.end).await?).into_response())
}

/// Download the usage report as CSV (one row per day, project, resource and price). Needs `read_billing`.
#[utoipa::path(get, path = "/v1/orgs/{org}/billing/usage/csv", operation_id = "billing_usage_csv_view",
    tag = "billing",
    params(("org" = String, Path, description = "Organization id"), UsageRange), security(("bearer" = [])),
    responses((status = 200, description = "The usage report as CSV", content((String = "text/csv"))), Problems))]
async fn billing_usage_csv(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Query(range): Query<UsageRange>,
) -> ApiResult {
    let (name, csv) = app.billing_usage_csv(&ctx, path_id(&org)?, range.start, range.end).await?;
    Ok((
        [
            (axum::http::header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (axum::http::header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
        ],
        csv,
    )
        .into_response())
}

/// Show this month's usage so far (UTC), the credits left, and what the
/// month comes to after them. Needs the `read_billing` permission.
#[utoipa::path(get, path = "/v1/orgs/{org}/billing/balance", operation_id = "billing_balance_view", tag = "billing",
    params(("org" = String, Path, description = "Organization id")), security(("bearer" = [])),
    responses((status = 200, body = BillingBalanceView), Problems))]
async fn billing_balance_view(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Path(org): Path<String>) -> ApiResult {
    Ok(axum::Json(app.billing_balance_view(&ctx, path_id(&org)?).await?).into_response())
}

/// List the organization's credits, newest first, with what is left of
/// each. Needs the `read_billing` permission.
#[utoipa::path(get, path = "/v1/orgs/{org}/billing/credits", operation_id = "credit_grant_list", tag = "billing",
    params(("org" = String, Path, description = "Organization id"), ListParams), security(("bearer" = [])),
    responses((status = 200, body = Page<CreditGrantView>), Problems))]
async fn credit_grant_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    Ok(axum::Json(app.credit_grant_list(&ctx, path_id(&org)?, list.page()?).await?).into_response())
}

/// List the organization's invoices, newest first: one per calendar month
/// (UTC) with usage; the open months as drafts with their totals so far.
/// Needs the `read_billing` permission (owners, admins and billing).
#[utoipa::path(get, path = "/v1/orgs/{org}/billing/invoices", operation_id = "invoice_list", tag = "billing",
    params(("org" = String, Path, description = "Organization id"), ListParams), security(("bearer" = [])),
    responses((status = 200, body = Page<InvoiceSummary>), Problems))]
async fn invoice_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    Ok(axum::Json(app.invoice_list(&ctx, path_id(&org)?, list.page()?).await?).into_response())
}

/// View an invoice with its lines. A draft is rated from the usage
/// recorded so far each time it is read.
#[utoipa::path(get, path = "/v1/orgs/{org}/billing/invoices/{invoice}", operation_id = "invoice_view", tag = "billing",
    params(("org" = String, Path, description = "Organization id"),
        ("invoice" = String, Path, description = "Invoice id (`bill_…`)")),
    security(("bearer" = [])),
    responses((status = 200, body = InvoiceView), Problems))]
async fn invoice_view(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, invoice)): Path<(String, String)>,
) -> ApiResult {
    Ok(axum::Json(app.invoice_view(&ctx, path_id(&org)?, path_id(&invoice)?).await?).into_response())
}

/// Download an invoice's lines as CSV (one row per line; amounts with the
/// currency's minor-unit digits; times in RFC 3339).
#[utoipa::path(get, path = "/v1/orgs/{org}/billing/invoices/{invoice}/csv", operation_id = "invoice_csv_view",
    tag = "billing",
    params(("org" = String, Path, description = "Organization id"),
        ("invoice" = String, Path, description = "Invoice id (`bill_…`)")),
    security(("bearer" = [])),
    responses((status = 200, description = "The invoice as CSV", content((String = "text/csv"))), Problems))]
async fn invoice_csv(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, invoice)): Path<(String, String)>,
) -> ApiResult {
    let (name, csv) = app.invoice_csv(&ctx, path_id(&org)?, path_id(&invoice)?).await?;
    Ok((
        [
            (axum::http::header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (axum::http::header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
        ],
        csv,
    )
        .into_response())
}

/// List the organization's budgets, with this month's spend, forecast and
/// the thresholds reached. Needs the `read_billing` permission.
#[utoipa::path(get, path = "/v1/orgs/{org}/billing/budgets", operation_id = "budget_list", tag = "billing",
    params(("org" = String, Path, description = "Organization id"), ListParams), security(("bearer" = [])),
    responses((status = 200, body = Page<BudgetView>), Problems))]
async fn budget_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    Ok(axum::Json(app.budget_list(&ctx, path_id(&org)?, list.page()?).await?).into_response())
}

/// Set a monthly budget: each threshold reached alerts once a month, by an
/// event webhook (`budget.threshold_reached`) and by mail to owners and
/// billing members. At most 20 an organization. Needs `manage_billing`.
#[utoipa::path(post, path = "/v1/orgs/{org}/billing/budgets", operation_id = "budget_create", tag = "billing",
    params(("org" = String, Path, description = "Organization id"), IdempotencyKeyHeader),
    request_body = BudgetCreate, security(("bearer" = [])),
    responses((status = 201, body = BudgetView), Problems))]
async fn budget_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Json(input): Json<BudgetCreate>,
) -> ApiResult {
    let view = app.budget_create(&ctx, path_id(&org)?, input).await?;
    Ok((StatusCode::CREATED, axum::Json(view)).into_response())
}

/// View a budget.
#[utoipa::path(get, path = "/v1/orgs/{org}/billing/budgets/{budget}", operation_id = "budget_view", tag = "billing",
    params(("org" = String, Path, description = "Organization id"),
        ("budget" = String, Path, description = "Budget id (`bud_…`)")),
    security(("bearer" = [])), responses((status = 200, body = BudgetView), Problems))]
async fn budget_view(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, budget)): Path<(String, String)>,
) -> ApiResult {
    Ok(axum::Json(app.budget_view(&ctx, path_id(&org)?, path_id(&budget)?).await?).into_response())
}

/// Change a budget: only the fields given change. Needs `manage_billing`.
#[utoipa::path(patch, path = "/v1/orgs/{org}/billing/budgets/{budget}", operation_id = "budget_update",
    tag = "billing",
    params(("org" = String, Path, description = "Organization id"),
        ("budget" = String, Path, description = "Budget id (`bud_…`)")),
    request_body = BudgetUpdate, security(("bearer" = [])),
    responses((status = 200, body = BudgetView), Problems))]
async fn budget_update(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, budget)): Path<(String, String)>,
    Json(input): Json<BudgetUpdate>,
) -> ApiResult {
    Ok(axum::Json(app.budget_update(&ctx, path_id(&org)?, path_id(&budget)?, input).await?).into_response())
}

/// Delete a budget and its alerts. Needs `manage_billing`.
#[utoipa::path(delete, path = "/v1/orgs/{org}/billing/budgets/{budget}", operation_id = "budget_delete",
    tag = "billing",
    params(("org" = String, Path, description = "Organization id"),
        ("budget" = String, Path, description = "Budget id (`bud_…`)")),
    security(("bearer" = [])), responses((status = 204), Problems))]
async fn budget_delete(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, budget)): Path<(String, String)>,
) -> ApiResult {
    app.budget_delete(&ctx, path_id(&org)?, path_id(&budget)?).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Download an invoice as a PDF (A4; the lines, then the totals).
#[utoipa::path(get, path = "/v1/orgs/{org}/billing/invoices/{invoice}/pdf", operation_id = "invoice_pdf_view",
    tag = "billing",
    params(("org" = String, Path, description = "Organization id"),
        ("invoice" = String, Path, description = "Invoice id (`bill_…`)")),
    security(("bearer" = [])),
    responses((status = 200, description = "The invoice as a PDF", content((String = "application/pdf"))), Problems))]
async fn invoice_pdf(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, invoice)): Path<(String, String)>,
) -> ApiResult {
    let (name, pdf) = app.invoice_pdf(&ctx, path_id(&org)?, path_id(&invoice)?).await?;
    Ok((
        [
            (axum::http::header::CONTENT_TYPE, "application/pdf".to_string()),
            (axum::http::header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
        ],
        pdf,
    )
        .into_response())
}
