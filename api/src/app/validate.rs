//! Input rules shared by every resource: names, labels, and the cluster and
//! node-pool specs checked against the catalogs. Each checker records every
//! bad field in a [`Validator`] instead of stopping at the first.

use chrono::{NaiveDate, NaiveTime, Utc};

use super::error::Validator;
use crate::config::Catalog;
use crate::model::*;

pub(crate) const WEEKDAYS: [&str; 7] = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
const TAINT_EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
pub const MAX_NODES_PER_POOL: i64 = 500;

/// A DNS label (RFC 1123): what clusters and projects are named with.
pub fn is_dns_label(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes[0].is_ascii_lowercase()
        && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[bytes.len() - 1] != b'-'
}

/// A node's name as regions report it ([`NODE_NAME_PATTERN`]): 1-253
/// lowercase letters, digits, `-` or `.`, alphanumeric at both ends.
pub fn is_node_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let alphanumeric = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    !bytes.is_empty()
        && bytes.len() <= 253
        && alphanumeric(&bytes[0])
        && alphanumeric(&bytes[bytes.len() - 1])
        && bytes.iter().all(|b| alphanumeric(b) || *b == b'-' || *b == b'.')
}

/// An etcd snapshot's name as regions report it: the rule of node names
/// ([`crate::model::SNAPSHOT_NAME_PATTERN`]).
pub fn is_snapshot_name(name: &str) -> bool {
    is_node_name(name)
}

/// The `nodes` of a recycle request as [`NodeNames`] states them: 1 to 500
/// distinct node names.
pub fn node_names(names: &[String]) -> Result<(), super::Error> {
    let mut v = Validator::new();
    v.check(!names.is_empty(), "nodes", "empty", "name at least one node, or leave nodes out for all of them");
    v.check(names.len() <= MAX_NODES_PER_POOL as usize, "nodes", "too_many", "at most 500 nodes");
    for (i, name) in names.iter().enumerate().take(MAX_NODES_PER_POOL as usize) {
        v.check(is_node_name(name), format!("nodes[{i}]"), "invalid_name", "not a node name");
        v.check(!names[..i].contains(name), format!("nodes[{i}]"), "duplicate", "each node once");
    }
    v.finish()
}

pub fn name(v: &mut Validator, field: &str, name: &str) {
    v.check(
        is_dns_label(name),
        field,
        "invalid_name",
        "must be 1-63 lowercase letters, digits or '-', start with a letter and not end with '-'",
    );
}

/// Kubernetes label syntax: `[prefix/]name` keys, values of at most 63 characters.
fn label_part_ok(part: &str, allow_empty: bool) -> bool {
    if part.is_empty() {
        return allow_empty;
    }
    let bytes = part.as_bytes();
    bytes.len() <= 63
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && bytes.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn label_key_ok(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, name)) => {
            prefix.len() <= 253 && prefix.split('.').all(|p| label_part_ok(p, false)) && label_part_ok(name, false)
        }
        None => label_part_ok(key, false),
    }
}

pub fn labels(v: &mut Validator, field: &str, labels: &Labels) {
    v.check(labels.len() <= MAX_LABELS, field, "too_many", format!("at most {MAX_LABELS} labels"));
    for (key, value) in labels {
        v.check(
            label_key_ok(key),
            format!("{field}.{key}"),
            "invalid_label_key",
            "label keys are [prefix/]name, name up to 63 alphanumerics, '-', '_' or '.'",
        );
        v.check(
            label_part_ok(value, true),
            format!("{field}.{key}"),
            "invalid_label_value",
            "label values are up to 63 alphanumerics, '-', '_' or '.'",
        );
    }
}

fn kubernetes_version(v: &mut Validator, catalog: &Catalog, field: &str, version: &str) {
    match catalog.kubernetes_version(version) {
        None => v.push(
            field,
            "unknown_kubernetes_version",
            format!("{version:?} is not offered; see GET /v1/kubernetes-versions"),
        ),
        Some(entry) if entry.end_of_life < Utc::now().date_naive() => {
            v.push(field, "end_of_life", format!("{version} reached end of life on {}", entry.end_of_life))
        }
        Some(_) => {}
    }
}

fn control_plane(v: &mut Validator, field: &str, input: &ControlPlaneInput) {
    v.check(matches!(input.replicas, 1 | 3), format!("{field}.replicas"), "out_of_range", "must be 1 or 3");
}

fn maintenance_window(v: &mut Validator, field: &str, window: &MaintenanceWindow) {
    v.check(
        WEEKDAYS.contains(&window.day.as_str()),
        format!("{field}.day"),
        "invalid",
        "must be a lowercase weekday, e.g. \"sunday\"",
    );
    v.check(
        window.start_time.len() == 5 && NaiveTime::parse_from_str(&window.start_time, "%H:%M").is_ok(),
        format!("{field}.start_time"),
        "invalid",
        "must be HH:MM in UTC",
    );
    v.check(
        (1..=24).contains(&window.duration_hours),
        format!("{field}.duration_hours"),
        "out_of_range",
        "must be between 1 and 24",
    );
}

/// The most etcd snapshots a policy keeps (and a region's report is cut to).
pub const MAX_SNAPSHOTS_KEPT: usize = 50;

/// A Kubernetes version as regions report it: `1.33` or `1.33.2`.
pub fn is_version_text(text: &str) -> bool {
    let parts: Vec<&str> = text.split('.').collect();
    text.len() <= 32
        && (2..=3).contains(&parts.len())
        && parts.iter().all(|p| !p.is_empty() && p.len() <= 9 && p.bytes().all(|b| b.is_ascii_digit()))
}

fn snapshot_policy(v: &mut Validator, field: &str, policy: &SnapshotPolicy) {
    v.check(
        (1..=168).contains(&policy.every_hours),
        format!("{field}.every_hours"),
        "out_of_range",
        "must be between 1 and 168",
    );
    v.check(
        (1..=MAX_SNAPSHOTS_KEPT as i64).contains(&policy.keep),
        format!("{field}.keep"),
        "out_of_range",
        format!("must be between 1 and {MAX_SNAPSHOTS_KEPT}"),
    );
}

/// At most this many networks in a control-plane firewall.
pub const MAX_FIREWALL_ADDRESSES: usize = 100;

fn control_plane_firewall(v: &mut Validator, field: &str, firewall: &ControlPlaneFirewall) {
    let list = format!("{field}.allowed_addresses");
    v.check(
        !firewall.enabled || !firewall.allowed_addresses.is_empty(),
        &list,
        "empty",
        "an enabled firewall needs at least one address: none would lock everyone out",
    );
    v.check(
        firewall.allowed_addresses.len() <= MAX_FIREWALL_ADDRESSES,
        &list,
        "too_many",
        format!("at most {MAX_FIREWALL_ADDRESSES} networks"),
    );
    for (i, text) in firewall.allowed_addresses.iter().enumerate().take(MAX_FIREWALL_ADDRESSES) {
        let field = format!("{list}[{i}]");
        let ipv4_mapped: ipnet::IpNet = "::ffff:0:0/96".parse().expect("a network");
        match text.parse::<ipnet::IpNet>() {
            Err(_) => v.push(field, "invalid", "must be an IP network in CIDR notation, e.g. 203.0.113.0/24"),
            Ok(net) if net.trunc() != net => {
                v.push(field, "host_bits_set", format!("has host bits set; the network is {}", net.trunc()))
            }
            Ok(net) if ipv4_mapped.contains(&net) => {
                v.push(field, "ipv4_mapped", "write IPv4 networks in IPv4 notation, e.g. 203.0.113.0/24")
            }
            // One spelling per network: what every region reads the same way.
            Ok(net) if net.to_string() != *text => v.push(field, "not_canonical", format!("write it as {net}")),
            Ok(_) if firewall.allowed_addresses[..i].contains(text) => v.push(field, "duplicate", "listed twice"),
            Ok(_) => {}
        }
    }
}

/// At most this many maintenance exclusions on a cluster.
pub const MAX_MAINTENANCE_EXCLUSIONS: usize = 10;
/// The longest maintenance exclusion, in days (both ends included).
pub const MAX_EXCLUSION_DAYS: i64 = 90;
/// How far ahead a maintenance exclusion may end, in days.
pub const MAX_EXCLUSION_DAYS_AHEAD: i64 = 365;

fn maintenance_exclusions(v: &mut Validator, field: &str, exclusions: &[MaintenanceExclusion]) {
    v.check(
        exclusions.len() <= MAX_MAINTENANCE_EXCLUSIONS,
        field,
        "too_many",
        format!("at most {MAX_MAINTENANCE_EXCLUSIONS} exclusions"),
    );
    for (i, exclusion) in exclusions.iter().enumerate().take(MAX_MAINTENANCE_EXCLUSIONS) {
        let at = format!("{field}[{i}]");
        name(v, &format!("{at}.name"), &exclusion.name);
        v.check(
            !exclusions[..i].iter().any(|e| e.name == exclusion.name),
            format!("{at}.name"),
            "duplicate",
            "each exclusion's name once",
        );
        let earliest = NaiveDate::from_ymd_opt(2000, 1, 1).expect("a date");
        v.check(
            exclusion.start_date >= earliest,
            format!("{at}.start_date"),
            "out_of_range",
            format!("must be on or after {earliest}"),
        );
        let days = (exclusion.end_date - exclusion.start_date).num_days() + 1;
        let latest = Utc::now().date_naive() + chrono::Duration::days(MAX_EXCLUSION_DAYS_AHEAD);
        if exclusion.end_date > latest {
            v.push(
                format!("{at}.end_date"),
                "too_far",
                format!("must be at most {MAX_EXCLUSION_DAYS_AHEAD} days ahead, on or before {latest}"),
            );
        } else if days < 1 {
            v.push(format!("{at}.end_date"), "before_start", "must be on or after start_date");
        } else if days > MAX_EXCLUSION_DAYS {
            v.push(
                format!("{at}.end_date"),
                "too_long",
                format!("an exclusion lasts at most {MAX_EXCLUSION_DAYS} days; this one is {days}"),
            );
        }
    }
}

/// Validates a new cluster and fills in defaults.
pub fn cluster_create(catalog: &Catalog, input: &ClusterCreate) -> Result<ClusterSpec, super::Error> {
    let mut v = Validator::new();
    name(&mut v, "name", &input.name);
    v.check(
        input.name != "estimate",
        "name",
        "reserved",
        "\"estimate\" is reserved: POST /v1/projects/{project}/clusters/estimate prices a cluster",
    );
    labels(&mut v, "labels", &input.labels);
    let spec = &input.spec;
    v.check(
        catalog.region(&spec.region).is_some(),
        "spec.region",
        "unknown_region",
        format!("{:?} is not a region; see GET /v1/regions", spec.region),
    );
    // A cluster on a release channel starts on the channel's version.
    let channel = spec.release_channel.unwrap_or_default();
    let version = spec.kubernetes_version.clone().unwrap_or_else(|| {
        crate::app::infra::clusters::auto_upgrades::channel_version(catalog, channel, Utc::now().date_naive())
            .unwrap_or_else(|| catalog.default_kubernetes_version().version.clone())
    });
    kubernetes_version(&mut v, catalog, "spec.kubernetes_version", &version);
    let replicas = spec.control_plane.as_ref().map_or(3, |cp| cp.replicas);
    if let Some(cp) = &spec.control_plane {
        control_plane(&mut v, "spec.control_plane", cp);
    }
    if let Some(window) = &spec.maintenance_window {
        maintenance_window(&mut v, "spec.maintenance_window", window);
    }
    if let Some(policy) = &spec.snapshot_policy {
        snapshot_policy(&mut v, "spec.snapshot_policy", policy);
    }
    if let Some(firewall) = &spec.control_plane_firewall {
        control_plane_firewall(&mut v, "spec.control_plane_firewall", firewall);
    }
    if let Some(exclusions) = &spec.maintenance_exclusions {
        maintenance_exclusions(&mut v, "spec.maintenance_exclusions", exclusions);
    }
    v.finish()?;
    Ok(ClusterSpec {
        region: spec.region.clone(),
        kubernetes_version: version,
        control_plane: ControlPlaneSpec { replicas },
        maintenance_window: spec.maintenance_window.clone(),
        deletion_protection: spec.deletion_protection.unwrap_or(false),
        snapshot_policy: spec.snapshot_policy.clone().unwrap_or_default(),
        control_plane_firewall: spec.control_plane_firewall.clone().unwrap_or_default(),
        release_channel: spec.release_channel.unwrap_or_default(),
        maintenance_exclusions: spec.maintenance_exclusions.clone().unwrap_or_default(),
    })
}

/// `(major, minor)` of a version like `1.33`.
pub(crate) fn minor(version: &str) -> Option<(u32, u32)> {
    let (major, minor) = version.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// Applies a cluster patch to the current spec, refusing immutable changes.
pub fn cluster_update(
    catalog: &Catalog,
    current: &ClusterSpec,
    update: &ClusterUpdate,
) -> Result<ClusterSpec, super::Error> {
    let mut v = Validator::new();
    if let Some(l) = &update.labels {
        labels(&mut v, "labels", l);
    }
    let mut spec = current.clone();
    if let Some(patch) = &update.spec {
        if let Some(region) = &patch.region {
            v.check(
                region == &current.region,
                "spec.region",
                "immutable",
                "a cluster's region cannot change; create a new cluster",
            );
        }
        if let Some(version) = &patch.kubernetes_version {
            if version != &current.kubernetes_version {
                kubernetes_version(&mut v, catalog, "spec.kubernetes_version", version);
                if let (Some(from), Some(to)) = (minor(&current.kubernetes_version), minor(version)) {
                    v.check(
                        to > from,
                        "spec.kubernetes_version",
                        "downgrade",
                        "Kubernetes versions cannot be downgraded",
                    );
                    v.check(
                        to <= from || (to.0 == from.0 && to.1 == from.1 + 1),
                        "spec.kubernetes_version",
                        "skips_minor",
                        format!("upgrade one minor version at a time from {}", current.kubernetes_version),
                    );
                }
            }
            spec.kubernetes_version = version.clone();
        }
        if let Some(cp) = &patch.control_plane {
            control_plane(&mut v, "spec.control_plane", cp);
            spec.control_plane.replicas = cp.replicas;
        }
        if let Some(window) = &patch.maintenance_window {
            if let Some(window) = window {
                maintenance_window(&mut v, "spec.maintenance_window", window);
            }
            spec.maintenance_window = window.clone();
        }
        if let Some(protect) = patch.deletion_protection {
            spec.deletion_protection = protect;
        }
        if let Some(policy) = &patch.snapshot_policy {
            snapshot_policy(&mut v, "spec.snapshot_policy", policy);
            spec.snapshot_policy = policy.clone();
        }
        if let Some(firewall) = &patch.control_plane_firewall {
            control_plane_firewall(&mut v, "spec.control_plane_firewall", firewall);
            spec.control_plane_firewall = firewall.clone();
        }
        if let Some(channel) = patch.release_channel {
            spec.release_channel = channel;
        }
        if let Some(exclusions) = &patch.maintenance_exclusions {
            maintenance_exclusions(&mut v, "spec.maintenance_exclusions", exclusions);
            spec.maintenance_exclusions = exclusions.clone();
        }
    }
    v.finish()?;
    Ok(spec)
}

fn node_pool_shape(
    v: &mut Validator,
    count: i64,
    autoscaling: Option<&Autoscaling>,
    node_labels: &Labels,
    taints: &[Taint],
) {
    v.check(
        (0..=MAX_NODES_PER_POOL).contains(&count),
        "spec.count",
        "out_of_range",
        format!("must be between 0 and {MAX_NODES_PER_POOL}"),
    );
    if let Some(a) = autoscaling {
        v.check(
            a.min_count >= 0 && a.min_count <= a.max_count,
            "spec.autoscaling.min_count",
            "out_of_range",
            "must be between 0 and max_count",
        );
        v.check(
            (1..=MAX_NODES_PER_POOL).contains(&a.max_count),
            "spec.autoscaling.max_count",
            "out_of_range",
            format!("must be between 1 and {MAX_NODES_PER_POOL}"),
        );
        v.check(
            count >= a.min_count && count <= a.max_count,
            "spec.count",
            "out_of_range",
            "must lie within the autoscaling range",
        );
    }
    labels(v, "spec.node_labels", node_labels);
    for (i, taint) in taints.iter().enumerate() {
        v.check(
            label_key_ok(&taint.key),
            format!("spec.taints[{i}].key"),
            "invalid",
            "taint keys follow label key rules",
        );
        v.check(
            label_part_ok(&taint.value, true),
            format!("spec.taints[{i}].value"),
            "invalid",
            "taint values follow label value rules",
        );
        v.check(
            TAINT_EFFECTS.contains(&taint.effect.as_str()),
            format!("spec.taints[{i}].effect"),
            "invalid",
            "must be NoSchedule, PreferNoSchedule or NoExecute",
        );
    }
}

/// Validates a new node pool for a cluster in `region` and fills in defaults.
pub fn node_pool_create(catalog: &Catalog, region: &str, input: &NodePoolCreate) -> Result<NodePoolSpec, super::Error> {
    let mut v = Validator::new();
    name(&mut v, "name", &input.name);
    v.check(
        input.name != "estimate",
        "name",
        "reserved",
        "\"estimate\" is reserved: POST …/clusters/{cluster}/node-pools/estimate prices a new pool",
    );
    labels(&mut v, "labels", &input.labels);
    let spec = &input.spec;
    v.check(
        catalog.machine_type(&spec.machine_type).is_some(),
        "spec.machine_type",
        "unknown_machine_type",
        format!("{:?} is not offered; see GET /v1/machine-types", spec.machine_type),
    );
    let region_zones = catalog.region(region).map(|r| r.zones.clone()).unwrap_or_default();
    let zones = spec.zones.clone().unwrap_or_else(|| region_zones.clone());
    v.check(!zones.is_empty(), "spec.zones", "empty", "name at least one zone");
    for (i, zone) in zones.iter().enumerate() {
        v.check(
            region_zones.contains(zone),
            format!("spec.zones[{i}]"),
            "unknown_zone",
            format!("{zone:?} is not a zone of region {region}"),
        );
        v.check(!zones[..i].contains(zone), format!("spec.zones[{i}]"), "duplicate", "zones must be distinct");
    }
    node_pool_shape(&mut v, spec.count, spec.autoscaling.as_ref(), &spec.node_labels, &spec.taints);
    if let Some(policy) = &spec.upgrade_policy {
        upgrade_policy(&mut v, policy);
    }
    v.finish()?;
    Ok(NodePoolSpec {
        machine_type: spec.machine_type.clone(),
        count: spec.count,
        autoscaling: spec.autoscaling.clone(),
        zones,
        node_labels: spec.node_labels.clone(),
        taints: spec.taints.clone(),
        upgrade_policy: spec.upgrade_policy.clone().unwrap_or_default(),
    })
}

/// The most surge or unavailable nodes an upgrade policy allows.
pub const MAX_UPGRADE_PARALLELISM: i64 = 10;

fn upgrade_policy(v: &mut Validator, policy: &UpgradePolicy) {
    for (name, value) in [("max_surge", policy.max_surge), ("max_unavailable", policy.max_unavailable)] {
        v.check(
            (0..=MAX_UPGRADE_PARALLELISM).contains(&value),
            format!("spec.upgrade_policy.{name}"),
            "out_of_range",
            format!("must be between 0 and {MAX_UPGRADE_PARALLELISM}"),
        );
    }
    v.check(
        policy.max_surge > 0 || policy.max_unavailable > 0,
        "spec.upgrade_policy",
        "no_progress",
        "max_surge and max_unavailable cannot both be 0: no node could be replaced",
    );
}

/// Applies a node-pool patch, refusing immutable changes.
pub fn node_pool_update(
    catalog: &Catalog,
    current: &NodePoolSpec,
    update: &NodePoolUpdate,
) -> Result<NodePoolSpec, super::Error> {
    let mut v = Validator::new();
    if let Some(l) = &update.labels {
        labels(&mut v, "labels", l);
    }
    let mut spec = current.clone();
    if let Some(patch) = &update.spec {
        if let Some(machine_type) = &patch.machine_type {
            v.check(
                catalog.machine_type(machine_type).is_some(),
                "spec.machine_type",
                "unknown_machine_type",
                format!("{machine_type:?} is not offered; see GET /v1/machine-types"),
            );
            spec.machine_type = machine_type.clone();
        }
        if let Some(zones) = &patch.zones {
            v.check(zones == &current.zones, "spec.zones", "immutable", "a node pool's zones cannot change");
        }
        if let Some(count) = patch.count {
            spec.count = count;
        }
        if let Some(autoscaling) = &patch.autoscaling {
            spec.autoscaling = autoscaling.clone();
        }
        if let Some(node_labels) = &patch.node_labels {
            spec.node_labels = node_labels.clone();
        }
        if let Some(taints) = &patch.taints {
            spec.taints = taints.clone();
        }
        if let Some(policy) = &patch.upgrade_policy {
            upgrade_policy(&mut v, policy);
            spec.upgrade_policy = policy.clone();
        }
        node_pool_shape(&mut v, spec.count, spec.autoscaling.as_ref(), &spec.node_labels, &spec.taints);
    }
    v.finish()?;
    Ok(spec)
}

/// Nodes a pool holds against quota: its count, or its autoscaling maximum if
/// larger, and the surge nodes its upgrade policy allows beyond the first.
pub fn reserved_nodes(spec: &NodePoolSpec) -> i64 {
    let size = spec.autoscaling.as_ref().map_or(spec.count, |a| a.max_count.max(spec.count));
    // Surge nodes beyond the one every pool may have while nodes are replaced.
    size + (spec.upgrade_policy.max_surge - UpgradePolicy::default().max_surge).max(0)
}

/// A normalized e-mail address: trimmed and lower-cased, so one address
/// maps to one account whatever its spelling.
pub fn email(v: &mut Validator, field: &str, text: &str) -> String {
    let normalized = text.trim().to_lowercase();
    let ok = normalized.chars().count() <= 254
        && match normalized.split_once('@') {
            Some((local, domain)) => {
                !local.is_empty()
                    && !domain.contains('@')
                    && domain.contains('.')
                    && !domain.starts_with('.')
                    && !domain.ends_with('.')
                    && !normalized.chars().any(|c| c.is_whitespace() || c.is_control())
            }
            None => false,
        };
    v.check(ok, field, "invalid_email", "must be an e-mail address");
    normalized
}

/// A human-readable name: 1-100 characters, no control characters.
pub fn display_name(v: &mut Validator, field: &str, text: &str) {
    let trimmed = text.trim();
    v.check(
        !trimmed.is_empty() && trimmed.chars().count() <= 100 && !trimmed.chars().any(char::is_control),
        field,
        "invalid",
        "must be 1-100 characters without control characters",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_labels() {
        assert!(is_dns_label("prod-1"));
        assert!(!is_dns_label("Prod"));
        assert!(!is_dns_label("-a"));
        assert!(!is_dns_label("a-"));
        assert!(!is_dns_label(""));
        assert!(!is_dns_label(&"a".repeat(64)));
    }

    #[test]
    fn label_keys() {
        assert!(label_key_ok("app.kubernetes.io/name"));
        assert!(label_key_ok("tier"));
        assert!(!label_key_ok("/x"));
        assert!(!label_key_ok("a b"));
    }
}
