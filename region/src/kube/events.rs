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
/// The most events recorded between two expiries (about a tick).
const BURST: usize = 200;
/// Without new events, how long between expiries.
const EXPIRE_EVERY: std::time::Duration = std::time::Duration::from_secs(60);
/// How long an event is kept.
const TTL: chrono::Duration = chrono::Duration::hours(1);

fn kind() -> &'static resources::Kind {
    resources::find("", "v1", "events").expect("events are served")
}

/// Records an event about `involved` (a stored object) by `component`.
pub fn record(store: &mut KubeStore, involved: &Value, warning: bool, reason: &str, message: &str, component: &str) {
    // A burst (a thousand pods scheduled at once) keeps its first events
    // until the next expiry: watches are not flooded out of their history.
    // Warnings (drift, scheduling failures) keep a budget of their own.
    let budget = if warning { 2 * BURST } else { BURST };
    if store.events_recorded >= budget {
        return;
    }
    store.events_recorded += 1;
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
    // Nothing new since the last pass, and that pass kept only young ones:
    // an hour-old event is found on a later pass, soon enough.
    let recently = store.events_expired_at.is_some_and(|at| at.elapsed() < EXPIRE_EVERY);
    if store.events_recorded == 0 && recently {
        return;
    }
    store.events_recorded = 0;
    store.events_expired_at = Some(std::time::Instant::now());
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

/// What a pod's events follow: whether it is placed and ready, and why it
/// waits (read before it changes, without copying the pod).
#[derive(Debug, Default, PartialEq)]
pub struct PodFacts {
    placed: bool,
    ready: bool,
    waiting: Option<String>,
}

impl PodFacts {
    pub fn of(pod: &Value) -> PodFacts {
        let conditions = pod["status"]["conditions"].as_array();
        PodFacts {
            placed: pod["spec"]["nodeName"].is_string(),
            ready: conditions.is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True")),
            waiting: pod["status"]["conditions"][0]["message"].as_str().filter(|m| !m.is_empty()).map(str::to_string),
        }
    }
}

/// The events of a pod that changed from `before` (None: new) to `after`.
pub fn pod_changed(store: &mut KubeStore, before: Option<PodFacts>, after: &Value) {
    let before = before.unwrap_or_default();
    let now = PodFacts::of(after);
    let pod = after["metadata"]["name"].as_str().unwrap_or_default();
    let namespace = after["metadata"]["namespace"].as_str().unwrap_or_default();
    if now.placed && !before.placed {
        let node = after["spec"]["nodeName"].as_str().unwrap_or_default();
        let message = format!("Successfully assigned {namespace}/{pod} to {node}");
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
    if now.ready && !before.ready {
        let container = after["spec"]["containers"][0]["name"].as_str().unwrap_or_default();
        record(store, after, false, "Started", &format!("Started container {container}"), "kubelet");
    }
    if let Some(why) = now.waiting.filter(|why| !now.placed && before.waiting.as_ref() != Some(why)) {
        record(store, after, true, "FailedScheduling", &why, "default-scheduler");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_keeps_its_newest_events() {
        let mut store = KubeStore::default();
        let pod = json!({ "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "p", "namespace": "default", "uid": "u" } });
        // A burst is cut at BURST until the next expiry; ticks after ticks keep the newest KEPT.
        for _ in 0..BURST + 5 {
            record(&mut store, &pod, false, "Started", "Started container web", "kubelet");
        }
        assert_eq!(store.list(&store::prefix(kind(), None)).count(), BURST);
        for _ in 0..KEPT {
            expire(&mut store);
            record(&mut store, &pod, false, "Started", "Started container web", "kubelet");
        }
        expire(&mut store);
        let kept: Vec<&Value> = store.list(&store::prefix(kind(), None)).map(|(_, e)| e).collect();
        assert_eq!(kept.len(), KEPT);
        assert!(kept.iter().all(|e| e["involvedObject"]["uid"] == "u" && e["reason"] == "Started"));
    }
}
