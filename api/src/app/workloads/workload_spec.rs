//! The two ways to write a Deployment, and the one way it is stored: a
//! Kubernetes `apps/v1` Deployment manifest (read with the official types
//! of `k8s-openapi`) is normalized into Moke's portable [`DeploymentSpec`];
//! both are then checked by the same rules, every bad field at once.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Container, Probe as K8sProbe};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::Value;

use crate::app::error::{Error, Validator};
use crate::app::validate;
use crate::model::*;

pub const MAX_REPLICAS: i64 = 1000;
const PROTOCOLS: [&str; 3] = ["TCP", "UDP", "SCTP"];
const EFFECTS: [&str; 4] = ["", "NoSchedule", "PreferNoSchedule", "NoExecute"];
/// What `on_drift` may say.
const ON_DRIFT: [&str; 2] = ["revert", "adopt"];
/// The longest environment variable value, in characters (Kubernetes
/// sets none; a pod's whole spec must fit etcd's 1.5 MiB).
const MAX_ENV_VALUE_CHARS: usize = 32 * 1024;
/// The most ports, and tolerations, of one pod.
const MAX_LISTED: usize = 64;
/// The annotation that turns on automatic rollback for a manifest.
pub const AUTO_ROLLBACK_ANNOTATION: &str = "moke.cloud/auto-rollback";
/// The annotation that sets a manifest's `on_drift` (`revert` or `adopt`).
pub const ON_DRIFT_ANNOTATION: &str = "moke.cloud/on-drift";

/// The spec of a create: exactly one of the two forms.
pub fn of_create(input: &DeploymentCreate) -> Result<DeploymentSpec, Error> {
    match (&input.spec, &input.manifest) {
        (Some(spec), None) => Ok(spec.clone()),
        (None, Some(manifest)) => from_manifest(manifest, &input.name),
        (Some(_), Some(_)) => {
            Err(Error::invalid_field("manifest", "conflicting", "give either spec or manifest, not both"))
        }
        (None, None) => Err(Error::invalid_field("spec", "required", "give spec (portable) or manifest (Kubernetes)")),
    }
}

/// Applies an update to the current spec: a merge patch of the portable
/// form, or a whole manifest.
pub fn of_update(current: &DeploymentSpec, update: &DeploymentUpdate, name: &str) -> Result<DeploymentSpec, Error> {
    match (&update.spec, &update.manifest) {
        (Some(patch), None) => {
            let mut merged = serde_json::to_value(current).map_err(|e| Error::Internal(e.into()))?;
            merge_patch(&mut merged, patch);
            serde_json::from_value(merged).map_err(|e| Error::invalid_field("spec", "invalid", e.to_string()))
        }
        (None, Some(manifest)) => from_manifest(manifest, name),
        (Some(_), Some(_)) => {
            Err(Error::invalid_field("manifest", "conflicting", "give either spec or manifest, not both"))
        }
        (None, None) => Ok(current.clone()),
    }
}

/// RFC 7386 JSON merge patch: objects merge, `null` removes, anything else replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                if value.is_null() {
                    target.remove(key);
                } else {
                    merge_patch(target.entry(key.clone()).or_insert(Value::Null), value);
                }
            }
        }
        (target, patch) => *target = patch.clone(),
    }
}

/// Kubernetes CPU quantity in thousandths (`250m`, `1`, `0.5`, `2k`).
pub fn cpu_millis(quantity: &str) -> Option<i64> {
    if let Some(milli) = quantity.strip_suffix('m') {
        return milli.parse::<i64>().ok();
    }
    decimal(quantity).map(|cores| (cores * 1000.0).ceil() as i64)
}

/// Kubernetes memory quantity in mebibytes (`512Mi`, `1Gi`, `1G`, `1048576`).
pub fn memory_mib(quantity: &str) -> Option<i64> {
    const UNITS: [(&str, f64); 10] = [
        ("Ki", 1024.0),
        ("Mi", 1024.0 * 1024.0),
        ("Gi", 1024.0 * 1024.0 * 1024.0),
        ("Ti", 1024.0 * 1024.0 * 1024.0 * 1024.0),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("m", 1e-3),
        ("", 1.0),
    ];
    let (number, bytes_per_unit) =
        UNITS.iter().find_map(|(suffix, factor)| quantity.strip_suffix(suffix).map(|n| (n, *factor)))?;
    decimal(number).map(|n| (n * bytes_per_unit / (1024.0 * 1024.0)).ceil() as i64)
}

fn decimal(text: &str) -> Option<f64> {
    let ok = !text.is_empty() && text.chars().all(|c| c.is_ascii_digit() || c == '.');
    ok.then(|| text.parse::<f64>().ok()).flatten().filter(|n| n.is_finite())
}

/// A rolling-update bound as a pod count: `"2"` or `"25%"` of `replicas`,
/// percentages rounded up for surge and down for unavailability.
pub fn bound(value: &str, replicas: i64, round_up: bool) -> Option<i64> {
    match value.strip_suffix('%') {
        Some(percent) => {
            let percent = percent.parse::<i64>().ok().filter(|p| (0..=100).contains(p))?;
            let scaled = replicas.checked_mul(percent)?;
            Some(if round_up { scaled.checked_add(99)? / 100 } else { scaled / 100 })
        }
        None => value.parse::<i64>().ok().filter(|n| *n >= 0),
    }
}

fn int_or_string(value: &IntOrString) -> String {
    match value {
        IntOrString::Int(n) => n.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// Reads a Kubernetes Deployment manifest into the portable spec. Parts
/// Moke cannot run (more than one container, volumes, init containers,
/// `valueFrom`) are refused by name rather than dropped.
pub fn from_manifest(manifest: &Value, name: &str) -> Result<DeploymentSpec, Error> {
    let deployment: Deployment = serde_json::from_value(manifest.clone())
        .map_err(|e| Error::invalid_field("manifest", "invalid_manifest", format!("not an apps/v1 Deployment: {e}")))?;
    let mut v = Validator::new();
    if let Some(manifest_name) = &deployment.metadata.name {
        v.check(
            manifest_name == name,
            "manifest.metadata.name",
            "mismatch",
            format!("must be {name:?}, the deployment's name"),
        );
    }
    let spec = deployment.spec.unwrap_or_default();
    let pod = spec.template.spec.unwrap_or_default();
    v.check(
        pod.containers.len() == 1,
        "manifest.spec.template.spec.containers",
        "unsupported",
        "exactly one container",
    );
    v.check(
        pod.init_containers.as_ref().is_none_or(Vec::is_empty),
        "manifest.spec.template.spec.initContainers",
        "unsupported",
        "init containers are not supported",
    );
    v.check(
        pod.volumes.as_ref().is_none_or(Vec::is_empty),
        "manifest.spec.template.spec.volumes",
        "unsupported",
        "volumes are not supported",
    );
    let container: Container = pod.containers.into_iter().next().unwrap_or_default();
    let at = "manifest.spec.template.spec.containers[0]";
    let requests = container.resources.as_ref().and_then(|r| r.requests.clone()).unwrap_or_default();
    let mut resources = ResourceRequests::default();
    if let Some(cpu) = requests.get("cpu") {
        match cpu_millis(&cpu.0) {
            Some(m) => resources.cpu_millis = m,
            None => {
                v.push(format!("{at}.resources.requests.cpu"), "invalid", format!("{:?} is not a CPU quantity", cpu.0))
            }
        }
    }
    if let Some(memory) = requests.get("memory") {
        match memory_mib(&memory.0) {
            Some(m) => resources.memory_mib = m,
            None => v.push(
                format!("{at}.resources.requests.memory"),
                "invalid",
                format!("{:?} is not a memory quantity", memory.0),
            ),
        }
    }
    let ports: Vec<ContainerPort> = container
        .ports
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|p| ContainerPort {
            name: p.name,
            container_port: i64::from(p.container_port),
            protocol: p.protocol.unwrap_or_else(|| "TCP".into()),
        })
        .collect();
    let mut env = Vec::new();
    for (i, var) in container.env.clone().unwrap_or_default().into_iter().enumerate() {
        v.check(
            var.value_from.is_none(),
            format!("{at}.env[{i}].valueFrom"),
            "unsupported",
            "valueFrom is not supported; give a value",
        );
        env.push(EnvVar { name: var.name, value: var.value.unwrap_or_default() });
    }
    let probe = |probe: Option<K8sProbe>, field: &str, v: &mut Validator| -> Option<Probe> {
        let probe = probe?;
        let (path, port) = match (&probe.http_get, &probe.tcp_socket) {
            (Some(http), _) => (http.path.clone().or(Some("/".into())), &http.port),
            (None, Some(tcp)) => (None, &tcp.port),
            (None, None) => {
                v.push(format!("{at}.{field}"), "unsupported", "only httpGet and tcpSocket probes are supported");
                return None;
            }
        };
        let port = match port {
            IntOrString::Int(n) => i64::from(*n),
            IntOrString::String(named) => match ports.iter().find(|p| p.name.as_deref() == Some(named.as_str())) {
                Some(p) => p.container_port,
                None => {
                    v.push(format!("{at}.{field}"), "invalid", format!("no container port is named {named:?}"));
                    return None;
                }
            },
        };
        Some(Probe {
            http_path: path,
            port,
            initial_delay_seconds: i64::from(probe.initial_delay_seconds.unwrap_or(0)),
            period_seconds: i64::from(probe.period_seconds.unwrap_or(10)),
        })
    };
    let probes = Probes {
        readiness: probe(container.readiness_probe.clone(), "readinessProbe", &mut v),
        liveness: probe(container.liveness_probe.clone(), "livenessProbe", &mut v),
    };
    let mut strategy = RolloutStrategy::default();
    if let Some(s) = &spec.strategy {
        match s.type_.as_deref() {
            Some("Recreate") => {
                strategy.max_surge = "0".into();
                strategy.max_unavailable = "100%".into();
            }
            Some("RollingUpdate") | None => {
                if let Some(rolling) = &s.rolling_update {
                    if let Some(surge) = &rolling.max_surge {
                        strategy.max_surge = int_or_string(surge);
                    }
                    if let Some(unavailable) = &rolling.max_unavailable {
                        strategy.max_unavailable = int_or_string(unavailable);
                    }
                }
            }
            Some(other) => v.push("manifest.spec.strategy.type", "invalid", format!("unknown strategy {other:?}")),
        }
    }
    if let Some(deadline) = spec.progress_deadline_seconds {
        strategy.progress_deadline_seconds = i64::from(deadline);
    }
    let annotation = |name: &str| deployment.metadata.annotations.as_ref().and_then(|a| a.get(name)).cloned();
    strategy.auto_rollback = annotation(AUTO_ROLLBACK_ANNOTATION).is_some_and(|value| value == "true");
    let on_drift = annotation(ON_DRIFT_ANNOTATION).unwrap_or_else(|| "revert".into());
    if !ON_DRIFT.contains(&on_drift.as_str()) {
        v.push(format!("manifest.metadata.annotations.{ON_DRIFT_ANNOTATION}"), "invalid", "revert or adopt");
    }
    v.finish()?;
    Ok(DeploymentSpec {
        image: container.image.unwrap_or_default(),
        replicas: spec.replicas.map_or(1, i64::from),
        ports,
        env,
        resources,
        probes,
        strategy,
        pod_labels: spec.template.metadata.and_then(|m| m.labels).unwrap_or_default().into_iter().collect(),
        node_selector: pod.node_selector.unwrap_or_default().into_iter().collect(),
        tolerations: pod
            .tolerations
            .unwrap_or_default()
            .into_iter()
            .map(|t| Toleration {
                key: t.key.unwrap_or_default(),
                operator: t.operator.unwrap_or_else(|| "Equal".into()),
                value: t.value.unwrap_or_default(),
                effect: t.effect.unwrap_or_default(),
            })
            .collect(),
        paused: spec.paused.unwrap_or(false),
        restarted_at: None,
        on_drift,
    })
}

/// An image reference Kubernetes would pull: no spaces or upper-case
/// repository, an optional tag or digest.
fn image_ok(image: &str) -> bool {
    let repository = image.split('@').next().unwrap_or_default();
    let repository = match repository.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => repo,
        _ => repository,
    };
    !image.is_empty()
        && image.len() <= 512
        && !image.chars().any(char::is_whitespace)
        && !repository.is_empty()
        && repository.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-/:".contains(c))
}

/// A Kubernetes port name (IANA service name): 1 to 15 of `a-z0-9-`,
/// alphanumeric at both ends.
fn port_name_ok(name: &str) -> bool {
    (1..=15).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

fn env_name_ok(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

/// Checks a spec, recording every bad field under `prefix` (e.g. `spec`).
pub fn check(v: &mut Validator, prefix: &str, spec: &DeploymentSpec) {
    let field = |name: &str| format!("{prefix}.{name}");
    v.check(
        image_ok(&spec.image),
        field("image"),
        "invalid",
        "an image reference such as registry.example.com/app:1.2",
    );
    v.check(
        (0..=MAX_REPLICAS).contains(&spec.replicas),
        field("replicas"),
        "out_of_range",
        format!("0 to {MAX_REPLICAS}"),
    );
    v.check(ON_DRIFT.contains(&spec.on_drift.as_str()), field("on_drift"), "invalid", "revert or adopt");
    let mut seen_ports = std::collections::BTreeSet::new();
    for (i, port) in spec.ports.iter().enumerate() {
        v.check(
            (1..=65535).contains(&port.container_port),
            field(&format!("ports[{i}].container_port")),
            "out_of_range",
            "1 to 65535",
        );
        v.check(
            PROTOCOLS.contains(&port.protocol.as_str()),
            field(&format!("ports[{i}].protocol")),
            "invalid",
            "TCP, UDP or SCTP",
        );
        v.check(
            port.name.as_deref().is_none_or(port_name_ok),
            field(&format!("ports[{i}].name")),
            "invalid",
            "at most 15 lower-case letters, digits or '-', starting and ending with a letter or digit",
        );
        v.check(
            seen_ports.insert((port.container_port, port.protocol.clone())),
            field(&format!("ports[{i}]")),
            "duplicate",
            "each port and protocol once",
        );
    }
    let mut seen_env = std::collections::BTreeSet::new();
    for (i, var) in spec.env.iter().enumerate() {
        v.check(
            env_name_ok(&var.name),
            field(&format!("env[{i}].name")),
            "invalid",
            "letters, digits, '_', '-' or '.', not starting with a digit",
        );
        v.check(seen_env.insert(var.name.clone()), field(&format!("env[{i}].name")), "duplicate", "each variable once");
        v.check(
            var.value.chars().count() <= MAX_ENV_VALUE_CHARS && !var.value.contains('\0'),
            field(&format!("env[{i}].value")),
            "invalid",
            format!("at most {MAX_ENV_VALUE_CHARS} characters, without NUL"),
        );
    }
    v.check(spec.env.len() <= 256, field("env"), "too_many", "at most 256 variables");
    v.check(spec.ports.len() <= MAX_LISTED, field("ports"), "too_many", format!("at most {MAX_LISTED} ports"));
    v.check(
        spec.tolerations.len() <= MAX_LISTED,
        field("tolerations"),
        "too_many",
        format!("at most {MAX_LISTED} tolerations"),
    );
    v.check(
        (1..=256_000).contains(&spec.resources.cpu_millis),
        field("resources.cpu_millis"),
        "out_of_range",
        "1 to 256000",
    );
    v.check(
        (1..=4_194_304).contains(&spec.resources.memory_mib),
        field("resources.memory_mib"),
        "out_of_range",
        "1 to 4194304",
    );
    for (name, probe) in [("readiness", &spec.probes.readiness), ("liveness", &spec.probes.liveness)] {
        if let Some(probe) = probe {
            v.check(
                (1..=65535).contains(&probe.port),
                field(&format!("probes.{name}.port")),
                "out_of_range",
                "1 to 65535",
            );
            v.check(
                probe.period_seconds >= 1,
                field(&format!("probes.{name}.period_seconds")),
                "out_of_range",
                "at least 1",
            );
            v.check(
                probe.initial_delay_seconds >= 0,
                field(&format!("probes.{name}.initial_delay_seconds")),
                "out_of_range",
                "0 or more",
            );
            v.check(
                probe.http_path.as_deref().is_none_or(|p| p.starts_with('/')),
                field(&format!("probes.{name}.http_path")),
                "invalid",
                "an absolute path",
            );
        }
    }
    let surge = bound(&spec.strategy.max_surge, spec.replicas, true);
    let unavailable = bound(&spec.strategy.max_unavailable, spec.replicas, false);
    v.check(
        surge.is_some(),
        field("strategy.max_surge"),
        "invalid",
        "a count such as \"1\" or a percentage such as \"25%\"",
    );
    v.check(
        unavailable.is_some(),
        field("strategy.max_unavailable"),
        "invalid",
        "a count such as \"0\" or a percentage such as \"25%\"",
    );
    v.check(
        !(spec.strategy.max_surge.trim_end_matches('%') == "0"
            && spec.strategy.max_unavailable.trim_end_matches('%') == "0"),
        field("strategy"),
        "invalid",
        "max_surge and max_unavailable cannot both be zero",
    );
    v.check(
        (1..=86_400).contains(&spec.strategy.progress_deadline_seconds),
        field("strategy.progress_deadline_seconds"),
        "out_of_range",
        "1 to 86400",
    );
    validate::labels(v, &field("node_selector"), &spec.node_selector);
    validate::labels(v, &field("pod_labels"), &spec.pod_labels);
    for (i, t) in spec.tolerations.iter().enumerate() {
        let at = |name: &str| field(&format!("tolerations[{i}].{name}"));
        v.check(t.operator == "Equal" || t.operator == "Exists", at("operator"), "invalid", "Equal or Exists");
        v.check(
            EFFECTS.contains(&t.effect.as_str()),
            at("effect"),
            "invalid",
            "NoSchedule, PreferNoSchedule, NoExecute or empty",
        );
        v.check(t.operator != "Exists" || t.value.is_empty(), at("value"), "invalid", "must be empty with Exists");
        v.check(t.key.chars().count() <= 253 && !t.key.contains('\0'), at("key"), "invalid", "at most 253 characters");
        v.check(
            t.value.chars().count() <= 63 && !t.value.contains('\0'),
            at("value"),
            "invalid",
            "at most 63 characters",
        );
        v.check(
            !(t.key.is_empty() && t.operator != "Exists"),
            at("key"),
            "required",
            "required unless the operator is Exists",
        );
    }
}

/// Gives pods the label `app: <deployment name>` when the spec names none,
/// so a Service can always select them.
pub fn label_pods(spec: &mut DeploymentSpec, deployment: &str) {
    if spec.pod_labels.is_empty() {
        spec.pod_labels.insert("app".into(), deployment.to_string());
    }
}

/// True when two specs run the same pods (a change between them rolls
/// out a new revision); replicas, strategy and pausing do not.
pub fn same_template(a: &DeploymentSpec, b: &DeploymentSpec) -> bool {
    a.image == b.image
        && a.ports == b.ports
        && a.env == b.env
        && a.resources == b.resources
        && a.probes == b.probes
        && a.pod_labels == b.pod_labels
        && a.node_selector == b.node_selector
        && a.tolerations == b.tolerations
        && a.restarted_at == b.restarted_at
}

/// `spec` with the pod template of `from` (replicas, strategy and pausing kept).
pub fn with_template_of(spec: &DeploymentSpec, from: &DeploymentSpec) -> DeploymentSpec {
    DeploymentSpec {
        image: from.image.clone(),
        ports: from.ports.clone(),
        env: from.env.clone(),
        resources: from.resources.clone(),
        probes: from.probes.clone(),
        pod_labels: from.pod_labels.clone(),
        node_selector: from.node_selector.clone(),
        tolerations: from.tolerations.clone(),
        restarted_at: from.restarted_at,
        ..spec.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_read_as_kubernetes_writes_them() {
        assert_eq!(cpu_millis("250m"), Some(250));
        assert_eq!(cpu_millis("1"), Some(1000));
        assert_eq!(cpu_millis("0.5"), Some(500));
        assert_eq!(cpu_millis("lots"), None);
        assert_eq!(memory_mib("512Mi"), Some(512));
        assert_eq!(memory_mib("1Gi"), Some(1024));
        assert_eq!(memory_mib("1G"), Some(954));
        assert_eq!(memory_mib("1048576"), Some(1));
        assert_eq!(memory_mib("12 apples"), None);
    }

    /// What a pod spec cannot hold is refused at its field, before it
    /// reaches storage (which cannot hold a NUL) or a cluster.
    #[test]
    fn container_text_is_bounded() {
        let spec = |change: &dyn Fn(&mut DeploymentSpec)| {
            let mut spec: DeploymentSpec = serde_json::from_value(serde_json::json!({ "image": "web:1" })).unwrap();
            change(&mut spec);
            let mut v = Validator::new();
            check(&mut v, "spec", &spec);
            match v.finish() {
                Ok(()) => Vec::new(),
                Err(Error::Invalid(fields)) => fields.into_iter().map(|f| f.field).collect(),
                Err(other) => panic!("{other}"),
            }
        };
        assert!(spec(&|_| {}).is_empty());
        let nul = |s: &mut DeploymentSpec| s.env.push(EnvVar { name: "A".into(), value: "a\0b".into() });
        assert_eq!(spec(&nul), ["spec.env[0].value"]);
        let port = |s: &mut DeploymentSpec| {
            s.ports.push(ContainerPort { name: Some("Web_Port".into()), container_port: 80, protocol: "TCP".into() })
        };
        assert_eq!(spec(&port), ["spec.ports[0].name"]);
        let many = |s: &mut DeploymentSpec| {
            s.tolerations = vec![
                Toleration {
                    key: "k".into(),
                    operator: "Exists".into(),
                    value: String::new(),
                    effect: String::new()
                };
                65
            ]
        };
        assert_eq!(spec(&many), ["spec.tolerations"]);
        assert_eq!(bound("50%", i64::MAX, true), None, "no overflow");
        assert_eq!(bound("100%", i64::MAX / 100, true), None, "none in rounding up either");
    }

    #[test]
    fn rollout_bounds_round_like_kubernetes() {
        assert_eq!(bound("25%", 10, true), Some(3));
        assert_eq!(bound("25%", 10, false), Some(2));
        assert_eq!(bound("2", 10, true), Some(2));
        assert_eq!(bound("101%", 10, true), None);
        assert_eq!(bound("-1", 10, true), None);
    }

    #[test]
    fn merge_patch_follows_rfc_7386() {
        let mut doc = serde_json::json!({ "a": "b", "c": { "d": "e", "f": "g" } });
        merge_patch(&mut doc, &serde_json::json!({ "a": "z", "c": { "f": null } }));
        assert_eq!(doc, serde_json::json!({ "a": "z", "c": { "d": "e" } }));
    }

    #[test]
    fn image_references() {
        assert!(image_ok("registry.example.com:5000/team/web:1.4.2"));
        assert!(image_ok("nginx@sha256:0123abcd"));
        assert!(!image_ok("Registry/Web"));
        assert!(!image_ok("web app"));
        assert!(!image_ok(""));
    }
}
