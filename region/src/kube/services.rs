//! Services as the API server keeps them: each write checked and defaulted
//! (type, protocols, target ports), a cluster IP from the service range and
//! node ports from 30000–32767 allocated once and kept for the Service's
//! life, a load balancer's address for `type: LoadBalancer`; Moke's own
//! Services as the gateway allocated them; and each selecting Service's
//! Endpoints, made from the ready and not-ready pods it selects, as the
//! endpoints controller makes them.
//!
//! The gateway allocates Moke's Services' addresses from the lower half of
//! 10.96.0.0/12 and their node ports from 30000 up; Services made here take
//! the upper half and node ports from 32767 down, so the two meet only
//! where a node port was asked for: [`moke_service_conflict`] then holds
//! Moke's apply up until the Service made with kubectl lets the port go.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use moke_proto::region as pb;

use super::projection::{made_by_system, managed, upsert};
use super::resources;
use super::store::{self, KubeStore};
use super::validate::Invalid;

/// The first host number of the service range (10.96.0.0/12) that Services
/// made through this API take: its upper half, 10.104.0.1 up.
const FIRST_CLUSTER_IP_INDEX: u32 = 0x08_0001;
/// The range's last host number (its broadcast address excluded).
const LAST_CLUSTER_IP_INDEX: u32 = 0x0f_fffe;
const NODE_PORTS: std::ops::RangeInclusive<i64> = 30000..=32767;
/// Where simulated load balancers take their addresses (TEST-NET-3).
const LOAD_BALANCER_RANGE: [u8; 3] = [203, 0, 113];
const TYPES: &[&str] = &["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"];
const PROTOCOLS: &[&str] = &["TCP", "UDP", "SCTP"];
/// The most addresses one Endpoints holds, as the endpoints controller keeps.
const MAX_ADDRESSES: usize = 1000;
/// The most ports one Service may expose.
const MAX_PORTS: usize = 100;

fn services() -> &'static resources::Kind {
    resources::find("", "v1", "services").expect("services are served")
}

fn endpoints_kind() -> &'static resources::Kind {
    resources::find("", "v1", "endpoints").expect("endpoints are served")
}

fn invalid(field: &str, why: &str) -> Invalid {
    (field.to_string(), why.to_string())
}

/// Checks and defaults a Service being created (`previous` None) or
/// changed, allocating what it needs from what the cluster's other
/// Services hold.
pub fn prepare(store: &KubeStore, service: &mut Value, previous: Option<&Value>) -> Result<(), Invalid> {
    let spec = &mut service["spec"];
    if !spec.is_object() {
        return Err(invalid("spec", "Required value"));
    }
    if spec["type"].is_null() {
        spec["type"] = json!("ClusterIP");
    }
    let kind = spec["type"].as_str().unwrap_or_default().to_string();
    if !TYPES.contains(&kind.as_str()) {
        return Err(invalid(
            "spec.type",
            &format!("Unsupported value: {:?}: supported values: {TYPES:?}", spec["type"]),
        ));
    }
    let previous_spec = previous.map(|p| &p["spec"]);
    // The cluster IP is allocated once and never changes.
    let before = previous_spec.and_then(|p| p["clusterIP"].as_str()).map(str::to_string);
    match (spec["clusterIP"].as_str().filter(|ip| !ip.is_empty()), &before) {
        (Some(asked), Some(before)) if asked != before => {
            return Err(invalid("spec.clusterIP", "Invalid value: field is immutable"));
        }
        (Some(asked), None) if asked != "None" => {
            return Err(invalid("spec.clusterIP", "may only be empty (allocated) or None (headless)"));
        }
        _ => {}
    }
    if kind == "ExternalName" {
        let valid_host = spec["externalName"].as_str().is_some_and(|h| !h.is_empty() && h.len() <= 253);
        if !valid_host {
            return Err(invalid("spec.externalName", "Required value"));
        }
    } else {
        let ip = match (spec["clusterIP"].as_str().filter(|ip| !ip.is_empty()), before) {
            (_, Some(before)) => before,
            (Some("None"), None) => "None".to_string(),
            _ => allocate_cluster_ip(store),
        };
        spec["clusterIP"] = json!(ip);
        spec["clusterIPs"] = json!([ip]);
        if ip != "None" {
            spec["ipFamilies"] = json!(["IPv4"]);
            spec["ipFamilyPolicy"] = json!("SingleStack");
        }
    }
    for (field, default) in [("sessionAffinity", "None"), ("internalTrafficPolicy", "Cluster")] {
        if spec[field].is_null() {
            spec[field] = json!(default);
        }
    }
    let exposed = kind == "NodePort" || kind == "LoadBalancer";
    if exposed && spec["externalTrafficPolicy"].is_null() {
        spec["externalTrafficPolicy"] = json!("Cluster");
    }
    if !spec["selector"].is_null() && !spec["selector"].as_object().is_some_and(|s| s.values().all(Value::is_string)) {
        return Err(invalid("spec.selector", "must map label names to strings"));
    }
    let headless = spec["clusterIP"] == "None";
    let ports = spec["ports"].as_array_mut();
    let ports = match ports {
        Some(ports) if !ports.is_empty() => ports,
        _ if headless || kind == "ExternalName" => return Ok(()),
        _ => return Err(invalid("spec.ports", "Required value")),
    };
    if ports.len() > MAX_PORTS {
        return Err(invalid("spec.ports", &format!("Too many: {}: must have at most {MAX_PORTS} items", ports.len())));
    }
    let mut names = BTreeSet::new();
    let count = ports.len();
    let mut taken = node_ports_in_use(store, previous);
    for (index, port) in ports.iter_mut().enumerate() {
        let at = |field: &str| format!("spec.ports[{index}].{field}");
        if !port.is_object() {
            return Err(invalid(&format!("spec.ports[{index}]"), "must be an object"));
        }
        let number = port["port"].as_i64().filter(|p| (1..=65535).contains(p));
        let Some(number) = number else {
            return Err(invalid(&at("port"), "must be between 1 and 65535, inclusive"));
        };
        let name = port["name"].as_str().unwrap_or_default().to_string();
        if count > 1 && name.is_empty() {
            return Err(invalid(&at("name"), "Required value"));
        }
        if !names.insert(name) {
            return Err(invalid(&at("name"), "Duplicate value"));
        }
        if port["protocol"].is_null() {
            port["protocol"] = json!("TCP");
        }
        if !port["protocol"].as_str().is_some_and(|p| PROTOCOLS.contains(&p)) {
            return Err(invalid(&at("protocol"), &format!("Unsupported value: supported values: {PROTOCOLS:?}")));
        }
        match &port["targetPort"] {
            Value::Null => port["targetPort"] = json!(number),
            Value::Number(n) if n.as_i64().is_some_and(|p| (1..=65535).contains(&p)) => {}
            Value::String(name) if !name.is_empty() && name.len() <= 15 => {}
            _ => return Err(invalid(&at("targetPort"), "must be a port number (1–65535) or a port name")),
        }
        if !exposed {
            if !port["nodePort"].is_null() {
                return Err(invalid(&at("nodePort"), "may not be used when `type` is 'ClusterIP'"));
            }
            continue;
        }
        // A node port asked for must be free; one kept from before stays;
        // otherwise the next free one is allocated.
        let kept = previous_spec
            .and_then(|p| p["ports"].as_array())
            .and_then(|old| old.iter().find(|o| o["port"] == port["port"] && o["protocol"] == port["protocol"]))
            .and_then(|o| o["nodePort"].as_i64());
        let node_port = match port["nodePort"].as_i64() {
            Some(asked) if !NODE_PORTS.contains(&asked) => {
                return Err(invalid(
                    &at("nodePort"),
                    "provided port is not in the valid range. The range of valid ports is 30000-32767",
                ));
            }
            Some(asked) if Some(asked) != kept && taken.contains(&asked) => {
                return Err(invalid(&at("nodePort"), &format!("provided port is already allocated: {asked}")));
            }
            Some(asked) => asked,
            None => match kept.or_else(|| NODE_PORTS.clone().rev().find(|p| !taken.contains(p))) {
                Some(free) => free,
                None => return Err(invalid(&at("nodePort"), "no node port is free in 30000-32767")),
            },
        };
        taken.insert(node_port);
        port["nodePort"] = json!(node_port);
    }
    // A load balancer's address comes with the Service and stays with it.
    let kept_status = previous.map(|p| p["status"].clone()).filter(|s| !s["loadBalancer"]["ingress"].is_null());
    service["status"] = match (kind.as_str(), kept_status) {
        ("LoadBalancer", Some(status)) => status,
        ("LoadBalancer", None) => {
            json!({ "loadBalancer": { "ingress": [{ "ip": allocate_load_balancer_ip(store), "ipMode": "VIP" }] } })
        }
        _ => json!({ "loadBalancer": {} }),
    };
    Ok(())
}

fn all_services(store: &KubeStore) -> impl Iterator<Item = &Value> {
    store.list(&store::prefix(services(), None)).map(|(_, service)| service)
}

/// The node ports other Services hold (not `previous`, being changed).
fn node_ports_in_use(store: &KubeStore, previous: Option<&Value>) -> BTreeSet<i64> {
    let uid = previous.map(|p| &p["metadata"]["uid"]);
    all_services(store)
        .filter(|s| Some(&s["metadata"]["uid"]) != uid)
        .flat_map(|s| s["spec"]["ports"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p["nodePort"].as_i64())
        .collect()
}

/// The address of host number `index` in 10.96.0.0/12.
fn service_address(index: u32) -> String {
    format!("10.{}.{}.{}", 96 + ((index >> 16) & 0x0f), (index >> 8) & 0xff, index & 0xff)
}

/// The first free address of the upper half of the service range.
fn allocate_cluster_ip(store: &KubeStore) -> String {
    let used: BTreeSet<&str> = all_services(store).filter_map(|s| s["spec"]["clusterIP"].as_str()).collect();
    (FIRST_CLUSTER_IP_INDEX..=LAST_CLUSTER_IP_INDEX)
        .map(service_address)
        .find(|ip| !used.contains(ip.as_str()))
        .unwrap_or_default()
}

/// One of Moke's Services (`id`, the gateway's) as the cluster's API shows
/// it: labelled as Moke's, with the address and node ports the gateway gave it.
pub fn moke_service(id: &str, service: &pb::ServiceSpec) -> Value {
    let mut labels: Map<String, Value> = service.labels.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    labels.insert(super::projection::MANAGED_BY.into(), json!("moke"));
    let node_port = service.r#type == "NodePort";
    let ports: Vec<Value> = service
        .ports
        .iter()
        .map(|p| {
            let mut port = json!({
                "port": p.port, "protocol": p.protocol,
                "targetPort": if p.target_port > 0 { p.target_port } else { p.port },
            });
            if !p.name.is_empty() {
                port["name"] = json!(p.name);
            }
            if node_port && p.node_port > 0 {
                port["nodePort"] = json!(p.node_port);
            }
            port
        })
        .collect();
    let mut spec = json!({
        "type": service.r#type, "selector": service.selector, "ports": ports,
        "clusterIP": service.cluster_ip, "clusterIPs": [service.cluster_ip],
        "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
        "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
    });
    if node_port {
        spec["externalTrafficPolicy"] = json!("Cluster");
    }
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {
            "name": service.name, "namespace": service.namespace, "labels": labels,
            "annotations": {
                super::projection::SERVICE_ID: id,
                super::projection::SERVICE_VERSION: service.version.to_string(),
            },
        },
        "spec": spec,
        "status": { "loadBalancer": {} },
    })
}

/// Why Moke's Service `desired` cannot be stored at `key`: the cluster's
/// own Service or one made with kubectl holds its name, or one made with
/// kubectl holds its address or one of its node ports. Moke's own Services
/// never stand in its way: the gateway allocated them all, so an overlap is
/// a change of theirs still on its way. See [`conflict_lasts`] for which of these
/// can clear.
pub fn moke_service_conflict(store: &KubeStore, key: &str, desired: &Value) -> Option<(&'static str, String)> {
    let name = desired["metadata"]["name"].as_str().unwrap_or_default();
    let namespace = desired["metadata"]["namespace"].as_str().unwrap_or_default();
    match store.get(key) {
        Some(held) if managed(held) => {}
        Some(held) if made_by_system(held) => {
            let why = format!("{namespace}/{name} is the cluster's own Service and stays");
            return Some(("name_reserved", why));
        }
        Some(_) => {
            let why = format!(
                "a Service made with kubectl is named {namespace}/{name} in the cluster; it stays the cluster users' own"
            );
            return Some(("name_taken", why));
        }
        None => {}
    }
    let address = &desired["spec"]["clusterIP"];
    let node_ports: BTreeSet<i64> =
        desired["spec"]["ports"].as_array().into_iter().flatten().filter_map(|p| p["nodePort"].as_i64()).collect();
    let others = store.list(&store::prefix(services(), None)).filter(|(k, o)| k.as_str() != key && !managed(o));
    for (_, other) in others {
        let other_name = format!(
            "{}/{}",
            other["metadata"]["namespace"].as_str().unwrap_or_default(),
            other["metadata"]["name"].as_str().unwrap_or_default()
        );
        if other["spec"]["clusterIP"] == *address {
            return Some(("address_taken", format!("Service {other_name} holds the address {address} in the cluster")));
        }
        let held = other["spec"]["ports"].as_array().into_iter().flatten().filter_map(|p| p["nodePort"].as_i64());
        if let Some(port) = held.into_iter().find(|p| node_ports.contains(p)) {
            return Some(("node_port_taken", format!("Service {other_name} holds node port {port} in the cluster")));
        }
    }
    None
}

/// Whether a conflict of [`moke_service_conflict`] stays while the
/// Service behind it lives: the cluster's own Service keeps its name, and
/// a Service's address never changes. A name or node port a Service made
/// with kubectl holds can be let go (a delete, a patch of the port).
pub fn conflict_lasts(code: &str) -> bool {
    matches!(code, "name_reserved" | "address_taken")
}

/// Node ports below this are Moke's side of the range: clusters saved
/// before the split gave their Services node ports from 30000 up, which
/// Moke hands out too; those move up past it (see [`move_out_of_mokes_ranges`]).
const FIRST_CLUSTER_SIDE_NODE_PORT: i64 = 31384;

/// Moves the Services made with kubectl that hold what Moke hands out
/// (those a cluster gave out before the service range was split): an
/// address in Moke's half of the range into the cluster's half, and node
/// ports on Moke's side to the free ones nearest the top. Each move is
/// told on the Service as a Warning event. Returns how many moved.
pub fn move_out_of_mokes_ranges(store: &mut KubeStore) -> usize {
    let in_mokes_half = |service: &Value| {
        service["spec"]["clusterIP"].as_str().and_then(service_index).is_some_and(|i| i < FIRST_CLUSTER_IP_INDEX)
    };
    let low_ports = |service: &Value| -> Vec<i64> {
        let ports = service["spec"]["ports"].as_array().into_iter().flatten();
        ports.filter_map(|p| p["nodePort"].as_i64()).filter(|p| *p < FIRST_CLUSTER_SIDE_NODE_PORT).collect()
    };
    let moving: Vec<String> = store
        .list(&store::prefix(services(), None))
        .filter(|(_, s)| !made_by_system(s) && (in_mokes_half(s) || !low_ports(s).is_empty()))
        .map(|(key, _)| key.clone())
        .collect();
    let mut taken: BTreeSet<i64> =
        node_ports_in_use(store, None).into_iter().filter(|p| *p >= FIRST_CLUSTER_SIDE_NODE_PORT).collect();
    for key in &moving {
        let Some(mut service) = store.get(key).cloned() else { continue };
        let mut told = Vec::new();
        if in_mokes_half(&service) {
            let address = allocate_cluster_ip(store);
            told.push(format!(
                "its address from {} to {address}",
                service["spec"]["clusterIP"].as_str().unwrap_or_default()
            ));
            service["spec"]["clusterIP"] = json!(address);
            service["spec"]["clusterIPs"] = json!([address]);
        }
        for port in service["spec"]["ports"].as_array_mut().into_iter().flatten() {
            let Some(low) = port["nodePort"].as_i64().filter(|p| *p < FIRST_CLUSTER_SIDE_NODE_PORT) else { continue };
            let Some(free) = NODE_PORTS.clone().rev().find(|p| !taken.contains(p)) else { continue };
            taken.insert(free);
            told.push(format!("node port {low} to {free}"));
            port["nodePort"] = json!(free);
        }
        let stored = store.put(key, service);
        let message = format!(
            "moved {}: Moke's services take the lower half of the service range and node ports from 30000 up",
            told.join(" and ")
        );
        super::events::record(store, &stored, true, "MovedForMoke", &message, "moke-region");
    }
    moving.len()
}

/// The host number of `address` in 10.96.0.0/12, if it is in it.
fn service_index(address: &str) -> Option<u32> {
    let octets: Vec<u8> = address.split('.').map(str::parse).collect::<Result<_, _>>().ok()?;
    let [10, second @ 96..=111, third, fourth] = octets[..] else { return None };
    Some((u32::from(second - 96) << 16) | (u32::from(third) << 8) | u32::from(fourth))
}

fn allocate_load_balancer_ip(store: &KubeStore) -> String {
    let used: BTreeSet<String> = all_services(store)
        .flat_map(|s| s["status"]["loadBalancer"]["ingress"].as_array().cloned().unwrap_or_default())
        .filter_map(|i| i["ip"].as_str().map(str::to_string))
        .collect();
    let [a, b, c] = LOAD_BALANCER_RANGE;
    (1..=254).map(|n| format!("{a}.{b}.{c}.{n}")).find(|ip| !used.contains(ip)).unwrap_or_default()
}

/// The `kubernetes` Service in `default`, which every cluster has.
pub fn api_server_service() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": { "name": "kubernetes", "namespace": "default",
                      "labels": { "component": "apiserver", "provider": "kubernetes" } },
        "spec": { "type": "ClusterIP", "clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"],
                  "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None",
                  "internalTrafficPolicy": "Cluster",
                  "ports": [{ "name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443 }] },
        "status": { "loadBalancer": {} },
    })
}

/// Makes the Endpoints of every selecting Service from the pods it selects
/// (ready ones as addresses, the others as not ready), and removes those
/// whose Service is gone.
pub fn endpoints(store: &mut KubeStore) {
    // Nothing changed since they were made: they stand.
    if store.endpoints_at == Some(store.endpoint_inputs_at) {
        return;
    }
    let pods_kind = resources::find("", "v1", "pods").expect("pods are served");
    let mut pods_by_namespace: std::collections::HashMap<&str, Vec<&Value>> = std::collections::HashMap::new();
    for (_, pod) in store.list(&store::prefix(pods_kind, None)) {
        pods_by_namespace.entry(pod["metadata"]["namespace"].as_str().unwrap_or_default()).or_default().push(pod);
    }
    let mut wanted = Vec::new();
    for service in all_services(store) {
        let Some(selector) = service["spec"]["selector"].as_object().filter(|s| !s.is_empty()) else { continue };
        let metadata = &service["metadata"];
        let namespace = metadata["namespace"].as_str().unwrap_or_default();
        let (mut ready, mut not_ready) = (Vec::new(), Vec::new());
        for pod in pods_by_namespace.get(namespace).into_iter().flatten() {
            if ready.len() + not_ready.len() >= MAX_ADDRESSES {
                break;
            }
            let labels = &pod["metadata"]["labels"];
            let Some(ip) = pod["status"]["podIP"].as_str() else { continue };
            if !selector.iter().all(|(k, v)| labels[k] == *v) {
                continue;
            }
            let address = json!({
                "ip": ip, "nodeName": pod["spec"]["nodeName"],
                "targetRef": { "kind": "Pod", "name": pod["metadata"]["name"], "namespace": namespace,
                               "uid": pod["metadata"]["uid"] },
            });
            let is_ready = pod["status"]["conditions"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"));
            if is_ready { ready.push(address) } else { not_ready.push(address) }
        }
        let ports: Vec<Value> = service["spec"]["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                let port = p["targetPort"].as_i64().or(p["port"].as_i64());
                let mut endpoint = Map::new();
                endpoint.insert("port".into(), json!(port));
                endpoint.insert("protocol".into(), p["protocol"].clone());
                if let Some(name) = p["name"].as_str().filter(|n| !n.is_empty()) {
                    endpoint.insert("name".into(), json!(name));
                }
                Value::Object(endpoint)
            })
            .collect();
        let mut object = json!({
            "apiVersion": "v1", "kind": "Endpoints",
            "metadata": { "name": metadata["name"], "namespace": namespace, "labels": metadata["labels"] },
        });
        if object["metadata"]["labels"].is_null() {
            object["metadata"].as_object_mut().map(|m| m.remove("labels"));
        }
        if !ready.is_empty() || !not_ready.is_empty() {
            let mut subset = json!({ "ports": ports });
            if !ready.is_empty() {
                subset["addresses"] = json!(ready);
            }
            if !not_ready.is_empty() {
                subset["notReadyAddresses"] = json!(not_ready);
            }
            object["subsets"] = json!([subset]);
        }
        let key = store::key(endpoints_kind(), namespace, metadata["name"].as_str().unwrap_or_default());
        wanted.push((key, object));
    }
    let keep: BTreeSet<String> = wanted.iter().map(|(key, _)| key.clone()).collect();
    for (key, object) in wanted {
        upsert(store, &key, object);
    }
    let gone: Vec<String> = store
        .list(&store::prefix(endpoints_kind(), None))
        .filter(|(key, _)| !keep.contains(*key))
        .map(|(key, _)| key.clone())
        .collect();
    for key in gone {
        store.remove(&key);
    }
    store.endpoints_at = Some(store.endpoint_inputs_at);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_is_defaulted_and_keeps_what_it_was_given() {
        let store = KubeStore::default();
        let mut service = json!({ "metadata": { "name": "web", "namespace": "shop" },
                                  "spec": { "type": "NodePort", "selector": { "app": "web" }, "ports": [{ "port": 80 }] } });
        prepare(&store, &mut service, None).unwrap();
        let spec = &service["spec"];
        assert_eq!(spec["clusterIP"], "10.104.0.1");
        assert_eq!(
            (spec["ports"][0]["protocol"].as_str(), spec["ports"][0]["targetPort"].as_i64()),
            (Some("TCP"), Some(80))
        );
        assert_eq!(spec["ports"][0]["nodePort"], 32767);

        let mut changed = json!({ "metadata": { "name": "web" },
                                  "spec": { "type": "NodePort", "ports": [{ "port": 80, "targetPort": "http" }] } });
        prepare(&store, &mut changed, Some(&service)).unwrap();
        assert_eq!(
            (changed["spec"]["clusterIP"].as_str(), changed["spec"]["ports"][0]["nodePort"].as_i64()),
            (Some("10.104.0.1"), Some(32767))
        );

        let mut moved = json!({ "spec": { "clusterIP": "10.96.9.9", "ports": [{ "port": 80 }] } });
        assert_eq!(prepare(&store, &mut moved, Some(&service)).unwrap_err().0, "spec.clusterIP");
        let mut portless = json!({ "spec": { "type": "ClusterIP" } });
        assert_eq!(prepare(&store, &mut portless, None).unwrap_err().0, "spec.ports");
        let mut unnamed = json!({ "spec": { "ports": [{ "port": 80 }, { "port": 443 }] } });
        assert_eq!(prepare(&store, &mut unnamed, None).unwrap_err().0, "spec.ports[0].name");
    }
}
