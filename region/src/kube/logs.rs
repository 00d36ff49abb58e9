//! `kubectl logs`: a simulated pod's log (`pods/{name}/log`). The region
//! runs no containers, so a pod's log is what its kubelet would have said
//! of it (the image pulled, the container started on its node, ready),
//! and, when followed (`follow=true`), a line every few seconds while the
//! pod runs, until it goes, the client stops reading or the stream's time
//! is up. `tailLines`, `timestamps`, `limitBytes` and `container` are read
//! as the API server reads them.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::Response;
use serde_json::Value;

use super::{MAX_WATCH, Request, STALLED_WATCH, WatchSlot, not_found, status, store};
use crate::Simulated;

/// How often a followed log says its pod is still running.
const FOLLOW_EVERY: Duration = Duration::from_secs(2);
/// The most lines a log keeps (and `tailLines` may ask for).
const MAX_LINES: usize = 1000;

/// The pod under `key`, if the cluster has it.
fn pod(provider: &Mutex<Simulated>, cluster_id: &str, key: &str) -> Option<Value> {
    let guard = provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    guard.state.kube.get(cluster_id).and_then(|store| store.get(key).cloned())
}

/// The lines a pod's log holds now: (timestamp, text).
fn lines(pod: &Value, container: &str) -> Vec<(String, String)> {
    let spec = &pod["spec"]["containers"].as_array().and_then(|c| c.iter().find(|c| c["name"] == container)).cloned();
    let image = spec.as_ref().and_then(|c| c["image"].as_str()).unwrap_or_default();
    let since = pod["metadata"]["creationTimestamp"].as_str().unwrap_or_default().to_string();
    let mut out = vec![(since.clone(), format!("pulling image {image}"))];
    if let Some(node) = pod["spec"]["nodeName"].as_str() {
        let ip = pod["status"]["podIP"].as_str().unwrap_or("-");
        out.push((since.clone(), format!("started container {container} on {node} with address {ip}")));
    }
    let ready = pod["status"]["conditions"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"));
    if ready {
        out.push((since, format!("{container} is ready (simulated workload: no process output)")));
    }
    out
}

/// Shortens `text` to at most `bytes`, at a character's edge.
fn cut(text: &mut String, bytes: usize) {
    let mut at = bytes.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
}

fn write(line: &(String, String), timestamps: bool) -> String {
    if timestamps { format!("{} {}\n", line.0, line.1) } else { format!("{}\n", line.1) }
}

/// Serves `GET …/pods/{name}/log`.
pub(super) fn serve(provider: Arc<Mutex<Simulated>>, cluster_id: String, request: Request) -> Response {
    let kind = request.target.kind;
    let key = store::key(kind, request.namespace(), request.name());
    let Some(found) = pod(&provider, &cluster_id, &key) else {
        return *not_found(kind, request.name()).0;
    };
    let containers: Vec<String> = found["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect();
    let container = match request.query.get("container") {
        Some(asked) if containers.contains(asked) => asked.clone(),
        Some(asked) => {
            let message = format!("container {asked} is not valid for pod {}", request.name());
            return status(StatusCode::BAD_REQUEST, "BadRequest", &message);
        }
        None if containers.len() == 1 => containers[0].clone(),
        None => {
            let message = format!(
                "a container name must be specified for pod {}, choose one of: [{}]",
                request.name(),
                containers.join(" ")
            );
            return status(StatusCode::BAD_REQUEST, "BadRequest", &message);
        }
    };
    if found["spec"]["nodeName"].is_null() {
        let message =
            format!("container \"{container}\" in pod \"{}\" is waiting to start: ContainerCreating", request.name());
        return status(StatusCode::BAD_REQUEST, "BadRequest", &message);
    }
    let number = |name: &str| request.query.get(name).and_then(|v| v.parse::<usize>().ok());
    let timestamps = request.query.get("timestamps").is_some_and(|v| v == "true");
    let limit = number("limitBytes").unwrap_or(usize::MAX);
    let mut all = lines(&found, &container);
    let tail = number("tailLines").unwrap_or(MAX_LINES).min(MAX_LINES);
    all.drain(..all.len().saturating_sub(tail));
    let mut text: String = all.iter().map(|line| write(line, timestamps)).collect();
    cut(&mut text, limit);
    let follow = request.query.get("follow").is_some_and(|v| v == "true");
    if !follow || text.len() >= limit {
        return Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "text/plain")
            .body(Body::from(text))
            .unwrap_or_else(|_| {
                status(StatusCode::INTERNAL_SERVER_ERROR, "InternalError", "the log could not be sent")
            });
    }
    // A followed log holds a watch slot, as a watch does.
    let slot = match WatchSlot::take(&cluster_id, &request.caller.user) {
        Ok(slot) => slot,
        Err(refusal) => return *refusal.0,
    };
    let still_allowed = request.caller.still_allowed.clone();
    let uid = found["metadata"]["uid"].clone();
    let (sender, receiver) = futures::channel::mpsc::channel::<Result<Bytes, Infallible>>(16);
    tokio::spawn(async move {
        use futures::SinkExt;
        let _slot = slot;
        let mut sender = sender;
        let deadline = tokio::time::Instant::now() + MAX_WATCH;
        let mut sent = text.len();
        let mut send = async |chunk: String| {
            let until = deadline.min(tokio::time::Instant::now() + STALLED_WATCH);
            matches!(tokio::time::timeout_at(until, sender.send(Ok(Bytes::from(chunk)))).await, Ok(Ok(())))
        };
        if !send(text).await {
            return;
        }
        loop {
            tokio::time::sleep(FOLLOW_EVERY).await;
            let running = pod(&provider, &cluster_id, &key).filter(|p| p["metadata"]["uid"] == uid);
            if running.is_none() || !still_allowed() || tokio::time::Instant::now() >= deadline {
                return;
            }
            let line = (super::projection::now(), format!("{container} is running"));
            let mut chunk = write(&line, timestamps);
            cut(&mut chunk, limit.saturating_sub(sent));
            sent += chunk.len();
            if chunk.is_empty() || !send(chunk).await {
                return;
            }
        }
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/plain")
        .body(Body::from_stream(receiver))
        .unwrap_or_else(|_| status(StatusCode::INTERNAL_SERVER_ERROR, "InternalError", "the log could not be sent"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_pod_log_says_what_its_kubelet_would() {
        let pod = json!({
            "metadata": { "creationTimestamp": "2026-12-06T10:00:00Z" },
            "spec": { "nodeName": "n-1", "containers": [{ "name": "web", "image": "web:1" }] },
            "status": { "podIP": "10.0.0.7", "conditions": [{ "type": "Ready", "status": "True" }] },
        });
        let said: Vec<String> = lines(&pod, "web").iter().map(|l| write(l, false)).collect();
        assert_eq!(said[0], "pulling image web:1\n");
        assert!(said[1].contains("n-1") && said[1].contains("10.0.0.7") && said[2].contains("ready"), "{said:?}");
        let mut text = "héllo".to_string();
        cut(&mut text, 2);
        assert_eq!(text, "h", "cut at a character's edge, never inside one");
    }
}
