//! The control plane as its cluster's API shows it, in `kube-system`: a
//! static pod per component on each control-plane member (the API servers,
//! with a controller manager and a scheduler beside each, and the three
//! etcd members), ready while the member's zone is up; and the leader
//! leases (`coordination.k8s.io/v1`) of the controller manager and the
//! scheduler, naming the one instance that acts while the others stand by.

use serde_json::{Value, json};

use crate::sim::{LEADER_ELECTED, Member, SimCluster};

/// The etcd release the simulated control planes run.
const ETCD_VERSION: &str = "3.5.21-0";
/// How long a lease holds without renewal, as the components set it.
const LEASE_SECONDS: i64 = 15;

/// One static pod of the control plane.
fn component_pod(component: &str, image: &str, member: &Member, up: bool, since: &str) -> Value {
    let ready = if up { "True" } else { "False" };
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("{component}-{}", member.name), "namespace": "kube-system",
            "labels": { "component": component, "tier": "control-plane" },
            "annotations": { "kubernetes.io/config.source": "file" },
            "creationTimestamp": since,
        },
        "spec": {
            "nodeName": member.name, "priorityClassName": "system-node-critical", "hostNetwork": true,
            "containers": [{ "name": component, "image": image }],
        },
        "status": {
            "phase": if up { "Running" } else { "Unknown" },
            "conditions": [
                { "type": "PodScheduled", "status": "True" },
                { "type": "Ready", "status": ready },
                { "type": "ContainersReady", "status": ready },
            ],
            "containerStatuses": [{
                "name": component, "image": image, "ready": up, "restartCount": 0, "started": up,
                "state": if up { json!({ "running": {} }) } else { json!({ "waiting": { "reason": "NodeUnreachable" } }) },
            }],
        },
    })
}

/// The control plane's pods (by name) and leases, as objects to store.
pub fn objects(cluster: &SimCluster, member_up: impl Fn(&Member) -> bool) -> (Vec<Value>, Vec<Value>) {
    let version = format!("v{}", cluster.kubernetes_version.trim_start_matches('v'));
    let since = "2026-01-01T00:00:00Z";
    let mut pods = Vec::new();
    for member in &cluster.api_servers {
        let up = member_up(member);
        for component in ["kube-apiserver", "kube-controller-manager", "kube-scheduler"] {
            let image = format!("registry.k8s.io/{component}:{version}");
            pods.push(component_pod(component, &image, member, up, since));
        }
    }
    for member in &cluster.etcd {
        let image = format!("registry.k8s.io/etcd:{ETCD_VERSION}");
        pods.push(component_pod("etcd", &image, member, member_up(member), since));
    }
    let leases = LEADER_ELECTED
        .iter()
        .filter_map(|component| {
            let leader = cluster.leaders.get(*component).filter(|l| !l.holder.is_empty())?;
            Some(json!({
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": { "name": component, "namespace": "kube-system" },
                "spec": {
                    "holderIdentity": format!("{}_{component}", leader.holder),
                    "leaseDurationSeconds": LEASE_SECONDS,
                    "acquireTime": leader.acquired_at,
                    "renewTime": leader.acquired_at,
                    "leaseTransitions": leader.transitions,
                },
            }))
        })
        .collect();
    (pods, leases)
}
