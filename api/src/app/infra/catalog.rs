//! Read-only catalogs from configuration: regions, Kubernetes versions,
//! machine types. Public: they describe the product, not any tenant.

use crate::app::{App, Result};
use crate::config::{KubernetesVersionEntry, MachineTypeEntry};
use crate::model::{RegionHealth, RegionView};

impl App {
    /// `region_list`: the regions, each with its agent's health and backlog.
    pub async fn region_list(&self) -> Result<Vec<RegionView>> {
        let states = self.region_queue_states().await?;
        let stale_after = self.config().outbox.region_stale_after_seconds;
        let now = chrono::Utc::now();
        Ok(self
            .config()
            .catalog
            .regions
            .iter()
            .map(|region| {
                let state = states.get(&region.name);
                let last_heartbeat_at = state.and_then(|s| s.last_heartbeat_at);
                let status = match last_heartbeat_at {
                    None => "unknown",
                    Some(at) if (now - at).num_seconds() > stale_after => "stale",
                    Some(_) => "healthy",
                };
                RegionView {
                    name: region.name.clone(),
                    display_name: region.display_name.clone(),
                    zones: region.zones.clone(),
                    health: RegionHealth {
                        status: status.to_string(),
                        last_heartbeat_at,
                        pending_commands: state.map_or(0, |s| s.pending),
                        oldest_pending_seconds: state.map_or(0.0, |s| s.oldest_age_seconds),
                    },
                }
            })
            .collect())
    }

    pub fn kubernetes_version_list(&self) -> Vec<KubernetesVersionEntry> {
        self.config().catalog.kubernetes_versions.clone()
    }

    pub fn machine_type_list(&self) -> Vec<MachineTypeEntry> {
        self.config().catalog.machine_types.clone()
    }
}
