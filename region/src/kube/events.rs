//! Events (`core/v1`), as the controllers and kubelets of a cluster record
//! them: a pod scheduled onto its node, started, or waiting for room; a
//! Deployment scaling its ReplicaSets; a change to a Moke deployment put
//! back; a leader lease taken over. `kubectl describe` finds them by their
//! involved object. A cluster keeps its newest [`KEPT`] events, each for
//! at most an hour, as the API server's TTL does.

use serde_json::{Value, json};

use super::projection::now;
use super::resources;
use super::store::{self, KubeStore};

/// The most events a cluster keeps.
pub const KEPT: usize = 500;
/// How long an event is kept.
const TTL: chrono::Duration = chrono::Duration::hours(1);

fn kind() -> &'static resources::Kind {
    resources::find("", "v1", "events").expect("events are served")
}

/// Records an event about `involved` (a stored object) by `component`.
pub fn record(store: &mut KubeStore, involved: &Value, warning: bool, reason: &str, message: &str, component: &str) {
    let metadata = &involved["metadata"];
    let namespace = metadata["namespace"].as_str().unwrap_or("default");
    let name = format!("{}.{:x}", metadata["name"].as_str().unwrap_or_default(), store.revision + 1);
    let at = now();
    let event = json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": { "name": name, "namespace": namespace },
        "involvedObject": {
            "apiVersion": involved["apiVersion"], "kind": involved["kind"], "name": metadata["name"],
            "namespace": metadata["namespace"], "uid": metadata["uid"], "resourceVersion": metadata["resourceVersion"],
        },
        "reason": reason, "message": message, "type": if warning { "Warning" } else { "Normal" },
        "source": { "component": component }, "reportingComponent": component, "reportingInstance": component,
        "firstTimestamp": at, "lastTimestamp": at, "count": 1,
    });
    super::projection::upsert(store, &store::key(kind(), namespace, &name), event);
}

/// Drops events past their hour, and the oldest beyond [`KEPT`].
pub fn expire(store: &mut KubeStore) {
    let cutoff = chrono::Utc::now() - TTL;
    let mut events: Vec<(u64, bool, String)> = store
        .list(&store::prefix(kind(), None))
        .map(|(key, event)| {
            let revision = event["metadata"]["resourceVersion"].as_str().and_then(|r| r.parse().ok()).unwrap_or(0);
            let at = event["lastTimestamp"].as_str().and_then(|at| chrono::DateTime::parse_from_rfc3339(at).ok());
            (revision, at.is_some_and(|at| at < cutoff), key.clone())
        })
        .collect();
    events.sort();
    let excess = events.len().saturating_sub(KEPT);
    for (index, (_, old, key)) in events.into_iter().enumerate() {
        if index < excess || old {
            store.remove(&key);
        }
    }
}

/// The events of a pod that changed from `before` (None: new) to `after`.
pub fn pod_changed(store: &mut KubeStore, before: Option<&Value>, after: &Value) {
    let pod = after["metadata"]["name"].as_str().unwrap_or_default();
    let namespace = after["metadata"]["namespace"].as_str().unwrap_or_default();
    let node = |pod: &Value| pod["spec"]["nodeName"].as_str().map(str::to_string);
    let ready = |pod: &Value| {
        pod["status"]["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
    };
    let was_placed = before.and_then(node);
    if let Some(placed) = node(after).filter(|_| was_placed.is_none()) {
        let message = format!("Successfully assigned {namespace}/{pod} to {placed}");
        record(store, after, false, "Scheduled", &message, "default-scheduler");
        let image = after["spec"]["containers"][0]["image"].as_str().unwrap_or_default();
        record(
            store,
            after,
            false,
            "Pulled",
            &format!("Container image \"{image}\" already present on machine"),
            "kubelet",
        );
    }
    if ready(after) && !before.is_some_and(ready) {
        let container = after["spec"]["containers"][0]["name"].as_str().unwrap_or_default();
        record(store, after, false, "Started", &format!("Started container {container}"), "kubelet");
    }
    let unschedulable = after["status"]["conditions"][0]["message"].as_str().filter(|m| !m.is_empty());
    let unschedulable_before = before.and_then(|b| b["status"]["conditions"][0]["message"].as_str());
    if let Some(why) = unschedulable.filter(|why| node(after).is_none() && unschedulable_before != Some(why)) {
        record(store, after, true, "FailedScheduling", why, "default-scheduler");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_keeps_its_newest_events() {
        let mut store = KubeStore::default();
        let pod = json!({ "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "p", "namespace": "default", "uid": "u" } });
        for _ in 0..KEPT + 5 {
            record(&mut store, &pod, false, "Started", "Started container web", "kubelet");
        }
        expire(&mut store);
        let kept: Vec<&Value> = store.list(&store::prefix(kind(), None)).map(|(_, e)| e).collect();
        assert_eq!(kept.len(), KEPT);
        assert!(kept.iter().all(|e| e["involvedObject"]["uid"] == "u" && e["reason"] == "Started"));
    }
}
