//! What is on offer: regions, Kubernetes versions and machine types. Public,
//! as on REST (plans are on the core query, beside the organization's plan).

use async_graphql::{Context, Object, Result};

use super::error;
use super::types::app;
use crate::config::{KubernetesVersionEntry, MachineTypeEntry};
use crate::model::RegionView;

#[derive(Default)]
pub struct CatalogQuery;

#[Object]
impl CatalogQuery {
    /// Regions with their zones, agent health and queued work.
    async fn regions(&self, ctx: &Context<'_>) -> Result<Vec<RegionView>> {
        app(ctx).region_list().await.map_err(error)
    }

    /// Kubernetes versions, with the default and end-of-life dates.
    async fn kubernetes_versions(&self, ctx: &Context<'_>) -> Vec<KubernetesVersionEntry> {
        app(ctx).kubernetes_version_list()
    }

    /// Machine types for node pools.
    async fn machine_types(&self, ctx: &Context<'_>) -> Vec<MachineTypeEntry> {
        app(ctx).machine_type_list()
    }
}
