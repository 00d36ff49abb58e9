//! Services in hosted clusters: written as Moke's spec or a Kubernetes `v1`
//! Service manifest (read with `k8s-openapi`), given a cluster IP (and node
//! ports) from the cluster's service network, and shown with their
//! endpoints: the observed pods whose labels the selector matches.

use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use moke_iam::Action;
use serde_json::{Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::authz::Lock;
use crate::app::error::{Validator, or_unique};
use crate::app::infra::clusters::{self, ClusterRow};
use crate::app::kernel::jsonb;
use crate::app::workloads::deployments::DeploymentPath;
use crate::app::workloads::store::ServiceSpecStored;
use crate::app::{
    App, Error, RequestContext, ResourceRef, Result, check_if_match, etag, validate, workloads::workload_spec,
};
use crate::ids::{ClusterId, ServiceId, ServiceKind};
use crate::model::*;

const TYPES: [&str; 2] = ["ClusterIP", "NodePort"];
const NODE_PORTS: std::ops::RangeInclusive<i64> = 30000..=32767;
/// Host numbers below this in the service network are kept for the cluster (DNS, the API).
const FIRST_IP_INDEX: i32 = 10;
/// The last host number of 10.96.0.0/12 (its broadcast address excluded).
const LAST_IP_INDEX: i32 = 0x0f_fffe;

struct ServiceRow {
    id: Uuid,
    cluster_id: Uuid,
    namespace: String,
    name: String,
    labels: Value,
    spec: Value,
    ip_index: i32,
    version: i64,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl ServiceRow {
    fn spec(&self) -> Result<ServiceSpec> {
        jsonb::from_column::<ServiceSpecStored>("service spec", &self.spec).map(ServiceSpec::from)
    }
}

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

fn check(v: &mut Validator, spec: &ServiceSpec) {
    v.check(
        TYPES.contains(&spec.service_type.as_str()),
        "spec.type",
        "unsupported",
        "ClusterIP or NodePort (load balancers are not offered yet)",
    );
    v.check(!spec.selector.is_empty(), "spec.selector", "required", "select the pods to send traffic to");
    validate::labels(v, "spec.selector", &spec.selector);
    v.check(!spec.ports.is_empty(), "spec.ports", "required", "at least one port");
    let mut seen = std::collections::BTreeSet::new();
    for (i, port) in spec.ports.iter().enumerate() {
        let at = |f: &str| format!("spec.ports[{i}].{f}");
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
    let used: Vec<i64> = sqlx::query_scalar!(
        r#"SELECT (p->>'node_port')::bigint AS "port!" FROM services, jsonb_array_elements(spec->'ports') p
           WHERE cluster_id = $1 AND p ? 'node_port' AND ($2::uuid IS NULL OR id <> $2)"#,
        cluster,
        except,
    )
    .fetch_all(&mut *tx)
    .await?;
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

impl App {
    /// A service's view with endpoints from the observed pods of its namespace.
    async fn service_view(&self, conn: &mut PgConnection, row: ServiceRow) -> Result<ServiceView> {
        let spec = row.spec()?;
        let deployments = sqlx::query!(
            "SELECT spec->'pod_labels' AS pod_labels, status->'workload'->'pods' AS pods
             FROM deployments WHERE cluster_id = $1 AND namespace = $2 AND deletion_requested_at IS NULL
             ORDER BY name",
            row.cluster_id,
            row.namespace
        )
        .fetch_all(conn)
        .await?;
        let mut endpoints = Vec::new();
        for deployment in deployments {
            let labels: Labels = deployment.pod_labels.and_then(|l| serde_json::from_value(l).ok()).unwrap_or_default();
            if !spec.selector.iter().all(|(k, v)| labels.get(k) == Some(v)) {
                continue;
            }
            let pods: Vec<PodView> = deployment.pods.and_then(|p| serde_json::from_value(p).ok()).unwrap_or_default();
            for pod in pods.into_iter().filter(|p| !p.node.is_empty() && !p.ip.is_empty()) {
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

    async fn find_service(
        &self,
        conn: &mut PgConnection,
        cluster: &ClusterRow,
        namespace: &str,
        service: &ResourceRef<ServiceKind>,
    ) -> Result<ServiceRow> {
        sqlx::query_as!(
            ServiceRow,
            "SELECT id, cluster_id, namespace, name, labels, spec, ip_index, version, created_at, updated_at
             FROM services WHERE cluster_id = $1 AND namespace = $2 AND (id = $3 OR name = $4)",
            cluster.id,
            namespace,
            service.id(),
            service.name(),
        )
        .fetch_optional(conn)
        .await?
        .ok_or_else(|| Error::not_found("service", service.describe()))
    }

    /// `service_list`.
    pub async fn service_list(&self, ctx: &RequestContext, at: &DeploymentPath<'_>) -> Result<Vec<ServiceView>> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, at.project, at.cluster, Action::Read, Lock::None).await?;
        let rows = sqlx::query_as!(
            ServiceRow,
            "SELECT id, cluster_id, namespace, name, labels, spec, ip_index, version, created_at, updated_at
             FROM services WHERE cluster_id = $1 AND namespace = $2 ORDER BY name",
            cluster_row.id,
            at.namespace,
        )
        .fetch_all(&mut *conn)
        .await?;
        let mut views = Vec::with_capacity(rows.len());
        for row in rows {
            views.push(self.service_view(&mut conn, row).await?);
        }
        Ok(views)
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

    /// `service_create`.
    pub async fn service_create(
        &self,
        ctx: &RequestContext,
        at: &DeploymentPath<'_>,
        input: ServiceCreate,
    ) -> Result<ServiceView> {
        let mut tx = self.db().begin().await?;
        // Locked: addresses and node ports are allocated per cluster.
        let cluster_row =
            clusters::lookup(&mut tx, ctx, at.project, at.cluster, Action::ManageResources, Lock::ForUpdate).await?;
        let exists = sqlx::query_scalar!(
            "SELECT 1 AS one FROM namespaces WHERE cluster_id = $1 AND name = $2",
            cluster_row.id,
            at.namespace
        )
        .fetch_optional(&mut *tx)
        .await?;
        if exists.is_none() {
            return Err(Error::not_found("namespace", at.namespace));
        }
        let mut spec = match (&input.spec, &input.manifest) {
            (Some(spec), None) => spec.clone(),
            (None, Some(manifest)) => from_manifest(manifest, &input.name)?,
            _ => return Err(Error::invalid_field("spec", "required", "give either spec or manifest")),
        };
        let mut v = Validator::new();
        validate::name(&mut v, "name", &input.name);
        validate::labels(&mut v, "labels", &input.labels);
        check(&mut v, &spec);
        v.finish()?;
        allocate_node_ports(&mut tx, cluster_row.id, None, &mut spec).await?;
        let mut ip_index: i32 = sqlx::query_scalar!(
            r#"SELECT COALESCE(max(ip_index) + 1, $2) AS "next!" FROM services WHERE cluster_id = $1"#,
            cluster_row.id,
            FIRST_IP_INDEX,
        )
        .fetch_one(&mut *tx)
        .await?;
        if ip_index > LAST_IP_INDEX {
            // The top of the network is used: take the lowest address a deleted service freed.
            ip_index = sqlx::query_scalar!(
                "SELECT min(i) FROM generate_series($2::int, $3::int) AS i
                 WHERE NOT EXISTS (SELECT 1 FROM services WHERE cluster_id = $1 AND ip_index = i)",
                cluster_row.id,
                FIRST_IP_INDEX,
                LAST_IP_INDEX,
            )
            .fetch_one(&mut *tx)
            .await?
            .ok_or_else(|| Error::conflict("exhausted", "every address of the cluster's service network is in use"))?;
        }
        let id = ServiceId::generate();
        let row = sqlx::query_as!(
            ServiceRow,
            "INSERT INTO services (id, org_id, project_id, cluster_id, namespace, name, labels, spec, ip_index)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             RETURNING id, cluster_id, namespace, name, labels, spec, ip_index, version, created_at, updated_at",
            id.uuid(),
            cluster_row.org_id,
            cluster_row.project_id,
            cluster_row.id,
            at.namespace,
            input.name,
            json!(input.labels),
            jsonb::to_column(&ServiceSpecStored::from(&spec)),
            ip_index,
        )
        .fetch_one(&mut *tx)
        .await
        .map_err(or_unique(|| {
            Error::conflict("already_exists", format!("service {:?} exists in this namespace", input.name))
        }))?;
        crate::app::kernel::audit::record(
            &mut tx,
            ctx,
            crate::app::kernel::audit::AuditRecord {
                action: "service.create",
                resource_type: "service",
                resource_id: Some(id.to_string()),
                details: json!({ "name": input.name, "namespace": at.namespace, "spec": spec }),
            },
        )
        .await?;
        let view = self.service_view(&mut tx, row).await?;
        tx.commit().await?;
        Ok(view)
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
            (None, None) => current,
        };
        let mut v = Validator::new();
        if let Some(labels) = &update.labels {
            validate::labels(&mut v, "labels", labels);
        }
        check(&mut v, &spec);
        v.finish()?;
        allocate_node_ports(&mut tx, cluster_row.id, Some(row.id), &mut spec).await?;
        let row = sqlx::query_as!(
            ServiceRow,
            "UPDATE services SET labels = COALESCE($2, labels), spec = $3, version = version + 1, updated_at = now()
             WHERE id = $1
             RETURNING id, cluster_id, namespace, name, labels, spec, ip_index, version, created_at, updated_at",
            row.id,
            update.labels.as_ref().map(|l| json!(l)),
            jsonb::to_column(&ServiceSpecStored::from(&spec)),
        )
        .fetch_one(&mut *tx)
        .await?;
        crate::app::kernel::audit::record(
            &mut tx,
            ctx,
            crate::app::kernel::audit::AuditRecord {
                action: "service.update",
                resource_type: "service",
                resource_id: Some(ServiceId::from_uuid(row.id).to_string()),
                details: json!({ "labels": update.labels, "spec": spec }),
            },
        )
        .await?;
        let view = self.service_view(&mut tx, row).await?;
        tx.commit().await?;
        Ok(view)
    }

    /// `service_delete`.
    pub async fn service_delete(
        &self,
        ctx: &RequestContext,
        at: &DeploymentPath<'_>,
        service: &ResourceRef<ServiceKind>,
        if_match: Option<&str>,
    ) -> Result<()> {
        let mut tx = self.db().begin().await?;
        let cluster_row =
            clusters::lookup(&mut tx, ctx, at.project, at.cluster, Action::ManageResources, Lock::None).await?;
        let row = self.find_service(&mut tx, &cluster_row, at.namespace, service).await?;
        check_if_match(if_match, &etag(row.id, row.version))?;
        sqlx::query!("DELETE FROM services WHERE id = $1", row.id).execute(&mut *tx).await?;
        crate::app::kernel::audit::record(
            &mut tx,
            ctx,
            crate::app::kernel::audit::AuditRecord {
                action: "service.delete",
                resource_type: "service",
                resource_id: Some(ServiceId::from_uuid(row.id).to_string()),
                details: json!({ "name": row.name, "namespace": row.namespace }),
            },
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_ips_stay_in_the_service_network() {
        assert_eq!(cluster_ip(LAST_IP_INDEX), "10.111.255.254");
        assert_eq!(cluster_ip(10), "10.96.0.10");
        assert_eq!(cluster_ip(256 + 1), "10.96.1.1");
        assert_eq!(cluster_ip(0x0f_ffff), "10.111.255.255");
    }
}
