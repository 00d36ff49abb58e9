//! Server-side printing (`Accept: …;as=Table`): the columns `kubectl get`
//! shows for each resource, with the `-o wide` ones at priority 1.

use serde_json::{Value, json};

/// Whether the client asks for a Table, as `kubectl get` does.
pub fn wanted(headers: &axum::http::HeaderMap) -> bool {
    headers.get(axum::http::header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|v| v.contains("as=Table"))
}

/// How long ago an RFC 3339 time was, as kubectl prints ages.
pub fn age(since: &Value) -> String {
    let Some(since) = since.as_str().and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok()) else {
        return "<unknown>".into();
    };
    let seconds = (chrono::Utc::now() - since.with_timezone(&chrono::Utc)).num_seconds().max(0);
    match seconds {
        s if s < 120 => format!("{s}s"),
        s if s < 600 => format!("{}m{}s", s / 60, s % 60),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

/// The columns of a resource: (name, priority).
fn columns(resource: &str) -> &'static [(&'static str, u8)] {
    match resource {
        "namespaces" => &[("Name", 0), ("Status", 0), ("Age", 0)],
        "configmaps" => &[("Name", 0), ("Data", 0), ("Age", 0)],
        "deployments" => &[
            ("Name", 0),
            ("Ready", 0),
            ("Up-to-date", 0),
            ("Available", 0),
            ("Age", 0),
            ("Containers", 1),
            ("Images", 1),
            ("Selector", 1),
        ],
        "pods" => &[
            ("Name", 0),
            ("Ready", 0),
            ("Status", 0),
            ("Restarts", 0),
            ("Age", 0),
            ("IP", 1),
            ("Node", 1),
            ("Nominated Node", 1),
            ("Readiness Gates", 1),
        ],
        "nodes" => &[
            ("Name", 0),
            ("Status", 0),
            ("Roles", 0),
            ("Age", 0),
            ("Version", 0),
            ("Internal-IP", 1),
            ("OS-Image", 1),
            ("Kernel-Version", 1),
            ("Container-Runtime", 1),
        ],
        "replicasets" => &[
            ("Name", 0),
            ("Desired", 0),
            ("Current", 0),
            ("Ready", 0),
            ("Age", 0),
            ("Containers", 1),
            ("Images", 1),
            ("Selector", 1),
        ],
        "services" => &[
            ("Name", 0),
            ("Type", 0),
            ("Cluster-IP", 0),
            ("External-IP", 0),
            ("Port(s)", 0),
            ("Age", 0),
            ("Selector", 1),
        ],
        "endpoints" => &[("Name", 0), ("Endpoints", 0), ("Age", 0)],
        "leases" => &[("Name", 0), ("Holder", 0), ("Age", 0)],
        "events" => &[("Last Seen", 0), ("Type", 0), ("Reason", 0), ("Object", 0), ("Message", 0)],
        "secrets" => &[("Name", 0), ("Type", 0), ("Data", 0), ("Age", 0)],
        _ => &[("Name", 0), ("Age", 0)],
    }
}

/// `key=value,…` of a map of labels.
fn label_pairs(labels: &Value) -> String {
    labels
        .as_object()
        .map(|labels| joined(labels.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))))
        .unwrap_or_else(|| "<none>".into())
}

/// A Service's `EXTERNAL-IP`: its load balancer's addresses, `<pending>`
/// until it has one, `<none>` for the other types.
fn external_ip(service: &Value) -> String {
    let mut addresses: Vec<String> = service["spec"]["externalIPs"]
        .as_array()
        .map(|ips| ips.iter().filter_map(|ip| ip.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    if service["spec"]["type"] == "LoadBalancer" {
        let ingress = service["status"]["loadBalancer"]["ingress"].as_array().cloned().unwrap_or_default();
        addresses
            .extend(ingress.iter().filter_map(|i| i["ip"].as_str().or(i["hostname"].as_str())).map(str::to_string));
        if addresses.is_empty() {
            return "<pending>".into();
        }
    }
    joined(addresses.into_iter())
}

fn joined(values: impl Iterator<Item = String>) -> String {
    let all: Vec<String> = values.collect();
    if all.is_empty() { "<none>".into() } else { all.join(",") }
}

/// One row's cells.
fn cells(resource: &str, object: &Value) -> Vec<Value> {
    let name = object["metadata"]["name"].clone();
    let age = json!(age(&object["metadata"]["creationTimestamp"]));
    let number = |value: &Value| value.as_i64().unwrap_or(0);
    match resource {
        "namespaces" => vec![name, object["status"]["phase"].clone(), age],
        "configmaps" => {
            let data = object["data"].as_object().map_or(0, |d| d.len())
                + object["binaryData"].as_object().map_or(0, |d| d.len());
            vec![name, json!(data), age]
        }
        "deployments" => {
            let status = &object["status"];
            let replicas = number(&object["spec"]["replicas"]);
            let containers = object["spec"]["template"]["spec"]["containers"].as_array().cloned().unwrap_or_default();
            vec![
                name,
                json!(format!("{}/{replicas}", number(&status["readyReplicas"]))),
                json!(number(&status["updatedReplicas"])),
                json!(number(&status["availableReplicas"])),
                age,
                json!(joined(containers.iter().filter_map(|c| c["name"].as_str().map(str::to_string)))),
                json!(joined(containers.iter().filter_map(|c| c["image"].as_str().map(str::to_string)))),
                json!(label_pairs(&object["spec"]["selector"]["matchLabels"])),
            ]
        }
        "pods" => {
            let statuses = object["status"]["containerStatuses"].as_array().cloned().unwrap_or_default();
            let ready = statuses.iter().filter(|s| s["ready"] == true).count();
            let text = |value: &Value| json!(value.as_str().filter(|s| !s.is_empty()).unwrap_or("<none>"));
            vec![
                name,
                json!(format!("{ready}/{}", statuses.len())),
                object["status"]["phase"].clone(),
                json!(0),
                age,
                text(&object["status"]["podIP"]),
                text(&object["spec"]["nodeName"]),
                json!("<none>"),
                json!("<none>"),
            ]
        }
        "nodes" => {
            let info = &object["status"]["nodeInfo"];
            let ready = object["status"]["conditions"]
                .as_array()
                .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
                .is_some_and(|c| c["status"] == "True");
            let address = object["status"]["addresses"]
                .as_array()
                .and_then(|a| a.iter().find(|a| a["type"] == "InternalIP"))
                .map_or(json!("<none>"), |a| a["address"].clone());
            vec![
                name,
                json!(if ready { "Ready" } else { "NotReady" }),
                json!("<none>"),
                age,
                info["kubeletVersion"].clone(),
                address,
                info["osImage"].clone(),
                info["kernelVersion"].clone(),
                info["containerRuntimeVersion"].clone(),
            ]
        }
        "replicasets" => {
            let status = &object["status"];
            let containers = object["spec"]["template"]["spec"]["containers"].as_array().cloned().unwrap_or_default();
            vec![
                name,
                json!(number(&object["spec"]["replicas"])),
                json!(number(&status["replicas"])),
                json!(number(&status["readyReplicas"])),
                age,
                json!(joined(containers.iter().filter_map(|c| c["name"].as_str().map(str::to_string)))),
                json!(joined(containers.iter().filter_map(|c| c["image"].as_str().map(str::to_string)))),
                json!(label_pairs(&object["spec"]["selector"]["matchLabels"])),
            ]
        }
        "services" => {
            let spec = &object["spec"];
            let ports = spec["ports"].as_array().cloned().unwrap_or_default();
            let ports = joined(ports.iter().map(|p| {
                let protocol = p["protocol"].as_str().unwrap_or("TCP");
                match p["nodePort"].as_i64() {
                    Some(node_port) => format!("{}:{node_port}/{protocol}", number(&p["port"])),
                    None => format!("{}/{protocol}", number(&p["port"])),
                }
            }));
            vec![
                name,
                spec["type"].clone(),
                json!(spec["clusterIP"].as_str().unwrap_or("<none>")),
                json!(external_ip(object)),
                json!(ports),
                age,
                json!(label_pairs(&spec["selector"])),
            ]
        }
        "endpoints" => {
            let mut endpoints = Vec::new();
            for subset in object["subsets"].as_array().into_iter().flatten() {
                for address in subset["addresses"].as_array().into_iter().flatten() {
                    for port in subset["ports"].as_array().into_iter().flatten() {
                        endpoints.push(format!(
                            "{}:{}",
                            address["ip"].as_str().unwrap_or_default(),
                            number(&port["port"])
                        ));
                    }
                }
            }
            let shown = match endpoints.len() {
                0 => "<none>".to_string(),
                n if n <= 3 => endpoints.join(","),
                n => format!("{} + {} more...", endpoints[..3].join(","), n - 3),
            };
            vec![name, json!(shown), age]
        }
        "secrets" => vec![name, object["type"].clone(), json!(object["data"].as_object().map_or(0, |d| d.len())), age],
        "events" => {
            let involved = &object["involvedObject"];
            let kind = involved["kind"].as_str().unwrap_or_default().to_lowercase();
            vec![
                json!(self::age(&object["lastTimestamp"])),
                object["type"].clone(),
                object["reason"].clone(),
                json!(format!("{kind}/{}", involved["name"].as_str().unwrap_or_default())),
                object["message"].clone(),
            ]
        }
        "leases" => vec![name, json!(object["spec"]["holderIdentity"].as_str().unwrap_or("<none>")), age],
        _ => vec![name, age],
    }
}

/// A `meta.k8s.io/v1` Table of `items`.
pub fn table(resource: &str, items: &[&Value], resource_version: u64) -> Value {
    let definitions: Vec<Value> = columns(resource)
        .iter()
        .map(|(name, priority)| {
            let format = if *name == "Name" { "name" } else { "" };
            json!({ "name": name, "type": "string", "format": format, "description": "", "priority": priority })
        })
        .collect();
    let rows: Vec<Value> = items
        .iter()
        .map(|item| {
            json!({
                "cells": cells(resource, item),
                "object": { "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": item["metadata"] },
            })
        })
        .collect();
    json!({
        "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": { "resourceVersion": resource_version.to_string() },
        "columnDefinitions": definitions, "rows": rows,
    })
}
