//! Services in hosted clusters: written as Moke's spec or a Kubernetes `v1`
//! Service manifest (read with `k8s-openapi`), given a cluster IP (and node
//! ports) from the cluster's service network, and shown with their
//! endpoints: the observed pods whose labels the selector matches.

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use moke_iam::Action;
use serde_json::{Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

use moke_proto::region as pb;

use crate::app::authz::{Authorized, Lock};
use crate::app::error::Validator;
use crate::app::infra::clusters::{self, ClusterRow};
use crate::app::kernel::changes::RegionalChange;
use crate::app::region::command::{self, ChangeKind, CommandHeader};
use crate::app::workloads::deployments::DeploymentPath;
use crate::app::workloads::store::deployments as deployment_store;
use crate::app::workloads::store::services::{self as store, NewService, ServiceRow};
use crate::app::{
    App, Error, PageRequest, RequestContext, ResourceRef, Result, check_if_match, etag, validate,
    workloads::workload_spec,
};
use crate::ids::{ClusterId, ServiceId, ServiceKind};
use crate::model::*;

const TYPES: [&str; 2] = ["ClusterIP", "NodePort"];
/// The most ports one service exposes, as the cluster's API allows.
const MAX_PORTS: usize = 100;
/// Allocated from the bottom; the cluster's API gives its users' Services
/// theirs from the top, so the two meet only where one was asked for.
const NODE_PORTS: std::ops::RangeInclusive<i64> = 30000..=32767;
/// Host numbers below this in the service network are kept for the cluster (DNS, the API).
const FIRST_IP_INDEX: i32 = 10;
/// The last host number of Moke's half of 10.96.0.0/12 (10.96.0.0 to
/// 10.103.255.255): the cluster's API allocates from the other half.
const LAST_IP_INDEX: i32 = 0x07_ffff;

/// The address of host number `index` in 10.96.0.0/12.
fn cluster_ip(index: i32) -> String {
    let index = index as u32;
    format!("10.{}.{}.{}", 96 + ((index >> 16) & 0x0f), (index >> 8) & 0xff, index & 0xff)
}

/// Reads a Kubernetes Service manifest into the portable spec.
fn from_manifest(manifest: &Value, name: &str) -> Result<ServiceSpec> {
    let service: Service = serde_json::from_value(manifest.clone())
        .map_err(|e| Error::invalid_field("manifest", "invalid_manifest", format!("not a v1 Service: {e}")))?;
    let mut v = Validator::new();
    if let Some(manifest_name) = &service.metadata.name {
        v.check(manifest_name == name, "manifest.metadata.name", "mismatch", format!("must be {name:?}"));
    }
    let spec = service.spec.unwrap_or_default();
    let mut ports = Vec::new();
    for (i, port) in spec.ports.unwrap_or_default().into_iter().enumerate() {
        let target_port = match port.target_port {
            None => None,
            Some(IntOrString::Int(n)) => Some(i64::from(n)),
            Some(IntOrString::String(named)) => {
                v.push(
                    format!("manifest.spec.ports[{i}].targetPort"),
                    "unsupported",
                    format!("named target port {named:?}: give the number"),
                );
                None
            }
        };
        ports.push(ServicePort {
            name: port.name,
            port: i64::from(port.port),
            target_port,
            protocol: port.protocol.unwrap_or_else(|| "TCP".into()),
            node_port: port.node_port.map(i64::from),
        });
    }
    v.finish()?;
    Ok(ServiceSpec {
        service_type: spec.type_.unwrap_or_else(|| "ClusterIP".into()),
        selector: spec.selector.unwrap_or_default().into_iter().collect(),
        ports,
    })
}

/// An IANA service name, as Kubernetes takes a port's name: at most 15
/// lowercase letters, digits and single inner hyphens, with a letter.
fn is_port_name(name: &str) -> bool {
    (1..=15).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && name.bytes().any(|b| b.is_ascii_lowercase())
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// The namespace and name of the Service every cluster has for its API server.
const API_SERVER_SERVICE: (&str, &str) = ("default", "kubernetes");

/// How a spec's port names are checked.
#[derive(Debug, Clone, Copy, PartialEq)]
enum PortNames {
    /// As Kubernetes takes them: every new or changed spec's.
    Checked,
    /// Only bounded in length, so the spec fits a command: a spec stored
    /// before port names were checked, sent unchanged.
    AsStored,
}

/// Checks a stored spec as it is sent to the cluster's API unchanged (a
/// labels-only change, the backfill): bounded as every spec is, its port
/// names as stored.
pub(super) fn check_stored(spec: &ServiceSpec) -> Result<()> {
    let mut v = Validator::new();
    check(&mut v, spec, PortNames::AsStored);
    v.finish()
}

fn check(v: &mut Validator, spec: &ServiceSpec, port_names: PortNames) {
    v.check(
        TYPES.contains(&spec.service_type.as_str()),
        "spec.type",
        "unsupported",
        "ClusterIP or NodePort (load balancers are not offered yet)",
    );
    v.check(!spec.selector.is_empty(), "spec.selector", "required", "select the pods to send traffic to");
    validate::labels(v, "spec.selector", &spec.selector);
    v.check(!spec.ports.is_empty(), "spec.ports", "required", "at least one port");
    v.check(spec.ports.len() <= MAX_PORTS, "spec.ports", "too_many", format!("at most {MAX_PORTS} ports"));
    let mut seen = std::collections::BTreeSet::new();
    let mut names = std::collections::BTreeSet::new();
    for (i, port) in spec.ports.iter().enumerate() {
        let at = |f: &str| format!("spec.ports[{i}].{f}");
        match &port.name {
            Some(name) if port_names == PortNames::AsStored => {
                v.check(name.len() <= 15, at("name"), "too_long", "at most 15 characters");
            }
            None if port_names == PortNames::AsStored => {}
            Some(name) => {
                v.check(
                    is_port_name(name),
                    at("name"),
                    "invalid",
                    "1 to 15 lowercase letters, digits and inner hyphens",
                );
                v.check(names.insert(name.clone()), at("name"), "duplicate", "each port name once");
            }
            None => v.check(spec.ports.len() == 1, at("name"), "required", "name every port of a service with several"),
        }
        v.check((1..=65535).contains(&port.port), at("port"), "out_of_range", "1 to 65535");
        v.check(
            port.target_port.is_none_or(|p| (1..=65535).contains(&p)),
            at("target_port"),
            "out_of_range",
            "1 to 65535",
        );
        v.check(
            ["TCP", "UDP", "SCTP"].contains(&port.protocol.as_str()),
            at("protocol"),
            "invalid",
            "TCP, UDP or SCTP",
        );
        v.check(
            seen.insert((port.port, port.protocol.clone())),
            at("port"),
            "duplicate",
            "each port and protocol once",
        );
        v.check(
            port.node_port.is_none_or(|p| NODE_PORTS.contains(&p))
                && (port.node_port.is_none() || spec.service_type == "NodePort"),
            at("node_port"),
            "invalid",
            "30000 to 32767, and only for NodePort services",
        );
    }
}

/// Gives every port of a NodePort service a node port unused in the cluster.
async fn allocate_node_ports(
    tx: &mut PgConnection,
    cluster: Uuid,
    except: Option<Uuid>,
    spec: &mut ServiceSpec,
) -> Result<()> {
    if spec.service_type != "NodePort" {
        return Ok(());
    }
    let used = store::node_ports_in(tx, cluster, except).await?;
    let mut taken: std::collections::BTreeSet<i64> = used.into_iter().collect();
    for (i, port) in spec.ports.iter_mut().enumerate() {
        match port.node_port {
            Some(wanted) if !taken.insert(wanted) => {
                return Err(Error::invalid_field(
                    &format!("spec.ports[{i}].node_port"),
                    "taken",
                    format!("node port {wanted} is in use in this cluster"),
                ));
            }
            Some(_) => {}
            None => {
                let free = NODE_PORTS
                    .clone()
                    .find(|p| !taken.contains(p))
                    .ok_or_else(|| Error::conflict("exhausted", "every node port of the cluster is in use"))?;
                taken.insert(free);
                port.node_port = Some(free);
            }
        }
    }
    Ok(())
}

/// A service's view with endpoints from `deployments`, the observed pods of
/// its namespace (read once for a whole page of services).
fn service_view_among(row: ServiceRow, deployments: &[deployment_store::DeploymentPods]) -> Result<ServiceView> {
    let spec = row.spec()?;
    let mut endpoints = Vec::new();
    for deployment in deployments {
        let labels = &deployment.pod_labels;
        if !spec.selector.iter().all(|(k, v)| labels.get(k) == Some(v)) {
            continue;
        }
        for pod in deployment.pods.iter().filter(|p| !p.node.is_empty() && !p.ip.is_empty()) {
            for port in &spec.ports {
                endpoints.push(EndpointView {
                    ip: pod.ip.clone(),
                    port: port.target_port.unwrap_or(port.port),
                    pod: pod.name.clone(),
                    node: pod.node.clone(),
                    zone: pod.zone.clone(),
                    ready: pod.ready,
                });
            }
        }
    }
    Ok(ServiceView {
        id: ServiceId::from_uuid(row.id),
        cluster_id: ClusterId::from_uuid(row.cluster_id),
        cluster_ip: cluster_ip(row.ip_index),
        etag: etag(row.id, row.version),
        namespace: row.namespace,
        name: row.name,
        labels: serde_json::from_value(row.labels).unwrap_or_default(),
        spec,
        endpoints,
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

impl App {
    /// A service's view with endpoints from the observed pods of its namespace.
    async fn service_view(&self, conn: &mut PgConnection, row: ServiceRow) -> Result<ServiceView> {
        let deployments = deployment_store::pods_in_namespace(conn, row.cluster_id, &row.namespace).await?;
        service_view_among(row, &deployments)
    }
    /// A service of a cluster the caller has already looked up (and so may
    /// act on); not locked, creates and updates lock the cluster instead.
    async fn find_service(
        &self,
        conn: &mut PgConnection,
        cluster: &Authorized<ClusterRow>,
        namespace: &str,
        service: &ResourceRef<ServiceKind>,
    ) -> Result<ServiceRow> {
        store::find(conn, cluster.id, namespace, service.id(), service.name(), Lock::None)
            .await?
            .ok_or_else(|| Error::not_found("service", service.describe()))
    }

    /// `service_list`: in id (creation) order, like deployments.
    pub async fn service_list(
        &self,
        ctx: &RequestContext,
        at: &DeploymentPath<'_>,
        page: PageRequest,
    ) -> Result<Page<ServiceView>> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, at.project, at.cluster, Action::Read, Lock::None).await?;
        let rows = page.page(store::list(&mut conn, cluster_row.id, at.namespace, &page).await?, |r| r.id);
        // Every service of the page is in this namespace: its pods are read once.
        let deployments = if rows.items.is_empty() {
            Vec::new()
        } else {
            deployment_store::pods_in_namespace(&mut conn, cluster_row.id, at.namespace).await?
        };
        let items = rows.items.into_iter().map(|row| service_view_among(row, &deployments)).collect::<Result<_>>()?;
        Ok(Page { items, next_page: rows.next_page })
    }

    /// `service_view`.
    pub async fn service_get(
        &self,
        ctx: &RequestContext,
        at: &DeploymentPath<'_>,
        service: &ResourceRef<ServiceKind>,
    ) -> Result<ServiceView> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, at.project, at.cluster, Action::Read, Lock::None).await?;
        let row = self.find_service(&mut conn, &cluster_row, at.namespace, service).await?;
        self.service_view(&mut conn, row).await
    }

    pub async fn service_create(
        &self,
        ctx: &RequestContext,
        at: &DeploymentPath<'_>,
        input: ServiceCreate,
    ) -> Result<ServiceView> {
        let input = &input;
        let request_key = (at.project.describe(), at.cluster.describe(), at.namespace);
        self.idempotent(ctx, "service_create", &(request_key, input), |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            // Locked: addresses and node ports are allocated per cluster.
            let cluster_row =
                clusters::lookup(&mut tx, ctx, at.project, at.cluster, Action::ManageResources, Lock::ForUpdate)
                    .await?;
            super::namespaces::exists(&mut tx, &cluster_row, at.namespace).await?;
            if cluster_row.deletion_requested_at.is_some() {
                return Err(Error::conflict("deleting", "the cluster is being deleted"));
            }
            let mut spec = match (&input.spec, &input.manifest) {
                (Some(spec), None) => spec.clone(),
                (None, Some(manifest)) => from_manifest(manifest, &input.name)?,
                _ => return Err(Error::invalid_field("spec", "required", "give either spec or manifest")),
            };
            let mut v = Validator::new();
            validate::name(&mut v, "name", &input.name);
            v.check(
                (at.namespace, input.name.as_str()) != API_SERVER_SERVICE,
                "name",
                "reserved",
                "default/kubernetes is the cluster's own API server Service",
            );
            validate::labels(&mut v, "labels", &input.labels);
            check(&mut v, &spec, PortNames::Checked);
            v.finish()?;
            allocate_node_ports(&mut tx, cluster_row.id, None, &mut spec).await?;
            let mut ip_index = store::next_ip_index(&mut tx, cluster_row.id, FIRST_IP_INDEX).await?;
            if ip_index > LAST_IP_INDEX {
                // The top of the network is used: take the lowest address a deleted service freed.
                let free = store::lowest_free_ip_index(&mut tx, cluster_row.id, FIRST_IP_INDEX, LAST_IP_INDEX).await?;
                ip_index = free.ok_or_else(|| {
                    Error::conflict("exhausted", "every address of the cluster's service network is in use")
                })?;
            }
            let id = ServiceId::generate();
            let new = NewService {
                id: id.uuid(),
                org: cluster_row.org_id,
                project: cluster_row.project_id,
                cluster: cluster_row.id,
                namespace: at.namespace,
                name: &input.name,
                labels: &input.labels,
                spec: &spec,
                ip_index,
            };
            let row = store::insert(&mut tx, new).await?;
            let details = json!({ "name": input.name, "namespace": at.namespace, "spec": spec });
            self.record_service_change(&mut tx, ctx, &cluster_row, (ChangeKind::ServiceCreate, &row), details).await?;
            let view = self.service_view(&mut tx, row).await?;
            claim.complete(&mut tx, 201, &view).await?;
            self.commit(ctx, tx).await?;
            Ok(view)
        })
        .await
    }

    /// `service_update`: labels, and the spec as a merge patch or a manifest.
    pub async fn service_update(
        &self,
        ctx: &RequestContext,
        at: &DeploymentPath<'_>,
        service: &ResourceRef<ServiceKind>,
        if_match: Option<&str>,
        update: ServiceUpdate,
    ) -> Result<ServiceView> {
        let mut tx = self.db().begin().await?;
        let cluster_row =
            clusters::lookup(&mut tx, ctx, at.project, at.cluster, Action::ManageResources, Lock::ForUpdate).await?;
        let row = self.find_service(&mut tx, &cluster_row, at.namespace, service).await?;
        check_if_match(if_match, &etag(row.id, row.version))?;
        if cluster_row.deletion_requested_at.is_some() {
            return Err(Error::conflict("deleting", "the cluster is being deleted"));
        }
        let current = row.spec()?;
        let mut spec = match (&update.spec, &update.manifest) {
            (Some(patch), None) => {
                let mut merged = json!(current);
                workload_spec::merge_patch(&mut merged, patch);
                serde_json::from_value(merged).map_err(|e| Error::invalid_field("spec", "invalid", e.to_string()))?
            }
            (None, Some(manifest)) => from_manifest(manifest, &row.name)?,
            (Some(_), Some(_)) => {
                return Err(Error::invalid_field("manifest", "conflicting", "give either spec or manifest"));
            }
            (None, None) => current.clone(),
        };
        let mut v = Validator::new();
        if let Some(labels) = &update.labels {
            validate::labels(&mut v, "labels", labels);
        }
        // A spec stored before port names were checked keeps them until it is changed.
        let port_names = if spec == current { PortNames::AsStored } else { PortNames::Checked };
        check(&mut v, &spec, port_names);
        v.finish()?;
        allocate_node_ports(&mut tx, cluster_row.id, Some(row.id), &mut spec).await?;
        let row = store::update(&mut tx, row.id, update.labels.as_ref(), &spec).await?;
        let details = json!({ "labels": update.labels, "spec": spec });
        self.record_service_change(&mut tx, ctx, &cluster_row, (ChangeKind::ServiceUpdate, &row), details).await?;
        let view = self.service_view(&mut tx, row).await?;
        self.commit(ctx, tx).await?;
        Ok(view)
    }

    pub async fn service_delete(
        &self,
        ctx: &RequestContext,
        at: &DeploymentPath<'_>,
        service: &ResourceRef<ServiceKind>,
        if_match: Option<&str>,
    ) -> Result<()> {
        let mut tx = self.db().begin().await?;
        let cluster_row =
            clusters::lookup(&mut tx, ctx, at.project, at.cluster, Action::ManageResources, Lock::ForUpdate).await?;
        let row = self.find_service(&mut tx, &cluster_row, at.namespace, service).await?;
        check_if_match(if_match, &etag(row.id, row.version))?;
        store::delete(&mut tx, row.id).await?;
        let details = json!({ "name": row.name, "namespace": row.namespace });
        self.record_service_change(&mut tx, ctx, &cluster_row, (ChangeKind::ServiceDelete, &row), details).await?;
        self.commit(ctx, tx).await?;
        Ok(())
    }

    /// Records a service's create, update or delete (`change`: which, and
    /// the service as it now is, or was): the Operation on its cluster, the
    /// command that makes the cluster's API agree, and the audit event.
    pub(super) async fn record_service_change(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        cluster: &ClusterRow,
        (kind, row): (ChangeKind, &ServiceRow),
        details: Value,
    ) -> Result<()> {
        let region = cluster.region()?;
        let action = match kind {
            ChangeKind::ServiceCreate => "service.create",
            ChangeKind::ServiceUpdate => "service.update",
            _ => "service.delete",
        };
        let change = RegionalChange {
            kind,
            action,
            target_id: cluster.id,
            target_ref: ServiceId::from_uuid(row.id).to_string(),
            target_name: &cluster.name,
            generation: cluster.generation,
            region: &region,
            // A cluster being deleted takes its services with it.
            needs_region: cluster.deletion_requested_at.is_none(),
            details,
        };
        let service = region_service(row)?;
        let (org_id, cluster_id, generation) = (cluster.org_id, cluster.id, cluster.generation);
        self.record_change(tx, ctx, change, |op| {
            let header = CommandHeader { kind, operation: op.id, org_id, cluster_id, name: &cluster.name, generation };
            command::service(header, row.id, service)
        })
        .await?;
        Ok(())
    }
}

/// The service as the region applies it: Moke's spec with its address,
/// labels and version.
fn region_service(row: &ServiceRow) -> Result<pb::ServiceSpec> {
    let spec = row.spec()?;
    // Checked on every write: ports and node ports fit 16 bits.
    let port = |n: i64| i32::try_from(n).unwrap_or_default();
    Ok(pb::ServiceSpec {
        namespace: row.namespace.clone(),
        name: row.name.clone(),
        r#type: spec.service_type,
        selector: spec.selector.into_iter().collect(),
        ports: spec
            .ports
            .into_iter()
            .map(|p| pb::ServicePort {
                name: p.name.unwrap_or_default(),
                port: port(p.port),
                target_port: p.target_port.map(port).unwrap_or_default(),
                protocol: p.protocol,
                node_port: p.node_port.map(port).unwrap_or_default(),
            })
            .collect(),
        cluster_ip: cluster_ip(row.ip_index),
        labels: serde_json::from_value(row.labels.clone()).unwrap_or_default(),
        version: row.version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_ips_stay_in_the_service_network() {
        assert_eq!(cluster_ip(LAST_IP_INDEX), "10.103.255.255");
        assert_eq!(cluster_ip(10), "10.96.0.10");
        assert_eq!(cluster_ip(256 + 1), "10.96.1.1");
        assert_eq!(cluster_ip(0x0f_ffff), "10.111.255.255");
    }
}
