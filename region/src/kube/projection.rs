//! One state: what the simulated region runs, as the cluster's API server
//! shows it. Nodes come from the node pools; every workload's pods from its
//! simulated pods; a Deployment made through Moke's API is shown as a
//! Deployment labelled `moke.dev/managed-by=moke` (with the namespace it
//! lives in); a Deployment made with kubectl is backed by a simulated
//! workload of its own (`k8s/<cluster>/<namespace>/<name>`, never reported to
//! the gateway) whose pods roll out as the gateway's do, and whose status is
//! written back to the object.
//!
//! [`sync`] brings one cluster's store up to date; it runs when the API
//! server is first used and after every tick, and writes only what changed,
//! so every change is one watch event.

use std::collections::{BTreeMap, BTreeSet};

use moke_proto::region as pb;
use serde_json::{Map, Value, json};

use super::resources::{self, Kind};
use super::store::{self, KubeStore};
use super::{events, replicasets, services, system};
use crate::sim::SimState;
use crate::workloads::SimWorkload;

/// The label on every object Moke's API manages.
pub const MANAGED_BY: &str = "moke.dev/managed-by";
/// The annotation naming the Moke deployment an object shows.
pub const DEPLOYMENT_ID: &str = "moke.dev/deployment-id";
/// The annotation naming the Moke service an object shows.
pub const SERVICE_ID: &str = "moke.dev/service-id";
/// The gateway's version of a Moke service, as the object was last applied.
pub const SERVICE_VERSION: &str = "moke.dev/service-version";
/// Moke's id of one of its namespaces.
pub const NAMESPACE_ID: &str = "moke.dev/namespace-id";
/// The revision annotation kubectl's rollout commands read.
pub const REVISION: &str = "deployment.kubernetes.io/revision";
/// Namespaces every cluster has.
pub const SYSTEM_NAMESPACES: &[&str] = &["default", "kube-node-lease", "kube-public", "kube-system"];

fn kind(resource: &str) -> &'static Kind {
    resources::KINDS.iter().find(|k| k.resource == resource).expect("a served resource")
}

/// Now, as object timestamps are written.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The id of the simulated workload behind a Deployment made with kubectl.
pub fn workload_id(cluster_id: &str, namespace: &str, name: &str) -> String {
    format!("k8s/{cluster_id}/{namespace}/{name}")
}

/// Whether a simulated workload was made through kubectl (and is not the gateway's).
pub fn is_kubectl_workload(id: &str) -> bool {
    id.starts_with("k8s/")
}

/// Whether an object is Moke's to change (through Moke's API).
pub fn managed(object: &Value) -> bool {
    object["metadata"]["labels"][MANAGED_BY] == "moke"
}

/// Whether the cluster made an object itself (Moke's objects and their
/// ReplicaSets, the system namespaces, the `kubernetes` Service, the
/// default roles), so it does not count against what clients may make.
pub fn made_by_system(object: &Value) -> bool {
    let metadata = &object["metadata"];
    let name = metadata["name"].as_str().unwrap_or_default();
    managed(object)
        || !deployment_id(object).is_empty()
        || super::bindings::is_default(object)
        || (object["kind"] == "Namespace" && SYSTEM_NAMESPACES.contains(&name))
        || (object["kind"] == "Service" && metadata["namespace"] == "default" && name == "kubernetes")
}

/// The Moke deployment an object shows ("" for the customer's own).
pub fn deployment_id(object: &Value) -> &str {
    object["metadata"]["annotations"][DEPLOYMENT_ID].as_str().unwrap_or_default()
}

/// The Moke deployment or service an object shows ("" for the customer's own).
pub fn moke_id(object: &Value) -> &str {
    let annotations = &object["metadata"]["annotations"];
    annotations[DEPLOYMENT_ID].as_str().or(annotations[SERVICE_ID].as_str()).unwrap_or_default()
}

/// Stores `desired` under `key` unless the stored object already says the
/// same: its identity (uid, creation time) is kept, a new object gets one.
pub fn upsert(store: &mut KubeStore, key: &str, mut desired: Value) -> bool {
    match store.get(key) {
        Some(existing) => {
            for field in ["uid", "creationTimestamp", "resourceVersion"] {
                desired["metadata"][field] = existing["metadata"][field].clone();
            }
            if &desired == existing {
                return false;
            }
        }
        None => {
            desired["metadata"]["uid"] = json!(uuid::Uuid::now_v7().to_string());
            if desired["metadata"]["creationTimestamp"].is_null() {
                desired["metadata"]["creationTimestamp"] = json!(now());
            }
        }
    }
    store.put(key, desired);
    true
}

/// A Namespace object.
pub fn namespace_object(name: &str, managed_by_moke: bool) -> Value {
    let mut labels = json!({ "kubernetes.io/metadata.name": name });
    if managed_by_moke {
        labels[MANAGED_BY] = json!("moke");
    }
    json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": { "name": name, "labels": labels },
        "spec": { "finalizers": ["kubernetes"] }, "status": { "phase": "Active" },
    })
}

/// The namespaces made through the cluster's own API (kubectl's, neither
/// Moke's nor the system's), by name, at most `limit`.
pub fn kubectl_namespaces(store: &KubeStore, limit: usize) -> Vec<String> {
    store
        .list(&store::prefix(kind("namespaces"), None))
        .filter(|(_, object)| !made_by_system(object))
        .filter_map(|(_, object)| object["metadata"]["name"].as_str().map(str::to_string))
        .take(limit)
        .collect()
}

/// The status of a Deployment whose pods `workload` runs, at `generation`.
pub fn deployment_status(workload: &SimWorkload, generation: i64) -> Value {
    let status = workload.status();
    let wanted = workload.spec.replicas.max(0);
    let available = status.available_replicas >= wanted - workload.spec.max_unavailable;
    let progressing = if workload.rolled_out() { "NewReplicaSetAvailable" } else { "ReplicaSetUpdated" };
    let mut conditions = vec![json!({
        "type": "Available", "status": if available { "True" } else { "False" },
        "reason": if available { "MinimumReplicasAvailable" } else { "MinimumReplicasUnavailable" },
        "message": format!("{} of {wanted} replicas available", status.available_replicas),
    })];
    let message = if status.unschedulable_reason.is_empty() {
        format!("revision {}", status.revision)
    } else {
        status.unschedulable_reason.clone()
    };
    conditions.push(json!({ "type": "Progressing", "status": "True", "reason": progressing, "message": message }));
    let mut out = json!({
        "observedGeneration": generation,
        "replicas": status.replicas,
        "updatedReplicas": status.updated_replicas,
        "readyReplicas": status.ready_replicas,
        "availableReplicas": status.available_replicas,
        "unavailableReplicas": (wanted - status.available_replicas).max(0),
        "conditions": conditions,
    });
    if let Some(fields) = out.as_object_mut() {
        // As the API server does, counts of zero are left out.
        fields.retain(|_, value| value.as_i64() != Some(0));
    }
    out
}

/// The labels a workload's pods carry: the gateway's pod labels, else `app: <name>`.
fn pod_labels(spec: &pb::WorkloadSpec) -> Map<String, Value> {
    let mut labels: Map<String, Value> = spec.pod_labels.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    if labels.is_empty() {
        labels.insert("app".into(), json!(spec.name));
    }
    labels
}

/// A Deployment as Moke's API made it.
fn moke_deployment(id: &str, workload: &SimWorkload) -> Value {
    let spec = &workload.spec;
    let labels = pod_labels(spec);
    let tolerations: Vec<Value> = spec
        .tolerations
        .iter()
        .map(|t| json!({ "key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect }))
        .collect();
    let mut container = json!({
        "name": spec.name, "image": spec.image,
        "resources": { "requests": { "cpu": format!("{}m", spec.cpu_millis), "memory": format!("{}Mi", spec.memory_mib) } },
    });
    if !spec.env.is_empty() {
        container["env"] = spec.env.iter().map(|e| json!({ "name": e.name, "value": e.value })).collect();
    }
    if !spec.ports.is_empty() {
        container["ports"] = spec
            .ports
            .iter()
            .map(|p| {
                let mut port = json!({ "containerPort": p.container_port, "protocol": p.protocol });
                if !p.name.is_empty() {
                    port["name"] = json!(p.name);
                }
                port
            })
            .collect();
    }
    let mut pod_spec = json!({ "containers": [container] });
    if !spec.node_selector.is_empty() {
        pod_spec["nodeSelector"] = json!(spec.node_selector);
    }
    if !tolerations.is_empty() {
        pod_spec["tolerations"] = json!(tolerations);
    }
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {
            "name": spec.name, "namespace": spec.namespace, "generation": workload.generation,
            "labels": { MANAGED_BY: "moke" },
            "annotations": { DEPLOYMENT_ID: id, REVISION: spec.revision.to_string() },
        },
        "spec": {
            "replicas": spec.replicas, "paused": spec.paused,
            "selector": { "matchLabels": labels },
            "template": { "metadata": { "labels": labels }, "spec": pod_spec },
            "strategy": { "type": "RollingUpdate",
                          "rollingUpdate": { "maxSurge": spec.max_surge, "maxUnavailable": spec.max_unavailable } },
        },
        "status": deployment_status(workload, workload.generation),
    })
}

/// A pod of a workload, labelled as its Deployment's template labels it.
fn pod(
    workload: &SimWorkload,
    pod: &crate::workloads::SimPod,
    labels: &Map<String, Value>,
    owners: &replicasets::Owners,
) -> Value {
    let mut labels = labels.clone();
    let owner = owners.of(pod.revision);
    if let Some((hash, _)) = &owner {
        labels.insert(replicasets::TEMPLATE_HASH.into(), json!(hash));
    }
    let running = pod.node.is_some();
    let ready = if pod.ready { "True" } else { "False" };
    let mut object = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": { "name": pod.name, "namespace": workload.spec.namespace, "labels": labels },
        "spec": {
            "containers": [{ "name": workload.spec.name, "image": workload.spec.image }],
        },
        "status": {
            "phase": if running { "Running" } else { "Pending" },
            "conditions": [
                if running || workload.unschedulable_reason.is_empty() {
                    json!({ "type": "PodScheduled", "status": if running { "True" } else { "False" } })
                } else {
                    json!({ "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                            "message": workload.unschedulable_reason })
                },
                { "type": "Ready", "status": ready },
                { "type": "ContainersReady", "status": ready },
            ],
            "containerStatuses": [{
                "name": workload.spec.name, "image": workload.spec.image, "ready": pod.ready, "restartCount": 0,
                "started": running, "state": if running { json!({ "running": {} }) } else { json!({ "waiting": { "reason": "ContainerCreating" } }) },
            }],
        },
    });
    if let Some((_, reference)) = owner {
        object["metadata"]["ownerReferences"] = json!([reference]);
    }
    if let Some(node) = &pod.node {
        object["spec"]["nodeName"] = json!(node);
        object["status"]["podIP"] = json!(pod.ip);
        object["status"]["podIPs"] = json!([{ "ip": pod.ip }]);
    }
    object
}

/// Brings the store of `cluster_id` up to date with the region; true when
/// anything changed.
pub fn sync(state: &mut SimState, cluster_id: &str) -> bool {
    let before = state.kube.get(cluster_id).map(|s| s.revision);
    let Some(cluster) = state.clusters.get(cluster_id).filter(|c| !c.deleted) else {
        return false;
    };
    let version = cluster.kubernetes_version.clone();
    let mut nodes = Vec::new();
    for (pool_id, pool) in state.node_pools.iter().filter(|(_, p)| p.cluster_id == cluster_id && !p.deleted) {
        for member in &pool.nodes {
            let kubelet = if member.version.is_empty() { version.clone() } else { member.version.clone() };
            let mut labels: Map<String, Value> =
                pool.spec.node_labels.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
            labels.insert("kubernetes.io/hostname".into(), json!(member.name));
            labels.insert("kubernetes.io/os".into(), json!("linux"));
            labels.insert("topology.kubernetes.io/zone".into(), json!(member.zone));
            if !state.region.is_empty() {
                labels.insert("topology.kubernetes.io/region".into(), json!(state.region));
            }
            labels.insert("moke.dev/rack".into(), json!(member.rack));
            labels.insert("moke.dev/node-pool".into(), json!(pool_id));
            nodes.push(json!({
                "apiVersion": "v1", "kind": "Node",
                "metadata": { "name": member.name, "labels": labels },
                "status": {
                    "conditions": [{ "type": "Ready", "status": "True", "reason": "KubeletReady",
                                     "message": "kubelet is posting ready status" }],
                    "nodeInfo": { "kubeletVersion": super::git_version(&kubelet), "osImage": "Moke bare metal",
                                  "containerRuntimeVersion": "containerd://1.7", "architecture": "amd64",
                                  "operatingSystem": "linux", "kernelVersion": "6.1" },
                },
            }));
        }
    }
    let (control_plane_pods, leases) = system::objects(cluster, |member| state.member_up(member));
    let SimState { kube, workloads, .. } = state;
    let store = kube.entry(cluster_id.to_string()).or_default();
    for name in SYSTEM_NAMESPACES {
        let key = store::key(kind("namespaces"), "", name);
        if store.get(&key).is_none() {
            upsert(store, &key, namespace_object(name, false));
        }
    }
    super::bindings::sync_defaults(store);
    let api_server = store::key(kind("services"), "default", "kubernetes");
    if store.get(&api_server).is_none() {
        upsert(store, &api_server, services::api_server_service());
    }
    // Nodes.
    let node_kind = kind("nodes");
    let mut current = BTreeSet::new();
    for node in nodes {
        let key = store::key(node_kind, "", node["metadata"]["name"].as_str().unwrap_or_default());
        upsert(store, &key, node);
        current.insert(key);
    }
    remove_others(store, &store::prefix(node_kind, None), &current);

    // Deployments Moke manages, and every workload's pods.
    let (deployment_kind, pod_kind) = (kind("deployments"), kind("pods"));
    let mut moke_deployments = BTreeSet::new();
    let mut pods = BTreeSet::new();
    for (id, workload) in workloads.iter().filter(|(_, w)| w.cluster_id == cluster_id && !w.deleted) {
        let spec = &workload.spec;
        let deployment_key = store::key(deployment_kind, &spec.namespace, &spec.name);
        let labels = if is_kubectl_workload(id) {
            let Some(stored) = store.get(&deployment_key) else { continue };
            let generation = stored["metadata"]["generation"].as_i64().unwrap_or(1);
            let mut updated = stored.clone();
            updated["status"] = deployment_status(workload, generation);
            let labels = stored["spec"]["template"]["metadata"]["labels"].as_object().cloned().unwrap_or_default();
            upsert(store, &deployment_key, updated);
            labels
        } else {
            // A Deployment the customer made with kubectl under the same name is theirs: never overwritten.
            if store.get(&deployment_key).is_some_and(|object| !managed(object)) {
                continue;
            }
            let namespace_key = store::key(kind("namespaces"), "", &spec.namespace);
            if store.get(&namespace_key).is_none() {
                upsert(store, &namespace_key, namespace_object(&spec.namespace, true));
            }
            let mut desired = moke_deployment(id, workload);
            // An edit waiting for the gateway to adopt it stays as it was written.
            if workload.drift.as_ref().is_some_and(|d| d.adopting())
                && let Some(edited) = store.get(&deployment_key)
            {
                let status = desired["status"].take();
                desired = edited.clone();
                desired["status"] = status;
            }
            upsert(store, &deployment_key, desired);
            moke_deployments.insert(deployment_key.clone());
            pod_labels(spec)
        };
        let owners = replicasets::reconcile(store, &deployment_key, workload);
        for simulated in &workload.pods {
            let key = store::key(pod_kind, &spec.namespace, &simulated.name);
            let before = store.get(&key).map(events::PodFacts::of);
            if upsert(store, &key, pod(workload, simulated, &labels, &owners))
                && let Some(after) = store.get(&key).cloned()
            {
                events::pod_changed(store, before, &after);
            }
            pods.insert(key);
        }
    }
    // What Moke no longer runs leaves the cluster's API too.
    let gone: Vec<String> = store
        .list(&store::prefix(deployment_kind, None))
        .filter(|(key, object)| managed(object) && !moke_deployments.contains(*key))
        .map(|(key, _)| key.clone())
        .collect();
    for key in gone {
        store.remove(&key);
    }
    for pod in control_plane_pods {
        let key = store::key(pod_kind, "kube-system", pod["metadata"]["name"].as_str().unwrap_or_default());
        upsert(store, &key, pod);
        pods.insert(key);
    }
    remove_others(store, &store::prefix(pod_kind, None), &pods);
    let lease_kind = kind("leases");
    let mut kept_leases = BTreeSet::new();
    for lease in leases {
        let key = store::key(lease_kind, "kube-system", lease["metadata"]["name"].as_str().unwrap_or_default());
        let holder = lease["spec"]["holderIdentity"].clone();
        let before = store.get(&key).map(|l| l["spec"]["holderIdentity"].clone());
        upsert(store, &key, lease);
        if before.is_some_and(|before| before != holder)
            && let Some(after) = store.get(&key).cloned()
        {
            let message = format!("{} became leader", holder.as_str().unwrap_or_default());
            events::record(store, &after, false, "LeaderElection", &message, "kube-controller-manager");
        }
        kept_leases.insert(key);
    }
    remove_others(store, &store::prefix(lease_kind, None), &kept_leases);
    replicasets::collect_orphans(store);
    services::endpoints(store);
    events::expire(store);
    before != Some(store.revision)
}

/// Removes the objects under `prefix` that are not in `keep`.
fn remove_others(store: &mut KubeStore, prefix: &str, keep: &BTreeSet<String>) {
    let gone: Vec<String> = store.list(prefix).filter(|(k, _)| !keep.contains(*k)).map(|(k, _)| k.clone()).collect();
    for key in gone {
        store.remove(&key);
    }
}

/// A quantity of CPU in millicores (`100m`, `0.5`, `2`).
pub fn cpu_millis(quantity: &Value) -> Option<i64> {
    let text = quantity_text(quantity)?;
    match text.strip_suffix('m') {
        Some(millis) => millis.parse().ok(),
        None => text.parse::<f64>().ok().map(|cores| (cores * 1000.0).round() as i64),
    }
}

/// A quantity of memory in MiB (`128Mi`, `1Gi`, `500M`, bytes).
pub fn memory_mib(quantity: &Value) -> Option<i64> {
    let text = quantity_text(quantity)?;
    const UNITS: &[(&str, f64)] = &[
        ("Ki", 1024.0),
        ("Mi", 1048576.0),
        ("Gi", 1073741824.0),
        ("Ti", 1099511627776.0),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
    ];
    let (number, factor) = UNITS
        .iter()
        .find_map(|(unit, factor)| text.strip_suffix(unit).map(|n| (n, *factor)))
        .unwrap_or((text.as_str(), 1.0));
    number.parse::<f64>().ok().map(|n| (n * factor / 1048576.0).ceil() as i64)
}

fn quantity_text(quantity: &Value) -> Option<String> {
    match quantity {
        Value::String(text) => Some(text.trim().to_string()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// A rolling-update bound (`2` or `"25%"`) as a pod count of `replicas`.
fn bound(value: &Value, replicas: i64, round_up: bool) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64(),
        Value::String(text) => {
            let percent: f64 = text.strip_suffix('%')?.parse().ok()?;
            let exact = percent * replicas as f64 / 100.0;
            Some(if round_up { exact.ceil() } else { exact.floor() } as i64)
        }
        _ => None,
    }
}

/// What the simulated region runs for a Deployment made with kubectl.
pub fn workload_spec(deployment: &Value, revision: i64) -> pb::WorkloadSpec {
    let spec = &deployment["spec"];
    let replicas = spec["replicas"].as_i64().unwrap_or(1);
    let pod = &spec["template"]["spec"];
    let container = &pod["containers"][0];
    let requests = &container["resources"]["requests"];
    let (max_surge, max_unavailable) = if spec["strategy"]["type"] == "Recreate" {
        (0, replicas)
    } else {
        let rolling = &spec["strategy"]["rollingUpdate"];
        let surge = bound(&rolling["maxSurge"], replicas, true).unwrap_or((replicas as f64 * 0.25).ceil() as i64);
        let unavailable =
            bound(&rolling["maxUnavailable"], replicas, false).unwrap_or((replicas as f64 * 0.25).floor() as i64);
        (surge, unavailable)
    };
    let text_map = |value: &Value| -> BTreeMap<String, String> {
        value
            .as_object()
            .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string()))).collect())
            .unwrap_or_default()
    };
    let tolerations = pod["tolerations"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|t| {
                    let text = |name: &str| t[name].as_str().unwrap_or_default().to_string();
                    pb::Toleration {
                        key: text("key"),
                        // Kubernetes' default, which Moke's API writes out.
                        operator: Some(text("operator")).filter(|o| !o.is_empty()).unwrap_or_else(|| "Equal".into()),
                        value: text("value"),
                        effect: text("effect"),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let env = container["env"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|e| pb::EnvVar {
                    name: e["name"].as_str().unwrap_or_default().to_string(),
                    value: e["value"].as_str().unwrap_or_default().to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    let ports = container["ports"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|p| pb::ContainerPort {
                    name: p["name"].as_str().unwrap_or_default().to_string(),
                    container_port: p["containerPort"].as_i64().unwrap_or_default(),
                    protocol: p["protocol"].as_str().unwrap_or("TCP").to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    pb::WorkloadSpec {
        namespace: deployment["metadata"]["namespace"].as_str().unwrap_or("default").to_string(),
        name: deployment["metadata"]["name"].as_str().unwrap_or_default().to_string(),
        image: container["image"].as_str().unwrap_or_default().to_string(),
        replicas,
        cpu_millis: cpu_millis(&requests["cpu"]).unwrap_or(0),
        memory_mib: memory_mib(&requests["memory"]).unwrap_or(0),
        node_selector: text_map(&pod["nodeSelector"]).into_iter().collect(),
        tolerations,
        max_surge,
        max_unavailable,
        paused: spec["paused"].as_bool().unwrap_or(false),
        revision,
        pod_labels: text_map(&spec["template"]["metadata"]["labels"]).into_iter().collect(),
        adopt_cluster_edits: false,
        env,
        ports,
    }
}

/// The store key of a workload's Deployment.
pub fn deployment_key(spec: &pb::WorkloadSpec) -> String {
    store::key(kind("deployments"), &spec.namespace, &spec.name)
}

/// A Moke workload as a kubectl edit of its Deployment would run it: what
/// an edit may change (image, replicas, requests, environment, ports, node
/// selector, tolerations, pausing, rollout bounds) read from the object,
/// the rest (identity, pod labels, revision, adoption) kept from Moke's spec.
pub fn edited_workload(current: &pb::WorkloadSpec, deployment: &Value) -> pb::WorkloadSpec {
    pb::WorkloadSpec {
        namespace: current.namespace.clone(),
        name: current.name.clone(),
        pod_labels: current.pod_labels.clone(),
        revision: current.revision,
        adopt_cluster_edits: current.adopt_cluster_edits,
        ..workload_spec(deployment, current.revision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_read_as_kubernetes_writes_them() {
        assert_eq!(cpu_millis(&json!("250m")), Some(250));
        assert_eq!(cpu_millis(&json!("0.5")), Some(500));
        assert_eq!(cpu_millis(&json!(2)), Some(2000));
        assert_eq!(memory_mib(&json!("128Mi")), Some(128));
        assert_eq!(memory_mib(&json!("1Gi")), Some(1024));
        assert_eq!(memory_mib(&json!("134217728")), Some(128));
    }

    #[test]
    fn a_deployment_becomes_a_workload_spec() {
        let deployment = json!({
            "metadata": { "name": "web", "namespace": "shop" },
            "spec": { "replicas": 4,
                      "strategy": { "rollingUpdate": { "maxSurge": "50%", "maxUnavailable": 0 } },
                      "template": { "metadata": { "labels": { "app": "web" } },
                                    "spec": { "containers": [{ "name": "web", "image": "web:1",
                                                               "resources": { "requests": { "cpu": "100m", "memory": "64Mi" } } }] } } },
        });
        let spec = workload_spec(&deployment, 3);
        assert_eq!((spec.replicas, spec.max_surge, spec.max_unavailable, spec.revision), (4, 2, 0, 3));
        assert_eq!((spec.cpu_millis, spec.memory_mib, spec.image.as_str()), (100, 64, "web:1"));
        assert_eq!(spec.pod_labels.get("app").map(String::as_str), Some("web"));
    }

    /// A Moke deployment read back from its own object is no edit, and an
    /// edit changes only what it wrote.
    #[test]
    fn a_moke_deployment_reads_back_as_its_spec() {
        let spec = pb::WorkloadSpec {
            namespace: "shop".into(),
            name: "api".into(),
            image: "registry.example/api:7".into(),
            replicas: 3,
            cpu_millis: 250,
            memory_mib: 512,
            node_selector: [("disk".to_string(), "ssd".to_string())].into(),
            tolerations: vec![pb::Toleration {
                key: "dedicated".into(),
                operator: "Equal".into(),
                value: "api".into(),
                effect: "NoSchedule".into(),
            }],
            max_surge: 1,
            max_unavailable: 0,
            revision: 4,
            pod_labels: [("app".to_string(), "api".to_string())].into(),
            adopt_cluster_edits: true,
            env: vec![pb::EnvVar { name: "MODE".into(), value: "production".into() }],
            ports: vec![pb::ContainerPort { name: "http".into(), container_port: 8080, protocol: "TCP".into() }],
            ..Default::default()
        };
        let workload = SimWorkload::new("cl_1", 2, spec.clone());
        let mut object = moke_deployment("dep_1", &workload);
        assert_eq!(edited_workload(&spec, &object), spec);
        object["spec"]["replicas"] = json!(5);
        object["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] = json!("debug");
        // The pod labels are Moke's, whatever the object says.
        object["spec"]["template"]["metadata"]["labels"]["app"] = json!("other");
        let edited = edited_workload(&spec, &object);
        assert_eq!((edited.replicas, edited.env[0].value.as_str()), (5, "debug"));
        assert_eq!(edited.pod_labels, spec.pod_labels);
        assert_eq!(pb::WorkloadSpec { replicas: 3, env: spec.env.clone(), ..edited }, spec);
    }
}
