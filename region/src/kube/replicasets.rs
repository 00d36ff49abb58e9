//! The Deployment controller's part that kubectl reads: each Deployment's
//! ReplicaSets, one per pod template it has run, named by the template's
//! hash (`pod-template-hash`) and owned by the Deployment. The newest holds
//! the Deployment's revision; an older one is kept (at most
//! `revisionHistoryLimit`) so `kubectl rollout history` lists it and
//! `kubectl rollout undo` can put its template back, which makes it the
//! newest again under the next revision, as the real controller does.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::projection::{self, REVISION};
use super::resources;
use super::store::{self, KubeStore};
use crate::workloads::SimWorkload;

/// The label that ties a ReplicaSet and its pods to one pod template.
pub const TEMPLATE_HASH: &str = "pod-template-hash";
/// The revisions a ReplicaSet held before its current one (a rollback's).
const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
/// Deployment annotations the controller never copies onto a ReplicaSet.
const NOT_COPIED: &[&str] = &[
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    REVISION_HISTORY,
    DESIRED_REPLICAS,
    MAX_REPLICAS,
    "deprecated.deployment.rollback.to",
];
/// The alphabet Kubernetes writes hashes in (no vowels, no look-alikes).
const HASH_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

fn kind() -> &'static resources::Kind {
    resources::find("apps", "v1", "replicasets").expect("replicasets are served")
}

/// The hash of a pod template, as its ReplicaSet's name and pods' label
/// carry it: the same template (whatever the order of its keys, and
/// without fields left empty) always gives the same hash.
pub fn template_hash(template: &Value) -> String {
    let mut template = template.clone();
    if let Some(labels) = template["metadata"]["labels"].as_object_mut() {
        labels.remove(TEMPLATE_HASH);
    }
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    feed(&mut hash, &template);
    hash.to_string().bytes().map(|digit| HASH_ALPHABET[usize::from(digit) % HASH_ALPHABET.len()] as char).collect()
}

/// Whether two pod templates are the same, as their hash says they should
/// be (a ReplicaSet is revived only for its own template, never a collision).
fn same_template(a: &Value, b: &Value) -> bool {
    let canonical = |template: &Value| {
        let mut template = template.clone();
        if let Some(labels) = template["metadata"]["labels"].as_object_mut() {
            labels.remove(TEMPLATE_HASH);
        }
        let mut bytes = Vec::new();
        write_canonical(&mut bytes, &template);
        bytes
    };
    canonical(a) == canonical(b)
}

/// FNV-1a (64 bits) over the canonical writing of `value`.
fn feed(hash: &mut u64, value: &Value) {
    let mut bytes = Vec::new();
    write_canonical(&mut bytes, value);
    for byte in bytes {
        *hash ^= u64::from(byte);
        *hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

/// A canonical writing of `value`: keys sorted, nulls and empty objects or
/// lists left out (a client's typed round trip adds them).
fn write_canonical(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Object(fields) => {
            out.push(b'{');
            let mut keys: Vec<&String> = fields.keys().filter(|k| !empty(&fields[*k])).collect();
            keys.sort();
            for key in keys {
                out.extend_from_slice(Value::String(key.clone()).to_string().as_bytes());
                out.push(b':');
                write_canonical(out, &fields[key]);
                out.push(b',');
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for item in items {
                write_canonical(out, item);
                out.push(b',');
            }
            out.push(b']');
        }
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

fn empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(fields) => fields.values().all(empty),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

fn revision_of(object: &Value) -> i64 {
    object["metadata"]["annotations"][REVISION].as_str().and_then(|r| r.parse().ok()).unwrap_or(0)
}

/// Whether `object` is controlled by the object whose uid is `owner_uid`.
pub fn owned_by(object: &Value, owner_uid: &Value) -> bool {
    object["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|owners| owners.iter().any(|o| o["uid"] == *owner_uid && o["controller"] == true))
}

/// Which ReplicaSet each pod revision of a workload belongs to.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Owners {
    by_revision: BTreeMap<i64, (String, Value)>,
}

impl Owners {
    /// The labels and owner reference of a pod of `revision`, when its
    /// ReplicaSet is kept.
    pub fn of(&self, revision: i64) -> Option<(&str, Value)> {
        let (name, uid) = self.by_revision.get(&revision)?;
        let hash = name.rsplit('-').next().unwrap_or_default();
        let owner = json!({ "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name, "uid": uid,
                            "controller": true, "blockOwnerDeletion": true });
        Some((hash, owner))
    }
}

/// Brings the ReplicaSets of the Deployment stored under `deployment_key`
/// up to date with the pods `workload` runs, and says which ReplicaSet owns
/// the pods of each revision.
pub fn reconcile(store: &mut KubeStore, deployment_key: &str, workload: &SimWorkload) -> Owners {
    let mut owners = Owners { by_revision: BTreeMap::new() };
    let Some(fingerprint) = store.get(deployment_key).map(|deployment| inputs(deployment, workload)) else {
        return owners;
    };
    // Nothing the ReplicaSets follow changed: they are as they were.
    if let Some((seen, known)) = store.reconciled.get(deployment_key)
        && *seen == fingerprint
    {
        return known.clone();
    }
    let Some(deployment) = store.get(deployment_key).cloned() else { return owners };
    let metadata = &deployment["metadata"];
    let (name, namespace) =
        (metadata["name"].as_str().unwrap_or_default(), metadata["namespace"].as_str().unwrap_or_default());
    let uid = metadata["uid"].clone();
    let revision = revision_of(&deployment);
    let template = &deployment["spec"]["template"];
    let hash = template_hash(template);
    let current_name = format!("{name}-{hash}");
    let replicas = deployment["spec"]["replicas"].as_i64().unwrap_or(1);
    let prefix = store::prefix(kind(), Some(namespace));
    let mut owned: Vec<Value> = store.list(&prefix).map(|(_, o)| o).filter(|o| owned_by(o, &uid)).cloned().collect();

    // The current template's ReplicaSet: made, or an older one revived.
    let mut annotations: Map<String, Value> = metadata["annotations"]
        .as_object()
        .map(|a| {
            a.iter().filter(|(k, _)| !NOT_COPIED.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
        })
        .unwrap_or_default();
    annotations.insert(REVISION.into(), json!(revision.to_string()));
    annotations.insert(DESIRED_REPLICAS.into(), json!(replicas.to_string()));
    annotations.insert(MAX_REPLICAS.into(), json!((replicas + workload.spec.max_surge.max(0)).to_string()));
    let current = match owned.iter().position(|o| o["metadata"]["name"] == *current_name) {
        Some(index) => {
            let mut revived = owned.remove(index);
            if !same_template(&revived["spec"]["template"], template) {
                // Another template under the same hash: this one takes the name.
                revived["spec"]["template"] = template.clone();
                revived["spec"]["template"]["metadata"]["labels"][TEMPLATE_HASH] = json!(hash);
            }
            let before = revision_of(&revived);
            if before != revision && before != 0 {
                let mut history: Vec<String> = revived["metadata"]["annotations"][REVISION_HISTORY]
                    .as_str()
                    .map(|h| h.split(',').map(str::to_string).collect())
                    .unwrap_or_default();
                history.push(before.to_string());
                annotations.insert(REVISION_HISTORY.into(), json!(history.join(",")));
            } else if let Some(history) = revived["metadata"]["annotations"].get(REVISION_HISTORY) {
                annotations.insert(REVISION_HISTORY.into(), history.clone());
            }
            revived["metadata"]["annotations"] = Value::Object(annotations);
            revived
        }
        None => {
            let mut labels = template["metadata"]["labels"].as_object().cloned().unwrap_or_default();
            labels.insert(TEMPLATE_HASH.into(), json!(hash));
            let mut selector = deployment["spec"]["selector"]["matchLabels"].as_object().cloned().unwrap_or_default();
            selector.insert(TEMPLATE_HASH.into(), json!(hash));
            let mut pod_template = template.clone();
            pod_template["metadata"]["labels"] = Value::Object(labels.clone());
            json!({
                "apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {
                    "name": current_name, "namespace": namespace, "labels": labels, "generation": 1,
                    "annotations": annotations,
                    "ownerReferences": [{ "apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": uid,
                                          "controller": true, "blockOwnerDeletion": true }],
                },
                "spec": { "replicas": replicas, "selector": { "matchLabels": selector }, "template": pod_template },
            })
        }
    };

    // Counts: the current ReplicaSet wants the Deployment's replicas; an
    // older one only the pods it still runs.
    let mut sets = vec![(current, true)];
    sets.extend(owned.into_iter().map(|o| (o, false)));
    let limit = deployment["spec"]["revisionHistoryLimit"].as_i64().unwrap_or(10).max(0) as usize;
    let mut idle_old: Vec<(i64, String)> = Vec::new();
    for (mut set, is_current) in sets {
        let mut revisions = vec![revision_of(&set)];
        if let Some(history) = set["metadata"]["annotations"][REVISION_HISTORY].as_str() {
            revisions.extend(history.split(',').filter_map(|r| r.parse::<i64>().ok()));
        }
        let pods: Vec<_> = workload.pods.iter().filter(|p| revisions.contains(&p.revision)).collect();
        let ready = pods.iter().filter(|p| p.ready).count();
        let wanted = if is_current { replicas } else { pods.len() as i64 };
        let before = set["spec"]["replicas"].as_i64().filter(|_| !set["metadata"]["uid"].is_null());
        if before.is_none_or(|before| before != wanted) {
            let set_name = set["metadata"]["name"].as_str().unwrap_or_default();
            let direction = if before.unwrap_or(0) < wanted { "up" } else { "down" };
            let message = match before {
                Some(before) => format!("Scaled {direction} replica set {set_name} from {before} to {wanted}"),
                None => format!("Scaled {direction} replica set {set_name} to {wanted}"),
            };
            super::events::record(store, &deployment, false, "ScalingReplicaSet", &message, "deployment-controller");
        }
        set["spec"]["replicas"] = json!(wanted);
        let mut status = json!({
            "replicas": pods.len(), "fullyLabeledReplicas": pods.len(), "readyReplicas": ready,
            "availableReplicas": ready, "observedGeneration": set["metadata"]["generation"],
        });
        if let Some(fields) = status.as_object_mut() {
            fields.retain(|_, value| value.as_i64() != Some(0));
        }
        set["status"] = status;
        let set_name = set["metadata"]["name"].as_str().unwrap_or_default().to_string();
        let key = store::key(kind(), namespace, &set_name);
        if !is_current && pods.is_empty() {
            idle_old.push((revision_of(&set), key.clone()));
        }
        projection::upsert(store, &key, set);
        if let Some(stored) = store.get(&key) {
            for revision in revisions {
                owners.by_revision.insert(revision, (set_name.clone(), stored["metadata"]["uid"].clone()));
            }
        }
    }
    // Old ReplicaSets beyond the history limit go, oldest first.
    idle_old.sort();
    let excess = idle_old.len().saturating_sub(limit);
    for (_, key) in idle_old.into_iter().take(excess) {
        store.remove(&key);
    }
    if let Some(deployment) = store.get(deployment_key) {
        let fingerprint = inputs(deployment, workload);
        store.reconciled.insert(deployment_key.to_string(), (fingerprint, owners.clone()));
    }
    owners
}

/// A fingerprint of what a Deployment's ReplicaSets follow: the Deployment
/// as stored and its pods' revisions and readiness.
fn inputs(deployment: &Value, workload: &SimWorkload) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    deployment["metadata"]["uid"].as_str().hash(&mut hasher);
    deployment["metadata"]["resourceVersion"].as_str().hash(&mut hasher);
    for pod in &workload.pods {
        (&pod.name, pod.revision, pod.ready).hash(&mut hasher);
    }
    hasher.finish()
}

/// Removes the ReplicaSets whose Deployment is gone, as the garbage collector does.
pub fn collect_orphans(store: &mut KubeStore) {
    let deployments = resources::find("apps", "v1", "deployments").expect("deployments are served");
    let live: Vec<Value> =
        store.list(&store::prefix(deployments, None)).map(|(_, o)| o["metadata"]["uid"].clone()).collect();
    let orphans: Vec<String> = store
        .list(&store::prefix(kind(), None))
        .filter(|(_, o)| !live.iter().any(|uid| owned_by(o, uid)))
        .map(|(key, _)| key.clone())
        .collect();
    for key in orphans {
        store.remove(&key);
    }
    let deployment_keys: std::collections::HashSet<String> =
        store.list(&store::prefix(deployments, None)).map(|(key, _)| key.clone()).collect();
    store.reconciled.retain(|key, _| deployment_keys.contains(key));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_hashes_the_same_however_it_is_written() {
        let written = json!({ "metadata": { "labels": { "app": "web", "tier": "front" } },
                              "spec": { "containers": [{ "name": "web", "image": "web:1" }] } });
        let round_tripped = json!({ "metadata": { "creationTimestamp": null, "labels": { "tier": "front", "app": "web" } },
                                    "spec": { "containers": [{ "image": "web:1", "name": "web", "resources": {} }] } });
        let labelled = json!({ "metadata": { "labels": { "app": "web", "tier": "front", "pod-template-hash": "x" } },
                               "spec": { "containers": [{ "name": "web", "image": "web:1" }] } });
        let other = json!({ "metadata": { "labels": { "app": "web", "tier": "front" } },
                            "spec": { "containers": [{ "name": "web", "image": "web:2" }] } });
        let hash = template_hash(&written);
        assert_eq!(hash, template_hash(&round_tripped));
        assert_eq!(hash, template_hash(&labelled));
        assert_ne!(hash, template_hash(&other));
        assert!(hash.bytes().all(|b| HASH_ALPHABET.contains(&b)), "{hash}");
    }
}
