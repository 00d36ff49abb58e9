//! Read-only catalogs from configuration: regions, Kubernetes versions,
//! machine types. Public: they describe the product, not any tenant.

use super::App;
use crate::config::{KubernetesVersionEntry, MachineTypeEntry, RegionEntry};

impl App {
    /// `region_list`.
    pub fn region_list(&self) -> Vec<RegionEntry> {
        self.config().catalog.regions.clone()
    }

    /// `kubernetes_version_list`.
    pub fn kubernetes_version_list(&self) -> Vec<KubernetesVersionEntry> {
        self.config().catalog.kubernetes_versions.clone()
    }

    /// `machine_type_list`.
    pub fn machine_type_list(&self) -> Vec<MachineTypeEntry> {
        self.config().catalog.machine_types.clone()
    }
}
