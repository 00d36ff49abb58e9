//! The simulated region provider: zones with racks, control-plane capacity
//! in cells, clusters placed with etcd spread one member per zone, node pools
//! spread over their zones, workloads scheduled onto node-pool nodes.
//! Applying a command is idempotent and ignores generations older than the
//! one already applied. What takes time in a real region (rollouts,
//! node-pool upgrades, blue-green control-plane upgrades, repairing failed
//! nodes, etcd snapshots) advances in [`SimState::tick`]; operations waiting
//! on it finish when it converges.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use crate::scheduler::{Bound, PodRequest, SchedNode, Scheduler, fits_empty};
use crate::workloads::{NodeState, SimWorkload};

use moke_proto::region::{self as pb, CommandKind};
use serde::{Deserialize, Serialize};

/// What the region has, as seen by the simulator.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RegionLayout {
    pub zones: Vec<String>,
    pub racks_per_zone: usize,
    /// Control-plane cells and how many control planes each can host.
    pub cells: Vec<Cell>,
    /// How often each cluster's etcd is snapshotted, and how many are kept.
    #[serde(default)]
    pub etcd_snapshot_every_seconds: i64,
    /// How often usage (cluster and node time) is reported for billing.
    #[serde(default)]
    pub usage_sample_every_seconds: i64,
    #[serde(default)]
    pub etcd_snapshots_kept: usize,
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
            etcd_snapshot_every_seconds: 3600,
            etcd_snapshots_kept: 24,
            usage_sample_every_seconds: 60,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Member {
    pub name: String,
    pub zone: String,
    pub rack: String,
    /// Node-pool nodes: the pool template they were built from.
    #[serde(default)]
    pub template: i64,
    /// Node-pool nodes: the Kubernetes version their kubelet runs (empty
    /// for nodes of a state saved before nodes had one: the cluster's).
    #[serde(default)]
    pub version: String,
    /// Node-pool nodes: the machine type they run on (empty for nodes of
    /// a state saved before nodes had one: the pool's).
    #[serde(default)]
    pub machine_type: String,
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
    /// A blue-green control-plane upgrade in progress.
    #[serde(default)]
    pub upgrade: Option<ControlPlaneUpgrade>,
    #[serde(default)]
    pub snapshots: Vec<EtcdSnapshot>,
    /// The cluster's snapshot policy (0: the region's layout decides).
    #[serde(default)]
    pub snapshot_every_seconds: i64,
    #[serde(default)]
    pub snapshots_kept: i64,
    /// The networks allowed to reach the API endpoint (empty: any).
    #[serde(default)]
    pub allowed_addresses: Vec<String>,
    /// An etcd restore in progress.
    #[serde(default)]
    pub restore: Option<EtcdRestore>,
    /// The snapshot etcd was last restored from, and when.
    #[serde(default)]
    pub restored_from: Option<(String, DateTime<Utc>)>,
    /// The latest snapshot and restore operations applied, so a command
    /// delivered twice acts once.
    #[serde(default)]
    pub etcd_operations: Vec<String>,
    /// Operations that finish when the control plane has converged.
    #[serde(default)]
    pub waiting_operations: Vec<String>,
    /// The leader of each leader-elected component (`kube-controller-manager`,
    /// `kube-scheduler`): one instance acts, the others stand by.
    #[serde(default)]
    pub leaders: BTreeMap<String, Leader>,
    /// The kubectl-made namespaces as last reported, so a change to them
    /// is reported at the next tick.
    #[serde(default)]
    pub reported_namespaces: Vec<String>,
    /// The ids of the latest namespaces Moke deleted here, so a make of
    /// one delivered again after its delete makes nothing.
    #[serde(default)]
    pub deleted_namespaces: Vec<String>,
    /// Per `namespace/name`, the rank of the latest change of one of Moke's
    /// Services there that took effect (see [`service_rank`]): one delivered
    /// later with a lower rank is older and changes nothing.
    #[serde(default)]
    pub service_ranks: BTreeMap<String, i64>,
    /// Applies of Moke's Services waiting for a Service made with kubectl to
    /// let go of their name or node port (or for their namespace); their
    /// Operations run until then.
    #[serde(default)]
    pub blocked_services: Vec<BlockedService>,
    /// The cluster API's revision when the blocked applies were last tried:
    /// no Service or Namespace changed since, nothing to try (`u64::MAX`:
    /// try at the next tick).
    #[serde(default)]
    pub blocked_tried_at: u64,
}

/// An apply of one of Moke's Services that a Service made with kubectl holds up.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BlockedService {
    pub operation: String,
    pub service_id: String,
    pub service: pb::ServiceSpec,
    #[serde(default)]
    pub rank: i64,
    /// Why it waits, as its Operation's step says.
    pub reason: String,
}

/// The most names a cluster keeps the rank of (the oldest go first); only
/// a command held up for thousands of other service changes of the
/// cluster could then act out of order.
const SERVICE_RANKS_KEPT: usize = 4096;
/// The most applies a cluster holds waiting; past them, one held up fails.
const BLOCKED_SERVICES_KEPT: usize = 100;

/// Whether `name` is a namespace Moke's objects may be in: a valid name,
/// not one of the cluster's own `kube-*`.
fn customers_namespace(name: &str) -> bool {
    crate::kube::valid_label(name) && !name.starts_with("kube-")
}

/// Where a service command stands among the changes of its name: its
/// outbox sequence number. The gateway writes every service change of a
/// cluster with the cluster locked, so within a cluster the numbers follow
/// the order the changes were made in, whichever gateway made them.
fn service_rank(command: &pb::Command) -> i64 {
    command.id
}

/// Records `rank` as the latest change of `name` to take effect; the
/// blocked applies it may overtake are tried at the next tick.
fn record_service_rank(cluster: &mut SimCluster, name: String, rank: i64) {
    cluster.blocked_tried_at = u64::MAX;
    cluster.service_ranks.insert(name, rank);
    if cluster.service_ranks.len() > SERVICE_RANKS_KEPT
        && let Some(oldest) = cluster.service_ranks.iter().min_by_key(|(_, rank)| **rank).map(|(name, _)| name.clone())
    {
        cluster.service_ranks.remove(&oldest);
    }
}

/// Who holds a component's leader lease: an API server member's instance.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Leader {
    pub holder: String,
    pub acquired_at: String,
    /// How many times the lease changed hands.
    pub transitions: i64,
}

/// The control-plane components that elect a leader among their instances.
pub const LEADER_ELECTED: &[&str] = &["kube-controller-manager", "kube-scheduler"];

/// A blue-green upgrade: the green API servers run the new version beside
/// the blue ones; traffic moves once they are ready; then blue goes, and
/// every node pool of the cluster is replaced onto the new version.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ControlPlaneUpgrade {
    pub to_version: String,
    pub green: Vec<Member>,
    /// The tick the green servers started.
    pub started_at: u64,
    /// Traffic has moved to the green servers (the blue ones still run).
    #[serde(default)]
    pub switched: bool,
    /// The operation that asked for it: it waits for the node pools too.
    #[serde(default)]
    pub operation_id: String,
}

/// One etcd snapshot.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EtcdSnapshot {
    pub name: String,
    pub taken_at: DateTime<Utc>,
    /// The cluster generation it captured.
    pub generation: i64,
    #[serde(default)]
    pub size_bytes: i64,
    #[serde(default)]
    pub kubernetes_version: String,
    /// Taken on request rather than on schedule.
    #[serde(default)]
    pub on_demand: bool,
}

/// A restore of etcd from a snapshot, after seed 001's quorum-loss
/// recovery: API servers stopped, a single member restored, etcd scaled
/// back to three, API servers started; one stage a tick.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EtcdRestore {
    pub snapshot: String,
    pub operation_id: String,
    /// The tick it started.
    pub started_at: u64,
    /// 0 API servers stopped, 1 one member restored, 2 etcd back to three.
    pub stage: u8,
}

/// How many snapshot and restore operations a cluster remembers.
const ETCD_OPERATIONS_KEPT: usize = 32;

/// The most kubectl-made Deployments one cluster's report lists, and the
/// longest image reference it carries: a report stays well under the
/// queue's 1 MiB message (300 × (253 + 63 + 256 bytes) at most).
pub const MAX_UNMANAGED_REPORTED: usize = 300;
const MAX_REPORTED_IMAGE: usize = 256;

/// A snapshot of `cluster`'s etcd taken `now`, named uniquely in the
/// cluster, its size from the objects it holds (nodes, workloads, pods).
fn etcd_snapshot(
    cluster: &SimCluster,
    pools: &BTreeMap<String, SimNodePool>,
    workloads: &BTreeMap<String, SimWorkload>,
    cluster_id: &str,
    now: DateTime<Utc>,
    on_demand: bool,
) -> EtcdSnapshot {
    let base = format!("{}-etcd-{}", cluster.name, now.format("%Y%m%dt%H%M%Sz"));
    let taken = |name: &str| cluster.snapshots.iter().any(|s| s.name == name);
    let name = if taken(&base) {
        (1..).map(|n| format!("{base}-{n}")).find(|name| !taken(name)).expect("a free name")
    } else {
        base
    };
    let nodes: usize = pools.values().filter(|p| p.cluster_id == cluster_id && !p.deleted).map(|p| p.nodes.len()).sum();
    let (apps, pods) = workloads
        .values()
        .filter(|w| w.cluster_id == cluster_id && !w.deleted)
        .fold((0, 0), |(apps, pods), w| (apps + 1, pods + w.pods.len()));
    EtcdSnapshot {
        name,
        taken_at: now,
        generation: cluster.generation,
        size_bytes: 2 * 1024 * 1024 + 64 * 1024 * nodes as i64 + 8 * 1024 * apps + 16 * 1024 * pods as i64,
        kubernetes_version: cluster.kubernetes_version.clone(),
        on_demand,
    }
}

/// Remembers an applied operation, forgetting the oldest beyond the bound.
/// Whether Kubernetes version `a` (`major.minor`) is older than `b`; text
/// that is no version compares as neither.
fn older_version(a: &str, b: &str) -> bool {
    let parse = |v: &str| -> Option<(u32, u32)> {
        let (major, minor) = v.split_once('.')?;
        Some((major.parse().ok()?, minor.split('.').next()?.parse().ok()?))
    };
    matches!((parse(a), parse(b)), (Some(a), Some(b)) if a < b)
}

fn remember(operations: &mut Vec<String>, operation: &str) {
    operations.push(operation.to_string());
    let excess = operations.len().saturating_sub(ETCD_OPERATIONS_KEPT);
    operations.drain(..excess);
}

/// Keeps the newest snapshots the cluster's policy (or the region's) allows.
fn prune_snapshots(cluster: &mut SimCluster, layout: &RegionLayout) {
    let kept = if cluster.snapshots_kept > 0 { cluster.snapshots_kept as usize } else { layout.etcd_snapshots_kept };
    let excess = cluster.snapshots.len().saturating_sub(kept.max(1));
    cluster.snapshots.drain(..excess);
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
    /// Per principal (certificate CN): certificates of an older credential epoch are refused.
    #[serde(default)]
    pub principal_epochs: std::collections::BTreeMap<String, i64>,
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
            principal_epochs: Default::default(),
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
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub spec: pb::NodePoolSpec,
    /// Bumped when the machine type, labels, taints or Kubernetes version
    /// change: nodes of an older template are replaced one at a time
    /// (surge one, cordon, drain).
    #[serde(default)]
    pub template: i64,
    /// The Kubernetes version new nodes run: the cluster's, once its
    /// control plane runs it (nodes are never newer than their API servers).
    #[serde(default)]
    pub version: String,
    /// The nodes being drained (cordoned: no new pods, their pods replaced
    /// elsewhere) before they go, each with the tick its drain began (up to
    /// the pool's `max_unavailable` plus what its surge nodes make up for).
    #[serde(default, deserialize_with = "drains")]
    pub draining: BTreeMap<String, u64>,
    /// The tick the previous release's one drain began, read to date it.
    #[serde(default, rename = "draining_since", skip_serializing)]
    pub legacy_draining_since: u64,
    #[serde(default)]
    pub next_node: usize,
    #[serde(default)]
    pub waiting_operations: Vec<String>,
    /// Nodes asked to be replaced (recycled), until they are gone.
    #[serde(default)]
    pub recycling: Vec<String>,
    /// Nodes asked to be removed with no replacement, until they are gone.
    #[serde(default)]
    pub removing: Vec<String>,
    /// The autoscaler's last decision (reported as the `Autoscaled`
    /// condition) and the tick it was taken.
    #[serde(default)]
    pub autoscaled: String,
    #[serde(default)]
    pub autoscaled_at: u64,
    /// Since which tick each node has run no pod (the autoscaler drains
    /// one idle for long enough).
    #[serde(default)]
    pub idle_since: BTreeMap<String, u64>,
}

/// Ticks a drain may take before the node goes regardless of its pods.
const DRAIN_TIMEOUT_TICKS: u64 = 30;

/// Ticks between two decisions of the autoscaler on one pool (a new node
/// gets time to take the pending pods).
const AUTOSCALE_EVERY_TICKS: u64 = 3;
/// Ticks a node runs no pod before the autoscaler drains it.
const AUTOSCALE_IDLE_TICKS: u64 = 10;

/// A drain read from the previous release's state, until dated by its
/// `draining_since`.
const LEGACY_DRAIN: u64 = u64::MAX;

/// Reads `draining` as written now (node → tick) or by the release before
/// (one node or none, its tick in a field of its own, `draining_since`).
fn drains<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<String, u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Drains {
        Now(BTreeMap<String, u64>),
        Before(Option<String>),
    }
    Ok(match Drains::deserialize(deserializer)? {
        Drains::Now(map) => map,
        Drains::Before(node) => node.into_iter().map(|n| (n, LEGACY_DRAIN)).collect(),
    })
}

/// Allocatable capacity of a node whose pool spec predates capacities.
const DEFAULT_NODE_CPU_MILLIS: i64 = 8_000;
const DEFAULT_NODE_MEMORY_MIB: i64 = 32_768;

impl SimNodePool {
    /// True when every node is of the current template and there are as
    /// many as asked for.
    fn converged(&self) -> bool {
        self.draining.is_empty()
            && self.nodes.len() == self.spec.count.max(0) as usize
            && self.nodes.iter().all(|n| n.template == self.template)
    }

    fn zones(&self, layout: &RegionLayout) -> Vec<String> {
        if self.spec.zones.is_empty() { layout.zones.clone() } else { self.spec.zones.clone() }
    }

    /// Adds a node of the current template in `zone`, or in the zone with
    /// the fewest nodes.
    fn add_node(&mut self, layout: &RegionLayout, zone: Option<String>) {
        let zones = self.zones(layout);
        let Some(zone) =
            zone.or_else(|| zones.iter().min_by_key(|z| self.nodes.iter().filter(|n| &n.zone == *z).count()).cloned())
        else {
            return;
        };
        let rack = self.next_node / zones.len().max(1) % layout.racks_per_zone.max(1);
        self.nodes.push(Member {
            name: format!("{}-node-{}", self.name, self.next_node),
            zone: zone.clone(),
            rack: format!("{zone}-r{rack}"),
            template: self.template,
            version: self.version.clone(),
            machine_type: self.spec.machine_type.clone(),
        });
        self.next_node += 1;
    }

    /// `(max_surge, max_unavailable)`: both 0 (a gateway of the release
    /// before, or the default) is one surge node at a time.
    fn upgrade_policy(&self) -> (usize, usize) {
        match (self.spec.max_surge.clamp(0, 10) as usize, self.spec.max_unavailable.clamp(0, 10) as usize) {
            (0, 0) => (1, 0),
            policy => policy,
        }
    }

    /// One tick of replacing nodes of an older template: drains start
    /// while at least `count - max_unavailable` nodes stay schedulable (a
    /// surge node added the tick before makes up for one), then surge nodes
    /// of the current template come while the pool holds at most `count +
    /// max_surge`. Nodes removed for good go first: they need no surge node.
    fn replace_old_nodes(
        &mut self,
        layout: &RegionLayout,
        tick: u64,
        down: &dyn Fn(&Member) -> bool,
        reports: &mut Vec<pb::status::Message>,
    ) {
        let mut old: Vec<Member> = self
            .nodes
            .iter()
            .filter(|n| n.template < self.template && !self.draining.contains_key(&n.name))
            .cloned()
            .collect();
        old.sort_by_key(|n| !self.removing.contains(&n.name));
        let count = self.spec.count.max(0) as usize;
        let (surge, unavailable) = self.upgrade_policy();
        for node in &old {
            // Ready nodes not being drained.
            let schedulable = self.nodes.iter().filter(|n| !self.draining.contains_key(&n.name) && !down(n)).count();
            if schedulable <= count.saturating_sub(unavailable) {
                break;
            }
            self.draining.insert(node.name.clone(), tick);
            if self.recycling.contains(&node.name) || self.removing.contains(&node.name) {
                let step = format!("node pool {}: node {} cordoned, draining", self.name, node.name);
                for operation in &self.waiting_operations {
                    reports.push(progress(operation, "running", &step, 40));
                }
            }
        }
        // Replacements still to come (or nodes drained or lost on the way): the
        // count, less the nodes of the current template there are.
        let current = self.nodes.iter().filter(|n| n.template == self.template).count();
        let mut wanted = count.saturating_sub(current);
        // Each in the zone of a node it replaces.
        let zones: Vec<String> =
            old.iter().filter(|n| !self.removing.contains(&n.name) && !down(n)).map(|n| n.zone.clone()).collect();
        let mut zones = zones.into_iter();
        while wanted > 0 && self.nodes.len() < count + surge {
            let before = self.nodes.len();
            self.add_node(layout, zones.next());
            if self.nodes.len() == before {
                break;
            }
            wanted -= 1;
        }
    }

    /// How far replacing the pool's nodes onto its current template has come.
    fn replacement_step(&self) -> (String, i32) {
        let count = self.spec.count.max(1) as usize;
        let current = self.nodes.iter().filter(|n| n.template == self.template).count().min(count);
        let version = if self.version.is_empty() { "as before" } else { &self.version };
        let step = format!("node pool {}: {current} of {count} node(s) replaced onto Kubernetes {version}", self.name);
        (step, 40 + (55 * current / count) as i32)
    }

    /// Removes nodes from the most crowded zones until `count` remain,
    /// besides those being removed by name (which are drained first).
    fn shrink_to(&mut self, count: usize) {
        let kept = |pool: &SimNodePool| pool.nodes.iter().filter(|n| !pool.removing.contains(&n.name)).count();
        while kept(self) > count {
            let mut per_zone: BTreeMap<&str, usize> = BTreeMap::new();
            for node in self.nodes.iter().filter(|n| !self.removing.contains(&n.name)) {
                *per_zone.entry(node.zone.as_str()).or_default() += 1;
            }
            let crowded = per_zone.into_iter().max_by_key(|(_, n)| *n).map(|(z, _)| z.to_string()).unwrap_or_default();
            let Some(last) = self.nodes.iter().rposition(|n| n.zone == crowded && !self.removing.contains(&n.name))
            else {
                return;
            };
            self.nodes.remove(last);
        }
    }

    /// Marks the named nodes of the pool for replacement (`replace`) or for
    /// removal with none: both are nodes of an older template from now on,
    /// which the ticks replace or drain one at a time. Names the pool does
    /// not hold are ignored (already gone). True when any was marked.
    fn mark_nodes(&mut self, replace: &[String], remove: &[String]) -> bool {
        let old = self.template - 1;
        let mut marked = false;
        for (names, list) in [(replace, &mut self.recycling), (remove, &mut self.removing)] {
            for name in names {
                if let Some(node) = self.nodes.iter_mut().find(|n| &n.name == name) {
                    node.template = node.template.min(old);
                    if !list.contains(name) {
                        list.push(name.clone());
                    }
                    marked = true;
                }
            }
        }
        marked
    }

    /// What the pool's waiting operations are told once `gone` has left it.
    fn removal_step(&mut self, gone: &str) -> (String, i32) {
        let done = |list: &mut Vec<String>| {
            let had = list.iter().any(|n| n == gone);
            list.retain(|n| n != gone);
            had
        };
        let (recycled, removed) = (done(&mut self.recycling), done(&mut self.removing));
        let left = self.recycling.len() + self.removing.len();
        let percent = if left == 0 { 95 } else { 40 + (55 / (left as i32 + 1)) };
        if recycled {
            (format!("node pool {}: node {gone} cordoned, drained and replaced", self.name), percent)
        } else if removed {
            (format!("node pool {}: node {gone} cordoned, drained and removed", self.name), percent)
        } else {
            self.replacement_step()
        }
    }
}

/// Faults injected for tests and demos.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Faults {
    pub failed_nodes: BTreeSet<String>,
    pub failed_zones: BTreeSet<String>,
    /// Set when a fault came or went: the next tick reports every node pool.
    #[serde(default)]
    pub changed: bool,
}

/// The whole simulated region; serializable so it survives agent restarts.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SimState {
    /// The region's name (the agent's), as nodes' `topology.kubernetes.io/region` label says it.
    #[serde(default)]
    pub region: String,
    pub clusters: BTreeMap<String, SimCluster>,
    pub node_pools: BTreeMap<String, SimNodePool>,
    #[serde(default)]
    pub workloads: BTreeMap<String, SimWorkload>,
    pub commands_applied: i64,
    #[serde(default)]
    pub faults: Faults,
    /// Simulated time, in ticks.
    #[serde(default)]
    pub tick: u64,
    /// The start of the usage period not yet reported.
    #[serde(default)]
    pub usage_since: Option<DateTime<Utc>>,
    /// Each cluster's Kubernetes API objects, by cluster id (a cluster's
    /// appear when its API is first used).
    #[serde(default)]
    pub kube: BTreeMap<String, crate::kube::KubeStore>,
    /// The shape the saved state is in (see [`SimState::loaded`]); 0 for
    /// states saved before it was recorded.
    #[serde(default)]
    pub shape: u32,
}

/// The shape [`SimState::loaded`] brings a state to.
const CURRENT_SHAPE: u32 = 1;

impl SimState {
    /// Readies a state as loaded (or new) for this agent:
    /// - a state saved by an older agent is brought to the current shape:
    ///   (1) Services made with kubectl before the service range was split
    ///   between Moke and the clusters leave what Moke hands out;
    /// - every waiting apply of Moke's Services is tried at the first tick,
    ///   since what changed in its cluster since it was last tried is not saved.
    pub fn loaded(&mut self) {
        if self.shape < 1 {
            for (cluster_id, store) in &mut self.kube {
                let moved = crate::kube::move_out_of_mokes_ranges(store);
                if moved > 0 {
                    tracing::info!(cluster_id, moved, "moved Services made with kubectl out of what Moke hands out");
                }
            }
        }
        // A state saved by a newer agent keeps its shape.
        self.shape = self.shape.max(CURRENT_SHAPE);
        for cluster in self.clusters.values_mut().filter(|c| !c.blocked_services.is_empty()) {
            cluster.blocked_tried_at = u64::MAX;
        }
    }
}

/// Status messages a command produced.
pub type Reports = Vec<pb::status::Message>;

/// What applying one command came to: the observation to report, or why
/// it was refused (a code and a message).
type CommandOutcome = Result<Option<pb::Observation>, (&'static str, String)>;

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
    pb::Node {
        name: m.name.clone(),
        zone: m.zone.clone(),
        rack: m.rack.clone(),
        ready: true,
        unschedulable: false,
        kubelet_version: m.version.clone(),
    }
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
            Member {
                name: format!("{prefix}-{i}"),
                zone: zone.clone(),
                rack: format!("{zone}-r{rack}"),
                template: 0,
                version: String::new(),
                machine_type: String::new(),
            }
        })
        .collect()
}

impl SimState {
    /// Whether a control-plane member runs (its zone is up).
    pub fn member_up(&self, member: &Member) -> bool {
        !self.faults.failed_zones.contains(&member.zone)
    }

    /// Leader election: a component's leader keeps its lease while its
    /// instance runs; once it stops (its zone fails, or an upgrade retires
    /// it), the first instance still running takes the lease over.
    fn elect_leaders(&mut self, now: DateTime<Utc>) {
        let failed = self.faults.failed_zones.clone();
        for cluster in self.clusters.values_mut().filter(|c| !c.deleted) {
            let running: Vec<String> =
                cluster.api_servers.iter().filter(|m| !failed.contains(&m.zone)).map(|m| m.name.clone()).collect();
            for component in LEADER_ELECTED {
                let leader = cluster.leaders.entry((*component).to_string()).or_default();
                if running.contains(&leader.holder) {
                    continue;
                }
                let Some(next) = running.first() else { continue };
                if !leader.holder.is_empty() {
                    leader.transitions += 1;
                }
                leader.holder = next.clone();
                leader.acquired_at = now.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
            }
        }
    }

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

    /// True when the node runs: neither it nor its zone has failed.
    pub fn node_ready(&self, node: &Member) -> bool {
        !self.faults.failed_nodes.contains(&node.name) && !self.faults.failed_zones.contains(&node.zone)
    }

    fn pool_node(&self, pool: &SimNodePool, member: &Member) -> pb::Node {
        pb::Node {
            ready: self.node_ready(member),
            unschedulable: pool.draining.contains_key(&member.name),
            kubelet_version: self.node_version(pool, member),
            ..node(member)
        }
    }

    /// The Kubernetes version a node's kubelet runs (a node saved before
    /// nodes had one runs its cluster's).
    pub fn node_version(&self, pool: &SimNodePool, member: &Member) -> String {
        if member.version.is_empty() {
            self.clusters.get(&pool.cluster_id).map(|c| c.kubernetes_version.clone()).unwrap_or_default()
        } else {
            member.version.clone()
        }
    }

    /// What an operation still waiting is at: a control-plane upgrade's
    /// phase or a node pool's replacement, and how far along (percent).
    fn waiting_step(&self, operation_id: &str) -> (String, i32) {
        let blocked = self.clusters.values().flat_map(|c| &c.blocked_services).find(|b| b.operation == operation_id);
        if let Some(blocked) = blocked {
            return (format!("waiting: {}", blocked.reason), 50);
        }
        for cluster in self.clusters.values().filter(|c| c.waiting_operations.iter().any(|o| o == operation_id)) {
            if let Some(upgrade) = &cluster.upgrade {
                let step = if upgrade.switched {
                    format!("control plane: traffic switched to the API servers on {}", upgrade.to_version)
                } else {
                    format!(
                        "control plane: starting {} API server(s) on {} beside those on {}",
                        upgrade.green.len(),
                        upgrade.to_version,
                        cluster.kubernetes_version
                    )
                };
                return (step, if upgrade.switched { 25 } else { 10 });
            }
            if let Some(restore) = &cluster.restore {
                let step = match restore.stage {
                    0 => format!("control plane: API servers stopped to restore etcd from {}", restore.snapshot),
                    1 => format!("etcd: a single member restored from snapshot {}", restore.snapshot),
                    _ => "etcd: scaled back to 3 members, one per zone".to_string(),
                };
                return (step, 20 + 20 * i32::from(restore.stage));
            }
            if !cluster.pki.ca_pem.is_empty() && !cluster.pki.ready() {
                return ("control plane: waiting for its serving certificate".to_string(), 50);
            }
        }
        let waiting = self.node_pools.values().find(|p| p.waiting_operations.iter().any(|o| o == operation_id));
        match waiting {
            None => ("converging".to_string(), 50),
            Some(pool) if !pool.removing.is_empty() => {
                (format!("node pool {}: removing node(s) {}", pool.name, pool.removing.join(", ")), 20)
            }
            Some(pool) if !pool.recycling.is_empty() => {
                (format!("node pool {}: replacing node(s) {}", pool.name, pool.recycling.join(", ")), 20)
            }
            Some(pool) => pool.replacement_step(),
        }
    }

    pub fn cluster_observation(&self, id: &str) -> Option<pb::Observation> {
        let cluster = self.clusters.get(id)?;
        let mut conditions = vec![pb::Condition {
            r#type: "Ready".into(),
            status: if cluster.deleted { "False".into() } else { "True".into() },
            reason: "ControlPlaneRunning".into(),
            message: format!(
                "{} API server(s) on Kubernetes {} and {} etcd members in {}",
                cluster.api_servers.len(),
                cluster.kubernetes_version,
                cluster.etcd.len(),
                cluster.cell
            ),
        }];
        if let Some(upgrade) = &cluster.upgrade {
            conditions.push(pb::Condition {
                r#type: "Upgrading".into(),
                status: "True".into(),
                reason: "BlueGreen".into(),
                message: format!(
                    "{} green API server(s) on {} beside the blue ones on {}",
                    upgrade.green.len(),
                    upgrade.to_version,
                    cluster.kubernetes_version
                ),
            });
        }
        if let Some((snapshot, at)) = &cluster.restored_from {
            conditions.push(pb::Condition {
                r#type: "Restored".into(),
                status: "True".into(),
                reason: "SnapshotRestored".into(),
                message: format!("etcd restored from {snapshot} at {}", at.to_rfc3339()),
            });
        }
        if let Some(last) = cluster.snapshots.last() {
            conditions.push(pb::Condition {
                r#type: "EtcdBackedUp".into(),
                status: "True".into(),
                reason: "ScheduledSnapshot".into(),
                message: format!(
                    "{} taken at {} ({} kept)",
                    last.name,
                    last.taken_at.to_rfc3339(),
                    cluster.snapshots.len()
                ),
            });
        }
        Some(pb::Observation {
            resource_type: "cluster".into(),
            resource_id: id.to_string(),
            observed_generation: cluster.generation,
            phase: if cluster.deleted {
                "deleted".into()
            } else if cluster.restore.is_some() {
                "restoring".into()
            } else if cluster.upgrade.is_some() {
                "upgrading".into()
            } else {
                "running".into()
            },
            conditions,
            gone: cluster.deleted,
            endpoint: if cluster.deleted { String::new() } else { cluster.endpoint.clone().unwrap_or_default() },
            cell: cluster.cell.clone(),
            etcd_members: cluster.etcd.iter().map(node).collect(),
            nodes: cluster.api_servers.iter().map(node).collect(),
            snapshots: cluster
                .snapshots
                .iter()
                .map(|s| pb::EtcdSnapshot {
                    name: s.name.clone(),
                    taken_at_unix_micros: s.taken_at.timestamp_micros(),
                    size_bytes: s.size_bytes,
                    kubernetes_version: s.kubernetes_version.clone(),
                    on_demand: s.on_demand,
                })
                .collect(),
            unmanaged_workloads: if cluster.deleted { Vec::new() } else { self.unmanaged_workloads(id) },
            namespaces: if cluster.deleted { Vec::new() } else { self.kubectl_namespaces(id) },
            namespaces_reported: true,
            ..Default::default()
        })
    }

    /// The namespaces made with kubectl in a cluster, as its report lists
    /// them: by name, at most [`MAX_UNMANAGED_REPORTED`].
    fn kubectl_namespaces(&self, cluster_id: &str) -> Vec<String> {
        let store = self.kube.get(cluster_id);
        store.map(|s| crate::kube::kubectl_namespaces(s, MAX_UNMANAGED_REPORTED)).unwrap_or_default()
    }

    /// The Deployments made with kubectl in a cluster, as its report lists
    /// them: by namespace and name, at most [`MAX_UNMANAGED_REPORTED`].
    fn unmanaged_workloads(&self, cluster_id: &str) -> Vec<pb::UnmanagedWorkload> {
        let store = self.kube.get(cluster_id);
        self.workloads
            .iter()
            .filter(|(id, w)| w.cluster_id == cluster_id && !w.deleted && crate::kube::is_kubectl_workload(id))
            .take(MAX_UNMANAGED_REPORTED)
            .map(|(_, workload)| {
                let status = workload.status();
                let object = store.and_then(|s| s.get(&crate::kube::deployment_key(&workload.spec)));
                // The client's text: printable characters only, and short.
                let image: String = workload
                    .spec
                    .image
                    .chars()
                    .filter(|c| !c.is_control())
                    .scan(0, |bytes, c| {
                        *bytes += c.len_utf8();
                        (*bytes <= MAX_REPORTED_IMAGE).then_some(c)
                    })
                    .collect();
                pb::UnmanagedWorkload {
                    namespace: workload.spec.namespace.clone(),
                    name: workload.spec.name.clone(),
                    image,
                    replicas: workload.spec.replicas,
                    current_replicas: status.replicas,
                    ready_replicas: status.ready_replicas,
                    updated_replicas: status.updated_replicas,
                    phase: if workload.rolled_out() { "running".into() } else { "progressing".into() },
                    created_at: object
                        .and_then(|o| o["metadata"]["creationTimestamp"].as_str())
                        .unwrap_or_default()
                        .to_string(),
                }
            })
            .collect()
    }

    pub fn node_pool_observation(&self, id: &str) -> Option<pb::Observation> {
        let pool = self.node_pools.get(id)?;
        let ready = pool.nodes.iter().filter(|n| self.node_ready(n)).count();
        let phase = if pool.deleted {
            "deleted"
        } else if !pool.converged() {
            "updating"
        } else if ready < pool.nodes.len() {
            "degraded"
        } else {
            "running"
        };
        Some(pb::Observation {
            resource_type: "node_pool".into(),
            resource_id: id.to_string(),
            observed_generation: pool.generation,
            phase: phase.into(),
            conditions: std::iter::once(pb::Condition {
                r#type: "Ready".into(),
                status: if pool.deleted || ready < pool.nodes.len() { "False".into() } else { "True".into() },
                reason: if ready < pool.nodes.len() { "NodesNotReady".into() } else { "NodesReady".into() },
                message: format!("{ready} of {} node(s) ready", pool.nodes.len()),
            })
            .chain((!pool.autoscaled.is_empty()).then(|| pb::Condition {
                r#type: "Autoscaled".into(),
                status: "True".into(),
                reason: if pool.autoscaled.contains("scaled up") { "ScaledUp" } else { "ScaledDown" }.into(),
                message: pool.autoscaled.clone(),
            }))
            .collect(),
            gone: pool.deleted,
            nodes: pool.nodes.iter().map(|n| self.pool_node(pool, n)).collect(),
            ..Default::default()
        })
    }

    pub fn workload_observation(&self, id: &str) -> Option<pb::Observation> {
        let workload = self.workloads.get(id)?;
        let status = workload.status();
        let progressing = !workload.rolled_out();
        let mut conditions = vec![pb::Condition {
            r#type: "Available".into(),
            status: if status.available_replicas >= workload.spec.replicas - workload.spec.max_unavailable {
                "True".into()
            } else {
                "False".into()
            },
            reason: "MinimumReplicas".into(),
            message: format!("{} of {} replicas available", status.available_replicas, workload.spec.replicas),
        }];
        conditions.push(pb::Condition {
            r#type: "Progressing".into(),
            status: "True".into(),
            reason: if progressing { "ReplicaSetUpdating".into() } else { "NewReplicaSetAvailable".into() },
            message: if status.unschedulable_reason.is_empty() {
                format!("revision {}", status.revision)
            } else {
                status.unschedulable_reason.clone()
            },
        });
        if let Some(drift) = &workload.drift {
            let outcome = if drift.adopting() {
                "Moke is taking it as a new revision"
            } else if workload.spec.adopt_cluster_edits {
                "Moke did not take it and put its spec back"
            } else {
                "Moke put its spec back"
            };
            conditions.push(pb::Condition {
                r#type: "Drifted".into(),
                status: "True".into(),
                reason: "EditedInCluster".into(),
                message: format!(
                    "{} changed {} through the cluster's API at {}; {outcome}",
                    drift.by,
                    drift.fields.join(", "),
                    drift.at
                ),
            });
        }
        Some(pb::Observation {
            resource_type: "workload".into(),
            resource_id: id.to_string(),
            observed_generation: workload.generation,
            phase: if workload.deleted {
                "deleted".into()
            } else if progressing {
                "progressing".into()
            } else {
                "running".into()
            },
            conditions,
            gone: workload.deleted && workload.pods.is_empty(),
            workload: Some(status),
            ..Default::default()
        })
    }

    /// Applies one command and says what to report. A command for a
    /// generation older than, or equal to, the applied one changes nothing
    /// and reports the current state again (its operation still finishes).
    /// Work that takes time leaves the operation running; [`Self::tick`]
    /// finishes it.
    pub fn apply(&mut self, layout: &RegionLayout, command: &pb::Command) -> Reports {
        let kind = CommandKind::try_from(command.kind).unwrap_or(CommandKind::Unspecified);
        let op = command.operation_id.as_str();
        let mut reports = vec![progress(op, "running", "accepted", 10)];
        // Operations that waited for a resource this command deleted.
        let mut released: Vec<String> = Vec::new();
        let outcome = match kind {
            CommandKind::ClusterCreate | CommandKind::ClusterUpdate => self.apply_cluster(layout, command),
            CommandKind::ClusterDelete => {
                if let Some(cluster) =
                    self.clusters.get_mut(&command.cluster_id).filter(|c| command.generation > c.generation)
                {
                    cluster.generation = command.generation;
                    cluster.deleted = true;
                    cluster.upgrade = None;
                    cluster.restore = None;
                    // What waited for the cluster or its pools (an upgrade) ends with them.
                    released.append(&mut cluster.waiting_operations);
                    for pool in self.node_pools.values_mut().filter(|p| p.cluster_id == command.cluster_id) {
                        pool.deleted = true;
                        pool.nodes.clear();
                        released.append(&mut pool.waiting_operations);
                    }
                    for workload in self.workloads.values_mut().filter(|w| w.cluster_id == command.cluster_id) {
                        workload.deleted = true;
                        workload.pods.clear();
                    }
                    self.kube.remove(&command.cluster_id);
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
                    for revoked in &command.principal_epochs {
                        let epoch = cluster.pki.principal_epochs.entry(revoked.principal.clone()).or_default();
                        *epoch = (*epoch).max(revoked.epoch);
                    }
                    // A new control plane can serve now: its create is done.
                    if cluster.pki.ready() && cluster.upgrade.is_none() && cluster.restore.is_none() {
                        released.append(&mut cluster.waiting_operations);
                    }
                }
                Ok(self.cluster_observation(&command.cluster_id))
            }
            CommandKind::ClusterSnapshot | CommandKind::ClusterRestore => {
                let acted = if kind == CommandKind::ClusterSnapshot {
                    self.take_snapshot(layout, command)
                } else {
                    self.start_restore(command)
                };
                acted.map(|step| {
                    reports.push(progress(op, "running", &step, 20));
                    self.cluster_observation(&command.cluster_id)
                })
            }
            CommandKind::NodePoolCreate | CommandKind::NodePoolUpdate => self.apply_node_pool(layout, command),
            CommandKind::NodePoolDelete => {
                if let Some(pool) =
                    self.node_pools.get_mut(&command.node_pool_id).filter(|p| command.generation > p.generation)
                {
                    pool.generation = command.generation;
                    pool.deleted = true;
                    pool.nodes.clear();
                    pool.draining.clear();
                    // An upgrade waiting for the pool has nothing left to do here.
                    released.append(&mut pool.waiting_operations);
                }
                Ok(self.node_pool_observation(&command.node_pool_id))
            }
            CommandKind::WorkloadApply => self.apply_workload(command),
            CommandKind::WorkloadDelete => {
                if let Some(workload) =
                    self.workloads.get_mut(&command.workload_id).filter(|w| command.generation > w.generation)
                {
                    workload.generation = command.generation;
                    workload.deleted = true;
                    workload.waiting_operations.push(op.to_string());
                }
                Ok(self.workload_observation(&command.workload_id))
            }
            CommandKind::NamespaceApply | CommandKind::NamespaceDelete => self.apply_namespace(kind, command),
            CommandKind::ServiceApply | CommandKind::ServiceDelete => self.apply_service(kind, command),
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
                released.sort();
                released.dedup();
                for other in released.iter().filter(|o| *o != op && !self.is_waiting(o)) {
                    reports.push(progress(other, "succeeded", "done", 100));
                }
                if self.is_waiting(op) {
                    let (step, percent) = self.waiting_step(op);
                    reports.push(progress(op, "running", &step, percent));
                } else {
                    reports.push(progress(op, "succeeded", "done", 100));
                }
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

    /// The cluster `cluster_id`, unless it was never made here or is deleted.
    fn existing_cluster(&mut self, cluster_id: &str) -> Result<&mut SimCluster, (&'static str, String)> {
        self.clusters
            .get_mut(cluster_id)
            .filter(|c| !c.deleted)
            .ok_or_else(|| ("cluster_missing", format!("cluster {cluster_id} does not exist in this region")))
    }

    /// Makes or deletes one of Moke's namespaces in its cluster's API. Not
    /// generation-gated: either is one change however often it comes, and
    /// a make delivered again after its namespace's delete makes nothing.
    fn apply_namespace(&mut self, kind: CommandKind, command: &pb::Command) -> CommandOutcome {
        let name = command.namespace.as_str();
        if !customers_namespace(name) || name == "default" {
            return Err(("invalid_namespace", format!("{name:?} is not a namespace Moke may make or delete")));
        }
        let cluster = self.existing_cluster(&command.cluster_id)?;
        let id = command.namespace_id.as_str();
        if kind == CommandKind::NamespaceApply {
            if !cluster.deleted_namespaces.iter().any(|deleted| deleted == id) {
                crate::kube::apply_moke_namespace(self, &command.cluster_id, name, id);
            }
        } else {
            remember(&mut cluster.deleted_namespaces, id);
            if let Err(why) = crate::kube::delete_moke_namespace(self, &command.cluster_id, name, id) {
                // It stays, the cluster users' own: their namespaces are reported at the next tick.
                if let Some(cluster) = self.clusters.get_mut(&command.cluster_id) {
                    cluster.reported_namespaces.clear();
                }
                return Err(("not_empty", why));
            }
        }
        Ok(self.cluster_observation(&command.cluster_id))
    }

    /// Makes, changes or deletes one of Moke's Services in its cluster's API.
    /// Each name's changes are ordered by [`service_rank`]: one older than
    /// the name's latest change changes nothing. An apply a Service made
    /// with kubectl holds up (its name or a node port), or whose namespace
    /// is missing, waits (its Operation running, saying why) and is tried
    /// again when a Service or Namespace of the cluster changed; one held
    /// by what never lets go ([`crate::kube::conflict_lasts`]) fails at once.
    fn apply_service(&mut self, kind: CommandKind, command: &pb::Command) -> CommandOutcome {
        let Some(service) = command.service.as_ref() else {
            return Err(("invalid_service", "the command names no service".into()));
        };
        let names_fit = customers_namespace(&service.namespace) && crate::kube::valid_label(&service.name);
        if !names_fit || command.service_id.is_empty() {
            let why = format!("{}/{} is not a Service Moke may make or delete", service.namespace, service.name);
            return Err(("invalid_service", why));
        }
        if service_rank(command) <= 0 {
            return Err(("invalid_service", "a service command comes with its outbox number".into()));
        }
        let cluster = self.existing_cluster(&command.cluster_id)?;
        let name = format!("{}/{}", service.namespace, service.name);
        let rank = service_rank(command);
        if cluster.service_ranks.get(&name).is_some_and(|latest| *latest >= rank) {
            return Ok(self.cluster_observation(&command.cluster_id));
        }
        if kind == CommandKind::ServiceDelete {
            record_service_rank(cluster, name, rank);
            crate::kube::delete_moke_service(self, &command.cluster_id, &service.namespace, &service.name);
            return Ok(self.cluster_observation(&command.cluster_id));
        }
        let applied = crate::kube::apply_moke_service(self, &command.cluster_id, &command.service_id, service);
        let Some(cluster) = self.clusters.get_mut(&command.cluster_id) else { return Ok(None) };
        // A delivery again of one waiting takes its place.
        cluster.blocked_services.retain(|b| b.operation != command.operation_id);
        match applied {
            Ok(()) => record_service_rank(cluster, name, rank),
            Err(lasting) if crate::kube::conflict_lasts(lasting.0) => return Err(lasting),
            Err((_, reason)) if cluster.blocked_services.len() >= BLOCKED_SERVICES_KEPT => {
                let why = format!("{reason}; {BLOCKED_SERVICES_KEPT} other changes already wait in this cluster");
                return Err(("too_many_waiting", why));
            }
            Err((_, reason)) => {
                cluster.blocked_services.push(BlockedService {
                    operation: command.operation_id.clone(),
                    service_id: command.service_id.clone(),
                    service: service.clone(),
                    rank,
                    reason,
                });
            }
        }
        Ok(self.cluster_observation(&command.cluster_id))
    }

    /// Tries the blocked applies of Moke's Services again when a Service or
    /// Namespace of their cluster changed: those that now go in succeed,
    /// those a later change of their name overtook fail as `superseded`,
    /// the others wait on.
    fn retry_blocked_services(&mut self, reports: &mut Reports) {
        let clusters: Vec<String> =
            self.clusters.iter().filter(|(_, c)| !c.blocked_services.is_empty()).map(|(id, _)| id.clone()).collect();
        for cluster_id in clusters {
            let changed_at = self.kube.get(&cluster_id).map_or(0, |store| store.service_holders_at);
            let Some(cluster) = self.clusters.get_mut(&cluster_id) else { continue };
            let gone = cluster.deleted;
            let forced = cluster.blocked_tried_at == u64::MAX;
            if !gone && !forced && changed_at <= cluster.blocked_tried_at {
                continue;
            }
            let blocked = std::mem::take(&mut cluster.blocked_services);
            let mut newest: BTreeMap<String, i64> = BTreeMap::new();
            for entry in &blocked {
                let name = format!("{}/{}", entry.service.namespace, entry.service.name);
                let latest = newest.entry(name).or_insert(entry.rank);
                *latest = (*latest).max(entry.rank);
            }
            let mut still = Vec::new();
            for entry in blocked {
                let name = format!("{}/{}", entry.service.namespace, entry.service.name);
                let fail = |code: &str, message: String| {
                    pb::status::Message::Progress(pb::OperationProgress {
                        operation_id: entry.operation.clone(),
                        status: "failed".into(),
                        step: "rejected".into(),
                        progress: 100,
                        error_code: code.into(),
                        error_message: message,
                    })
                };
                if gone {
                    reports.push(fail("cluster_missing", format!("cluster {cluster_id} was deleted")));
                    continue;
                }
                let overtaken = newest.get(&name).is_some_and(|latest| *latest > entry.rank)
                    || cluster.service_ranks.get(&name).is_some_and(|latest| *latest > entry.rank);
                if overtaken {
                    let message = format!("a later change of Service {name} reached the cluster first");
                    reports.push(fail("superseded", message));
                    continue;
                }
                let Some(store) = self.kube.get_mut(&cluster_id) else {
                    still.push(entry);
                    continue;
                };
                match crate::kube::put_moke_service(store, &entry.service_id, &entry.service) {
                    Ok(()) => {
                        record_service_rank(cluster, name, entry.rank);
                        reports.push(progress(&entry.operation, "succeeded", "done", 100));
                    }
                    Err((code, reason)) if crate::kube::conflict_lasts(code) => reports.push(fail(code, reason)),
                    Err((_, reason)) => still.push(BlockedService { reason, ..entry }),
                }
            }
            cluster.blocked_services = still;
            cluster.blocked_tried_at = self.kube.get(&cluster_id).map_or(0, |store| store.revision);
        }
    }

    /// The cluster a snapshot or restore command is about, if it runs here.
    fn etcd_target(&mut self, command: &pb::Command) -> Result<&mut SimCluster, (&'static str, String)> {
        self.clusters
            .get_mut(&command.cluster_id)
            .filter(|c| !c.deleted)
            .ok_or(("not_found", format!("cluster {} does not run in this region", command.cluster_id)))
    }

    /// Takes an etcd snapshot now (CLUSTER_SNAPSHOT); the step to report.
    fn take_snapshot(
        &mut self,
        layout: &RegionLayout,
        command: &pb::Command,
    ) -> Result<String, (&'static str, String)> {
        let now = Utc::now();
        let cluster = self.etcd_target(command)?;
        if cluster.etcd_operations.contains(&command.operation_id) {
            return Ok("etcd snapshot taken".into());
        }
        if let Some(restore) = &cluster.restore {
            return Err(("restore_in_progress", format!("etcd is being restored from {}", restore.snapshot)));
        }
        let cluster = &self.clusters[&command.cluster_id];
        let snapshot = etcd_snapshot(cluster, &self.node_pools, &self.workloads, &command.cluster_id, now, true);
        let step = format!("etcd snapshot {} taken ({} KiB)", snapshot.name, snapshot.size_bytes / 1024);
        let cluster = self.clusters.get_mut(&command.cluster_id).expect("found above");
        cluster.snapshots.push(snapshot);
        prune_snapshots(cluster, layout);
        remember(&mut cluster.etcd_operations, &command.operation_id);
        Ok(step)
    }

    /// Starts restoring etcd from a snapshot (CLUSTER_RESTORE): the API
    /// servers stop now; the tick runs the rest. The step to report.
    fn start_restore(&mut self, command: &pb::Command) -> Result<String, (&'static str, String)> {
        let tick = self.tick;
        let cluster = self.etcd_target(command)?;
        if cluster.etcd_operations.contains(&command.operation_id) {
            return Ok(format!("etcd restore from {} under way", command.snapshot));
        }
        if cluster.upgrade.is_some() {
            return Err(("upgrade_in_progress", "the control plane is being upgraded".into()));
        }
        if let Some(restore) = &cluster.restore {
            return Err(("restore_in_progress", format!("etcd is being restored from {}", restore.snapshot)));
        }
        let snapshot = cluster
            .snapshots
            .iter()
            .find(|s| s.name == command.snapshot)
            .ok_or(("unknown_snapshot", format!("no snapshot {:?} is kept", command.snapshot)))?;
        if snapshot.kubernetes_version != cluster.kubernetes_version {
            return Err((
                "version_mismatch",
                format!(
                    "{} was taken on Kubernetes {}; the control plane runs {}",
                    snapshot.name, snapshot.kubernetes_version, cluster.kubernetes_version
                ),
            ));
        }
        cluster.restore = Some(EtcdRestore {
            snapshot: snapshot.name.clone(),
            operation_id: command.operation_id.clone(),
            started_at: tick,
            stage: 0,
        });
        cluster.waiting_operations.push(command.operation_id.clone());
        remember(&mut cluster.etcd_operations, &command.operation_id);
        Ok(format!("control plane: API servers stopped to restore etcd from {}", command.snapshot))
    }

    /// True when an operation waits for something to converge.
    fn is_waiting(&self, operation_id: &str) -> bool {
        !operation_id.is_empty()
            && (self.clusters.values().any(|c| c.waiting_operations.iter().any(|o| o == operation_id))
                || self.node_pools.values().any(|p| p.waiting_operations.iter().any(|o| o == operation_id))
                || self.workloads.values().any(|w| w.waiting_operations.iter().any(|o| o == operation_id))
                || self.clusters.values().any(|c| c.blocked_services.iter().any(|b| b.operation == operation_id)))
    }

    fn apply_cluster(
        &mut self,
        layout: &RegionLayout,
        command: &pb::Command,
    ) -> Result<Option<pb::Observation>, (&'static str, String)> {
        let spec = command.cluster.clone().unwrap_or_default();
        let replicas = spec.control_plane_replicas.clamp(1, 3) as usize;
        let tick = self.tick;
        match self.clusters.get_mut(&command.cluster_id) {
            Some(existing) if command.generation <= existing.generation => {}
            Some(existing) if existing.restore.is_some() => {
                return Err(("restore_in_progress", "etcd is being restored; change the cluster after".into()));
            }
            Some(existing)
                if older_version(
                    &spec.kubernetes_version,
                    existing.upgrade.as_ref().map_or(&existing.kubernetes_version, |u| &u.to_version),
                ) =>
            {
                // etcd's data and the API servers' storage versions only move forward.
                return Err((
                    "downgrade",
                    format!("the control plane runs or is moving to a newer version than {}", spec.kubernetes_version),
                ));
            }
            Some(existing) => {
                existing.generation = command.generation;
                existing.snapshot_every_seconds = spec.snapshot_every_seconds;
                existing.snapshots_kept = spec.snapshots_kept;
                existing.allowed_addresses = spec.allowed_addresses.clone();
                let blue_version = existing.upgrade.as_ref().map_or(&existing.kubernetes_version, |u| &u.to_version);
                if spec.kubernetes_version != *blue_version && !spec.kubernetes_version.is_empty() {
                    // Blue-green: start green API servers on the new version.
                    let green = spread(
                        &format!("{}-apiserver-{}", existing.name, spec.kubernetes_version.replace('.', "-")),
                        replicas,
                        &layout.zones,
                        layout.racks_per_zone,
                    );
                    existing.upgrade = Some(ControlPlaneUpgrade {
                        to_version: spec.kubernetes_version,
                        green,
                        started_at: tick,
                        switched: false,
                        operation_id: command.operation_id.clone(),
                    });
                    existing.waiting_operations.push(command.operation_id.clone());
                } else if let Some(upgrade) = &mut existing.upgrade {
                    upgrade.green = spread(
                        &format!("{}-apiserver-{}", existing.name, upgrade.to_version.replace('.', "-")),
                        replicas,
                        &layout.zones,
                        layout.racks_per_zone,
                    );
                    existing.waiting_operations.push(command.operation_id.clone());
                } else {
                    let prefix = existing.api_servers.first().map_or_else(
                        || format!("{}-apiserver", existing.name),
                        |m| m.name.rsplit_once('-').map_or(m.name.clone(), |(p, _)| p.to_string()),
                    );
                    existing.api_servers = spread(&prefix, replicas, &layout.zones, layout.racks_per_zone);
                }
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
                // The create waits for the control plane to serve (its certificate).
                let waiting_operations =
                    if pki.ca_pem.is_empty() { Vec::new() } else { vec![command.operation_id.clone()] };
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
                        upgrade: None,
                        snapshots: Vec::new(),
                        snapshot_every_seconds: spec.snapshot_every_seconds,
                        snapshots_kept: spec.snapshots_kept,
                        allowed_addresses: spec.allowed_addresses.clone(),
                        restore: None,
                        restored_from: None,
                        etcd_operations: Vec::new(),
                        waiting_operations,
                        leaders: BTreeMap::new(),
                        reported_namespaces: Vec::new(),
                        deleted_namespaces: Vec::new(),
                        service_ranks: BTreeMap::new(),
                        blocked_services: Vec::new(),
                        blocked_tried_at: 0,
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
        let Some(cluster) = self.clusters.get(&command.cluster_id).filter(|c| !c.deleted) else {
            return Err(("cluster_missing", format!("cluster {} does not exist in this region", command.cluster_id)));
        };
        // New nodes run what the API servers run (the blue ones, mid-upgrade).
        let version = cluster.kubernetes_version.clone();
        let pool = self.node_pools.entry(command.node_pool_id.clone()).or_insert_with(|| SimNodePool {
            generation: 0,
            cluster_id: command.cluster_id.clone(),
            nodes: Vec::new(),
            deleted: false,
            name: command.name.clone(),
            spec: spec.clone(),
            template: 1,
            version,
            draining: BTreeMap::new(),
            legacy_draining_since: 0,
            autoscaled: String::new(),
            autoscaled_at: 0,
            idle_since: BTreeMap::new(),
            next_node: 0,
            waiting_operations: Vec::new(),
            recycling: Vec::new(),
            removing: Vec::new(),
        });
        if command.generation > pool.generation {
            let existed = pool.generation > 0;
            pool.generation = command.generation;
            pool.deleted = false;
            if pool.name.is_empty() {
                pool.name = command.name.clone();
            }
            let rebuild = pool.spec.machine_type != spec.machine_type
                || pool.spec.node_labels != spec.node_labels
                || pool.spec.taints != spec.taints
                || pool.spec.zones != spec.zones;
            let old_count = pool.spec.count.max(0) as usize;
            let mut spec = spec;
            if spec.autoscale_max > 0 && existed {
                // The autoscaler's count stays, within the new range: the change never fights it.
                // Less the nodes this command newly removes (each command repeats those on their way out).
                let removed = command
                    .remove_nodes
                    .iter()
                    .filter(|n| pool.nodes.iter().any(|m| &m.name == *n) && !pool.removing.contains(n))
                    .count() as i64;
                spec.count = (old_count as i64 - removed).min(spec.autoscale_max).max(spec.autoscale_min.max(0));
            }
            if spec.autoscale_max == 0 {
                pool.autoscaled.clear();
                pool.idle_since.clear();
            }
            pool.spec = spec;
            let count = pool.spec.count.max(0) as usize;
            let marked = pool.mark_nodes(&command.replace_nodes, &command.remove_nodes);
            if rebuild && !pool.nodes.is_empty() {
                // Replaced by the tick within the pool's upgrade policy: surge, cordon, drain, delete.
                pool.template += 1;
                pool.waiting_operations.push(command.operation_id.clone());
            } else {
                // Only what the count lost: surge nodes of a replacement under way stay.
                let fewer = old_count.saturating_sub(count);
                pool.shrink_to(pool.nodes.len().saturating_sub(fewer).max(count));
                let names: BTreeSet<String> = pool.nodes.iter().map(|n| n.name.clone()).collect();
                pool.draining.retain(|n, _| names.contains(n));
                if marked {
                    pool.waiting_operations.push(command.operation_id.clone());
                }
            }
            while pool.nodes.len() < count {
                pool.add_node(layout, None);
            }
        }
        Ok(self.node_pool_observation(&command.node_pool_id))
    }

    fn apply_workload(&mut self, command: &pb::Command) -> Result<Option<pb::Observation>, (&'static str, String)> {
        if self.clusters.get(&command.cluster_id).is_none_or(|c| c.deleted) {
            return Err(("cluster_missing", format!("cluster {} does not exist in this region", command.cluster_id)));
        }
        let Some(spec) = command.workload.clone() else {
            return Err(("invalid_command", "a workload command without its workload spec".to_string()));
        };
        let workload = self
            .workloads
            .entry(command.workload_id.clone())
            .or_insert_with(|| SimWorkload::new(&command.cluster_id, 0, spec.clone()));
        if command.generation > workload.generation {
            workload.generation = command.generation;
            workload.deleted = false;
            let (_, adopted_earlier) = workload.drift.as_ref().map_or((false, false), |d| d.adopted_by(&spec));
            workload.spec = spec;
            // Moke's new spec supersedes whatever drift was put back before,
            // and an adopted edit is done; one made after the edit the
            // gateway adopted waits again, on top of the new spec.
            let rebased = adopted_earlier
                .then(|| {
                    let object =
                        self.kube.get(&command.cluster_id)?.get(&crate::kube::deployment_key(&workload.spec))?;
                    Some(crate::kube::edited_workload(&workload.spec, object)).filter(|edit| *edit != workload.spec)
                })
                .flatten();
            match (rebased, workload.drift.as_mut()) {
                (Some(edit), Some(drift)) => {
                    drift.proposed = Some(edit);
                    drift.superseded.clear();
                    drift.since_tick = self.tick;
                }
                _ => workload.drift = None,
            }
            workload.waiting_operations.push(command.operation_id.clone());
            // The cluster's API shows the new spec at once, so that a kubectl
            // edit made next is read against it (not against the edit it ends).
            if self.kube.contains_key(&command.cluster_id) {
                crate::kube::sync(self, &command.cluster_id);
            }
        }
        Ok(self.workload_observation(&command.workload_id))
    }

    /// The nodes of a cluster as the scheduler sees them.
    fn schedulable_nodes(&self, cluster_id: &str) -> Vec<SchedNode> {
        let mut nodes = Vec::new();
        for pool in self.node_pools.values().filter(|p| p.cluster_id == cluster_id && !p.deleted) {
            for member in &pool.nodes {
                let mut labels: BTreeMap<String, String> =
                    pool.spec.node_labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                labels.insert("kubernetes.io/hostname".into(), member.name.clone());
                labels.insert("topology.kubernetes.io/zone".into(), member.zone.clone());
                labels.insert("moke.cloud/node-pool".into(), pool.name.clone());
                nodes.push(SchedNode {
                    name: member.name.clone(),
                    zone: member.zone.clone(),
                    cpu_millis: if pool.spec.cpu_millis > 0 { pool.spec.cpu_millis } else { DEFAULT_NODE_CPU_MILLIS },
                    memory_mib: if pool.spec.memory_mib > 0 { pool.spec.memory_mib } else { DEFAULT_NODE_MEMORY_MIB },
                    labels,
                    taints: pool.spec.taints.clone(),
                    ready: self.node_ready(member),
                    unschedulable: pool.draining.contains_key(&member.name),
                });
            }
        }
        nodes
    }

    /// Fails a node (it stops; its pods are lost; its pool replaces it).
    pub fn fail_node(&mut self, name: &str) -> bool {
        let known = self.node_pools.values().any(|p| p.nodes.iter().any(|n| n.name == name));
        if known {
            self.faults.failed_nodes.insert(name.to_string());
            self.faults.changed = true;
        }
        known
    }

    /// Fails (or restores) every node of a zone; nothing is replaced there
    /// while it is down.
    pub fn set_zone_failed(&mut self, zone: &str, failed: bool) {
        if failed {
            self.faults.failed_zones.insert(zone.to_string());
        } else {
            self.faults.failed_zones.remove(zone);
        }
        self.faults.changed = true;
    }

    /// Advances simulated time by one tick: node repair and node-pool
    /// upgrades, blue-green control-plane upgrades, etcd snapshots, and one
    /// reconcile of every workload. Reports what changed and finishes the
    /// operations that were waiting for it.
    /// The cluster autoscaler, once a tick after the pods were scheduled:
    /// a pool with autoscaling gets a node while pods of its cluster that
    /// an empty node of the pool would run (selector, taints, CPU, memory)
    /// are pending (one pool a cluster a tick), and drains a ready node
    /// that ran no pod for [`AUTOSCALE_IDLE_TICKS`], within its range and
    /// never while its nodes are being replaced. Each decision is the
    /// pool's `Autoscaled` condition. The pools it changed.
    fn autoscale(&mut self, layout: &RegionLayout, tick: u64) -> Vec<String> {
        let mut changed = Vec::new();
        let mut grown: BTreeSet<String> = BTreeSet::new();
        let ids: Vec<String> = self
            .node_pools
            .iter()
            .filter(|(_, p)| !p.deleted && p.spec.autoscale_max > 0)
            .map(|(id, _)| id.clone())
            .collect();
        // Per cluster, once: the pending pods, and the nodes running pods.
        let mut pending: BTreeMap<String, Vec<PodRequest>> = BTreeMap::new();
        let mut occupied: BTreeSet<String> = BTreeSet::new();
        for workload in self.workloads.values().filter(|w| !w.deleted) {
            for pod in &workload.pods {
                match &pod.node {
                    Some(node) => drop(occupied.insert(node.clone())),
                    None => pending.entry(workload.cluster_id.clone()).or_default().push(workload.request()),
                }
            }
        }
        for id in ids {
            let template = self.template_node(&id);
            let pool = &self.node_pools[&id];
            let cluster_id = pool.cluster_id.clone();
            let fits =
                pending.get(&cluster_id).map_or(0, |pods| pods.iter().filter(|p| fits_empty(&template, p)).count());
            let ready: BTreeSet<String> =
                pool.nodes.iter().filter(|n| self.node_ready(n)).map(|n| n.name.clone()).collect();
            let failed_zones = self.faults.failed_zones.clone();
            let Some(pool) = self.node_pools.get_mut(&id) else { continue };
            for node in &pool.nodes {
                if occupied.contains(&node.name) || !ready.contains(&node.name) {
                    pool.idle_since.remove(&node.name);
                } else {
                    pool.idle_since.entry(node.name.clone()).or_insert(tick);
                }
            }
            let names: BTreeSet<String> = pool.nodes.iter().map(|n| n.name.clone()).collect();
            pool.idle_since.retain(|n, _| names.contains(n));
            let replacing = !pool.draining.is_empty() || pool.nodes.iter().any(|n| n.template < pool.template);
            if replacing || tick < pool.autoscaled_at + AUTOSCALE_EVERY_TICKS {
                continue;
            }
            let (count, min, max) = (pool.spec.count, pool.spec.autoscale_min.max(0), pool.spec.autoscale_max);
            let staying = pool.nodes.iter().filter(|n| !pool.removing.contains(&n.name)).count() as i64;
            if fits > 0 && count < max && staying < max && !grown.contains(&cluster_id) {
                // Into a zone that is up.
                let zones = pool.zones(layout);
                let zone = zones
                    .iter()
                    .filter(|z| !failed_zones.contains(*z))
                    .min_by_key(|z| pool.nodes.iter().filter(|n| &n.zone == *z).count())
                    .cloned();
                let Some(zone) = zone else { continue };
                pool.spec.count += 1;
                pool.add_node(layout, Some(zone));
                pool.autoscaled = format!("scaled up from {count} to {} node(s): {fits} pod(s) pending", count + 1);
                pool.autoscaled_at = tick;
                grown.insert(cluster_id);
                changed.push(id);
            } else if fits == 0 && count > min {
                let idle = pool
                    .nodes
                    .iter()
                    .filter(|n| pool.idle_since.get(&n.name).is_some_and(|since| tick >= since + AUTOSCALE_IDLE_TICKS))
                    .map(|n| n.name.clone())
                    .next();
                if let Some(idle) = idle {
                    pool.spec.count -= 1;
                    pool.mark_nodes(&[], std::slice::from_ref(&idle));
                    pool.autoscaled =
                        format!("scaled down from {count} to {} node(s): node {idle} was idle", count - 1);
                    pool.autoscaled_at = tick;
                    changed.push(id);
                }
            }
        }
        changed
    }

    /// An empty node pool `id` could add, as the scheduler sees nodes.
    fn template_node(&self, id: &str) -> SchedNode {
        let pool = &self.node_pools[id];
        let mut labels: BTreeMap<String, String> =
            pool.spec.node_labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        labels.insert("moke.cloud/node-pool".into(), pool.name.clone());
        SchedNode {
            name: String::new(),
            zone: String::new(),
            cpu_millis: if pool.spec.cpu_millis > 0 { pool.spec.cpu_millis } else { DEFAULT_NODE_CPU_MILLIS },
            memory_mib: if pool.spec.memory_mib > 0 { pool.spec.memory_mib } else { DEFAULT_NODE_MEMORY_MIB },
            labels,
            taints: pool.spec.taints.clone(),
            ready: true,
            unschedulable: false,
        }
    }

    pub fn tick(&mut self, layout: &RegionLayout, now: DateTime<Utc>) -> Reports {
        self.tick += 1;
        let tick = self.tick;
        let mut reports = Vec::new();
        let mut finished = Vec::new();

        // Node pools: replace failed nodes, roll one node of an old template.
        let failed_nodes = self.faults.failed_nodes.clone();
        let failed_zones = self.faults.failed_zones.clone();
        let occupied: BTreeSet<String> =
            self.workloads.values().flat_map(|w| w.pods.iter().filter_map(|p| p.node.clone())).collect();
        let mut changed_pools = Vec::new();
        for (id, pool) in self.node_pools.iter_mut().filter(|(_, p)| !p.deleted) {
            let before = pool.nodes.clone();
            let draining_before = pool.draining.clone();
            let lost: Vec<Member> = pool
                .nodes
                .iter()
                .filter(|n| failed_nodes.contains(&n.name) && !failed_zones.contains(&n.zone))
                .cloned()
                .collect();
            for node in lost {
                pool.nodes.retain(|n| n.name != node.name);
                // One on its way out (for good, or being replaced) is not replaced
                // here: what a replacement still needs, it adds.
                let leaving = pool.draining.remove(&node.name).is_some() || node.template < pool.template;
                if !pool.removing.contains(&node.name) && !leaving {
                    pool.add_node(layout, Some(node.zone.clone()));
                }
            }
            // Drained once its pods have moved (or the drain timed out): it goes.
            // Drains of nodes gone otherwise are over; one the release before began is dated.
            let names: BTreeSet<String> = pool.nodes.iter().map(|n| n.name.clone()).collect();
            pool.draining.retain(|n, _| names.contains(n));
            let legacy_since = pool.legacy_draining_since;
            pool.draining.values_mut().filter(|since| **since == LEGACY_DRAIN).for_each(|since| *since = legacy_since);
            let mut gone = Vec::new();
            for (draining, since) in pool.draining.clone() {
                if !occupied.contains(&draining) || tick > since.saturating_add(DRAIN_TIMEOUT_TICKS) {
                    pool.nodes.retain(|n| n.name != draining);
                    pool.draining.remove(&draining);
                    gone.push(draining);
                }
            }
            // Nodes replaced: the operations waiting for the pool say how far it is.
            for gone in gone {
                let (step, percent) = pool.removal_step(&gone);
                for operation in &pool.waiting_operations {
                    reports.push(progress(operation, "running", &step, percent));
                }
            }
            let down = |node: &Member| failed_nodes.contains(&node.name) || failed_zones.contains(&node.zone);
            pool.replace_old_nodes(layout, tick, &down, &mut reports);
            if pool.nodes != before || pool.draining != draining_before || self.faults.changed {
                changed_pools.push(id.clone());
            }
            // Nodes asked for that failed and were repaired meanwhile are gone too.
            let names: BTreeSet<String> = pool.nodes.iter().map(|n| n.name.clone()).collect();
            pool.recycling.retain(|n| names.contains(n));
            pool.removing.retain(|n| names.contains(n));
            if pool.converged() {
                finished.append(&mut pool.waiting_operations);
            }
        }
        self.faults.failed_nodes.retain(|n| self.node_pools.values().any(|p| p.nodes.iter().any(|m| &m.name == n)));
        self.faults.changed = false;

        // Control planes: blue-green upgrades move traffic to green, then
        // retire blue (one step a tick); snapshots.
        let mut changed_clusters = Vec::new();
        for (id, cluster) in self.clusters.iter_mut().filter(|(_, c)| !c.deleted) {
            let namespaces = self.kube.get(id).map(|s| crate::kube::kubectl_namespaces(s, MAX_UNMANAGED_REPORTED));
            if let Some(namespaces) = namespaces.filter(|n| *n != cluster.reported_namespaces) {
                cluster.reported_namespaces = namespaces;
                changed_clusters.push(id.clone());
            }
        }
        let mut upgraded = Vec::new();
        for (id, cluster) in self.clusters.iter_mut().filter(|(_, c)| !c.deleted) {
            if let Some(upgrade) = cluster.upgrade.as_mut().filter(|u| tick > u.started_at && !u.switched) {
                upgrade.switched = true;
                for operation in &cluster.waiting_operations {
                    let step = format!("control plane: traffic switched to the API servers on {}", upgrade.to_version);
                    reports.push(progress(operation, "running", &step, 25));
                }
                changed_clusters.push(id.clone());
            } else if let Some(upgrade) = cluster.upgrade.take_if(|u| u.switched) {
                let retired = std::mem::replace(&mut cluster.kubernetes_version, upgrade.to_version.clone());
                cluster.api_servers = upgrade.green;
                for operation in &cluster.waiting_operations {
                    let step = format!("control plane: the API servers on {retired} retired");
                    reports.push(progress(operation, "running", &step, 40));
                }
                // Only the upgrade waits for the pools; other changes are done.
                upgraded.push((id.clone(), retired.clone(), upgrade.to_version, upgrade.operation_id));
                changed_clusters.push(id.clone());
            }
            // A new control plane is done once it can serve: with its
            // certificate signed, so a kubeconfig works when the Operation ends.
            if let Some(restore) = cluster.restore.as_mut().filter(|r| tick > r.started_at + u64::from(r.stage)) {
                let step = match restore.stage {
                    0 => {
                        // A single member from the snapshot: a new cluster of one.
                        cluster.etcd.truncate(1);
                        let member = cluster.etcd.first().map_or(String::new(), |m| m.name.clone());
                        format!("etcd: member {member} restored from snapshot {} as a cluster of one", restore.snapshot)
                    }
                    1 => {
                        cluster.etcd =
                            spread(&format!("{}-etcd", cluster.name), 3, &layout.zones, layout.racks_per_zone);
                        "etcd: scaled back to 3 members, one per zone".to_string()
                    }
                    _ => {
                        cluster.restored_from = Some((restore.snapshot.clone(), now));
                        format!("control plane: API servers started on the state of {}", restore.snapshot)
                    }
                };
                for operation in &cluster.waiting_operations {
                    reports.push(progress(operation, "running", &step, 30 + 20 * i32::from(restore.stage)));
                }
                restore.stage += 1;
                if restore.stage > 2 {
                    cluster.restore = None;
                }
                changed_clusters.push(id.clone());
            }
            let serving = cluster.pki.ca_pem.is_empty() || cluster.pki.ready();
            if cluster.upgrade.is_none() && cluster.restore.is_none() && serving {
                finished.append(&mut cluster.waiting_operations);
            }
            let every = if cluster.snapshot_every_seconds > 0 {
                cluster.snapshot_every_seconds
            } else {
                layout.etcd_snapshot_every_seconds
            };
            let due = cluster
                .snapshots
                .iter()
                .rev()
                .find(|s| !s.on_demand)
                .is_none_or(|last| (now - last.taken_at).num_seconds() >= every.max(1));
            if due && every > 0 && cluster.restore.is_none() {
                let snapshot = etcd_snapshot(cluster, &self.node_pools, &self.workloads, id, now, false);
                cluster.snapshots.push(snapshot);
                prune_snapshots(cluster, layout);
                changed_clusters.push(id.clone());
            }
        }

        // Node pools follow an upgraded control plane: each is replaced onto
        // the new version, and the upgrade finishes when they have been.
        for (cluster_id, retired, version, operation) in upgraded {
            for pool in self.node_pools.values_mut().filter(|p| p.cluster_id == cluster_id && !p.deleted) {
                // Nodes of a state saved before nodes had a version run the retired one.
                for node in pool.nodes.iter_mut().filter(|n| n.version.is_empty()) {
                    node.version = retired.clone();
                }
                if pool.version != version {
                    pool.version = version.clone();
                    if !pool.nodes.is_empty() {
                        pool.template += 1;
                        pool.waiting_operations.push(operation.clone());
                    }
                }
            }
        }

        // Workloads, cluster by cluster, over one scheduler per cluster.
        let cluster_ids: BTreeSet<String> = self.workloads.values().map(|w| w.cluster_id.clone()).collect();
        let mut changed_workloads = Vec::new();
        for cluster_id in cluster_ids {
            let nodes = self.schedulable_nodes(&cluster_id);
            let healthy: BTreeSet<String> = nodes.iter().filter(|n| n.ready).map(|n| n.name.clone()).collect();
            let zones: BTreeMap<String, String> = nodes.iter().map(|n| (n.name.clone(), n.zone.clone())).collect();
            let bound: Vec<Bound> = self
                .workloads
                .values()
                .filter(|w| w.cluster_id == cluster_id)
                .flat_map(|w| {
                    let request = w.request();
                    w.pods.iter().filter_map(move |p| {
                        p.node.clone().map(|node| Bound {
                            node,
                            spread_key: request.spread_key.clone(),
                            cpu_millis: request.cpu_millis,
                            memory_mib: request.memory_mib,
                        })
                    })
                })
                .filter(|b| healthy.contains(&b.node))
                .collect();
            let mut scheduler = Scheduler::new(nodes.clone(), &bound);
            let draining: BTreeSet<String> = nodes.iter().filter(|n| n.unschedulable).map(|n| n.name.clone()).collect();
            let node_state = NodeState {
                healthy: &|node| healthy.contains(node),
                draining: &|node| draining.contains(node),
                zone_of: &|node| zones.get(node).cloned().unwrap_or_default(),
            };
            for (id, workload) in self.workloads.iter_mut().filter(|(_, w)| w.cluster_id == cluster_id) {
                // An edit the gateway did not adopt in time is put back (at the API's next sync).
                if let Some(drift) = workload.drift.as_mut().filter(|d| d.adopting())
                    && tick.saturating_sub(drift.since_tick) > crate::workloads::ADOPTION_WAIT_TICKS
                {
                    drift.proposed = None;
                    workload.report_due = true;
                }
                if workload.reconcile(&mut scheduler, tick, &node_state) | std::mem::take(&mut workload.report_due) {
                    changed_workloads.push(id.clone());
                }
                if workload.rolled_out() || (workload.deleted && workload.pods.is_empty()) {
                    finished.append(&mut workload.waiting_operations);
                }
            }
        }
        changed_pools.extend(self.autoscale(layout, tick));
        changed_pools.sort();
        changed_pools.dedup();
        for id in changed_pools {
            reports.extend(self.node_pool_observation(&id).map(pb::status::Message::Observation));
        }
        // Workloads made with kubectl are the customer's: the gateway hears
        // of them in their cluster's report, as unmanaged.
        let (unmanaged, managed): (Vec<String>, Vec<String>) =
            changed_workloads.into_iter().partition(|id| crate::kube::is_kubectl_workload(id));
        changed_clusters.extend(unmanaged.iter().filter_map(|id| self.workloads.get(id)).map(|w| w.cluster_id.clone()));
        changed_clusters.sort();
        changed_clusters.dedup();
        for id in changed_clusters {
            reports.extend(self.cluster_observation(&id).map(pb::status::Message::Observation));
        }
        for id in managed {
            reports.extend(self.workload_observation(&id).map(pb::status::Message::Observation));
        }
        // An operation several resources wait for (an upgrade's pools) finishes with the last.
        finished.sort();
        finished.dedup();
        for operation in finished.into_iter().filter(|o| !o.is_empty() && !self.is_waiting(o)) {
            reports.push(progress(&operation, "succeeded", "done", 100));
        }
        // Deleted workloads are forgotten once their last pod is gone and reported.
        self.workloads.retain(|_, w| !(w.deleted && w.pods.is_empty()));
        self.elect_leaders(now);
        // The clusters' API objects follow what just changed.
        let served: Vec<String> = self.kube.keys().cloned().collect();
        for cluster_id in served {
            crate::kube::sync(self, &cluster_id);
        }
        self.retry_blocked_services(&mut reports);
        reports.extend(self.usage(layout, now));
        reports
    }

    /// Usage since the last sample, one sample per running cluster, once a
    /// sampling period has passed.
    fn usage(&mut self, layout: &RegionLayout, now: DateTime<Utc>) -> Reports {
        let since = *self.usage_since.get_or_insert(now);
        let seconds = (now - since).num_milliseconds() as f64 / 1000.0;
        if layout.usage_sample_every_seconds <= 0 || seconds < layout.usage_sample_every_seconds as f64 {
            return Vec::new();
        }
        self.usage_since = Some(now);
        let mut samples = Vec::new();
        let milliseconds = (now - since).num_milliseconds();
        for (id, cluster) in self.clusters.iter().filter(|(_, c)| !c.deleted) {
            let mut node_seconds = std::collections::HashMap::<String, f64>::new();
            let mut nodes = Vec::new();
            for (pool_id, pool) in self.node_pools.iter().filter(|(_, p)| &p.cluster_id == id && !p.deleted) {
                let ready: Vec<&Member> = pool.nodes.iter().filter(|n| self.node_ready(n)).collect();
                *node_seconds.entry(pool.spec.machine_type.clone()).or_default() += ready.len() as f64 * seconds;
                nodes.extend(ready.into_iter().map(|node| pb::NodeUsage {
                    name: node.name.clone(),
                    node_pool_id: pool_id.clone(),
                    machine_type: if node.machine_type.is_empty() {
                        pool.spec.machine_type.clone()
                    } else {
                        node.machine_type.clone()
                    },
                    milliseconds,
                }));
            }
            samples.push(pb::status::Message::Usage(pb::UsageSample {
                id: format!("{id}/{}", now.timestamp_millis()),
                cluster_id: id.clone(),
                period_start: since.to_rfc3339(),
                period_end: now.to_rfc3339(),
                cluster_seconds: seconds,
                node_seconds,
                control_plane_replicas: u32::try_from(cluster.api_servers.len()).unwrap_or(u32::MAX),
                nodes,
            }));
        }
        samples
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

    fn pool(id: &str, generation: i64, count: i64, machine_type: &str) -> pb::Command {
        pb::Command {
            kind: CommandKind::NodePoolCreate as i32,
            operation_id: format!("op-{id}-{generation}"),
            cluster_id: "cl_1".into(),
            node_pool_id: id.into(),
            name: "workers".into(),
            generation,
            node_pool: Some(pb::NodePoolSpec {
                machine_type: machine_type.into(),
                count,
                cpu_millis: 8000,
                memory_mib: 32768,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn workload(generation: i64, replicas: i64, revision: i64) -> pb::Command {
        pb::Command {
            kind: CommandKind::WorkloadApply as i32,
            operation_id: format!("op-web-{generation}"),
            cluster_id: "cl_1".into(),
            workload_id: "wl_web".into(),
            generation,
            workload: Some(pb::WorkloadSpec {
                namespace: "default".into(),
                name: "web".into(),
                image: format!("registry.example/web:{revision}"),
                replicas,
                cpu_millis: 500,
                memory_mib: 512,
                max_surge: 1,
                max_unavailable: 0,
                revision,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn succeeded(reports: &Reports) -> Vec<String> {
        reports
            .iter()
            .filter_map(|r| match r {
                pb::status::Message::Progress(p) if p.status == "succeeded" => Some(p.operation_id.clone()),
                _ => None,
            })
            .collect()
    }

    /// Ticks until nothing is waiting; returns every operation that succeeded.
    fn settle(state: &mut SimState) -> Vec<String> {
        let mut done = Vec::new();
        for _ in 0..100 {
            done.extend(succeeded(&state.tick(&layout(), Utc::now())));
        }
        done
    }

    fn running_cluster() -> SimState {
        let mut state = SimState::default();
        state.apply(&layout(), &create("cl_1", 1));
        state.apply(&layout(), &pool("np_1", 1, 3, "bm.small"));
        state
    }

    #[test]
    fn a_workload_operation_finishes_when_its_pods_are_ready() {
        let mut state = running_cluster();
        let reports = state.apply(&layout(), &workload(1, 3, 1));
        assert!(succeeded(&reports).is_empty(), "finished before any pod ran");
        // A duplicate delivery does not finish it early either.
        assert!(succeeded(&state.apply(&layout(), &workload(1, 3, 1))).is_empty());
        assert_eq!(settle(&mut state), ["op-web-1"]);
        let status = state.workloads["wl_web"].status();
        assert_eq!((status.ready_replicas, status.updated_replicas), (3, 3));
    }

    #[test]
    fn failed_nodes_are_replaced_and_their_pods_rescheduled() {
        let mut state = running_cluster();
        state.apply(&layout(), &workload(1, 3, 1));
        settle(&mut state);
        let victim = state.workloads["wl_web"].pods[0].node.clone().unwrap();
        assert!(state.fail_node(&victim));
        settle(&mut state);
        let pool = &state.node_pools["np_1"];
        assert_eq!(pool.nodes.len(), 3);
        assert!(pool.nodes.iter().all(|n| n.name != victim));
        let pods = &state.workloads["wl_web"].pods;
        assert_eq!(pods.iter().filter(|p| p.ready).count(), 3);
        assert!(pods.iter().all(|p| p.node.as_deref() != Some(victim.as_str())));
    }

    #[test]
    fn a_failed_zone_moves_pods_to_the_others_and_keeps_its_nodes() {
        let mut state = running_cluster();
        state.apply(&layout(), &workload(1, 3, 1));
        settle(&mut state);
        state.set_zone_failed("z-a", true);
        settle(&mut state);
        let pods = &state.workloads["wl_web"].pods;
        assert_eq!(pods.iter().filter(|p| p.ready).count(), 3);
        assert!(pods.iter().all(|p| p.zone != "z-a"));
        assert_eq!(state.node_pools["np_1"].nodes.len(), 3, "nothing is replaced in a zone that is down");
        assert_eq!(state.node_pool_observation("np_1").unwrap().phase, "degraded");
    }

    #[test]
    fn node_pool_upgrades_replace_nodes_one_at_a_time_without_losing_pods() {
        let mut state = running_cluster();
        state.apply(&layout(), &workload(1, 3, 1));
        settle(&mut state);
        let old: Vec<String> = state.node_pools["np_1"].nodes.iter().map(|n| n.name.clone()).collect();
        let reports = state.apply(&layout(), &pool("np_1", 2, 3, "bm.medium"));
        assert!(succeeded(&reports).is_empty());
        let mut done = Vec::new();
        for _ in 0..100 {
            done.extend(succeeded(&state.tick(&layout(), Utc::now())));
            let pool = &state.node_pools["np_1"];
            assert!(pool.nodes.len() <= 4, "surge of one node at most");
            assert!(pool.draining.len() <= 1, "one node drained at a time");
            // maxUnavailable 0: the pods on a drained node are replaced before they go.
            assert_eq!(state.workloads["wl_web"].available(), 3);
        }
        assert_eq!(done, ["op-np_1-2"]);
        let pool = &state.node_pools["np_1"];
        assert_eq!(pool.nodes.len(), 3);
        assert!(pool.nodes.iter().all(|n| !old.contains(&n.name)));
        assert_eq!(state.workloads["wl_web"].available(), 3);
    }

    #[test]
    fn an_upgrade_policy_sets_how_many_nodes_are_replaced_at_once() {
        // Six nodes, surge 2 and 1 unavailable: at most 8 nodes, at least 5
        // schedulable, and more than one node replaced at a time.
        let mut state = SimState::default();
        state.apply(&layout(), &create("cl_1", 1));
        state.apply(&layout(), &pool("np_1", 1, 6, "bm.small"));
        state.apply(&layout(), &workload(1, 6, 1));
        settle(&mut state);
        let old: Vec<String> = state.node_pools["np_1"].nodes.iter().map(|n| n.name.clone()).collect();
        let mut faster = pool("np_1", 2, 6, "bm.medium");
        if let Some(spec) = faster.node_pool.as_mut() {
            (spec.max_surge, spec.max_unavailable) = (2, 1);
        }
        state.apply(&layout(), &faster);
        let (mut most_nodes, mut most_draining, mut ticks) = (0, 0, 0);
        while !state.node_pools["np_1"].converged() && ticks < 200 {
            state.tick(&layout(), Utc::now());
            ticks += 1;
            let now = &state.node_pools["np_1"];
            assert!(now.nodes.len() <= 8, "surge of two at most");
            assert!(now.nodes.len() - now.draining.len() >= 5, "one unavailable at most");
            most_nodes = most_nodes.max(now.nodes.len());
            most_draining = most_draining.max(now.draining.len());
        }
        let replaced = &state.node_pools["np_1"];
        assert!(replaced.nodes.iter().all(|n| !old.contains(&n.name) && n.machine_type == "bm.medium"));
        assert_eq!(
            (replaced.nodes.len(), most_nodes, most_draining),
            (6, 8, 3),
            "two surge nodes, three drains at once"
        );
        settle(&mut state);
        assert_eq!(state.workloads["wl_web"].available(), 6, "no pod lost");

        // No surge, 1 unavailable: never more nodes than the count.
        let mut in_place = pool("np_1", 3, 6, "bm.small");
        if let Some(spec) = in_place.node_pool.as_mut() {
            (spec.max_surge, spec.max_unavailable) = (0, 1);
        }
        state.apply(&layout(), &in_place);
        for _ in 0..200 {
            state.tick(&layout(), Utc::now());
            let now = &state.node_pools["np_1"];
            assert!(now.nodes.len() <= 6 && now.draining.len() <= 1, "{:?}", now.draining);
        }
        let back = &state.node_pools["np_1"];
        assert!(back.converged() && back.nodes.iter().all(|n| n.machine_type == "bm.small"));
    }

    #[test]
    fn a_replacement_keeps_its_surge_nodes_through_other_changes_and_a_failed_draining_node() {
        let mut state = SimState::default();
        state.apply(&layout(), &create("cl_1", 1));
        state.apply(&layout(), &pool("np_1", 1, 3, "bm.small"));
        state.apply(&layout(), &workload(1, 3, 1));
        settle(&mut state);
        state.apply(&layout(), &pool("np_1", 2, 3, "bm.medium"));
        // Until a node drains: a surge node has come and an old one is cordoned.
        let mut ticks = 0;
        while state.node_pools["np_1"].draining.is_empty() && ticks < 20 {
            state.tick(&layout(), Utc::now());
            ticks += 1;
        }
        let before = state.node_pools["np_1"].nodes.len();
        assert_eq!(before, 4, "a surge node beside the three");
        // A change that rebuilds nothing (a policy) drops no node.
        let mut policy = pool("np_1", 3, 3, "bm.medium");
        if let Some(spec) = policy.node_pool.as_mut() {
            (spec.max_surge, spec.max_unavailable) = (1, 1);
        }
        state.apply(&layout(), &policy);
        assert_eq!(state.node_pools["np_1"].nodes.len(), before, "the surge node stays");
        // The draining node fails: it is not replaced twice.
        let draining = state.node_pools["np_1"].draining.keys().next().cloned().unwrap();
        assert!(state.fail_node(&draining));
        for _ in 0..200 {
            state.tick(&layout(), Utc::now());
            assert!(state.node_pools["np_1"].nodes.len() <= 4);
        }
        let pool = &state.node_pools["np_1"];
        assert!(pool.converged(), "{:?}", pool.nodes);
        assert!(pool.nodes.iter().all(|n| n.machine_type == "bm.medium"));
        assert_eq!(state.workloads["wl_web"].available(), 3);
    }

    #[test]
    fn the_autoscaler_adds_nodes_for_pending_pods_and_drains_idle_ones_within_its_range() {
        let mut state = SimState::default();
        state.apply(&layout(), &create("cl_1", 1));
        let mut autoscaled = pool("np_1", 1, 1, "bm.small");
        if let Some(spec) = autoscaled.node_pool.as_mut() {
            (spec.autoscale_min, spec.autoscale_max) = (1, 3);
        }
        state.apply(&layout(), &autoscaled);
        settle(&mut state);
        // Pods of 5 CPUs on 8-CPU nodes: one a node, so three need three nodes (and four cannot fit).
        let mut big = workload(1, 4, 1);
        if let Some(spec) = big.workload.as_mut() {
            spec.cpu_millis = 5000;
        }
        state.apply(&layout(), &big);
        for _ in 0..60 {
            state.tick(&layout(), Utc::now());
            assert!(state.node_pools["np_1"].nodes.len() <= 3, "never past the maximum");
        }
        let pool = &state.node_pools["np_1"];
        assert_eq!((pool.nodes.len(), pool.spec.count), (3, 3));
        assert_eq!(pool.autoscaled, "scaled up from 2 to 3 node(s): 2 pod(s) pending");
        let conditions = state.node_pool_observation("np_1").unwrap().conditions;
        assert!(conditions.iter().any(|c| c.r#type == "Autoscaled" && c.reason == "ScaledUp"), "{conditions:?}");
        assert_eq!(state.workloads["wl_web"].available(), 3, "the fourth pod fits nowhere");
        // A later command with another count keeps the autoscaler's.
        let mut relabelled = autoscaled.clone();
        relabelled.generation = 2;
        if let Some(spec) = relabelled.node_pool.as_mut() {
            spec.count = 1;
        }
        state.apply(&layout(), &relabelled);
        assert_eq!(state.node_pools["np_1"].spec.count, 3, "the PATCH's count does not fight the autoscaler");
        // A node removed by name lowers the count once, though every later command repeats it.
        let gone = state.node_pools["np_1"].nodes[0].name.clone();
        let mut remove = relabelled.clone();
        remove.generation = 3;
        remove.remove_nodes = vec![gone.clone()];
        state.apply(&layout(), &remove);
        assert_eq!(state.node_pools["np_1"].spec.count, 2);
        remove.generation = 4;
        state.apply(&layout(), &remove);
        assert_eq!(state.node_pools["np_1"].spec.count, 2, "a node on its way out counts once");

        // One pod left: idle nodes are drained, down to the minimum.
        let mut small = workload(2, 1, 1);
        if let Some(spec) = small.workload.as_mut() {
            spec.cpu_millis = 5000;
        }
        state.apply(&layout(), &small);
        for _ in 0..200 {
            state.tick(&layout(), Utc::now());
            assert!(state.workloads["wl_web"].available() >= 1, "no pod lost");
        }
        let pool = &state.node_pools["np_1"];
        assert_eq!((pool.nodes.len(), pool.spec.count), (1, 1), "{}", pool.autoscaled);
        assert!(pool.autoscaled.starts_with("scaled down from 2 to 1 node(s): node "), "{}", pool.autoscaled);
    }

    #[test]
    fn a_drain_written_by_the_release_before_still_reads() {
        let mut pool = serde_json::to_value(SimNodePool {
            generation: 1,
            cluster_id: "cl_1".into(),
            nodes: Vec::new(),
            deleted: false,
            name: "workers".into(),
            spec: Default::default(),
            template: 1,
            version: String::new(),
            draining: BTreeMap::new(),
            legacy_draining_since: 0,
            autoscaled: String::new(),
            autoscaled_at: 0,
            idle_since: BTreeMap::new(),
            next_node: 0,
            waiting_operations: Vec::new(),
            recycling: Vec::new(),
            removing: Vec::new(),
        })
        .unwrap();
        pool["draining"] = serde_json::json!("workers-node-1");
        pool["draining_since"] = serde_json::json!(7);
        let read: SimNodePool = serde_json::from_value(pool.clone()).unwrap();
        assert_eq!(read.draining.keys().collect::<Vec<_>>(), ["workers-node-1"]);
        assert_eq!(read.legacy_draining_since, 7, "dated at the next tick");
        pool["draining"] = serde_json::Value::Null;
        let read: SimNodePool = serde_json::from_value(pool).unwrap();
        assert!(read.draining.is_empty());
    }

    /// The steps an operation reported as running, in order.
    fn steps(reports: &Reports, operation: &str) -> Vec<String> {
        reports
            .iter()
            .filter_map(|r| match r {
                pb::status::Message::Progress(p) if p.operation_id == operation && p.status == "running" => {
                    Some(p.step.clone())
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn control_plane_upgrades_are_blue_green_and_then_the_pools_follow_by_surge() {
        let mut state = running_cluster();
        state.apply(&layout(), &workload(1, 3, 1));
        settle(&mut state);
        let blue = state.clusters["cl_1"].api_servers.clone();
        let from = state.clusters["cl_1"].kubernetes_version.clone();
        let old_nodes: Vec<String> = state.node_pools["np_1"].nodes.iter().map(|n| n.name.clone()).collect();
        assert!(state.node_pools["np_1"].nodes.iter().all(|n| n.version == from), "nodes run the cluster's version");
        let mut upgrade = create("cl_1", 2);
        upgrade.kind = CommandKind::ClusterUpdate as i32;
        upgrade.operation_id = "op-upgrade".into();
        upgrade.cluster.as_mut().unwrap().kubernetes_version = "1.33".into();
        let reports = state.apply(&layout(), &upgrade);
        assert!(succeeded(&reports).is_empty());
        let mut seen = steps(&reports, "op-upgrade");
        let cluster = &state.clusters["cl_1"];
        assert_eq!(cluster.api_servers, blue, "blue serves until green is ready");
        assert_eq!(state.cluster_observation("cl_1").unwrap().phase, "upgrading");
        let mut done = Vec::new();
        for _ in 0..100 {
            let reports = state.tick(&layout(), Utc::now());
            seen.extend(steps(&reports, "op-upgrade"));
            done.extend(succeeded(&reports));
            let (cluster, pool) = (&state.clusters["cl_1"], &state.node_pools["np_1"]);
            assert!(pool.nodes.len() <= 4, "surge of one node at most");
            assert!(
                pool.nodes.iter().all(|n| n.version == from || cluster.kubernetes_version == "1.33"),
                "no node is newer than its API servers"
            );
            assert_eq!(state.workloads["wl_web"].available(), 3, "no pod is lost");
        }
        assert_eq!(done, ["op-upgrade"], "finished once, with the last pool");
        let expected = [
            "accepted".to_string(),
            format!("control plane: starting {} API server(s) on 1.33 beside those on {from}", blue.len()),
            "control plane: traffic switched to the API servers on 1.33".to_string(),
            format!("control plane: the API servers on {from} retired"),
            "node pool workers: 1 of 3 node(s) replaced onto Kubernetes 1.33".to_string(),
            "node pool workers: 2 of 3 node(s) replaced onto Kubernetes 1.33".to_string(),
            "node pool workers: 3 of 3 node(s) replaced onto Kubernetes 1.33".to_string(),
        ];
        assert_eq!(seen, expected);
        let cluster = &state.clusters["cl_1"];
        assert_eq!(cluster.kubernetes_version, "1.33");
        assert!(cluster.api_servers.iter().all(|m| m.name.contains("1-33") && !blue.contains(m)));
        let pool = &state.node_pools["np_1"];
        assert!(pool.nodes.iter().all(|n| n.version == "1.33" && !old_nodes.contains(&n.name)));
        let observed = state.node_pool_observation("np_1").unwrap();
        assert!(observed.nodes.iter().all(|n| n.kubelet_version == "1.33"));
    }

    #[test]
    fn named_nodes_are_recycled_or_removed_by_surge_and_drain_without_losing_a_pod() {
        let mut state = running_cluster();
        state.apply(&layout(), &workload(1, 3, 1));
        settle(&mut state);
        let names: Vec<String> = state.node_pools["np_1"].nodes.iter().map(|n| n.name.clone()).collect();
        // Recycle one node: a surge node comes, then the old one is cordoned, drained and deleted.
        let mut recycle = pool("np_1", 2, 3, "bm.small");
        recycle.kind = CommandKind::NodePoolUpdate as i32;
        recycle.replace_nodes = vec![names[1].clone(), "gone-already".into()];
        let reports = state.apply(&layout(), &recycle);
        assert!(succeeded(&reports).is_empty(), "waits for the node to be replaced");
        let mut seen = Vec::new();
        let mut done = Vec::new();
        for _ in 0..60 {
            let reports = state.tick(&layout(), Utc::now());
            seen.extend(steps(&reports, "op-np_1-2"));
            done.extend(succeeded(&reports));
            assert!(state.node_pools["np_1"].nodes.len() <= 4, "surge of one node at most");
            assert_eq!(state.workloads["wl_web"].available(), 3, "no pod is lost");
        }
        assert_eq!(done, ["op-np_1-2"]);
        assert_eq!(
            seen,
            [
                format!("node pool workers: node {} cordoned, draining", names[1]),
                format!("node pool workers: node {} cordoned, drained and replaced", names[1]),
            ]
        );
        let now: Vec<String> = state.node_pools["np_1"].nodes.iter().map(|n| n.name.clone()).collect();
        assert_eq!(now.len(), 3);
        assert!(now.contains(&names[0]) && now.contains(&names[2]) && !now.contains(&names[1]), "{now:?}");

        // Remove one with no replacement: the count is one lower and that very node goes, drained.
        let mut remove = pool("np_1", 3, 2, "bm.small");
        remove.kind = CommandKind::NodePoolUpdate as i32;
        remove.remove_nodes = vec![names[0].clone()];
        state.apply(&layout(), &remove);
        assert_eq!(state.node_pools["np_1"].nodes.len(), 3, "not removed before it is drained");
        // A later change in between repeats the removal and shrinks no other node.
        let mut relabel = pool("np_1", 4, 2, "bm.small");
        relabel.kind = CommandKind::NodePoolUpdate as i32;
        relabel.remove_nodes = vec![names[0].clone()];
        state.apply(&layout(), &relabel);
        assert_eq!(state.node_pools["np_1"].nodes.len(), 3);
        let done = settle(&mut state);
        assert!(done.contains(&"op-np_1-3".to_string()) && done.contains(&"op-np_1-4".to_string()), "{done:?}");
        let left: Vec<String> = state.node_pools["np_1"].nodes.iter().map(|n| n.name.clone()).collect();
        assert_eq!(left.len(), 2);
        assert!(!left.contains(&names[0]) && left.contains(&names[2]), "{left:?}");
        assert!(state.node_pools["np_1"].removing.is_empty() && state.node_pools["np_1"].recycling.is_empty());
        assert_eq!(state.workloads["wl_web"].available(), 3, "no pod is lost");
    }

    #[test]
    fn nodes_report_the_machine_type_they_run_on_while_their_pool_changes_type() {
        let mut state = running_cluster();
        settle(&mut state);
        let mut change = pool("np_1", 2, 3, "bm.medium");
        change.kind = CommandKind::NodePoolUpdate as i32;
        state.apply(&layout(), &change);
        state.tick(&layout(), Utc::now());
        let later = Utc::now() + chrono::Duration::hours(2);
        let types: BTreeSet<String> = state
            .usage(&layout(), later)
            .into_iter()
            .filter_map(|r| match r {
                pb::status::Message::Usage(sample) => Some(sample.nodes),
                _ => None,
            })
            .flatten()
            .map(|n| n.machine_type)
            .collect();
        assert_eq!(types, BTreeSet::from(["bm.medium".to_string(), "bm.small".to_string()]), "old and surge nodes");
    }

    /// The command that moves cluster `cl_1` to 1.33, as operation `op`.
    fn upgrade_to_133(generation: i64, op: &str) -> pb::Command {
        let mut upgrade = create("cl_1", generation);
        upgrade.kind = CommandKind::ClusterUpdate as i32;
        upgrade.operation_id = op.into();
        upgrade.cluster.as_mut().unwrap().kubernetes_version = "1.33".into();
        upgrade
    }

    #[test]
    fn an_upgrade_whose_pool_is_deleted_midway_still_finishes_and_other_changes_do_not_wait_for_it() {
        let mut state = running_cluster();
        state.apply(&layout(), &upgrade_to_133(2, "op-upgrade"));
        // A change of the control plane alone while it upgrades: done with the control plane.
        let mut replicas = upgrade_to_133(3, "op-replicas");
        replicas.cluster.as_mut().unwrap().control_plane_replicas = 3;
        state.apply(&layout(), &replicas);
        let mut done = Vec::new();
        for _ in 0..3 {
            done.extend(succeeded(&state.tick(&layout(), Utc::now())));
        }
        assert_eq!(done, ["op-replicas"], "not held up by the pools' replacement");
        assert!(state.is_waiting("op-upgrade"), "the upgrade waits for the pool");
        // The pool goes mid-replacement: the upgrade has nothing left to wait for.
        let mut delete = pool("np_1", 2, 3, "bm.small");
        delete.kind = CommandKind::NodePoolDelete as i32;
        delete.operation_id = "op-delete".into();
        let finished = succeeded(&state.apply(&layout(), &delete));
        assert!(finished.contains(&"op-upgrade".to_string()) && finished.contains(&"op-delete".to_string()));
        assert!(!state.is_waiting("op-upgrade"));
    }

    #[test]
    fn etcd_snapshots_are_taken_on_schedule_and_pruned() {
        let mut state = running_cluster();
        let start = Utc::now();
        let mut kept = layout();
        kept.etcd_snapshots_kept = 3;
        for hour in 0..5 {
            state.tick(&kept, start + chrono::Duration::hours(hour));
            state.tick(&kept, start + chrono::Duration::hours(hour) + chrono::Duration::minutes(30));
        }
        let snapshots = &state.clusters["cl_1"].snapshots;
        assert_eq!(snapshots.len(), 3);
        assert_eq!(snapshots.last().unwrap().taken_at, start + chrono::Duration::hours(4));
    }

    /// A snapshot or restore command of cluster `cl_1`.
    fn etcd_command(kind: CommandKind, operation: &str, snapshot: &str) -> pb::Command {
        pb::Command {
            id: 9,
            kind: kind as i32,
            operation_id: operation.into(),
            cluster_id: "cl_1".into(),
            name: "prod".into(),
            snapshot: snapshot.into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_snapshot_on_demand_is_taken_once_and_restored_in_stages() {
        let mut state = running_cluster();
        let snapshot = etcd_command(CommandKind::ClusterSnapshot, "op-snap", "");
        assert_eq!(succeeded(&state.apply(&layout(), &snapshot)), ["op-snap"]);
        assert_eq!(succeeded(&state.apply(&layout(), &snapshot)), ["op-snap"], "delivered twice");
        let snapshots = state.clusters["cl_1"].snapshots.clone();
        assert_eq!(snapshots.len(), 1, "taken once: {snapshots:?}");
        assert!(snapshots[0].on_demand && snapshots[0].size_bytes > 2 * 1024 * 1024, "{snapshots:?}");
        let failed = |reports: &[pb::status::Message], code: &str| {
            reports.iter().any(|r| matches!(r, pb::status::Message::Progress(p) if p.error_code == code))
        };
        let unknown = state.apply(&layout(), &etcd_command(CommandKind::ClusterRestore, "op-bad", "nope"));
        assert!(failed(&unknown, "unknown_snapshot"), "{unknown:?}");

        let name = snapshots[0].name.clone();
        let restore = etcd_command(CommandKind::ClusterRestore, "op-restore", &name);
        assert!(succeeded(&state.apply(&layout(), &restore)).is_empty(), "a restore takes ticks");
        assert!(succeeded(&state.apply(&layout(), &restore)).is_empty(), "delivered twice, started once");
        assert_eq!(state.cluster_observation("cl_1").unwrap().phase, "restoring");
        let again = state.apply(&layout(), &etcd_command(CommandKind::ClusterSnapshot, "op-snap-2", ""));
        assert!(failed(&again, "restore_in_progress"), "{again:?}");
        let mut steps = Vec::new();
        for _ in 0..5 {
            for report in state.tick(&layout(), Utc::now()) {
                if let pb::status::Message::Progress(p) = report
                    && p.operation_id == "op-restore"
                {
                    steps.push(format!("{}: {}", p.status, p.step));
                }
            }
        }
        assert_eq!(
            steps,
            [
                format!("running: etcd: member prod-etcd-0 restored from snapshot {name} as a cluster of one"),
                "running: etcd: scaled back to 3 members, one per zone".to_string(),
                format!("running: control plane: API servers started on the state of {name}"),
                "succeeded: done".to_string(),
            ]
        );
        let cluster = &state.clusters["cl_1"];
        assert_eq!(cluster.etcd.len(), 3);
        assert_eq!(cluster.restored_from.as_ref().map(|(s, _)| s.as_str()), Some(name.as_str()));
        let observed = state.cluster_observation("cl_1").unwrap();
        assert_eq!(observed.phase, "running");
        assert!(observed.conditions.iter().any(|c| c.r#type == "Restored"), "{observed:?}");
        assert!(observed.snapshots.iter().any(|s| s.name == name && s.on_demand));
    }

    #[test]
    fn a_certificate_command_ends_a_create_but_never_a_restore() {
        let mut state = SimState::default();
        let created = state.apply(&layout(), &pb::Command { ca_pem: "CA".into(), ..create("cl_1", 1) });
        assert!(succeeded(&created).is_empty(), "a control plane without its certificate is not done");
        let certificate = |operation: &str| pb::Command {
            id: 2,
            kind: CommandKind::ClusterCertificate as i32,
            operation_id: operation.into(),
            cluster_id: "cl_1".into(),
            serving_certificate_pem: "SERVING".into(),
            ..Default::default()
        };
        let served = state.apply(&layout(), &certificate("op-cert"));
        assert!(succeeded(&served).contains(&"op".to_string()), "the create ends with its certificate: {served:?}");

        state.apply(&layout(), &etcd_command(CommandKind::ClusterSnapshot, "op-snap", ""));
        let name = state.clusters["cl_1"].snapshots[0].name.clone();
        state.apply(&layout(), &etcd_command(CommandKind::ClusterRestore, "op-restore", &name));
        let revoked = state.apply(&layout(), &certificate("op-revoke"));
        assert!(!succeeded(&revoked).contains(&"op-restore".to_string()), "{revoked:?}");
        assert!(state.clusters["cl_1"].restore.is_some());
        let change = pb::Command {
            kind: CommandKind::ClusterUpdate as i32,
            operation_id: "op-change".into(),
            ..create("cl_1", 2)
        };
        let refused = state.apply(&layout(), &change);
        assert!(
            refused
                .iter()
                .any(|r| matches!(r, pb::status::Message::Progress(p) if p.error_code == "restore_in_progress")),
            "{refused:?}"
        );
    }

    #[test]
    fn a_control_plane_is_never_moved_to_an_older_version() {
        let mut state = SimState::default();
        let on = |version: &str, generation: i64| pb::Command {
            kind: CommandKind::ClusterUpdate as i32,
            operation_id: format!("op-{generation}"),
            cluster: Some(pb::ClusterSpec {
                control_plane_replicas: 3,
                kubernetes_version: version.into(),
                ..Default::default()
            }),
            ..create("cl_1", generation)
        };
        state.apply(&layout(), &pb::Command { kind: CommandKind::ClusterCreate as i32, ..on("1.32", 1) });
        state.apply(&layout(), &on("1.33", 2));
        assert_eq!(state.clusters["cl_1"].upgrade.as_ref().map(|u| u.to_version.as_str()), Some("1.33"));
        let refused = state.apply(&layout(), &on("1.32", 3));
        assert!(
            refused.iter().any(|r| matches!(r, pb::status::Message::Progress(p) if p.error_code == "downgrade")),
            "{refused:?}"
        );
        assert_eq!(state.clusters["cl_1"].generation, 2, "the refused change is not taken");
        assert!(older_version("1.9", "1.10") && !older_version("1.10", "1.9") && !older_version("", "1.32"));
    }

    #[test]
    fn usage_is_sampled_per_cluster_by_machine_type() {
        let mut state = running_cluster();
        let mut every_minute = layout();
        every_minute.usage_sample_every_seconds = 60;
        let start = Utc::now();
        assert!(state.tick(&every_minute, start).iter().all(|r| !matches!(r, pb::status::Message::Usage(_))));
        let reports = state.tick(&every_minute, start + chrono::Duration::seconds(90));
        let usage: Vec<&pb::UsageSample> = reports
            .iter()
            .filter_map(|r| match r {
                pb::status::Message::Usage(u) => Some(u),
                _ => None,
            })
            .collect();
        assert_eq!(usage.len(), 1);
        assert_eq!(usage[0].cluster_seconds, 90.0);
        assert_eq!(usage[0].node_seconds["bm.small"], 3.0 * 90.0);
        // Each node is reported on its own, exactly, for per-node minimums and caps.
        assert_eq!(usage[0].nodes.len(), 3);
        assert!(usage[0].nodes.iter().all(|n| n.milliseconds == 90_000 && n.machine_type == "bm.small"));
        let names: std::collections::BTreeSet<_> = usage[0].nodes.iter().map(|n| &n.name).collect();
        assert_eq!(names.len(), 3, "one entry per node");
        assert_eq!(usage[0].control_plane_replicas as usize, state.clusters["cl_1"].api_servers.len());
    }

    #[test]
    fn deleting_a_workload_removes_its_pods_then_forgets_it() {
        let mut state = running_cluster();
        state.apply(&layout(), &workload(1, 3, 1));
        settle(&mut state);
        let mut delete = workload(2, 3, 1);
        delete.kind = CommandKind::WorkloadDelete as i32;
        state.apply(&layout(), &delete);
        let reports = state.tick(&layout(), Utc::now());
        assert!(succeeded(&reports).contains(&"op-web-2".to_string()));
        assert!(reports.iter().any(|r| matches!(r, pb::status::Message::Observation(o) if o.gone)));
        assert!(state.workloads.is_empty());
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
