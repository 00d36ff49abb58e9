//! `/v1/orgs`: organizations, quotas, audit events and API tokens.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use futures::StreamExt;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{Ctx, CtxWithBearer, IdempotencyKeyHeader, IfMatch, IfMatchHeader, Json, ListParams, Query};
use super::problem::{ApiError, Problems};
use super::{ApiResult, created, with_etag};
use crate::app::App;
use crate::app::kernel::audit::AuditFilter;
use crate::ids::{OrgId, TokenId};
use crate::model::*;

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new()
        .routes(routes!(org_list, org_create))
        .routes(routes!(org_view, org_update, org_delete))
        .routes(routes!(quota_view))
        .routes(routes!(audit_event_list))
        .routes(routes!(audit_event_export))
        .routes(routes!(token_list, token_create))
        .routes(routes!(token_view, token_delete))
}

/// Parses a path id, answering 404 for text that cannot be an id of this kind.
pub(super) fn path_id<K: crate::ids::IdKind>(text: &str) -> Result<crate::ids::Id<K>, ApiError> {
    Ok(crate::app::parse_id(text)?)
}

/// List the organizations the caller belongs to.
#[utoipa::path(get, path = "/v1/orgs", operation_id = "org_list", tag = "orgs",
    params(ListParams), security(("bearer" = [])),
    responses((status = 200, body = Page<OrgView>), Problems))]
async fn org_list(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Query(list): Query<ListParams>) -> ApiResult {
    Ok(axum::Json(app.org_list(&ctx, list.page()?).await?).into_response())
}

/// View an organization.
#[utoipa::path(get, path = "/v1/orgs/{org}", operation_id = "org_view", tag = "orgs",
    params(("org" = String, Path, description = "Organization id (`org_…`)")), security(("bearer" = [])),
    responses((status = 200, body = OrgView), Problems))]
async fn org_view(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Path(org): Path<String>) -> ApiResult {
    let view = app.org_view(&ctx, path_id(&org)?).await?;
    Ok(with_etag(&view.etag.clone(), view))
}

/// Make another organization, owned by the person asking: at most 10 owned
/// at once and 10 made in 30 days. Only a person may, signed in or with a
/// token neither limited nor expiring. A name any organization has or had
/// is taken. The credential asking stays where it acts: to act in the new
/// organization, sign in to it, or refresh the session naming it.
#[utoipa::path(post, path = "/v1/orgs", operation_id = "org_create", tag = "orgs",
    params(IdempotencyKeyHeader), request_body = OrgCreate, security(("bearer" = [])),
    responses((status = 201, body = OrgView), Problems))]
async fn org_create(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Json(input): Json<OrgCreate>) -> ApiResult {
    let view = app.org_create(&ctx, input).await?;
    Ok(created(format!("/v1/orgs/{}", view.id), &view.etag.clone(), view))
}

/// Rename or relabel an organization (owners). A new name must be one no
/// organization has or had; the old one stays this organization's, so links
/// that named it lead nowhere else.
#[utoipa::path(patch, path = "/v1/orgs/{org}", operation_id = "org_update", tag = "orgs",
    params(("org" = String, Path, description = "Organization id"), IfMatchHeader),
    request_body = OrgUpdate, security(("bearer" = [])),
    responses((status = 200, body = OrgView), Problems))]
async fn org_update(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    IfMatch(if_match): IfMatch,
    Json(input): Json<OrgUpdate>,
) -> ApiResult {
    let view = app.org_update(&ctx, path_id(&org)?, if_match.as_deref(), input).await?;
    Ok(with_etag(&view.etag.clone(), view))
}

/// Delete an empty organization: no projects, and no usage a finalized
/// invoice does not hold yet (409 `org_not_empty`, `unbilled_usage`). Only
/// an owner signed in (a session, not a token) who belongs to another
/// organization (409 `last_organization`). Every member, service account,
/// token and session of it stops working at once; its name stays taken,
/// and its invoices and audit log stay on record.
#[utoipa::path(delete, path = "/v1/orgs/{org}", operation_id = "org_delete", tag = "orgs",
    params(("org" = String, Path, description = "Organization id"), IfMatchHeader),
    security(("bearer" = [])),
    responses((status = 204, description = "Deleted"), Problems))]
async fn org_delete(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    IfMatch(if_match): IfMatch,
) -> ApiResult {
    app.org_delete(&ctx, path_id(&org)?, if_match.as_deref()).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Show an organization's quotas: limits and usage.
#[utoipa::path(get, path = "/v1/orgs/{org}/quotas", operation_id = "quota_view", tag = "orgs",
    params(("org" = String, Path, description = "Organization id")), security(("bearer" = [])),
    responses((status = 200, body = QuotasView), Problems))]
async fn quota_view(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Path(org): Path<String>) -> ApiResult {
    Ok(axum::Json(app.quota_view(&ctx, path_id(&org)?).await?).into_response())
}

/// List the organization's audit events, oldest first, optionally filtered
/// by actor, action, outcome, resource and time.
#[utoipa::path(get, path = "/v1/orgs/{org}/audit-events", operation_id = "audit_event_list", tag = "orgs",
    params(("org" = String, Path, description = "Organization id"), ListParams, AuditFilter),
    security(("bearer" = [])),
    responses((status = 200, body = Page<AuditEventView>), Problems))]
async fn audit_event_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Query(list): Query<ListParams>,
    Query(filter): Query<AuditFilter>,
) -> ApiResult {
    Ok(axum::Json(app.audit_event_list(&ctx, path_id(&org)?, &filter, list.page()?).await?).into_response())
}

/// The export's format.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ExportFormat {
    /// `csv` (default) or `ndjson`.
    #[param(pattern = "^(csv|ndjson)$")]
    format: Option<String>,
}

/// Download the organization's audit events (filtered like the list, up to
/// the time of the request, oldest first) as CSV or NDJSON. At most 100 000
/// events in at most 10 minutes: a larger or slower selection ends the
/// download with an error, never a quietly short file (narrow it with
/// `since` and `until`). The credential is checked again between batches.
#[utoipa::path(get, path = "/v1/orgs/{org}/audit-events/export", operation_id = "audit_event_export", tag = "orgs",
    params(("org" = String, Path, description = "Organization id"), ExportFormat, AuditFilter),
    security(("bearer" = [])),
    responses((status = 200, description = "CSV (`format=csv`) or NDJSON (`format=ndjson`)",
        content((String = "text/csv"), (String = "application/x-ndjson"))), Problems))]
async fn audit_event_export(
    State(app): State<Arc<App>>,
    CtxWithBearer(ctx, bearer): CtxWithBearer,
    Path(org): Path<String>,
    Query(format): Query<ExportFormat>,
    Query(filter): Query<AuditFilter>,
) -> ApiResult {
    let csv = match format.format.as_deref() {
        None | Some("csv") => true,
        Some("ndjson") => false,
        Some(_) => return Err(crate::app::Error::invalid_field("format", "invalid", "csv or ndjson").into()),
    };
    let watcher = crate::app::kernel::watch::Watcher::start(&app, bearer, ctx)?;
    let batches = crate::app::kernel::watch::audit_event_export(watcher, path_id(&org)?, filter).await?;
    // A client that stops reading ends the export (and gives back its watch).
    let batches = crate::app::kernel::watch::delivered(batches);
    let (content_type, extension) =
        if csv { ("text/csv; charset=utf-8", "csv") } else { ("application/x-ndjson", "ndjson") };
    let render = move |events: &[AuditEventView]| -> String {
        if csv {
            audit_csv(events)
        } else {
            events.iter().map(|e| serde_json::to_string(e).unwrap_or_default() + "\n").collect()
        }
    };
    let header = if csv { AUDIT_CSV_HEADER.to_string() } else { String::new() };
    // A failure after the answer began ends the body as an error: never a quietly short file.
    let batches = batches.map(move |batch| {
        batch.map(|events| axum::body::Bytes::from(render(&events))).map_err(|e| std::io::Error::other(e.to_string()))
    });
    let body = futures::stream::once(async move { Ok(axum::body::Bytes::from(header)) }).chain(batches);
    let disposition = format!("attachment; filename=\"audit-events.{extension}\"");
    Ok((
        [
            (axum::http::header::CONTENT_TYPE, content_type.to_string()),
            (axum::http::header::CONTENT_DISPOSITION, disposition),
        ],
        axum::body::Body::from_stream(body),
    )
        .into_response())
}

/// The CSV export's first line.
const AUDIT_CSV_HEADER: &str = "id,occurred_at,action,outcome,principal_kind,principal_id,credential_method,\
credential_id,resource_type,resource_id,request_id,source_ip,user_agent,details\r\n";

/// Audit events as CSV rows. Every field is quoted (so no spreadsheet
/// locale splits one at its own separator), and one a spreadsheet would
/// run as a formula is prefixed with `'`.
fn audit_csv(events: &[AuditEventView]) -> String {
    fn field(text: &str) -> String {
        let text =
            if text.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{text}") } else { text.to_string() };
        format!("\"{}\"", text.replace('"', "\"\""))
    }
    let mut out = String::new();
    for e in events {
        let credential = e.credential.as_ref();
        let row = [
            e.id.to_string(),
            e.occurred_at.to_rfc3339(),
            e.action.clone(),
            e.outcome.clone(),
            e.principal.kind.clone(),
            e.principal.id.clone().unwrap_or_default(),
            credential.map(|c| c.method.clone()).unwrap_or_default(),
            credential.and_then(|c| c.id.clone()).unwrap_or_default(),
            e.resource_type.clone(),
            e.resource_id.clone().unwrap_or_default(),
            e.request_id.clone().unwrap_or_default(),
            e.source_ip.clone().unwrap_or_default(),
            e.user_agent.clone().unwrap_or_default(),
            e.details.to_string(),
        ];
        out.push_str(&row.iter().map(|f| field(f)).collect::<Vec<_>>().join(","));
        out.push_str("\r\n");
    }
    out
}

/// List API tokens (never their secrets).
#[utoipa::path(get, path = "/v1/orgs/{org}/tokens", operation_id = "token_list", tag = "tokens",
    params(("org" = String, Path, description = "Organization id"), ListParams), security(("bearer" = [])),
    responses((status = 200, body = Page<TokenView>), Problems))]
async fn token_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    Ok(axum::Json(app.token_list(&ctx, path_id(&org)?, list.page()?).await?).into_response())
}

/// Create an API token. The secret is in this answer only (a replay of
/// the same `Idempotency-Key` omits it).
#[utoipa::path(post, path = "/v1/orgs/{org}/tokens", operation_id = "token_create", tag = "tokens",
    params(("org" = String, Path, description = "Organization id"),
           IdempotencyKeyHeader),
    request_body = TokenCreate, security(("bearer" = [])),
    responses((status = 201, body = TokenCreated), Problems))]
async fn token_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Json(input): Json<TokenCreate>,
) -> ApiResult {
    let org: OrgId = path_id(&org)?;
    let token = app.token_create(&ctx, org, input).await?;
    let location = format!("/v1/orgs/{org}/tokens/{}", token.view.id);
    Ok(created(location, "", token))
}

/// View an API token.
#[utoipa::path(get, path = "/v1/orgs/{org}/tokens/{token}", operation_id = "token_view", tag = "tokens",
    params(("org" = String, Path, description = "Organization id"), ("token" = String, Path, description = "Token id (`tok_…`)")),
    security(("bearer" = [])),
    responses((status = 200, body = TokenView), Problems))]
async fn token_view(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, token)): Path<(String, String)>,
) -> ApiResult {
    let token: TokenId = path_id(&token)?;
    Ok(axum::Json(app.token_view(&ctx, path_id(&org)?, token).await?).into_response())
}

/// Revoke an API token; requests made with it fail from the next one on.
#[utoipa::path(delete, path = "/v1/orgs/{org}/tokens/{token}", operation_id = "token_delete", tag = "tokens",
    params(("org" = String, Path, description = "Organization id"), ("token" = String, Path, description = "Token id")),
    security(("bearer" = [])),
    responses((status = 204, description = "Revoked"), Problems))]
async fn token_delete(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, token)): Path<(String, String)>,
) -> ApiResult {
    let token: TokenId = path_id(&token)?;
    app.token_delete(&ctx, path_id(&org)?, token).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
