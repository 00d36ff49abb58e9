//! The simulated region provider: zones with racks, control-plane capacity
//! in cells, clusters placed with etcd spread one member per zone, node pools
//! spread over their zones. Applying a command is idempotent and ignores
//! generations older than the one already applied.

use std::collections::BTreeMap;

use moke_proto::region::{self as pb, CommandKind};
use serde::{Deserialize, Serialize};

/// What the region has, as seen by the simulator.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RegionLayout {
    pub zones: Vec<String>,
    pub racks_per_zone: usize,
    /// Control-plane cells and how many control planes each can host.
    pub cells: Vec<Cell>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cell {
    pub name: String,
    pub capacity: usize,
}

impl RegionLayout {
    /// A default layout for a region with these zones: 4 racks each, two cells.
    pub fn for_zones(zones: Vec<String>) -> RegionLayout {
        RegionLayout {
            zones,
            racks_per_zone: 4,
            cells: vec![Cell { name: "cell-1".into(), capacity: 500 }, Cell { name: "cell-2".into(), capacity: 500 }],
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Member {
    pub name: String,
    pub zone: String,
    pub rack: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SimCluster {
    pub generation: i64,
    pub name: String,
    pub cell: String,
    pub kubernetes_version: String,
    pub etcd: Vec<Member>,
    pub api_servers: Vec<Member>,
    pub deleted: bool,
    /// The control plane's credentials: its CA (certificate only), its
    /// serving key (made here, never sent anywhere) and the certificate the
    /// gateway had signed for it.
    #[serde(default)]
    pub pki: ControlPlanePki,
    /// Where its API is served, once it has a certificate.
    #[serde(default)]
    pub endpoint: Option<String>,
}

/// A control plane's TLS material.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ControlPlanePki {
    pub ca_pem: String,
    pub serving_key_pem: String,
    pub serving_csr_pem: String,
    pub serving_certificate_pem: String,
    /// Client certificates of an older generation are refused.
    pub credentials_generation: i64,
}

impl ControlPlanePki {
    /// A fresh serving key and a request for a certificate naming the
    /// endpoint's host names and loopback address.
    fn request(ca_pem: &str, cluster_name: &str, cell: &str) -> ControlPlanePki {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("P-256 key generation");
        let host = format!("{cluster_name}.{cell}.k8s.moke.internal");
        let mut params = rcgen::CertificateParams::new(vec![host.clone(), "localhost".into()]).expect("valid names");
        params.subject_alt_names.push(rcgen::SanType::IpAddress(std::net::IpAddr::from([127, 0, 0, 1])));
        params.distinguished_name.push(rcgen::DnType::CommonName, host);
        let csr = params.serialize_request(&key).expect("CSR").pem().expect("CSR PEM");
        ControlPlanePki {
            ca_pem: ca_pem.to_string(),
            serving_key_pem: key.serialize_pem(),
            serving_csr_pem: csr,
            serving_certificate_pem: String::new(),
            credentials_generation: 0,
        }
    }

    /// True when the control plane can serve.
    pub fn ready(&self) -> bool {
        !self.ca_pem.is_empty() && !self.serving_certificate_pem.is_empty() && !self.serving_key_pem.is_empty()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SimNodePool {
    pub generation: i64,
    pub cluster_id: String,
    pub nodes: Vec<Member>,
    pub deleted: bool,
}

/// The whole simulated region; serializable so it survives agent restarts.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SimState {
    pub clusters: BTreeMap<String, SimCluster>,
    pub node_pools: BTreeMap<String, SimNodePool>,
    pub commands_applied: i64,
}

/// Status messages a command produced.
pub type Reports = Vec<pb::status::Message>;

fn progress(operation_id: &str, status: &str, step: &str, progress: i32) -> pb::status::Message {
    pb::status::Message::Progress(pb::OperationProgress {
        operation_id: operation_id.to_string(),
        status: status.to_string(),
        step: step.to_string(),
        progress,
        ..Default::default()
    })
}

fn node(m: &Member) -> pb::Node {
    pb::Node { name: m.name.clone(), zone: m.zone.clone(), rack: m.rack.clone(), ready: true }
}

/// Spreads `count` members over `zones` round-robin (skew at most 1), each in
/// a rack of its zone.
fn spread(prefix: &str, count: usize, zones: &[String], racks_per_zone: usize) -> Vec<Member> {
    if zones.is_empty() {
        return Vec::new();
    }
    (0..count)
        .map(|i| {
            let zone = &zones[i % zones.len()];
            let rack = (i / zones.len()) % racks_per_zone.max(1);
            Member { name: format!("{prefix}-{i}"), zone: zone.clone(), rack: format!("{zone}-r{rack}") }
        })
        .collect()
}

impl SimState {
    fn cell_load(&self, cell: &str) -> usize {
        self.clusters.values().filter(|c| !c.deleted && c.cell == cell).count()
    }

    /// The cell with the most room left, if any has room.
    fn place(&self, layout: &RegionLayout) -> Option<String> {
        layout
            .cells
            .iter()
            .filter(|cell| self.cell_load(&cell.name) < cell.capacity)
            .max_by_key(|cell| cell.capacity - self.cell_load(&cell.name))
            .map(|cell| cell.name.clone())
    }

    pub fn cluster_observation(&self, id: &str) -> Option<pb::Observation> {
        let cluster = self.clusters.get(id)?;
        Some(pb::Observation {
            resource_type: "cluster".into(),
            resource_id: id.to_string(),
            observed_generation: cluster.generation,
            phase: if cluster.deleted { "deleted".into() } else { "running".into() },
            conditions: vec![pb::Condition {
                r#type: "Ready".into(),
                status: if cluster.deleted { "False".into() } else { "True".into() },
                reason: "ControlPlaneRunning".into(),
                message: format!(
                    "{} API server(s) and {} etcd members in {}",
                    cluster.api_servers.len(),
                    cluster.etcd.len(),
                    cluster.cell
                ),
            }],
            gone: cluster.deleted,
            endpoint: if cluster.deleted { String::new() } else { cluster.endpoint.clone().unwrap_or_default() },
            cell: cluster.cell.clone(),
            etcd_members: cluster.etcd.iter().map(node).collect(),
            nodes: cluster.api_servers.iter().map(node).collect(),
        })
    }

    pub fn node_pool_observation(&self, id: &str) -> Option<pb::Observation> {
        let pool = self.node_pools.get(id)?;
        Some(pb::Observation {
            resource_type: "node_pool".into(),
            resource_id: id.to_string(),
            observed_generation: pool.generation,
            phase: if pool.deleted { "deleted".into() } else { "running".into() },
            conditions: vec![pb::Condition {
                r#type: "Ready".into(),
                status: if pool.deleted { "False".into() } else { "True".into() },
                reason: "NodesReady".into(),
                message: format!("{} node(s) ready", pool.nodes.len()),
            }],
            gone: pool.deleted,
            nodes: pool.nodes.iter().map(node).collect(),
            ..Default::default()
        })
    }

    /// Applies one command and says what to report. A command for a
    /// generation older than, or equal to, the applied one changes nothing
    /// and reports the current state again (its operation still finishes).
    pub fn apply(&mut self, layout: &RegionLayout, command: &pb::Command) -> Reports {
        let kind = CommandKind::try_from(command.kind).unwrap_or(CommandKind::Unspecified);
        let op = command.operation_id.as_str();
        let mut reports = vec![progress(op, "running", "accepted", 10)];
        let outcome = match kind {
            CommandKind::ClusterCreate | CommandKind::ClusterUpdate => self.apply_cluster(layout, command),
            CommandKind::ClusterDelete => {
                if let Some(cluster) =
                    self.clusters.get_mut(&command.cluster_id).filter(|c| command.generation > c.generation)
                {
                    cluster.generation = command.generation;
                    cluster.deleted = true;
                    for pool in self.node_pools.values_mut().filter(|p| p.cluster_id == command.cluster_id) {
                        pool.deleted = true;
                        pool.nodes.clear();
                    }
                }
                Ok(self.cluster_observation(&command.cluster_id))
            }
            CommandKind::ClusterCertificate => {
                // Not generation-gated: certificates and revocations follow their own generation.
                if let Some(cluster) = self.clusters.get_mut(&command.cluster_id).filter(|c| !c.deleted) {
                    if !command.ca_pem.is_empty() {
                        cluster.pki.ca_pem = command.ca_pem.clone();
                    }
                    if !command.serving_certificate_pem.is_empty() {
                        cluster.pki.serving_certificate_pem = command.serving_certificate_pem.clone();
                    }
                    cluster.pki.credentials_generation =
                        cluster.pki.credentials_generation.max(command.credentials_generation);
                }
                Ok(self.cluster_observation(&command.cluster_id))
            }
            CommandKind::NodePoolCreate | CommandKind::NodePoolUpdate => self.apply_node_pool(layout, command),
            CommandKind::NodePoolDelete => {
                if let Some(pool) =
                    self.node_pools.get_mut(&command.node_pool_id).filter(|p| command.generation > p.generation)
                {
                    pool.generation = command.generation;
                    pool.deleted = true;
                    pool.nodes.clear();
                }
                Ok(self.node_pool_observation(&command.node_pool_id))
            }
            CommandKind::Unspecified => Err(("unknown_command", format!("command kind {} is not known", command.kind))),
        };
        self.commands_applied += 1;
        match outcome {
            Ok(observation) => {
                if let Some(observation) = observation {
                    reports.push(pb::status::Message::Observation(observation));
                }
                // A control plane without a certificate asks for one (again, after a restart).
                if let Some(cluster) = self.clusters.get(&command.cluster_id).filter(|c| {
                    kind == CommandKind::ClusterCreate && !c.deleted && c.pki.serving_certificate_pem.is_empty()
                }) && !cluster.pki.serving_csr_pem.is_empty()
                {
                    reports.push(pb::status::Message::ServingCsr(pb::ServingCertificateRequest {
                        cluster_id: command.cluster_id.clone(),
                        csr_pem: cluster.pki.serving_csr_pem.clone(),
                    }));
                }
                reports.push(progress(op, "succeeded", "done", 100));
            }
            Err((code, message)) => reports.push(pb::status::Message::Progress(pb::OperationProgress {
                operation_id: op.to_string(),
                status: "failed".into(),
                step: "rejected".into(),
                progress: 100,
                error_code: code.into(),
                error_message: message,
            })),
        }
        reports
    }

    fn apply_cluster(
        &mut self,
        layout: &RegionLayout,
        command: &pb::Command,
    ) -> Result<Option<pb::Observation>, (&'static str, String)> {
        let spec = command.cluster.clone().unwrap_or_default();
        let replicas = spec.control_plane_replicas.clamp(1, 3) as usize;
        match self.clusters.get_mut(&command.cluster_id) {
            Some(existing) if command.generation <= existing.generation => {}
            Some(existing) => {
                existing.generation = command.generation;
                existing.kubernetes_version = spec.kubernetes_version;
                existing.api_servers =
                    spread(&format!("{}-apiserver", existing.name), replicas, &layout.zones, layout.racks_per_zone);
            }
            None => {
                let cell = self.place(layout).ok_or(("no_capacity", "every control-plane cell is full".to_string()))?;
                // etcd: three members, one per zone (max skew 1 with fewer zones).
                let etcd = spread(&format!("{}-etcd", command.name), 3, &layout.zones, layout.racks_per_zone);
                let api_servers =
                    spread(&format!("{}-apiserver", command.name), replicas, &layout.zones, layout.racks_per_zone);
                let pki = if command.ca_pem.is_empty() {
                    ControlPlanePki::default()
                } else {
                    ControlPlanePki::request(&command.ca_pem, &command.name, &cell)
                };
                self.clusters.insert(
                    command.cluster_id.clone(),
                    SimCluster {
                        generation: command.generation,
                        name: command.name.clone(),
                        cell,
                        kubernetes_version: spec.kubernetes_version,
                        etcd,
                        api_servers,
                        deleted: false,
                        pki,
                        endpoint: None,
                    },
                );
            }
        }
        Ok(self.cluster_observation(&command.cluster_id))
    }

    fn apply_node_pool(
        &mut self,
        layout: &RegionLayout,
        command: &pb::Command,
    ) -> Result<Option<pb::Observation>, (&'static str, String)> {
        let spec = command.node_pool.clone().unwrap_or_default();
        if self.clusters.get(&command.cluster_id).is_none_or(|c| c.deleted) {
            return Err(("cluster_missing", format!("cluster {} does not exist in this region", command.cluster_id)));
        }
        let zones = if spec.zones.is_empty() { layout.zones.clone() } else { spec.zones.clone() };
        let stale = self.node_pools.get(&command.node_pool_id).is_some_and(|p| command.generation <= p.generation);
        if !stale {
            let count = spec.count.max(0) as usize;
            let nodes = spread(&format!("{}-node", command.name), count, &zones, layout.racks_per_zone);
            self.node_pools.insert(
                command.node_pool_id.clone(),
                SimNodePool {
                    generation: command.generation,
                    cluster_id: command.cluster_id.clone(),
                    nodes,
                    deleted: false,
                },
            );
        }
        Ok(self.node_pool_observation(&command.node_pool_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> RegionLayout {
        RegionLayout::for_zones(vec!["z-a".into(), "z-b".into(), "z-c".into()])
    }

    fn create(id: &str, generation: i64) -> pb::Command {
        pb::Command {
            id: 1,
            kind: CommandKind::ClusterCreate as i32,
            operation_id: "op".into(),
            cluster_id: id.into(),
            name: "prod".into(),
            generation,
            cluster: Some(pb::ClusterSpec { control_plane_replicas: 3, ..Default::default() }),
            ..Default::default()
        }
    }

    #[test]
    fn etcd_is_spread_one_member_per_zone() {
        let mut state = SimState::default();
        state.apply(&layout(), &create("cl_1", 1));
        let cluster = &state.clusters["cl_1"];
        let mut zones: Vec<&str> = cluster.etcd.iter().map(|m| m.zone.as_str()).collect();
        zones.sort();
        assert_eq!(zones, ["z-a", "z-b", "z-c"]);
        assert_eq!(cluster.api_servers.len(), 3);
    }

    #[test]
    fn spread_keeps_zone_skew_at_most_one() {
        let zones: Vec<String> = vec!["a".into(), "b".into()];
        for count in 0..20 {
            let members = spread("n", count, &zones, 4);
            let a = members.iter().filter(|m| m.zone == "a").count();
            let b = members.len() - a;
            assert!(a.abs_diff(b) <= 1, "{count}: {a} vs {b}");
        }
    }

    #[test]
    fn no_zones_places_nothing_instead_of_panicking() {
        assert!(spread("n", 3, &[], 4).is_empty());
    }

    #[test]
    fn duplicates_and_stale_generations_change_nothing() {
        let mut state = SimState::default();
        state.apply(&layout(), &create("cl_1", 2));
        let before = state.clusters.clone();
        state.apply(&layout(), &create("cl_1", 2));
        state.apply(&layout(), &create("cl_1", 1));
        assert_eq!(state.clusters, before);
    }

    #[test]
    fn full_cells_refuse_new_control_planes() {
        let mut small = layout();
        small.cells = vec![Cell { name: "only".into(), capacity: 1 }];
        let mut state = SimState::default();
        state.apply(&small, &create("cl_1", 1));
        let reports = state.apply(&small, &create("cl_2", 1));
        let failed = reports.iter().any(
            |r| matches!(r, pb::status::Message::Progress(p) if p.status == "failed" && p.error_code == "no_capacity"),
        );
        assert!(failed);
    }
}
