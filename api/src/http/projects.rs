//! `/v1/orgs/{org}/projects` and `/v1/projects/{project}`.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{Ctx, IdempotencyKeyHeader, IfMatch, IfMatchHeader, Json, ListParams, Query};
use super::orgs::path_id;
use super::problem::Problems;
use super::{ApiResult, created, with_etag};
use crate::app::{App, ResourceRef};
use crate::model::*;

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new().routes(routes!(project_list, project_create)).routes(routes!(
        project_view,
        project_update,
        project_delete
    ))
}

/// List an organization's projects.
#[utoipa::path(get, path = "/v1/orgs/{org}/projects", operation_id = "project_list", tag = "projects",
    params(("org" = String, Path, description = "Organization id"), ListParams), security(("bearer" = [])),
    responses((status = 200, body = Page<ProjectView>), Problems))]
async fn project_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    Ok(axum::Json(app.project_list(&ctx, path_id(&org)?, list.page()?).await?).into_response())
}

/// Create a project.
#[utoipa::path(post, path = "/v1/orgs/{org}/projects", operation_id = "project_create", tag = "projects",
    params(("org" = String, Path, description = "Organization id"),
           IdempotencyKeyHeader),
    request_body = ProjectCreate, security(("bearer" = [])),
    responses((status = 201, body = ProjectView), Problems))]
async fn project_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Json(input): Json<ProjectCreate>,
) -> ApiResult {
    let view = app.project_create(&ctx, path_id(&org)?, input).await?;
    Ok(created(format!("/v1/projects/{}", view.id), &view.etag.clone(), view))
}

/// View a project.
#[utoipa::path(get, path = "/v1/projects/{project}", operation_id = "project_view", tag = "projects",
    params(("project" = String, Path, description = "Project id (`prj_…`) or name")), security(("bearer" = [])),
    responses((status = 200, body = ProjectView), Problems))]
async fn project_view(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Path(project): Path<String>) -> ApiResult {
    let view = app.project_view(&ctx, &ResourceRef::parse(&project)).await?;
    Ok(with_etag(&view.etag.clone(), view))
}

/// Change a project's labels or spec.
#[utoipa::path(patch, path = "/v1/projects/{project}", operation_id = "project_update", tag = "projects",
    params(("project" = String, Path, description = "Project id or name"),
           IfMatchHeader),
    request_body = ProjectUpdate, security(("bearer" = [])),
    responses((status = 200, body = ProjectView), Problems))]
async fn project_update(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(project): Path<String>,
    IfMatch(if_match): IfMatch,
    Json(input): Json<ProjectUpdate>,
) -> ApiResult {
    let view = app.project_update(&ctx, &ResourceRef::parse(&project), if_match.as_deref(), input).await?;
    Ok(with_etag(&view.etag.clone(), view))
}

/// Delete an empty project.
#[utoipa::path(delete, path = "/v1/projects/{project}", operation_id = "project_delete", tag = "projects",
    params(("project" = String, Path, description = "Project id or name"),
           IfMatchHeader),
    security(("bearer" = [])),
    responses((status = 204, description = "Deleted"), Problems))]
async fn project_delete(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(project): Path<String>,
    IfMatch(if_match): IfMatch,
) -> ApiResult {
    app.project_delete(&ctx, &ResourceRef::parse(&project), if_match.as_deref()).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
