//! Workloads in the simulated region, reconciled one tick at a time the way
//! the Kubernetes Deployment controller does it: pods of the new template
//! revision are added while the total stays within `replicas + maxSurge`,
//! pods of older revisions are removed only while at least
//! `replicas - maxUnavailable` pods stay available, pods on lost nodes are
//! replaced (self-healing), and a pod becomes ready one tick after it was
//! placed.

use moke_proto::region as pb;
use serde::{Deserialize, Serialize};

use crate::scheduler::{PodRequest, Scheduler};

/// One pod.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SimPod {
    pub name: String,
    /// None while pending.
    pub node: Option<String>,
    pub zone: String,
    pub revision: i64,
    pub ready: bool,
    pub ip: String,
    /// The tick it was placed on its node.
    pub placed_at: u64,
}

/// One workload (a Deployment) and its pods.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SimWorkload {
    pub generation: i64,
    pub cluster_id: String,
    pub spec: pb::WorkloadSpec,
    pub pods: Vec<SimPod>,
    pub deleted: bool,
    /// Operations that finish when the workload has fully rolled out.
    pub waiting_operations: Vec<String>,
    /// Why the last pending pod could not be placed ("" when none is pending).
    pub unschedulable_reason: String,
    next_pod: u64,
    /// The last change made to the workload's Deployment behind Moke's
    /// back (with kubectl), reported to the gateway as a condition.
    #[serde(default)]
    pub drift: Option<Drift>,
    /// The workload must be reported at the next tick though its pods did
    /// not change (a drift was found).
    #[serde(default)]
    pub report_due: bool,
}

/// A change made with the cluster's API to a Deployment Moke manages: who
/// made it, when, and which fields it changed. Moke puts its spec back,
/// unless the workload adopts cluster edits: then the edit is `proposed`
/// to the gateway, and put back only if no new spec comes within
/// [`ADOPTION_WAIT_TICKS`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Drift {
    pub by: String,
    pub at: String,
    pub fields: Vec<String>,
    /// The workload as edited, while the gateway has not answered.
    #[serde(default)]
    pub proposed: Option<pb::WorkloadSpec>,
    /// The tick the edit was proposed at.
    #[serde(default)]
    pub since_tick: u64,
    /// Earlier proposals this one replaced before the gateway answered
    /// (at most [`MAX_SUPERSEDED`]): a new spec equal to one of them is an
    /// adoption of an earlier edit, and the later ones still wait.
    #[serde(default)]
    pub superseded: Vec<pb::WorkloadSpec>,
}

/// Earlier proposals remembered while the gateway has not answered.
pub const MAX_SUPERSEDED: usize = 8;

/// Ticks an edit proposed for adoption waits for the gateway's new spec
/// before it is put back (the gateway refused it, or cannot be reached).
pub const ADOPTION_WAIT_TICKS: u64 = 20;

impl Drift {
    /// The edit waits for the gateway to adopt it.
    pub fn adopting(&self) -> bool {
        self.proposed.is_some()
    }

    /// True when `spec` (a new spec from the gateway) is what one of the
    /// proposals asked for: it adopted it.
    pub fn adopted_by(&self, spec: &pb::WorkloadSpec) -> (bool, bool) {
        let same = |proposal: &pb::WorkloadSpec| {
            pb::WorkloadSpec { revision: 0, adopt_cluster_edits: false, ..proposal.clone() }
                == pb::WorkloadSpec { revision: 0, adopt_cluster_edits: false, ..spec.clone() }
        };
        let latest = self.proposed.as_ref().is_some_and(same);
        (latest, !latest && self.superseded.iter().any(same))
    }

    /// What the gateway hears of an edit it may adopt.
    pub fn cluster_edit(&self) -> Option<pb::ClusterEdit> {
        let spec = self.proposed.clone()?;
        Some(pb::ClusterEdit {
            by: self.by.clone(),
            at: self.at.clone(),
            fields: self.fields.clone(),
            spec: Some(spec),
        })
    }
}

/// What a workload needs to know about its cluster's nodes.
pub struct NodeState<'a> {
    /// The node runs pods (it and its zone are up).
    pub healthy: &'a dyn Fn(&str) -> bool,
    /// The node is being drained: its pods must move.
    pub draining: &'a dyn Fn(&str) -> bool,
    pub zone_of: &'a dyn Fn(&str) -> String,
}

/// Ticks a placed pod takes to become ready.
pub const TICKS_TO_READY: u64 = 1;

impl SimWorkload {
    /// A workload with no pods yet.
    pub fn new(cluster_id: &str, generation: i64, spec: pb::WorkloadSpec) -> SimWorkload {
        SimWorkload {
            generation,
            cluster_id: cluster_id.to_string(),
            spec,
            pods: Vec::new(),
            deleted: false,
            waiting_operations: Vec::new(),
            unschedulable_reason: String::new(),
            next_pod: 0,
            drift: None,
            report_due: false,
        }
    }

    /// The scheduler's view of one pod of this workload.
    pub fn request(&self) -> PodRequest {
        PodRequest {
            spread_key: format!("{}/{}", self.spec.namespace, self.spec.name),
            cpu_millis: self.spec.cpu_millis,
            memory_mib: self.spec.memory_mib,
            node_selector: self.spec.node_selector.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            tolerations: self.spec.tolerations.clone(),
        }
    }

    /// The revision being rolled out: the spec's, unless paused, in which
    /// case the one most pods already run.
    pub fn target_revision(&self) -> i64 {
        if !self.spec.paused || self.pods.is_empty() {
            return self.spec.revision;
        }
        let mut counts = std::collections::BTreeMap::<i64, usize>::new();
        for pod in &self.pods {
            *counts.entry(pod.revision).or_default() += 1;
        }
        counts.into_iter().max_by_key(|(revision, count)| (*count, *revision)).map(|(r, _)| r).unwrap_or_default()
    }

    fn bounds(&self) -> (usize, usize, usize) {
        let replicas = self.spec.replicas.max(0) as usize;
        let surge = self.spec.max_surge.max(0) as usize;
        let mut unavailable = self.spec.max_unavailable.max(0) as usize;
        if surge == 0 && unavailable == 0 {
            // Kubernetes refuses both zero; never stall a rollout on it.
            unavailable = 1;
        }
        (replicas, surge, unavailable.min(replicas))
    }

    /// Pods serving traffic.
    pub fn available(&self) -> usize {
        self.pods.iter().filter(|p| p.ready).count()
    }

    /// True when every pod runs the target revision, there are exactly
    /// `replicas` of them and all are ready.
    pub fn rolled_out(&self) -> bool {
        let target = self.target_revision();
        self.pods.len() == self.spec.replicas.max(0) as usize
            && self.pods.iter().all(|p| p.revision == target && p.ready)
    }

    fn remove_pods(&mut self, scheduler: &mut Scheduler, mut pick: impl FnMut(&SimPod) -> bool, at_most: usize) {
        let mut removed = 0;
        let request = self.request();
        self.pods.retain(|pod| {
            if removed < at_most && pick(pod) {
                removed += 1;
                if let Some(node) = &pod.node {
                    scheduler.release(node, &request.spread_key, request.cpu_millis, request.memory_mib);
                }
                false
            } else {
                true
            }
        });
    }

    /// Places a pod (or leaves it pending) and records why not.
    fn place(&mut self, scheduler: &mut Scheduler, index: usize, tick: u64, zone_of: &dyn Fn(&str) -> String) {
        match scheduler.schedule(&self.request()) {
            Ok(node) => {
                let pod = &mut self.pods[index];
                pod.zone = zone_of(&node);
                pod.ip = format!(
                    "10.{}.{}.{}",
                    (self.next_pod >> 16) & 0xff,
                    (self.next_pod >> 8) & 0xff,
                    self.next_pod & 0xff
                );
                pod.node = Some(node);
                pod.placed_at = tick;
            }
            Err(reason) => self.unschedulable_reason = reason.to_string(),
        }
    }

    /// One reconcile step. `node_healthy` says whether a node still runs
    /// pods, `node_draining` whether its pods must move (they are replaced
    /// like pods of an old revision: within surge, keeping availability);
    /// `scheduler` already holds every bound pod of the cluster. Returns
    /// true when anything changed.
    pub fn reconcile(&mut self, scheduler: &mut Scheduler, tick: u64, nodes: &NodeState<'_>) -> bool {
        let (node_healthy, node_draining, zone_of) = (nodes.healthy, nodes.draining, nodes.zone_of);
        let before = (self.pods.clone(), self.unschedulable_reason.clone());
        // Self-healing: pods on lost nodes are gone (their requests already
        // are not booked: the scheduler only counts pods on healthy nodes).
        self.pods.retain(|pod| pod.node.as_deref().is_none_or(node_healthy));
        // Pods placed a tick ago are ready.
        for pod in &mut self.pods {
            if pod.node.is_some() && !pod.ready && tick >= pod.placed_at + TICKS_TO_READY {
                pod.ready = true;
            }
        }
        self.unschedulable_reason.clear();
        for index in 0..self.pods.len() {
            if self.pods[index].node.is_none() {
                self.place(scheduler, index, tick, zone_of);
            }
        }
        if self.deleted {
            self.remove_pods(scheduler, |_| true, usize::MAX);
            return before.0 != self.pods;
        }

        let target = self.target_revision();
        let (replicas, surge, max_unavailable) = self.bounds();
        let min_available = replicas - max_unavailable;
        let outdated = |p: &SimPod| p.revision != target || p.node.as_deref().is_some_and(node_draining);

        // Scale up the new revision within replicas + maxSurge.
        let new = self.pods.iter().filter(|p| !outdated(p)).count();
        let room = (replicas + surge).saturating_sub(self.pods.len());
        for _ in 0..replicas.saturating_sub(new).min(room) {
            self.next_pod += 1;
            self.pods.push(SimPod {
                name: format!("{}-{}-{:05x}", self.spec.name, target, self.next_pod),
                node: None,
                zone: String::new(),
                revision: target,
                ready: false,
                ip: String::new(),
                placed_at: tick,
            });
            let index = self.pods.len() - 1;
            self.place(scheduler, index, tick, zone_of);
        }

        // Scale down older revisions: unhealthy pods first, then ready ones
        // only while `min_available` stay available.
        self.remove_pods(scheduler, |p| outdated(p) && !p.ready, usize::MAX);
        let removable = self.available().saturating_sub(min_available);
        self.remove_pods(scheduler, |p| outdated(p) && p.ready, removable);

        // Scale down the new revision past `replicas` (a smaller replica
        // count): pending, then unready, then ready pods.
        let excess = self.pods.len().saturating_sub(replicas);
        if excess > 0 && !self.pods.iter().any(outdated) {
            self.remove_pods(scheduler, |p| p.node.is_none(), excess);
            let excess = self.pods.len().saturating_sub(replicas);
            self.remove_pods(scheduler, |p| !p.ready, excess);
            let excess = self.pods.len().saturating_sub(replicas);
            self.remove_pods(scheduler, |_| true, excess);
        }
        before != (self.pods.clone(), self.unschedulable_reason.clone())
    }

    /// Replica counts and pods as reported to the gateway.
    pub fn status(&self) -> pb::WorkloadStatus {
        let target = self.target_revision();
        let count = |f: &dyn Fn(&SimPod) -> bool| self.pods.iter().filter(|p| f(p)).count() as i64;
        pb::WorkloadStatus {
            replicas: self.pods.len() as i64,
            updated_replicas: count(&|p| p.revision == target),
            ready_replicas: count(&|p| p.ready),
            available_replicas: count(&|p| p.ready),
            revision: target,
            pods: self
                .pods
                .iter()
                .map(|p| pb::Pod {
                    name: p.name.clone(),
                    node: p.node.clone().unwrap_or_default(),
                    zone: p.zone.clone(),
                    revision: p.revision,
                    ready: p.ready,
                    ip: p.ip.clone(),
                })
                .collect(),
            unschedulable_reason: self.unschedulable_reason.clone(),
            cluster_edit: self.drift.as_ref().and_then(Drift::cluster_edit),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;
    use crate::scheduler::{Bound, SchedNode};

    fn nodes(count: usize) -> Vec<SchedNode> {
        (0..count)
            .map(|i| SchedNode {
                name: format!("n{i}"),
                zone: ["a", "b", "c"][i % 3].into(),
                cpu_millis: 16_000,
                memory_mib: 65_536,
                labels: BTreeMap::new(),
                taints: vec![],
                ready: true,
                unschedulable: false,
            })
            .collect()
    }

    fn spec(replicas: i64, surge: i64, unavailable: i64, revision: i64) -> pb::WorkloadSpec {
        pb::WorkloadSpec {
            namespace: "default".into(),
            name: "web".into(),
            image: "registry.example/web:1".into(),
            replicas,
            cpu_millis: 250,
            memory_mib: 256,
            max_surge: surge,
            max_unavailable: unavailable,
            revision,
            ..Default::default()
        }
    }

    /// Ticks the workload over `nodes` until it has rolled out, checking
    /// `invariant` after every tick; returns the ticks taken.
    fn run(
        workload: &mut SimWorkload,
        nodes: &[SchedNode],
        mut tick: u64,
        invariant: &mut dyn FnMut(&SimWorkload),
    ) -> u64 {
        let zones: BTreeMap<String, String> = nodes.iter().map(|n| (n.name.clone(), n.zone.clone())).collect();
        let zone_of = |n: &str| zones.get(n).cloned().unwrap_or_default();
        let start = tick;
        while !workload.rolled_out() {
            let bound: Vec<Bound> = workload
                .pods
                .iter()
                .filter_map(|p| p.node.clone())
                .map(|node| Bound { node, spread_key: "default/web".into(), cpu_millis: 250, memory_mib: 256 })
                .collect();
            let mut scheduler = Scheduler::new(nodes.to_vec(), &bound);
            tick += 1;
            let nodes = NodeState { healthy: &|_| true, draining: &|_| false, zone_of: &zone_of };
            workload.reconcile(&mut scheduler, tick, &nodes);
            invariant(workload);
            assert!(tick - start < 1000, "the rollout never finished: {workload:?}");
        }
        tick
    }

    /// A new spec from the gateway that is an earlier proposal adopted
    /// leaves the later edit waiting; the latest one adopted ends it; any
    /// other is Moke's own change.
    #[test]
    fn a_new_spec_says_which_proposal_it_adopted() {
        let proposal = |replicas, revision| spec(replicas, 1, 0, revision);
        let drift = Drift {
            by: "ada".into(),
            at: "2026-12-06T00:00:00Z".into(),
            fields: vec!["spec.replicas".into()],
            proposed: Some(proposal(5, 1)),
            since_tick: 3,
            superseded: vec![proposal(4, 1)],
        };
        // The gateway names its own revision; only what runs counts.
        assert_eq!(drift.adopted_by(&proposal(5, 2)), (true, false));
        assert_eq!(drift.adopted_by(&proposal(4, 2)), (false, true));
        assert_eq!(drift.adopted_by(&proposal(2, 2)), (false, false));
        assert!(drift.cluster_edit().is_some_and(|edit| edit.spec == Some(proposal(5, 1))));
    }

    #[test]
    fn a_new_workload_comes_up_spread_over_zones() {
        let mut workload = SimWorkload::new("cl", 1, spec(6, 1, 0, 1));
        run(&mut workload, &nodes(6), 0, &mut |_| {});
        let status = workload.status();
        assert_eq!((status.replicas, status.ready_replicas, status.updated_replicas), (6, 6, 6));
        for zone in ["a", "b", "c"] {
            assert_eq!(workload.pods.iter().filter(|p| p.zone == zone).count(), 2);
        }
    }

    #[test]
    fn scale_down_removes_pods_and_keeps_the_rest() {
        let mut workload = SimWorkload::new("cl", 1, spec(5, 1, 0, 1));
        let tick = run(&mut workload, &nodes(3), 0, &mut |_| {});
        workload.spec.replicas = 2;
        run(&mut workload, &nodes(3), tick, &mut |_| {});
        assert_eq!(workload.pods.len(), 2);
    }

    #[test]
    fn a_paused_workload_does_not_roll_out_its_new_revision() {
        let mut workload = SimWorkload::new("cl", 1, spec(3, 1, 0, 1));
        let tick = run(&mut workload, &nodes(3), 0, &mut |_| {});
        workload.spec.paused = true;
        workload.spec.revision = 2;
        run(&mut workload, &nodes(3), tick, &mut |_| {});
        assert!(workload.pods.iter().all(|p| p.revision == 1));
    }

    #[test]
    fn pods_that_fit_nowhere_stay_pending_with_the_reason() {
        let mut workload = SimWorkload::new("cl", 1, spec(2, 1, 0, 1));
        workload.spec.cpu_millis = 64_000;
        let mut scheduler = Scheduler::new(nodes(3), &[]);
        let nodes = NodeState { healthy: &|_| true, draining: &|_| false, zone_of: &|_| String::new() };
        workload.reconcile(&mut scheduler, 1, &nodes);
        assert_eq!(workload.pods.iter().filter(|p| p.node.is_none()).count(), 2);
        assert_eq!(workload.status().unschedulable_reason, "0/3 nodes are available: 3 Insufficient cpu");
    }

    #[test]
    fn pods_on_a_failed_node_are_replaced_elsewhere() {
        let all = nodes(3);
        let mut workload = SimWorkload::new("cl", 1, spec(3, 1, 0, 1));
        let tick = run(&mut workload, &all, 0, &mut |_| {});
        let lost = workload.pods[0].node.clone().unwrap();
        let survivors: Vec<SchedNode> = all.into_iter().filter(|n| n.name != lost).collect();
        let mut scheduler = Scheduler::new(survivors.clone(), &[]);
        let nodes = NodeState { healthy: &|n| n != lost, draining: &|_| false, zone_of: &|_| String::new() };
        workload.reconcile(&mut scheduler, tick + 1, &nodes);
        run(&mut workload, &survivors, tick + 1, &mut |_| {});
        assert_eq!(workload.pods.len(), 3);
        assert!(workload.pods.iter().all(|p| p.node.as_deref() != Some(lost.as_str())));
    }

    proptest! {
        /// During a rolling update from a fully available workload, at
        /// least `replicas - maxUnavailable` pods are available after every
        /// tick and never more than `replicas + maxSurge` exist.
        #[test]
        fn rolling_updates_stay_within_surge_and_unavailability(
            replicas in 1..20i64,
            surge in 0..5i64,
            unavailable in 0..5i64,
            node_count in 2..8usize,
        ) {
            let all = nodes(node_count);
            let mut workload = SimWorkload::new("cl", 1, spec(replicas, surge, unavailable, 1));
            let tick = run(&mut workload, &all, 0, &mut |_| {});
            workload.spec.revision = 2;
            let effective_unavailable = if surge == 0 && unavailable == 0 { 1 } else { unavailable.min(replicas) };
            let floor = (replicas - effective_unavailable) as usize;
            let ceiling = (replicas + surge) as usize;
            let mut worst = usize::MAX;
            run(&mut workload, &all, tick, &mut |w| {
                worst = worst.min(w.available());
                assert!(w.pods.len() <= ceiling, "{} pods exceed {ceiling}", w.pods.len());
            });
            prop_assert!(worst >= floor, "availability fell to {worst}, below {floor}");
            prop_assert!(workload.pods.iter().all(|p| p.revision == 2));
        }
    }
}
