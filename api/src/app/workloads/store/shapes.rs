//! How workload specs are kept in Postgres: `deployments.spec` and
//! `deployment_revisions.spec` hold [`DeploymentSpecStored`], and
//! `services.spec` [`ServiceSpecStored`], not the public
//! model, so the API and the stored shape change separately (a stored
//! field is only ever added, optional, with its default). The defaults
//! here are the stored shape's own; the public model's may move on.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::model::{
    ContainerPort, DeploymentSpec, EnvVar, Labels, Probe, Probes, ResourceRequests, RolloutStrategy, ServicePort,
    ServiceSpec, Toleration,
};

/// A deployment's desired state as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct DeploymentSpecStored {
    pub image: String,
    #[serde(default = "stored_defaults::replicas")]
    pub replicas: i64,
    #[serde(default)]
    pub ports: Vec<PortStored>,
    #[serde(default)]
    pub env: Vec<EnvStored>,
    #[serde(default)]
    pub resources: ResourcesStored,
    #[serde(default)]
    pub probes: ProbesStored,
    #[serde(default)]
    pub strategy: StrategyStored,
    #[serde(default)]
    pub pod_labels: Labels,
    #[serde(default)]
    pub node_selector: Labels,
    #[serde(default)]
    pub tolerations: Vec<TolerationStored>,
    #[serde(default)]
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restarted_at: Option<DateTime<Utc>>,
    #[serde(default = "stored_defaults::on_drift")]
    pub on_drift: String,
}

mod stored_defaults {
    pub fn on_drift() -> String {
        "revert".into()
    }
    pub fn replicas() -> i64 {
        1
    }
    pub fn protocol() -> String {
        "TCP".into()
    }
    pub fn cpu_millis() -> i64 {
        100
    }
    pub fn memory_mib() -> i64 {
        128
    }
    pub fn surge() -> String {
        "25%".into()
    }
    pub fn progress_deadline_seconds() -> i64 {
        600
    }
    pub fn period_seconds() -> i64 {
        10
    }
    pub fn equal() -> String {
        "Equal".into()
    }
    pub fn cluster_ip() -> String {
        "ClusterIP".into()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct PortStored {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub container_port: i64,
    #[serde(default = "stored_defaults::protocol")]
    pub protocol: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct EnvStored {
    pub name: String,
    #[serde(default)]
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct ResourcesStored {
    #[serde(default = "stored_defaults::cpu_millis")]
    pub cpu_millis: i64,
    #[serde(default = "stored_defaults::memory_mib")]
    pub memory_mib: i64,
}

impl Default for ResourcesStored {
    fn default() -> Self {
        ResourcesStored { cpu_millis: stored_defaults::cpu_millis(), memory_mib: stored_defaults::memory_mib() }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct ProbesStored {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness: Option<ProbeStored>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness: Option<ProbeStored>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct ProbeStored {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_path: Option<String>,
    pub port: i64,
    #[serde(default)]
    pub initial_delay_seconds: i64,
    #[serde(default = "stored_defaults::period_seconds")]
    pub period_seconds: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct StrategyStored {
    #[serde(default = "stored_defaults::surge")]
    pub max_surge: String,
    #[serde(default = "stored_defaults::surge")]
    pub max_unavailable: String,
    #[serde(default = "stored_defaults::progress_deadline_seconds")]
    pub progress_deadline_seconds: i64,
    #[serde(default)]
    pub auto_rollback: bool,
}

impl Default for StrategyStored {
    fn default() -> Self {
        StrategyStored {
            max_surge: stored_defaults::surge(),
            max_unavailable: stored_defaults::surge(),
            progress_deadline_seconds: stored_defaults::progress_deadline_seconds(),
            auto_rollback: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct TolerationStored {
    #[serde(default)]
    pub key: String,
    #[serde(default = "stored_defaults::equal")]
    pub operator: String,
    #[serde(default)]
    pub value: String,
    #[serde(default)]
    pub effect: String,
}

impl From<&Probe> for ProbeStored {
    fn from(p: &Probe) -> Self {
        ProbeStored {
            http_path: p.http_path.clone(),
            port: p.port,
            initial_delay_seconds: p.initial_delay_seconds,
            period_seconds: p.period_seconds,
        }
    }
}

impl From<ProbeStored> for Probe {
    fn from(p: ProbeStored) -> Self {
        Probe {
            http_path: p.http_path,
            port: p.port,
            initial_delay_seconds: p.initial_delay_seconds,
            period_seconds: p.period_seconds,
        }
    }
}

impl From<&DeploymentSpec> for DeploymentSpecStored {
    fn from(spec: &DeploymentSpec) -> Self {
        DeploymentSpecStored {
            image: spec.image.clone(),
            replicas: spec.replicas,
            ports: spec
                .ports
                .iter()
                .map(|p| PortStored {
                    name: p.name.clone(),
                    container_port: p.container_port,
                    protocol: p.protocol.clone(),
                })
                .collect(),
            env: spec.env.iter().map(|e| EnvStored { name: e.name.clone(), value: e.value.clone() }).collect(),
            resources: ResourcesStored { cpu_millis: spec.resources.cpu_millis, memory_mib: spec.resources.memory_mib },
            probes: ProbesStored {
                readiness: spec.probes.readiness.as_ref().map(ProbeStored::from),
                liveness: spec.probes.liveness.as_ref().map(ProbeStored::from),
            },
            strategy: StrategyStored {
                max_surge: spec.strategy.max_surge.clone(),
                max_unavailable: spec.strategy.max_unavailable.clone(),
                progress_deadline_seconds: spec.strategy.progress_deadline_seconds,
                auto_rollback: spec.strategy.auto_rollback,
            },
            pod_labels: spec.pod_labels.clone(),
            node_selector: spec.node_selector.clone(),
            tolerations: spec
                .tolerations
                .iter()
                .map(|t| TolerationStored {
                    key: t.key.clone(),
                    operator: t.operator.clone(),
                    value: t.value.clone(),
                    effect: t.effect.clone(),
                })
                .collect(),
            paused: spec.paused,
            restarted_at: spec.restarted_at,
            on_drift: spec.on_drift.clone(),
        }
    }
}

impl From<DeploymentSpecStored> for DeploymentSpec {
    fn from(stored: DeploymentSpecStored) -> Self {
        DeploymentSpec {
            image: stored.image,
            replicas: stored.replicas,
            ports: stored
                .ports
                .into_iter()
                .map(|p| ContainerPort { name: p.name, container_port: p.container_port, protocol: p.protocol })
                .collect(),
            env: stored.env.into_iter().map(|e| EnvVar { name: e.name, value: e.value }).collect(),
            resources: ResourceRequests {
                cpu_millis: stored.resources.cpu_millis,
                memory_mib: stored.resources.memory_mib,
            },
            probes: Probes {
                readiness: stored.probes.readiness.map(Probe::from),
                liveness: stored.probes.liveness.map(Probe::from),
            },
            strategy: RolloutStrategy {
                max_surge: stored.strategy.max_surge,
                max_unavailable: stored.strategy.max_unavailable,
                progress_deadline_seconds: stored.strategy.progress_deadline_seconds,
                auto_rollback: stored.strategy.auto_rollback,
            },
            pod_labels: stored.pod_labels,
            node_selector: stored.node_selector,
            tolerations: stored
                .tolerations
                .into_iter()
                .map(|t| Toleration { key: t.key, operator: t.operator, value: t.value, effect: t.effect })
                .collect(),
            paused: stored.paused,
            restarted_at: stored.restarted_at,
            on_drift: stored.on_drift,
        }
    }
}

/// `services.spec`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct ServiceSpecStored {
    #[serde(rename = "type", default = "stored_defaults::cluster_ip")]
    pub service_type: String,
    #[serde(default)]
    pub selector: Labels,
    #[serde(default)]
    pub ports: Vec<ServicePortStored>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::app) struct ServicePortStored {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub port: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_port: Option<i64>,
    #[serde(default = "stored_defaults::protocol")]
    pub protocol: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_port: Option<i64>,
}

impl From<&ServiceSpec> for ServiceSpecStored {
    fn from(spec: &ServiceSpec) -> Self {
        ServiceSpecStored {
            service_type: spec.service_type.clone(),
            selector: spec.selector.clone(),
            ports: spec
                .ports
                .iter()
                .map(|p| ServicePortStored {
                    name: p.name.clone(),
                    port: p.port,
                    target_port: p.target_port,
                    protocol: p.protocol.clone(),
                    node_port: p.node_port,
                })
                .collect(),
        }
    }
}

impl From<ServiceSpecStored> for ServiceSpec {
    fn from(stored: ServiceSpecStored) -> Self {
        ServiceSpec {
            service_type: stored.service_type,
            selector: stored.selector,
            ports: stored
                .ports
                .into_iter()
                .map(|p| ServicePort {
                    name: p.name,
                    port: p.port,
                    target_port: p.target_port,
                    protocol: p.protocol,
                    node_port: p.node_port,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::app::kernel::jsonb::{from_column, to_column};

    /// Specs as written before stored shapes existed (the public model
    /// serialized, and the minimal form defaults fill in) still read, and a
    /// full one writes back unchanged.
    #[test]
    fn specs_written_before_still_read() {
        let full = json!({
            "image": "registry.example/web:3", "replicas": 4,
            "ports": [{ "name": "http", "container_port": 8080, "protocol": "TCP" }],
            "env": [{ "name": "MODE", "value": "prod" }],
            "resources": { "cpu_millis": 250, "memory_mib": 512 },
            "probes": { "readiness": { "http_path": "/ready", "port": 8080, "initial_delay_seconds": 5,
                                       "period_seconds": 10 } },
            "strategy": { "max_surge": "50%", "max_unavailable": "0", "progress_deadline_seconds": 300,
                          "auto_rollback": true },
            "pod_labels": { "app": "web" }, "node_selector": { "tier": "web" },
            "tolerations": [{ "key": "gpu", "operator": "Equal", "value": "yes", "effect": "NoSchedule" }],
            "paused": false, "restarted_at": "2026-12-01T10:00:00Z", "on_drift": "adopt",
        });
        let stored: DeploymentSpecStored = from_column("deployment spec", &full).unwrap();
        let spec = DeploymentSpec::from(stored);
        assert_eq!(spec.strategy.progress_deadline_seconds, 300);
        let written = to_column(&DeploymentSpecStored::from(&spec));
        assert_eq!(written, full);
        assert_eq!(written, serde_json::to_value(&spec).unwrap(), "the same JSON the model wrote before");

        let minimal: DeploymentSpecStored = from_column("deployment spec", &json!({ "image": "nginx" })).unwrap();
        let spec = DeploymentSpec::from(minimal);
        assert_eq!((spec.replicas, spec.resources.cpu_millis, spec.strategy.max_surge.as_str()), (1, 100, "25%"));
        assert_eq!(spec.on_drift, "revert", "a spec from before on_drift puts kubectl's changes back");

        let service = json!({
            "type": "NodePort", "selector": { "app": "web" },
            "ports": [{ "name": "http", "port": 80, "target_port": 8080, "protocol": "TCP", "node_port": 30080 }],
        });
        let stored: ServiceSpecStored = from_column("service spec", &service).unwrap();
        let spec = ServiceSpec::from(stored);
        assert_eq!(to_column(&ServiceSpecStored::from(&spec)), service);
        assert_eq!(serde_json::to_value(&spec).unwrap(), service, "the same JSON the model wrote before");
    }
}
