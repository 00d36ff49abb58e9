//! `CatalogService`: what is on offer. Public, as on REST: these describe
//! the product, not a tenant, so no credential is asked for.

use moke_proto::v1::*;
use tonic::{Request, Response};

use super::convert::{opt_timestamp, seconds};
use super::services::{Api, Reply};
use super::status;

#[tonic::async_trait]
impl catalog_service_server::CatalogService for Api {
    async fn list_regions(&self, _request: Request<ListRegionsRequest>) -> Reply<ListRegionsResponse> {
        let regions = self.app.region_list().await.map_err(status)?;
        Ok(Response::new(ListRegionsResponse {
            regions: regions
                .into_iter()
                .map(|r| Region {
                    name: r.name,
                    display_name: r.display_name,
                    zones: r.zones,
                    health: Some(RegionHealth {
                        status: r.health.status,
                        last_heartbeat_time: opt_timestamp(r.health.last_heartbeat_at),
                        pending_commands: r.health.pending_commands,
                        oldest_pending_age: Some(seconds(r.health.oldest_pending_seconds)),
                    }),
                })
                .collect(),
        }))
    }

    async fn list_kubernetes_versions(
        &self,
        _request: Request<ListKubernetesVersionsRequest>,
    ) -> Reply<ListKubernetesVersionsResponse> {
        let versions = self.app.kubernetes_version_list();
        Ok(Response::new(ListKubernetesVersionsResponse {
            versions: versions
                .into_iter()
                .map(|v| KubernetesVersion {
                    version: v.version,
                    default: v.default,
                    end_of_life: v.end_of_life.to_string(),
                })
                .collect(),
        }))
    }

    async fn list_machine_types(&self, _request: Request<ListMachineTypesRequest>) -> Reply<ListMachineTypesResponse> {
        Ok(Response::new(ListMachineTypesResponse {
            machine_types: self
                .app
                .machine_type_list()
                .into_iter()
                .map(|m| MachineType { name: m.name, vcpus: m.vcpus, memory_gib: m.memory_gib, price_key: m.price_key })
                .collect(),
        }))
    }
}
