//! What the gateway asks of regions, typed: the kinds of resource that
//! operations act on and regions report about ([`ResourceKind`]), the
//! changes that reach a region ([`ChangeKind`]), and the
//! `moke.region.v1.Command` each change sends. Commands are built here as
//! protobuf messages and the outbox stores their encoded bytes: no JSON in
//! between, no key looked up.

use moke_proto::region::{self as pb, CommandKind};
use uuid::Uuid;

use crate::app::workloads::workload_spec;
use crate::ids::{ClusterId, DeploymentId, NodePoolId, OperationId, OrgId, ServiceId};
use crate::model::{ClusterSpec, DeploymentSpec, NodePoolSpec, UpgradePolicy};

/// A kind of resource that operations act on and regions report about. A
/// new kind is a compile error in every `match` until each handles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    /// Organization-wide work (re-encrypting secrets); regions never hold one.
    Org,
    Cluster,
    NodePool,
    Deployment,
}

impl ResourceKind {
    /// The name stored in `operations.target_type` and shown as an
    /// Operation's `target.type`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ResourceKind::Org => "org",
            ResourceKind::Cluster => "cluster",
            ResourceKind::NodePool => "node_pool",
            ResourceKind::Deployment => "deployment",
        }
    }

    /// The inverse of [`ResourceKind::as_str`].
    pub fn parse(text: &str) -> Option<ResourceKind> {
        [ResourceKind::Org, ResourceKind::Cluster, ResourceKind::NodePool, ResourceKind::Deployment]
            .into_iter()
            .find(|kind| kind.as_str() == text)
    }

    /// The kind a region's observation names (regions call a deployment a
    /// `workload`); organizations are never observed.
    pub fn of_observation(text: &str) -> Option<ResourceKind> {
        match text {
            "cluster" => Some(ResourceKind::Cluster),
            "node_pool" => Some(ResourceKind::NodePool),
            "workload" => Some(ResourceKind::Deployment),
            _ => None,
        }
    }

    /// The prefixed id customers see for `id`.
    pub fn id_text(self, id: Uuid) -> String {
        match self {
            ResourceKind::Org => OrgId::from_uuid(id).to_string(),
            ResourceKind::Cluster => ClusterId::from_uuid(id).to_string(),
            ResourceKind::NodePool => NodePoolId::from_uuid(id).to_string(),
            ResourceKind::Deployment => DeploymentId::from_uuid(id).to_string(),
        }
    }

    /// `text` as an id of this kind (a prefixed id of another kind is none).
    pub fn parse_id(self, text: &str) -> Option<Uuid> {
        match self {
            ResourceKind::Org => text.parse::<OrgId>().ok().map(|id| id.uuid()),
            ResourceKind::Cluster => text.parse::<ClusterId>().ok().map(|id| id.uuid()),
            ResourceKind::NodePool => text.parse::<NodePoolId>().ok().map(|id| id.uuid()),
            ResourceKind::Deployment => text.parse::<DeploymentId>().ok().map(|id| id.uuid()),
        }
    }
}

/// A change that reaches a region: it names the Operation customers see
/// and the command the region acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    ClusterCreate,
    ClusterUpdate,
    /// A new Kubernetes version: the control plane, then every node pool.
    ClusterUpgrade,
    ClusterDelete,
    /// A serving certificate, a credentials generation or revoked principals.
    ClusterCertificate,
    /// An etcd snapshot taken on request.
    ClusterSnapshot,
    /// etcd restored from one of its snapshots.
    ClusterRestore,
    /// A namespace made through Moke's API reaches the cluster's API.
    NamespaceCreate,
    /// A namespace deleted through Moke's API leaves the cluster's API.
    NamespaceDelete,
    /// A service made through Moke's API reaches the cluster's API.
    ServiceCreate,
    /// A service changed through Moke's API (its spec or labels).
    ServiceUpdate,
    /// A service deleted through Moke's API leaves the cluster's API.
    ServiceDelete,
    NodePoolCreate,
    NodePoolUpdate,
    /// Named nodes (or all) replaced by surge, cordon and drain.
    NodePoolRecycle,
    /// One node removed, with a replacement or with the count lowered.
    NodeDelete,
    NodePoolDelete,
    DeploymentCreate,
    DeploymentUpdate,
    DeploymentScale,
    DeploymentPause,
    DeploymentResume,
    DeploymentRestart,
    DeploymentRollback,
    DeploymentDelete,
}

impl ChangeKind {
    /// Every kind, for tests that must cover each.
    pub const ALL: [ChangeKind; 25] = [
        ChangeKind::ClusterCreate,
        ChangeKind::ClusterUpdate,
        ChangeKind::ClusterUpgrade,
        ChangeKind::ClusterDelete,
        ChangeKind::ClusterCertificate,
        ChangeKind::ClusterSnapshot,
        ChangeKind::ClusterRestore,
        ChangeKind::NamespaceCreate,
        ChangeKind::NamespaceDelete,
        ChangeKind::ServiceCreate,
        ChangeKind::ServiceUpdate,
        ChangeKind::ServiceDelete,
        ChangeKind::NodePoolCreate,
        ChangeKind::NodePoolUpdate,
        ChangeKind::NodePoolRecycle,
        ChangeKind::NodeDelete,
        ChangeKind::NodePoolDelete,
        ChangeKind::DeploymentCreate,
        ChangeKind::DeploymentUpdate,
        ChangeKind::DeploymentScale,
        ChangeKind::DeploymentPause,
        ChangeKind::DeploymentResume,
        ChangeKind::DeploymentRestart,
        ChangeKind::DeploymentRollback,
        ChangeKind::DeploymentDelete,
    ];

    /// The kind whose Operations are of `kind` (the inverse of
    /// [`ChangeKind::operation_kind`]); none for the gateway's own work.
    pub fn of_operation_kind(kind: &str) -> Option<ChangeKind> {
        ChangeKind::ALL.into_iter().find(|change| change.operation_kind() == kind)
    }

    /// The Operation's `kind` (also the outbox row's), e.g. `cluster_create`.
    pub const fn operation_kind(self) -> &'static str {
        match self {
            ChangeKind::ClusterCreate => "cluster_create",
            ChangeKind::ClusterUpdate => "cluster_update",
            ChangeKind::ClusterUpgrade => "cluster_upgrade",
            ChangeKind::ClusterDelete => "cluster_delete",
            ChangeKind::ClusterCertificate => "cluster_certificate",
            ChangeKind::ClusterSnapshot => "cluster_snapshot",
            ChangeKind::ClusterRestore => "cluster_restore",
            ChangeKind::NamespaceCreate => "namespace_create",
            ChangeKind::NamespaceDelete => "namespace_delete",
            ChangeKind::ServiceCreate => "service_create",
            ChangeKind::ServiceUpdate => "service_update",
            ChangeKind::ServiceDelete => "service_delete",
            ChangeKind::NodePoolCreate => "node_pool_create",
            ChangeKind::NodePoolUpdate => "node_pool_update",
            ChangeKind::NodePoolRecycle => "node_pool_recycle",
            ChangeKind::NodeDelete => "node_pool_node_delete",
            ChangeKind::NodePoolDelete => "node_pool_delete",
            ChangeKind::DeploymentCreate => "deployment_create",
            ChangeKind::DeploymentUpdate => "deployment_update",
            ChangeKind::DeploymentScale => "deployment_scale",
            ChangeKind::DeploymentPause => "deployment_pause",
            ChangeKind::DeploymentResume => "deployment_resume",
            ChangeKind::DeploymentRestart => "deployment_restart",
            ChangeKind::DeploymentRollback => "deployment_rollback",
            ChangeKind::DeploymentDelete => "deployment_delete",
        }
    }

    /// What the region is asked to do: every deployment change but a delete
    /// is an apply of the whole workload.
    pub const fn command_kind(self) -> CommandKind {
        match self {
            ChangeKind::ClusterCreate => CommandKind::ClusterCreate,
            ChangeKind::ClusterUpdate | ChangeKind::ClusterUpgrade => CommandKind::ClusterUpdate,
            ChangeKind::ClusterDelete => CommandKind::ClusterDelete,
            ChangeKind::ClusterCertificate => CommandKind::ClusterCertificate,
            ChangeKind::ClusterSnapshot => CommandKind::ClusterSnapshot,
            ChangeKind::ClusterRestore => CommandKind::ClusterRestore,
            ChangeKind::NamespaceCreate => CommandKind::NamespaceApply,
            ChangeKind::NamespaceDelete => CommandKind::NamespaceDelete,
            ChangeKind::ServiceCreate | ChangeKind::ServiceUpdate => CommandKind::ServiceApply,
            ChangeKind::ServiceDelete => CommandKind::ServiceDelete,
            ChangeKind::NodePoolCreate => CommandKind::NodePoolCreate,
            ChangeKind::NodePoolUpdate | ChangeKind::NodePoolRecycle | ChangeKind::NodeDelete => {
                CommandKind::NodePoolUpdate
            }
            ChangeKind::NodePoolDelete => CommandKind::NodePoolDelete,
            ChangeKind::DeploymentCreate
            | ChangeKind::DeploymentUpdate
            | ChangeKind::DeploymentScale
            | ChangeKind::DeploymentPause
            | ChangeKind::DeploymentResume
            | ChangeKind::DeploymentRestart
            | ChangeKind::DeploymentRollback => CommandKind::WorkloadApply,
            ChangeKind::DeploymentDelete => CommandKind::WorkloadDelete,
        }
    }

    /// The kind of resource its audit event names: the target's, but a
    /// namespace or a service for their changes (whose Operations are the
    /// cluster's).
    pub const fn audited_resource_type(self) -> &'static str {
        match self {
            ChangeKind::NamespaceCreate | ChangeKind::NamespaceDelete => "namespace",
            ChangeKind::ServiceCreate | ChangeKind::ServiceUpdate | ChangeKind::ServiceDelete => "service",
            _ => self.target().as_str(),
        }
    }

    /// The kind of resource the change is about.
    pub const fn target(self) -> ResourceKind {
        match self {
            ChangeKind::ClusterCreate
            | ChangeKind::ClusterUpdate
            | ChangeKind::ClusterUpgrade
            | ChangeKind::ClusterDelete
            | ChangeKind::ClusterCertificate
            | ChangeKind::ClusterSnapshot
            | ChangeKind::ClusterRestore
            | ChangeKind::NamespaceCreate
            | ChangeKind::NamespaceDelete
            | ChangeKind::ServiceCreate
            | ChangeKind::ServiceUpdate
            | ChangeKind::ServiceDelete => ResourceKind::Cluster,
            ChangeKind::NodePoolCreate
            | ChangeKind::NodePoolUpdate
            | ChangeKind::NodePoolRecycle
            | ChangeKind::NodeDelete
            | ChangeKind::NodePoolDelete => ResourceKind::NodePool,
            ChangeKind::DeploymentCreate
            | ChangeKind::DeploymentUpdate
            | ChangeKind::DeploymentScale
            | ChangeKind::DeploymentPause
            | ChangeKind::DeploymentResume
            | ChangeKind::DeploymentRestart
            | ChangeKind::DeploymentRollback
            | ChangeKind::DeploymentDelete => ResourceKind::Deployment,
        }
    }
}

/// What every command names: the change, its Operation, and the resource
/// (in its organization and cluster) at the generation it brings about.
pub struct CommandHeader<'a> {
    pub kind: ChangeKind,
    pub operation: OperationId,
    pub org_id: Uuid,
    pub cluster_id: Uuid,
    pub name: &'a str,
    pub generation: i64,
}

/// A command with `header`'s fields set and no body.
fn command(header: CommandHeader<'_>) -> pb::Command {
    pb::Command {
        kind: header.kind.command_kind() as i32,
        operation_id: header.operation.to_string(),
        org_id: OrgId::from_uuid(header.org_id).to_string(),
        cluster_id: ClusterId::from_uuid(header.cluster_id).to_string(),
        name: header.name.to_string(),
        generation: header.generation,
        ..pb::Command::default()
    }
}

/// A cluster change: create (with the cluster's CA certificate), update or delete.
pub fn cluster(header: CommandHeader<'_>, spec: &ClusterSpec, ca_pem: &str) -> pb::Command {
    pb::Command { cluster: Some(cluster_spec(spec)), ca_pem: ca_pem.to_string(), ..command(header) }
}

/// An etcd snapshot of the cluster taken now (`restore` empty), or etcd
/// restored from the snapshot `restore` names.
pub fn etcd(header: CommandHeader<'_>, restore: &str) -> pb::Command {
    pb::Command { snapshot: restore.to_string(), ..command(header) }
}

/// A namespace of the cluster (`id`, the gateway's row) made or deleted
/// through Moke's API.
pub fn namespace(header: CommandHeader<'_>, namespace: &str, id: Uuid) -> pb::Command {
    pb::Command { namespace: namespace.to_string(), namespace_id: id.to_string(), ..command(header) }
}

/// A service of the cluster (`id`, the gateway's row) made, changed or
/// deleted through Moke's API, with its address and node ports.
pub fn service(header: CommandHeader<'_>, id: Uuid, service: pb::ServiceSpec) -> pb::Command {
    pb::Command { service_id: ServiceId::from_uuid(id).to_string(), service: Some(service), ..command(header) }
}

/// A node pool change, with each node's allocatable capacity.
pub fn node_pool(
    header: CommandHeader<'_>,
    pool_id: Uuid,
    spec: &NodePoolSpec,
    (cpu_millis, memory_mib): (i64, i64),
) -> pb::Command {
    pb::Command {
        node_pool_id: NodePoolId::from_uuid(pool_id).to_string(),
        node_pool: Some(node_pool_spec(spec, cpu_millis, memory_mib)),
        ..command(header)
    }
}

/// A deployment change: the whole workload, named as the header names it.
pub fn workload(
    header: CommandHeader<'_>,
    workload_id: Uuid,
    namespace: &str,
    spec: &DeploymentSpec,
    template_revision: i64,
) -> pb::Command {
    let workload = workload_spec(namespace, header.name, spec, template_revision);
    pb::Command {
        workload_id: DeploymentId::from_uuid(workload_id).to_string(),
        workload: Some(workload),
        ..command(header)
    }
}

/// A cluster's certificates: its CA, the serving certificate signed for
/// the region's request, and the credentials generation below which client
/// certificates are refused.
pub fn certificate(
    header: CommandHeader<'_>,
    ca_pem: &str,
    serving_certificate_pem: &str,
    credentials_generation: i64,
) -> pb::Command {
    pb::Command {
        ca_pem: ca_pem.to_string(),
        serving_certificate_pem: serving_certificate_pem.to_string(),
        credentials_generation,
        ..command(header)
    }
}

/// Principals whose client certificates below their epoch are refused, and
/// nothing else: the region keeps the certificates it has for the empty
/// fields, so a revocation, wherever it lands among a cluster's commands,
/// never puts back an older certificate.
pub fn revocation(header: CommandHeader<'_>, principal_epochs: Vec<pb::PrincipalEpoch>) -> pb::Command {
    pb::Command { principal_epochs, ..command(header) }
}

/// A cluster's spec as regions read it.
fn cluster_spec(spec: &ClusterSpec) -> pb::ClusterSpec {
    pb::ClusterSpec {
        region: spec.region.clone(),
        kubernetes_version: spec.kubernetes_version.clone(),
        control_plane_replicas: spec.control_plane.replicas,
        deletion_protection: spec.deletion_protection,
        snapshot_every_seconds: spec.snapshot_policy.every_hours * 3600,
        snapshots_kept: spec.snapshot_policy.keep,
        allowed_addresses: if spec.control_plane_firewall.enabled {
            spec.control_plane_firewall.allowed_addresses.clone()
        } else {
            Vec::new()
        },
    }
}

/// A node pool's spec as regions read it, with each node's allocatable
/// capacity (what the machine type leaves after the system's reservation).
fn node_pool_spec(spec: &NodePoolSpec, cpu_millis: i64, memory_mib: i64) -> pb::NodePoolSpec {
    pb::NodePoolSpec {
        machine_type: spec.machine_type.clone(),
        count: spec.count,
        zones: spec.zones.clone(),
        node_labels: spec.node_labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        taints: spec
            .taints
            .iter()
            .map(|t| pb::Taint { key: t.key.clone(), value: t.value.clone(), effect: t.effect.clone() })
            .collect(),
        cpu_millis,
        memory_mib,
        // The default is sent as nothing: what a region of the previous release reads the same way.
        max_surge: if spec.upgrade_policy == UpgradePolicy::default() { 0 } else { spec.upgrade_policy.max_surge },
        max_unavailable: spec.upgrade_policy.max_unavailable,
        autoscale_min: spec.autoscaling.as_ref().map_or(0, |a| a.min_count),
        autoscale_max: spec.autoscaling.as_ref().map_or(0, |a| a.max_count),
    }
}

/// A deployment as regions run it: rolling-update bounds resolved to pod
/// counts, and the pod template's revision (a new one rolls out).
fn workload_spec(namespace: &str, name: &str, spec: &DeploymentSpec, template_revision: i64) -> pb::WorkloadSpec {
    pb::WorkloadSpec {
        namespace: namespace.to_string(),
        name: name.to_string(),
        image: spec.image.clone(),
        replicas: spec.replicas,
        cpu_millis: spec.resources.cpu_millis,
        memory_mib: spec.resources.memory_mib,
        node_selector: spec.node_selector.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        tolerations: spec
            .tolerations
            .iter()
            .map(|t| pb::Toleration {
                key: t.key.clone(),
                operator: t.operator.clone(),
                value: t.value.clone(),
                effect: t.effect.clone(),
            })
            .collect(),
        max_surge: workload_spec::bound(&spec.strategy.max_surge, spec.replicas, true).unwrap_or(1),
        max_unavailable: workload_spec::bound(&spec.strategy.max_unavailable, spec.replicas, false).unwrap_or(0),
        paused: spec.paused,
        revision: template_revision,
        pod_labels: spec.pod_labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        adopt_cluster_edits: spec.on_drift == "adopt",
        env: spec.env.iter().map(|e| pb::EnvVar { name: e.name.clone(), value: e.value.clone() }).collect(),
        ports: spec
            .ports
            .iter()
            .map(|p| pb::ContainerPort {
                name: p.name.clone().unwrap_or_default(),
                container_port: p.container_port,
                protocol: p.protocol.clone(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;
    use serde_json::{Value, json};

    use super::*;
    use crate::model::{ControlPlaneSpec, Taint};

    /// How commands were encoded before they were typed: read back by key from
    /// the JSON the app layer built (kept verbatim as the oracle).
    fn legacy_wire_command(payload: &Value) -> Vec<u8> {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let kind = match payload["kind"].as_str().unwrap_or_default() {
            "cluster_create" => CommandKind::ClusterCreate,
            "cluster_update" | "cluster_upgrade" => CommandKind::ClusterUpdate,
            "cluster_delete" => CommandKind::ClusterDelete,
            "node_pool_create" => CommandKind::NodePoolCreate,
            // (recycles and node deletes are pool updates that also name nodes)
            "node_pool_update" | "node_pool_recycle" | "node_pool_node_delete" => CommandKind::NodePoolUpdate,
            "node_pool_delete" => CommandKind::NodePoolDelete,
            "cluster_certificate" => CommandKind::ClusterCertificate,
            // (kinds of the typed era: their commands carry a header and a snapshot name only)
            "cluster_snapshot" => CommandKind::ClusterSnapshot,
            "cluster_restore" => CommandKind::ClusterRestore,
            "namespace_create" => CommandKind::NamespaceApply,
            "namespace_delete" => CommandKind::NamespaceDelete,
            "service_create" | "service_update" => CommandKind::ServiceApply,
            "service_delete" => CommandKind::ServiceDelete,
            "deployment_delete" => CommandKind::WorkloadDelete,
            kind if kind.starts_with("deployment_") => CommandKind::WorkloadApply,
            _ => CommandKind::Unspecified,
        };
        let spec = &payload["spec"];
        let is_pool = payload.get("node_pool_id").is_some();
        let is_workload = payload.get("workload_id").is_some();
        let workload = is_workload.then(|| serde_json::from_value::<pb::WorkloadSpec>(payload["workload"].clone()));
        let workload = match workload {
            Some(Ok(spec)) => Some(spec),
            Some(Err(error)) => {
                // Built by the gateway itself, so this is a bug; the region
                // refuses the command and its operation fails with this evidence.
                tracing::error!(%error, "workload command payload does not match the region contract");
                None
            }
            None => None,
        };
        let cluster = (!is_pool && !is_workload).then(|| pb::ClusterSpec {
            region: text(&spec["region"]),
            kubernetes_version: text(&spec["kubernetes_version"]),
            control_plane_replicas: spec["control_plane"]["replicas"].as_i64().unwrap_or(0),
            deletion_protection: spec["deletion_protection"].as_bool().unwrap_or(false),
            // (the snapshot policy came after the JSON era; read as the typed builder writes it)
            snapshot_every_seconds: spec["snapshot_policy"]["every_hours"].as_i64().unwrap_or(0) * 3600,
            snapshots_kept: spec["snapshot_policy"]["keep"].as_i64().unwrap_or(0),
            allowed_addresses: Vec::new(),
        });
        let node_pool = is_pool.then(|| pb::NodePoolSpec {
            machine_type: text(&spec["machine_type"]),
            count: spec["count"].as_i64().unwrap_or(0),
            zones: spec["zones"].as_array().map(|z| z.iter().map(text).collect()).unwrap_or_default(),
            node_labels: serde_json::from_value(spec["node_labels"].clone()).unwrap_or_default(),
            taints: spec["taints"]
                .as_array()
                .map(|taints| {
                    taints
                        .iter()
                        .map(|t| pb::Taint {
                            key: text(&t["key"]),
                            value: text(&t["value"]),
                            effect: text(&t["effect"]),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            cpu_millis: payload["allocatable"]["cpu_millis"].as_i64().unwrap_or(0),
            memory_mib: payload["allocatable"]["memory_mib"].as_i64().unwrap_or(0),
            // (upgrade policies came after the JSON era; the default is sent as nothing)
            max_surge: 0,
            max_unavailable: 0,
            autoscale_min: 0,
            autoscale_max: 0,
        });
        pb::Command {
            id: 0,
            kind: kind as i32,
            operation_id: text(&payload["operation_id"]),
            org_id: text(&payload["org_id"]),
            cluster_id: text(&payload["cluster_id"]),
            node_pool_id: text(&payload["node_pool_id"]),
            name: text(&payload["name"]),
            generation: payload["generation"].as_i64().unwrap_or(0),
            cluster,
            node_pool,
            ca_pem: text(&payload["ca_pem"]),
            serving_certificate_pem: text(&payload["serving_certificate_pem"]),
            credentials_generation: payload["credentials_generation"].as_i64().unwrap_or(0),
            workload_id: text(&payload["workload_id"]),
            workload,
            written_at_unix_micros: chrono::Utc::now().timestamp_micros(),
            principal_epochs: payload["principal_epochs"]
                .as_array()
                .map(|epochs| {
                    epochs
                        .iter()
                        .map(|e| pb::PrincipalEpoch {
                            principal: text(&e["principal"]),
                            epoch: e["epoch"].as_i64().unwrap_or(0),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            // Commands of the JSON era named no nodes.
            replace_nodes: Vec::new(),
            remove_nodes: Vec::new(),
            snapshot: text(&payload["snapshot"]),
            namespace: text(&payload["namespace"]),
            namespace_id: text(&payload["namespace_id"]),
            service_id: text(&payload["service_id"]),
            service: payload.get("service").map(|service| {
                serde_json::from_value(service.clone()).expect("the test's service is a region ServiceSpec")
            }),
        }
        .encode_to_vec()
    }

    /// Decoded, without the time of writing (set when each was encoded).
    /// The JSON reader also gave certificate commands an empty cluster spec,
    /// which regions ignore for that kind and typed commands no longer send.
    fn decoded(bytes: &[u8]) -> pb::Command {
        let command = pb::Command { written_at_unix_micros: 0, ..pb::Command::decode(bytes).expect("a command") };
        let headers_only = [
            CommandKind::ClusterCertificate,
            CommandKind::ClusterSnapshot,
            CommandKind::ClusterRestore,
            CommandKind::NamespaceApply,
            CommandKind::NamespaceDelete,
            CommandKind::ServiceApply,
            CommandKind::ServiceDelete,
        ];
        if headers_only.iter().any(|kind| command.kind == *kind as i32) {
            assert_eq!(command.cluster, Some(pb::ClusterSpec::default()));
            return pb::Command { cluster: None, ..command };
        }
        command
    }

    /// Every kind of command encodes as it did when commands were built as
    /// JSON and read back by key: regions see no difference.
    #[test]
    fn every_kind_encodes_as_before() {
        let (org, cluster, pool, workload_id) =
            (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3), Uuid::from_u128(4));
        let operation = OperationId::from_uuid(Uuid::from_u128(5));
        let cluster_spec = ClusterSpec {
            region: "eu-central-1".into(),
            kubernetes_version: "1.31".into(),
            control_plane: ControlPlaneSpec { replicas: 3 },
            maintenance_window: None,
            deletion_protection: true,
            snapshot_policy: crate::model::SnapshotPolicy { every_hours: 6, keep: 10 },
            control_plane_firewall: Default::default(),
            release_channel: crate::model::ReleaseChannel::Stable,
            maintenance_exclusions: Vec::new(),
        };
        let pool_spec = NodePoolSpec {
            machine_type: "m1.large".into(),
            count: 4,
            autoscaling: None,
            zones: vec!["a".into(), "b".into()],
            node_labels: [("tier".to_string(), "web".to_string())].into(),
            taints: vec![Taint { key: "gpu".into(), value: "yes".into(), effect: "NoSchedule".into() }],
            upgrade_policy: Default::default(),
        };
        let deployment: DeploymentSpec = serde_json::from_value(json!({
            "image": "registry.example/app:2", "replicas": 5, "paused": true,
            "node_selector": { "tier": "web" },
            "tolerations": [{ "key": "gpu", "operator": "Equal", "value": "yes", "effect": "NoSchedule" }],
            "strategy": { "max_surge": "50%", "max_unavailable": "1" },
        }))
        .expect("a deployment spec");
        let epoch = pb::PrincipalEpoch { principal: "usr_x".into(), epoch: 7 };
        let base = |kind: ChangeKind| {
            json!({
                "kind": kind.operation_kind(), "operation_id": operation, "org_id": OrgId::from_uuid(org),
                "project_id": "prj_00000000000000000000000000000009", "cluster_id": ClusterId::from_uuid(cluster),
                "name": "prod", "generation": 3,
            })
        };
        for kind in ChangeKind::ALL {
            let header =
                CommandHeader { kind, operation, org_id: org, cluster_id: cluster, name: "prod", generation: 3 };
            let mut before = base(kind);
            let typed = match kind {
                ChangeKind::ClusterCreate
                | ChangeKind::ClusterUpdate
                | ChangeKind::ClusterUpgrade
                | ChangeKind::ClusterDelete => {
                    before["spec"] = json!(cluster_spec);
                    before["ca_pem"] = json!("CA");
                    super::cluster(header, &cluster_spec, "CA")
                }
                ChangeKind::ClusterCertificate => {
                    before["ca_pem"] = json!("");
                    before["serving_certificate_pem"] = json!("");
                    before["credentials_generation"] = json!(0);
                    before["principal_epochs"] = json!([{ "principal": "usr_x", "epoch": 7 }]);
                    let revocation = revocation(header, vec![epoch.clone()]);
                    let mut certified = base(kind);
                    certified["ca_pem"] = json!("CA");
                    certified["serving_certificate_pem"] = json!("SERVING");
                    certified["credentials_generation"] = json!(2);
                    let header = CommandHeader {
                        kind,
                        operation,
                        org_id: org,
                        cluster_id: cluster,
                        name: "prod",
                        generation: 3,
                    };
                    assert_eq!(
                        certificate(header, "CA", "SERVING", 2),
                        decoded(&legacy_wire_command(&certified)),
                        "certificate"
                    );
                    revocation
                }
                ChangeKind::ClusterSnapshot => super::etcd(header, ""),
                ChangeKind::ClusterRestore => {
                    before["snapshot"] = json!("prod-etcd-20261205t110000z");
                    super::etcd(header, "prod-etcd-20261205t110000z")
                }
                ChangeKind::NamespaceCreate | ChangeKind::NamespaceDelete => {
                    before["namespace"] = json!("shop");
                    before["namespace_id"] = json!(Uuid::from_u128(7).to_string());
                    super::namespace(header, "shop", Uuid::from_u128(7))
                }
                ChangeKind::ServiceCreate | ChangeKind::ServiceUpdate | ChangeKind::ServiceDelete => {
                    let service = pb::ServiceSpec {
                        namespace: "shop".into(),
                        name: "web".into(),
                        r#type: "NodePort".into(),
                        selector: [("app".to_string(), "web".to_string())].into(),
                        ports: vec![pb::ServicePort {
                            name: "http".into(),
                            port: 80,
                            target_port: 8080,
                            protocol: "TCP".into(),
                            node_port: 30080,
                        }],
                        cluster_ip: "10.96.0.10".into(),
                        labels: [("tier".to_string(), "front".to_string())].into(),
                        version: 2,
                    };
                    before["service_id"] = json!(ServiceId::from_uuid(Uuid::from_u128(8)));
                    before["service"] = json!({
                        "namespace": "shop", "name": "web", "type": "NodePort", "selector": { "app": "web" },
                        "ports": [{ "name": "http", "port": 80, "target_port": 8080, "protocol": "TCP",
                                    "node_port": 30080 }],
                        "cluster_ip": "10.96.0.10", "labels": { "tier": "front" }, "version": 2,
                    });
                    super::service(header, Uuid::from_u128(8), service)
                }
                ChangeKind::NodePoolCreate
                | ChangeKind::NodePoolUpdate
                | ChangeKind::NodePoolRecycle
                | ChangeKind::NodeDelete
                | ChangeKind::NodePoolDelete => {
                    before["node_pool_id"] = json!(NodePoolId::from_uuid(pool));
                    before["spec"] = json!(pool_spec);
                    before["allocatable"] = json!({ "cpu_millis": 3800, "memory_mib": 15000 });
                    node_pool(header, pool, &pool_spec, (3800, 15000))
                }
                ChangeKind::DeploymentCreate
                | ChangeKind::DeploymentUpdate
                | ChangeKind::DeploymentScale
                | ChangeKind::DeploymentPause
                | ChangeKind::DeploymentResume
                | ChangeKind::DeploymentRestart
                | ChangeKind::DeploymentRollback
                | ChangeKind::DeploymentDelete => {
                    before["workload_id"] = json!(DeploymentId::from_uuid(workload_id));
                    before["workload"] = json!({
                        "namespace": "shop", "name": "prod", "image": deployment.image, "replicas": deployment.replicas,
                        "cpu_millis": deployment.resources.cpu_millis, "memory_mib": deployment.resources.memory_mib,
                        "node_selector": deployment.node_selector,
                        "tolerations": deployment.tolerations.iter().map(|t| json!({
                            "key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect,
                        })).collect::<Vec<_>>(),
                        "max_surge": 3, "max_unavailable": 1, "paused": deployment.paused, "revision": 8,
                    });
                    super::workload(header, workload_id, "shop", &deployment, 8)
                }
            };
            assert_eq!(typed, decoded(&legacy_wire_command(&before)), "{kind:?}");
            assert_ne!(typed.kind, CommandKind::Unspecified as i32, "{kind:?}");
        }
    }

    #[test]
    fn resource_kinds_read_back() {
        for kind in [ResourceKind::Org, ResourceKind::Cluster, ResourceKind::NodePool, ResourceKind::Deployment] {
            assert_eq!(ResourceKind::parse(kind.as_str()), Some(kind));
            let id = Uuid::from_u128(42);
            assert_eq!(kind.parse_id(&kind.id_text(id)), Some(id), "{kind:?}");
        }
        assert_eq!(ResourceKind::of_observation("workload"), Some(ResourceKind::Deployment));
        assert_eq!(ResourceKind::Cluster.parse_id(&ResourceKind::NodePool.id_text(Uuid::nil())), None);
    }
}
