//! `/v1/regions`, `/v1/kubernetes-versions`, `/v1/machine-types`, `/v1/plans`: what is on
//! offer. Public, since they describe the product rather than a tenant.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::ApiResult;
use crate::app::App;
use crate::config::{KubernetesVersionEntry, MachineTypeEntry};
use crate::model::{PlanView, RegionView};

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new()
        .routes(routes!(region_list))
        .routes(routes!(kubernetes_version_list))
        .routes(routes!(machine_type_list))
        .routes(routes!(plan_list))
}

/// List the plans on offer and the quota limits each sets.
#[utoipa::path(get, path = "/v1/plans", operation_id = "plan_list", tag = "catalog",
    responses((status = 200, body = Vec<PlanView>)))]
async fn plan_list(State(app): State<Arc<App>>) -> Json<Vec<PlanView>> {
    Json(app.plan_list())
}

/// List regions with their zones, agent health and queued work.
#[utoipa::path(get, path = "/v1/regions", operation_id = "region_list", tag = "catalog",
    responses((status = 200, body = Vec<RegionView>)))]
async fn region_list(State(app): State<Arc<App>>) -> ApiResult<Json<Vec<RegionView>>> {
    Ok(Json(app.region_list().await?))
}

/// List Kubernetes versions, with the default and end-of-life dates.
#[utoipa::path(get, path = "/v1/kubernetes-versions", operation_id = "kubernetes_version_list", tag = "catalog",
    responses((status = 200, body = Vec<KubernetesVersionEntry>)))]
async fn kubernetes_version_list(State(app): State<Arc<App>>) -> Json<Vec<KubernetesVersionEntry>> {
    Json(app.kubernetes_version_list())
}

/// List machine types for node pools.
#[utoipa::path(get, path = "/v1/machine-types", operation_id = "machine_type_list", tag = "catalog",
    responses((status = 200, body = Vec<MachineTypeEntry>)))]
async fn machine_type_list(State(app): State<Arc<App>>) -> Json<Vec<MachineTypeEntry>> {
    Json(app.machine_type_list())
}
