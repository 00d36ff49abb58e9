//! The pod scheduler of the simulated region: for each pod, filter the nodes
//! that can take it (ready, not cordoned, CPU and memory fit, node selector
//! matched, every `NoSchedule`/`NoExecute` taint tolerated), then pick the
//! best by score: spread over zones first (the zone holding the fewest pods
//! of the same workload wins, which keeps zone skew at most one whenever the
//! feasible nodes allow it), then least allocated, then name (so the outcome
//! is deterministic).

use std::collections::BTreeMap;

use moke_proto::region as pb;

/// A node as the scheduler sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedNode {
    pub name: String,
    pub zone: String,
    pub cpu_millis: i64,
    pub memory_mib: i64,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<pb::Taint>,
    pub ready: bool,
    pub unschedulable: bool,
}

/// What one pod asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodRequest {
    /// Pods with the same key are spread over zones together.
    pub spread_key: String,
    pub cpu_millis: i64,
    pub memory_mib: i64,
    pub node_selector: BTreeMap<String, String>,
    pub tolerations: Vec<pb::Toleration>,
}

/// A pod already bound to a node.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    pub node: String,
    pub spread_key: String,
    pub cpu_millis: i64,
    pub memory_mib: i64,
}

/// Why a pod fits nowhere, in the words `kubectl describe` would use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unschedulable(pub String);

impl std::fmt::Display for Unschedulable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// True when `toleration` tolerates `taint`.
pub fn tolerates(toleration: &pb::Toleration, taint: &pb::Taint) -> bool {
    let effect_matches = toleration.effect.is_empty() || toleration.effect == taint.effect;
    let key_matches = toleration.key.is_empty() && toleration.operator == "Exists" || toleration.key == taint.key;
    let value_matches = toleration.operator == "Exists" || toleration.value == taint.value;
    effect_matches && key_matches && value_matches
}

/// True when every taint that keeps pods off the node is tolerated.
fn taints_tolerated(node: &SchedNode, pod: &PodRequest) -> bool {
    node.taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .all(|taint| pod.tolerations.iter().any(|t| tolerates(t, taint)))
}

/// True when `pod` would run on an empty `node` (the autoscaler's question
/// of a node a pool could add): selector matched, taints tolerated, and
/// CPU and memory within the node's.
pub fn fits_empty(node: &SchedNode, pod: &PodRequest) -> bool {
    pod.node_selector.iter().all(|(k, v)| node.labels.get(k) == Some(v))
        && taints_tolerated(node, pod)
        && pod.cpu_millis <= node.cpu_millis
        && pod.memory_mib <= node.memory_mib
}

/// The cluster's nodes with what is already placed on them.
#[derive(Debug, Clone)]
pub struct Scheduler {
    nodes: Vec<SchedNode>,
    used: BTreeMap<String, (i64, i64)>,
    /// Pods per (spread key, zone).
    spread: BTreeMap<(String, String), usize>,
}

impl Scheduler {
    /// A scheduler over `nodes` with `bound` pods already running.
    pub fn new(nodes: Vec<SchedNode>, bound: &[Bound]) -> Scheduler {
        let mut scheduler = Scheduler { nodes, used: BTreeMap::new(), spread: BTreeMap::new() };
        for pod in bound {
            scheduler.account(&pod.node, &pod.spread_key, pod.cpu_millis, pod.memory_mib);
        }
        scheduler
    }

    fn zone_of(&self, node: &str) -> Option<&str> {
        self.nodes.iter().find(|n| n.name == node).map(|n| n.zone.as_str())
    }

    fn account(&mut self, node: &str, spread_key: &str, cpu: i64, memory: i64) {
        let used = self.used.entry(node.to_string()).or_default();
        used.0 += cpu;
        used.1 += memory;
        if let Some(zone) = self.zone_of(node).map(str::to_string) {
            *self.spread.entry((spread_key.to_string(), zone)).or_default() += 1;
        }
    }

    /// CPU and memory still free on a node.
    pub fn free(&self, node: &SchedNode) -> (i64, i64) {
        let (cpu, memory) = self.used.get(&node.name).copied().unwrap_or_default();
        (node.cpu_millis - cpu, node.memory_mib - memory)
    }

    /// Chooses a node for the pod and books its requests there.
    pub fn schedule(&mut self, pod: &PodRequest) -> Result<String, Unschedulable> {
        let mut reasons: BTreeMap<&'static str, usize> = BTreeMap::new();
        let mut feasible = Vec::new();
        for node in &self.nodes {
            let (free_cpu, free_memory) = self.free(node);
            let refusal = if !node.ready {
                Some("node(s) were not ready")
            } else if node.unschedulable {
                Some("node(s) were unschedulable")
            } else if !pod.node_selector.iter().all(|(k, v)| node.labels.get(k) == Some(v)) {
                Some("node(s) didn't match Pod's node affinity/selector")
            } else if !taints_tolerated(node, pod) {
                Some("node(s) had untolerated taint")
            } else if free_cpu < pod.cpu_millis {
                Some("Insufficient cpu")
            } else if free_memory < pod.memory_mib {
                Some("Insufficient memory")
            } else {
                None
            };
            match refusal {
                Some(reason) => *reasons.entry(reason).or_default() += 1,
                None => feasible.push(node),
            }
        }
        let pods_in_zone = |zone: &str| self.spread.get(&(pod.spread_key.clone(), zone.to_string())).copied();
        let best = feasible
            .into_iter()
            .min_by(|a, b| {
                let (spread_a, spread_b) = (pods_in_zone(&a.zone).unwrap_or(0), pods_in_zone(&b.zone).unwrap_or(0));
                spread_a
                    .cmp(&spread_b)
                    .then_with(|| self.allocation_after(a, pod).total_cmp(&self.allocation_after(b, pod)))
                    .then_with(|| a.name.cmp(&b.name))
            })
            .map(|node| node.name.clone());
        match best {
            Some(node) => {
                self.account(&node, &pod.spread_key, pod.cpu_millis, pod.memory_mib);
                Ok(node)
            }
            None => {
                let total = self.nodes.len();
                let detail: Vec<String> = reasons.iter().map(|(reason, n)| format!("{n} {reason}")).collect();
                Err(Unschedulable(format!("0/{total} nodes are available: {}", detail.join(", "))))
            }
        }
    }

    /// Releases a pod's requests (it was deleted).
    pub fn release(&mut self, node: &str, spread_key: &str, cpu: i64, memory: i64) {
        self.account(node, spread_key, -cpu, -memory);
    }

    /// The mean fraction of CPU and memory in use once the pod is placed
    /// (lower is better: the least-allocated score).
    fn allocation_after(&self, node: &SchedNode, pod: &PodRequest) -> f64 {
        let (cpu, memory) = self.used.get(&node.name).copied().unwrap_or_default();
        let fraction = |used: i64, capacity: i64| if capacity <= 0 { 1.0 } else { used as f64 / capacity as f64 };
        (fraction(cpu + pod.cpu_millis, node.cpu_millis) + fraction(memory + pod.memory_mib, node.memory_mib)) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn node(name: &str, zone: &str, cpu: i64, memory: i64) -> SchedNode {
        SchedNode {
            name: name.into(),
            zone: zone.into(),
            cpu_millis: cpu,
            memory_mib: memory,
            labels: BTreeMap::new(),
            taints: vec![],
            ready: true,
            unschedulable: false,
        }
    }

    fn pod(cpu: i64, memory: i64) -> PodRequest {
        PodRequest { spread_key: "web".into(), cpu_millis: cpu, memory_mib: memory, ..Default::default() }
    }

    fn taint(key: &str, effect: &str) -> pb::Taint {
        pb::Taint { key: key.into(), value: "true".into(), effect: effect.into() }
    }

    #[test]
    fn picks_the_least_allocated_node_within_the_emptiest_zone() {
        let nodes = vec![node("a1", "a", 4000, 8192), node("a2", "a", 4000, 8192), node("b1", "b", 4000, 8192)];
        let bound = [Bound { node: "a1".into(), spread_key: "other".into(), cpu_millis: 3000, memory_mib: 1024 }];
        let mut scheduler = Scheduler::new(nodes, &bound);
        // Both zones hold no "web" pod; b1 and a2 are equally empty, a1 is busy.
        assert_eq!(scheduler.schedule(&pod(500, 512)).unwrap(), "a2");
        // Zone a now has one: spread sends the next to b.
        assert_eq!(scheduler.schedule(&pod(500, 512)).unwrap(), "b1");
    }

    #[test]
    fn refuses_what_fits_nowhere_and_says_why() {
        let mut nodes = vec![node("a1", "a", 1000, 1024), node("b1", "b", 4000, 8192), node("c1", "c", 4000, 8192)];
        nodes[1].ready = false;
        nodes[2].unschedulable = true;
        let mut scheduler = Scheduler::new(nodes, &[]);
        let error = scheduler.schedule(&pod(2000, 512)).unwrap_err();
        assert_eq!(
            error.0,
            "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) were not ready, 1 node(s) were unschedulable"
        );
    }

    #[test]
    fn node_selectors_and_taints_decide_where_pods_may_go() {
        let mut gpu = node("gpu", "a", 8000, 8192);
        gpu.labels.insert("accelerator".into(), "gpu".into());
        gpu.taints.push(taint("dedicated", "NoSchedule"));
        let general = node("general", "b", 8000, 8192);
        let mut scheduler = Scheduler::new(vec![gpu, general], &[]);

        let mut wants_gpu = pod(100, 100);
        wants_gpu.node_selector.insert("accelerator".into(), "gpu".into());
        assert!(scheduler.schedule(&wants_gpu).unwrap_err().0.contains("untolerated taint"));

        wants_gpu.tolerations.push(pb::Toleration {
            key: "dedicated".into(),
            operator: "Exists".into(),
            ..Default::default()
        });
        assert_eq!(scheduler.schedule(&wants_gpu).unwrap(), "gpu");
        // Untolerating pods never land on the tainted node.
        for _ in 0..5 {
            assert_eq!(scheduler.schedule(&pod(100, 100)).unwrap(), "general");
        }
    }

    #[test]
    fn prefer_no_schedule_taints_do_not_filter() {
        let mut soft = node("soft", "a", 1000, 1000);
        soft.taints.push(taint("spot", "PreferNoSchedule"));
        assert_eq!(Scheduler::new(vec![soft], &[]).schedule(&pod(100, 100)).unwrap(), "soft");
    }

    #[test]
    fn toleration_matching_follows_kubernetes() {
        let t = taint("k", "NoSchedule");
        let equal = |value: &str, effect: &str| pb::Toleration {
            key: "k".into(),
            operator: "Equal".into(),
            value: value.into(),
            effect: effect.into(),
        };
        assert!(tolerates(&equal("true", "NoSchedule"), &t));
        assert!(tolerates(&equal("true", ""), &t));
        assert!(!tolerates(&equal("false", "NoSchedule"), &t));
        assert!(!tolerates(&equal("true", "NoExecute"), &t));
        let everything = pb::Toleration { operator: "Exists".into(), ..Default::default() };
        assert!(tolerates(&everything, &t));
    }

    fn arb_taint() -> impl Strategy<Value = Option<pb::Taint>> {
        prop_oneof![
            Just(None),
            Just(Some(taint("dedicated", "NoSchedule"))),
            Just(Some(taint("maintenance", "NoExecute"))),
            Just(Some(taint("spot", "PreferNoSchedule"))),
        ]
    }

    fn arb_nodes() -> impl Strategy<Value = Vec<SchedNode>> {
        prop::collection::vec((0..3usize, 1..16i64, 1..32i64, arb_taint(), any::<bool>()), 1..12).prop_map(|specs| {
            specs
                .into_iter()
                .enumerate()
                .map(|(i, (zone, cpus, gib, taint, ssd))| {
                    let mut n = node(&format!("n{i}"), ["a", "b", "c"][zone], cpus * 1000, gib * 1024);
                    n.taints.extend(taint);
                    if ssd {
                        n.labels.insert("disk".into(), "ssd".into());
                    }
                    n
                })
                .collect()
        })
    }

    fn arb_pods() -> impl Strategy<Value = Vec<PodRequest>> {
        prop::collection::vec((0..3usize, 1..4000i64, 1..8192i64, any::<bool>(), any::<bool>()), 1..60).prop_map(
            |specs| {
                specs
                    .into_iter()
                    .map(|(app, cpu, memory, tolerate, want_ssd)| {
                        let mut p = pod(cpu, memory);
                        p.spread_key = format!("app{app}");
                        if tolerate {
                            p.tolerations.push(pb::Toleration {
                                key: "dedicated".into(),
                                operator: "Exists".into(),
                                ..Default::default()
                            });
                        }
                        if want_ssd {
                            p.node_selector.insert("disk".into(), "ssd".into());
                        }
                        p
                    })
                    .collect()
            },
        )
    }

    proptest! {
        /// No node is ever given more than it has, a pod lands only where
        /// every hard taint is tolerated and its selector matches.
        #[test]
        fn placements_respect_capacity_taints_and_selectors(nodes in arb_nodes(), pods in arb_pods()) {
            let mut scheduler = Scheduler::new(nodes.clone(), &[]);
            let mut used: BTreeMap<String, (i64, i64)> = BTreeMap::new();
            for p in &pods {
                if let Ok(name) = scheduler.schedule(p) {
                    let n = nodes.iter().find(|n| n.name == name).unwrap();
                    prop_assert!(taints_tolerated(n, p), "{name} has a taint the pod does not tolerate");
                    prop_assert!(p.node_selector.iter().all(|(k, v)| n.labels.get(k) == Some(v)));
                    let u = used.entry(name.clone()).or_default();
                    u.0 += p.cpu_millis;
                    u.1 += p.memory_mib;
                    prop_assert!(u.0 <= n.cpu_millis && u.1 <= n.memory_mib, "{name} over capacity");
                }
            }
        }

        /// With room everywhere, a workload's pods never differ by more than
        /// one between two zones.
        #[test]
        fn zone_skew_stays_at_most_one_when_feasible(
            per_zone in prop::collection::vec(1..4usize, 3),
            replicas in 1..40usize,
        ) {
            let nodes: Vec<SchedNode> = ["a", "b", "c"]
                .iter()
                .zip(&per_zone)
                .flat_map(|(zone, count)| (0..*count).map(move |i| node(&format!("{zone}{i}"), zone, 64_000, 262_144)))
                .collect();
            let mut scheduler = Scheduler::new(nodes.clone(), &[]);
            let mut counts: BTreeMap<String, usize> = BTreeMap::new();
            for _ in 0..replicas {
                let name = scheduler.schedule(&pod(100, 128)).unwrap();
                let zone = nodes.iter().find(|n| n.name == name).unwrap().zone.clone();
                *counts.entry(zone).or_default() += 1;
            }
            let max = ["a", "b", "c"].iter().map(|z| counts.get(*z).copied().unwrap_or(0)).max().unwrap();
            let min = ["a", "b", "c"].iter().map(|z| counts.get(*z).copied().unwrap_or(0)).min().unwrap();
            prop_assert!(max - min <= 1, "skew {} in {:?}", max - min, counts);
        }
    }
}
