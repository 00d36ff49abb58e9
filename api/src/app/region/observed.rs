//! What regions last reported about a resource, as kept in the `status`
//! column of clusters, node pools and deployments: one typed shape
//! ([`ObservedStored`]) written whole by observations and read strictly by
//! views, instead of JSON built by hand and read by path.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::model::{Condition, PodView};

/// A resource's observed state. A resource no region has reported on yet
/// is `pending` with no conditions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct ObservedStored {
    #[serde(default = "pending")]
    pub phase: String,
    #[serde(default)]
    pub conditions: Vec<ConditionStored>,
    /// Clusters: where the control plane serves (plain `https://` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Deployments: replica counts and pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadObserved>,
    /// Node pools: their nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<NodeObserved>>,
    /// Clusters: the etcd snapshots the region keeps, oldest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshots: Option<Vec<SnapshotObserved>>,
}

/// One etcd snapshot a region keeps of a cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotObserved {
    pub name: String,
    pub taken_at: DateTime<Utc>,
    #[serde(default)]
    pub size_bytes: i64,
    #[serde(default)]
    pub kubernetes_version: String,
    #[serde(default)]
    pub on_demand: bool,
}

fn pending() -> String {
    "pending".into()
}

impl Default for ObservedStored {
    fn default() -> Self {
        ObservedStored {
            phase: pending(),
            conditions: Vec::new(),
            endpoint: None,
            workload: None,
            nodes: None,
            snapshots: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct ConditionStored {
    #[serde(rename = "type")]
    pub condition_type: String,
    pub status: String,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub message: String,
    pub last_transition_time: DateTime<Utc>,
}

/// A deployment's replicas and pods as its region last saw them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadObserved {
    #[serde(default)]
    pub replicas: i64,
    #[serde(default)]
    pub updated_replicas: i64,
    #[serde(default)]
    pub ready_replicas: i64,
    #[serde(default)]
    pub available_replicas: i64,
    /// The pod template revision running everywhere it should.
    #[serde(default)]
    pub revision: i64,
    #[serde(default)]
    pub unschedulable_reason: String,
    #[serde(default)]
    pub pods: Vec<PodObserved>,
    /// A change made with kubectl, waiting for the gateway to adopt it
    /// (never stored: it is acted on as it arrives).
    #[serde(skip)]
    pub cluster_edit: Option<moke_proto::region::ClusterEdit>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PodObserved {
    pub name: String,
    #[serde(default)]
    pub node: String,
    #[serde(default)]
    pub zone: String,
    #[serde(default)]
    pub revision: i64,
    #[serde(default)]
    pub ready: bool,
    #[serde(default)]
    pub ip: String,
}

/// A node of a pool as its region last saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeObserved {
    pub name: String,
    #[serde(default)]
    pub zone: String,
    #[serde(default)]
    pub rack: String,
    #[serde(default)]
    pub ready: bool,
    #[serde(default)]
    pub unschedulable: bool,
    /// What its kubelet runs; unknown from agents of the previous release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
}

impl From<&Condition> for ConditionStored {
    fn from(c: &Condition) -> Self {
        ConditionStored {
            condition_type: c.condition_type.clone(),
            status: c.status.clone(),
            reason: c.reason.clone(),
            message: c.message.clone(),
            last_transition_time: c.last_transition_time,
        }
    }
}

impl From<ConditionStored> for Condition {
    fn from(c: ConditionStored) -> Self {
        Condition {
            condition_type: c.condition_type,
            status: c.status,
            reason: c.reason,
            message: c.message,
            last_transition_time: c.last_transition_time,
        }
    }
}

impl From<PodObserved> for PodView {
    fn from(p: PodObserved) -> Self {
        PodView { name: p.name, node: p.node, zone: p.zone, revision: p.revision, ready: p.ready, ip: p.ip }
    }
}

impl ObservedStored {
    /// The conditions as the public model shows them.
    pub fn conditions(&self) -> Vec<Condition> {
        self.conditions.iter().cloned().map(Condition::from).collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::app::kernel::jsonb::{from_column, to_column};

    /// Status columns as written before (a new resource's, a cluster's with
    /// its endpoint and a Drifted condition from repair, a deployment's and a
    /// node pool's) still read, and write back unchanged.
    #[test]
    fn statuses_written_before_still_read() {
        let fresh: ObservedStored = from_column("status", &json!({ "phase": "pending", "conditions": [] })).unwrap();
        assert_eq!(fresh, ObservedStored::default());
        let empty: ObservedStored = from_column("status", &json!({ "phase": "pending" })).unwrap();
        assert_eq!(empty, ObservedStored::default());
        for status in [
            json!({ "phase": "running", "endpoint": "https://127.0.0.1:6443", "conditions": [
                { "type": "Drifted", "status": "True", "reason": "ObservationBehind", "message": "sent again",
                  "last_transition_time": "2026-12-01T10:00:00Z" }] }),
            json!({ "phase": "running", "conditions": [], "workload": {
                "replicas": 2, "updated_replicas": 2, "ready_replicas": 1, "available_replicas": 1, "revision": 3,
                "unschedulable_reason": "", "pods": [
                    { "name": "web-1", "node": "n1", "zone": "a", "revision": 3, "ready": true, "ip": "10.0.0.5" }] } }),
            json!({ "phase": "running", "conditions": [], "nodes": [
                { "name": "n1", "zone": "a", "rack": "r1", "ready": true, "unschedulable": false }] }),
        ] {
            let stored: ObservedStored = from_column("status", &status).unwrap();
            assert_eq!(to_column(&stored), status);
        }
    }
}
