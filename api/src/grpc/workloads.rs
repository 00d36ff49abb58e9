//! `NamespaceService`, `DeploymentService`, `NetworkService` and
//! `ClusterAccessService`: the REST handlers of `http/workloads.rs` and the
//! node, metrics and credential handlers of `http/clusters.rs`, over gRPC.
//! Each method calls the same app-layer function; this family's message
//! conversions are at the end.

use moke_proto::v1 as pb;
use serde_json::{Value, json};
use tonic::{Request, Response, Status};

use super::services::{Api, Reply, if_match, mask_paths};
use super::{context, convert, page, status};
use crate::app::workloads::deployments::{DeploymentChange, DeploymentPath};
use crate::app::{App, Error, RequestContext, ResourceRef};
use crate::ids::{ClusterKind, ProjectKind};
use crate::model;

/// A namespace's place, as a request names it.
struct Place {
    project: ResourceRef<ProjectKind>,
    cluster: ResourceRef<ClusterKind>,
    namespace: String,
}

impl Place {
    fn new(project: &str, cluster: &str, namespace: String) -> Place {
        Place { project: ResourceRef::parse(project), cluster: ResourceRef::parse(cluster), namespace }
    }

    fn at(&self) -> DeploymentPath<'_> {
        DeploymentPath { project: &self.project, cluster: &self.cluster, namespace: &self.namespace }
    }
}

/// Runs one change of a deployment (update or action) as REST's `change` does.
async fn change_deployment(
    app: &App,
    ctx: &RequestContext,
    place: &Place,
    deployment: &str,
    etag: &str,
    change: DeploymentChange,
) -> Reply<pb::Operation> {
    let op = app
        .deployment_change(ctx, &place.at(), &ResourceRef::parse(deployment), if_match(etag), change)
        .await
        .map_err(status)?;
    Ok(Response::new(convert::operation(op)))
}

#[tonic::async_trait]
impl pb::namespace_service_server::NamespaceService for Api {
    async fn list_namespaces(&self, request: Request<pb::ListNamespacesRequest>) -> Reply<pb::ListNamespacesResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let page = self
            .app
            .namespace_list(&ctx, &project, &cluster, page(r.page_size, &r.page_token)?)
            .await
            .map_err(status)?;
        Ok(Response::new(pb::ListNamespacesResponse {
            namespaces: page.items.into_iter().map(namespace).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn create_namespace(&self, request: Request<pb::CreateNamespaceRequest>) -> Reply<pb::Namespace> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let input = model::NamespaceCreate { name: r.name };
        let view = self.app.namespace_create(&ctx, &project, &cluster, input).await.map_err(status)?;
        Ok(Response::new(namespace(view)))
    }

    async fn delete_namespace(
        &self,
        request: Request<pb::DeleteNamespaceRequest>,
    ) -> Reply<pb::DeleteNamespaceResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        self.app.namespace_delete(&ctx, &project, &cluster, &r.namespace).await.map_err(status)?;
        Ok(Response::new(pb::DeleteNamespaceResponse {}))
    }
}

#[tonic::async_trait]
impl pb::deployment_service_server::DeploymentService for Api {
    type WatchDeploymentRolloutStream = super::Updates<pb::Deployment>;

    async fn list_deployments(
        &self,
        request: Request<pb::ListDeploymentsRequest>,
    ) -> Reply<pb::ListDeploymentsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let place = Place::new(&r.project, &r.cluster, r.namespace);
        let page =
            self.app.deployment_list(&ctx, &place.at(), page(r.page_size, &r.page_token)?).await.map_err(status)?;
        Ok(Response::new(pb::ListDeploymentsResponse {
            deployments: page.items.into_iter().map(deployment).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn get_deployment(&self, request: Request<pb::GetDeploymentRequest>) -> Reply<pb::Deployment> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let place = Place::new(&r.project, &r.cluster, r.namespace);
        let view =
            self.app.deployment_view(&ctx, &place.at(), &ResourceRef::parse(&r.deployment)).await.map_err(status)?;
        Ok(Response::new(deployment(view)))
    }

    async fn create_deployment(&self, request: Request<pb::CreateDeploymentRequest>) -> Reply<pb::Operation> {
        use pb::create_deployment_request::Source;
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let (spec, manifest) = match r.source {
            Some(Source::Spec(spec)) => (Some(deployment_spec_in(spec)?), None),
            Some(Source::ManifestYaml(text)) => (None, Some(manifest_in(&text)?)),
            None => (None, None),
        };
        let input = model::DeploymentCreate { name: r.name, labels: r.labels.into_iter().collect(), spec, manifest };
        let place = Place::new(&r.project, &r.cluster, r.namespace);
        let op = self.app.deployment_create(&ctx, &place.at(), input).await.map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }

    async fn update_deployment(&self, request: Request<pb::UpdateDeploymentRequest>) -> Reply<pb::Operation> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let update = deployment_update_in(r.update_mask, r.labels, r.change)?;
        let place = Place::new(&r.project, &r.cluster, r.namespace);
        change_deployment(&self.app, &ctx, &place, &r.deployment, &r.etag, DeploymentChange::Update(update)).await
    }

    async fn delete_deployment(&self, request: Request<pb::DeleteDeploymentRequest>) -> Reply<pb::Operation> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let place = Place::new(&r.project, &r.cluster, r.namespace);
        let op = self
            .app
            .deployment_delete(&ctx, &place.at(), &ResourceRef::parse(&r.deployment), if_match(&r.etag))
            .await
            .map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }

    async fn list_deployment_revisions(
        &self,
        request: Request<pb::ListDeploymentRevisionsRequest>,
    ) -> Reply<pb::ListDeploymentRevisionsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let place = Place::new(&r.project, &r.cluster, r.namespace);
        let page = self
            .app
            .deployment_revision_list(
                &ctx,
                &place.at(),
                &ResourceRef::parse(&r.deployment),
                page(r.page_size, &r.page_token)?,
            )
            .await
            .map_err(status)?;
        Ok(Response::new(pb::ListDeploymentRevisionsResponse {
            revisions: page.items.into_iter().map(revision).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn scale_deployment(&self, request: Request<pb::ScaleDeploymentRequest>) -> Reply<pb::Operation> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let place = Place::new(&r.project, &r.cluster, r.namespace);
        change_deployment(&self.app, &ctx, &place, &r.deployment, &r.etag, DeploymentChange::Scale(r.replicas)).await
    }

    async fn pause_deployment(&self, request: Request<pb::PauseDeploymentRequest>) -> Reply<pb::Operation> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let place = Place::new(&r.project, &r.cluster, r.namespace);
        change_deployment(&self.app, &ctx, &place, &r.deployment, &r.etag, DeploymentChange::Pause).await
    }

    async fn resume_deployment(&self, request: Request<pb::ResumeDeploymentRequest>) -> Reply<pb::Operation> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let place = Place::new(&r.project, &r.cluster, r.namespace);
        change_deployment(&self.app, &ctx, &place, &r.deployment, &r.etag, DeploymentChange::Resume).await
    }

    async fn restart_deployment(&self, request: Request<pb::RestartDeploymentRequest>) -> Reply<pb::Operation> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let place = Place::new(&r.project, &r.cluster, r.namespace);
        change_deployment(&self.app, &ctx, &place, &r.deployment, &r.etag, DeploymentChange::Restart).await
    }

    async fn rollback_deployment(&self, request: Request<pb::RollbackDeploymentRequest>) -> Reply<pb::Operation> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let place = Place::new(&r.project, &r.cluster, r.namespace);
        let change = DeploymentChange::Rollback(r.revision);
        change_deployment(&self.app, &ctx, &place, &r.deployment, &r.etag, change).await
    }

    async fn watch_deployment_rollout(
        &self,
        request: Request<pb::WatchDeploymentRolloutRequest>,
    ) -> Reply<Self::WatchDeploymentRolloutStream> {
        use crate::app::kernel::watch::{DeploymentAt, deployment_rollout_updates};
        let watcher = super::watcher(&self.app, &request).await?;
        let r = request.into_inner();
        let at =
            DeploymentAt { project: r.project, cluster: r.cluster, namespace: r.namespace, deployment: r.deployment };
        super::follow(deployment_rollout_updates(watcher, at), deployment).await
    }

    async fn list_unmanaged_deployments(
        &self,
        request: Request<pb::ListUnmanagedDeploymentsRequest>,
    ) -> Reply<pb::ListUnmanagedDeploymentsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let page = self
            .app
            .unmanaged_deployment_list(&ctx, &project, &cluster, Some(&r.namespace), page(r.page_size, &r.page_token)?)
            .await
            .map_err(status)?;
        Ok(Response::new(pb::ListUnmanagedDeploymentsResponse {
            deployments: page.items.into_iter().map(unmanaged_deployment).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }
}

#[tonic::async_trait]
impl pb::network_service_server::NetworkService for Api {
    async fn list_services(&self, request: Request<pb::ListServicesRequest>) -> Reply<pb::ListServicesResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let place = Place::new(&r.project, &r.cluster, r.namespace);
        let page = self.app.service_list(&ctx, &place.at(), page(r.page_size, &r.page_token)?).await.map_err(status)?;
        Ok(Response::new(pb::ListServicesResponse {
            services: page.items.into_iter().map(service).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn get_service(&self, request: Request<pb::GetServiceRequest>) -> Reply<pb::Service> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let place = Place::new(&r.project, &r.cluster, r.namespace);
        let view = self.app.service_get(&ctx, &place.at(), &ResourceRef::parse(&r.service)).await.map_err(status)?;
        Ok(Response::new(service(view)))
    }

    async fn create_service(&self, request: Request<pb::CreateServiceRequest>) -> Reply<pb::Service> {
        use pb::create_service_request::Source;
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let (spec, manifest) = match r.source {
            Some(Source::Spec(spec)) => (Some(service_spec_in(spec)?), None),
            Some(Source::ManifestYaml(text)) => (None, Some(manifest_in(&text)?)),
            None => (None, None),
        };
        let input = model::ServiceCreate { name: r.name, labels: r.labels.into_iter().collect(), spec, manifest };
        let place = Place::new(&r.project, &r.cluster, r.namespace);
        let view = self.app.service_create(&ctx, &place.at(), input).await.map_err(status)?;
        Ok(Response::new(service(view)))
    }

    async fn update_service(&self, request: Request<pb::UpdateServiceRequest>) -> Reply<pb::Service> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let update = service_update_in(r.update_mask, r.labels, r.change)?;
        let place = Place::new(&r.project, &r.cluster, r.namespace);
        let view = self
            .app
            .service_update(&ctx, &place.at(), &ResourceRef::parse(&r.service), if_match(&r.etag), update)
            .await
            .map_err(status)?;
        Ok(Response::new(service(view)))
    }

    async fn delete_service(&self, request: Request<pb::DeleteServiceRequest>) -> Reply<pb::DeleteServiceResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let place = Place::new(&r.project, &r.cluster, r.namespace);
        self.app
            .service_delete(&ctx, &place.at(), &ResourceRef::parse(&r.service), if_match(&r.etag))
            .await
            .map_err(status)?;
        Ok(Response::new(pb::DeleteServiceResponse {}))
    }
}

#[tonic::async_trait]
impl pb::cluster_access_service_server::ClusterAccessService for Api {
    async fn list_cluster_nodes(
        &self,
        request: Request<pb::ListClusterNodesRequest>,
    ) -> Reply<pb::ListClusterNodesResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let page = self
            .app
            .cluster_node_list(&ctx, &project, &cluster, page(r.page_size, &r.page_token)?)
            .await
            .map_err(status)?;
        Ok(Response::new(pb::ListClusterNodesResponse {
            nodes: page.items.into_iter().map(node).collect(),
            next_page_token: convert::next_page(page.next_page),
        }))
    }

    async fn get_cluster_metrics(&self, request: Request<pb::GetClusterMetricsRequest>) -> Reply<pb::ClusterMetrics> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let view = self.app.cluster_metrics_view(&ctx, &project, &cluster).await.map_err(status)?;
        Ok(Response::new(cluster_metrics(view)))
    }

    async fn get_kubeconfig(&self, request: Request<pb::GetKubeconfigRequest>) -> Reply<pb::Kubeconfig> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let expiry = r.expiry.map(|d| whole_seconds("expiry", d)).transpose()?;
        let view = self
            .app
            .cluster_kubeconfig(&ctx, &project, &cluster, expiry, access_in(&r.access)?, format_in(&r.format)?)
            .await
            .map_err(status)?;
        Ok(Response::new(pb::Kubeconfig {
            kubeconfig: view.kubeconfig,
            expire_time: convert::opt_timestamp(view.expires_at),
            groups: view.groups,
        }))
    }

    async fn create_cluster_credentials(
        &self,
        request: Request<pb::CreateClusterCredentialsRequest>,
    ) -> Reply<pb::ExecCredential> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let credential = self
            .app
            .cluster_credentials_create(&ctx, &project, &cluster, access_in(&r.access)?)
            .await
            .map_err(status)?;
        Ok(Response::new(pb::ExecCredential {
            api_version: credential.api_version,
            kind: credential.kind,
            status: Some(pb::ExecCredentialStatus {
                client_certificate_data: credential.status.client_certificate_data,
                client_key_data: credential.status.client_key_data,
                expiration_time: Some(convert::timestamp(credential.status.expiration_timestamp)),
            }),
        }))
    }

    async fn revoke_cluster_credentials(
        &self,
        request: Request<pb::RevokeClusterCredentialsRequest>,
    ) -> Reply<pb::Operation> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.get_ref();
        let (project, cluster) = (ResourceRef::parse(&r.project), ResourceRef::parse(&r.cluster));
        let op = self.app.cluster_credentials_revoke(&ctx, &project, &cluster).await.map_err(status)?;
        Ok(Response::new(convert::operation(op)))
    }
}

// ---------------------------------------------------------------- requests

fn invalid(field: &str, code: &str, message: &str) -> Status {
    status(Error::invalid_field(field, code, message))
}

/// A Kubernetes manifest sent as YAML (JSON is YAML too), as the JSON
/// object REST takes.
fn manifest_in(text: &str) -> Result<Value, Status> {
    serde_norway::from_str(text).map_err(|e| invalid("manifest_yaml", "invalid_manifest", &format!("not YAML: {e}")))
}

/// A `*_json` field's JSON.
fn json_in(field: &str, text: &str) -> Result<Value, Status> {
    serde_json::from_str(text).map_err(|e| invalid(field, "invalid", &format!("not JSON: {e}")))
}

/// A duration that REST takes as whole seconds.
fn whole_seconds(field: &str, duration: prost_types::Duration) -> Result<i64, Status> {
    if duration.nanos != 0 {
        return Err(invalid(field, "invalid", "whole seconds"));
    }
    Ok(duration.seconds)
}

fn duration(seconds: i64) -> prost_types::Duration {
    prost_types::Duration { seconds, nanos: 0 }
}

/// Removes the `null` members of every object: what a request leaves unset
/// is left out of the JSON, so serde gives it the REST default.
fn prune_nulls(value: &mut Value) {
    match value {
        Value::Object(members) => {
            members.retain(|_, v| !v.is_null());
            members.values_mut().for_each(prune_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(prune_nulls),
        _ => {}
    }
}

/// The JSON of a probe, as REST takes it.
fn probe_json(field: &str, probe: Option<pb::Probe>) -> Result<Value, Status> {
    let Some(p) = probe else { return Ok(Value::Null) };
    let seconds = |name: &str, d: Option<prost_types::Duration>| {
        d.map(|d| whole_seconds(&format!("{field}.{name}"), d)).transpose()
    };
    Ok(json!({
        "http_path": p.http_path,
        "port": p.port,
        "initial_delay_seconds": seconds("initial_delay", p.initial_delay)?,
        "period_seconds": seconds("period", p.period)?,
    }))
}

/// A portable spec from its message: made into the JSON REST takes and
/// read as REST reads it, so what is unset gets the same defaults.
fn deployment_spec_in(spec: pb::DeploymentSpec) -> Result<model::DeploymentSpec, Status> {
    let probes = match spec.probes {
        Some(p) => json!({
            "readiness": probe_json("spec.probes.readiness", p.readiness)?,
            "liveness": probe_json("spec.probes.liveness", p.liveness)?,
        }),
        None => Value::Null,
    };
    let strategy = match spec.strategy {
        Some(s) => json!({
            "max_surge": s.max_surge,
            "max_unavailable": s.max_unavailable,
            "progress_deadline_seconds": s
                .progress_deadline
                .map(|d| whole_seconds("spec.strategy.progress_deadline", d))
                .transpose()?,
            "auto_rollback": s.auto_rollback,
        }),
        None => Value::Null,
    };
    let ports: Vec<Value> = spec
        .ports
        .into_iter()
        .map(|p| json!({ "name": p.name, "container_port": p.container_port, "protocol": p.protocol }))
        .collect();
    let env: Vec<Value> = spec.env.into_iter().map(|e| json!({ "name": e.name, "value": e.value })).collect();
    let tolerations: Vec<Value> = spec
        .tolerations
        .into_iter()
        .map(|t| json!({ "key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect }))
        .collect();
    let mut value = json!({
        "image": spec.image,
        "replicas": spec.replicas,
        "ports": ports,
        "env": env,
        "resources": spec.resources.map(|r| json!({ "cpu_millis": r.cpu_millis, "memory_mib": r.memory_mib })),
        "probes": probes,
        "strategy": strategy,
        "pod_labels": spec.pod_labels,
        "node_selector": spec.node_selector,
        "tolerations": tolerations,
        "paused": spec.paused,
        "on_drift": Some(spec.on_drift).filter(|o| !o.is_empty()),
    });
    prune_nulls(&mut value);
    let mut parsed: model::DeploymentSpec =
        serde_json::from_value(value).map_err(|e| invalid("spec", "invalid", &e.to_string()))?;
    parsed.restarted_at = spec.restart_time.map(|t| convert::timestamp_in("spec.restart_time", t)).transpose()?;
    Ok(parsed)
}

/// A service spec from its message, read as REST reads its JSON.
fn service_spec_in(spec: pb::ServiceSpec) -> Result<model::ServiceSpec, Status> {
    let ports: Vec<Value> = spec
        .ports
        .into_iter()
        .map(|p| {
            json!({
                "name": p.name,
                "port": p.port,
                "target_port": p.target_port,
                "protocol": p.protocol,
                "node_port": p.node_port,
            })
        })
        .collect();
    let mut value = json!({ "type": spec.r#type, "selector": spec.selector, "ports": ports });
    prune_nulls(&mut value);
    serde_json::from_value(value).map_err(|e| invalid("spec", "invalid", &e.to_string()))
}

/// The update mask's paths, and of those the spec's fields (by their JSON
/// names; all of `fields` for `spec`).
fn spec_paths(mask: Option<prost_types::FieldMask>, fields: &[&str]) -> Result<(Vec<String>, Vec<String>), Status> {
    let allowed: Vec<String> = ["labels".to_string(), "spec".to_string()]
        .into_iter()
        .chain(fields.iter().map(|f| format!("spec.{f}")))
        .collect();
    let allowed: Vec<&str> = allowed.iter().map(String::as_str).collect();
    let paths = mask_paths(mask, &allowed)?;
    let named: Vec<String> = if paths.iter().any(|p| p == "spec") {
        fields.iter().map(|f| f.to_string()).collect()
    } else {
        paths.iter().filter_map(|p| p.strip_prefix("spec.")).map(str::to_string).collect()
    };
    Ok((paths, named))
}

/// A new spec given as a whole (a manifest or a merge patch) takes the mask path `spec`.
fn whole_spec_only(paths: &[String]) -> Result<(), Status> {
    if paths.iter().any(|p| p == "spec") {
        return Ok(());
    }
    Err(invalid("update_mask", "invalid", "a manifest or a merge patch changes the whole spec: name `spec`"))
}

/// An `UpdateDeploymentRequest`'s masked fields as REST's update body.
fn deployment_update_in(
    mask: Option<prost_types::FieldMask>,
    labels: std::collections::HashMap<String, String>,
    change: Option<pb::update_deployment_request::Change>,
) -> Result<model::DeploymentUpdate, Status> {
    use pb::update_deployment_request::Change;
    let (paths, fields) = spec_paths(mask, &model::DeploymentSpec::FIELDS)?;
    let labels = paths.iter().any(|p| p == "labels").then(|| labels.into_iter().collect());
    if fields.is_empty() {
        return Ok(model::DeploymentUpdate { labels, spec: None, manifest: None });
    }
    let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
    let (spec, manifest) = match change {
        Some(Change::Spec(spec)) => (Some(deployment_spec_in(spec)?.merge_patch_of(&fields)), None),
        Some(Change::ManifestYaml(text)) => {
            whole_spec_only(&paths)?;
            (None, Some(manifest_in(&text)?))
        }
        Some(Change::SpecMergePatchJson(text)) => {
            whole_spec_only(&paths)?;
            (Some(json_in("spec_merge_patch_json", &text)?), None)
        }
        None => return Err(invalid("spec", "required", "give spec, manifest_yaml or spec_merge_patch_json")),
    };
    Ok(model::DeploymentUpdate { labels, spec, manifest })
}

/// An `UpdateServiceRequest`'s masked fields as REST's update body.
fn service_update_in(
    mask: Option<prost_types::FieldMask>,
    labels: std::collections::HashMap<String, String>,
    change: Option<pb::update_service_request::Change>,
) -> Result<model::ServiceUpdate, Status> {
    use pb::update_service_request::Change;
    let (paths, fields) = spec_paths(mask, &model::ServiceSpec::FIELDS)?;
    let labels = paths.iter().any(|p| p == "labels").then(|| labels.into_iter().collect());
    if fields.is_empty() {
        return Ok(model::ServiceUpdate { labels, spec: None, manifest: None });
    }
    let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
    let (spec, manifest) = match change {
        Some(Change::Spec(spec)) => (Some(service_spec_in(spec)?.merge_patch_of(&fields)), None),
        Some(Change::ManifestYaml(text)) => {
            whole_spec_only(&paths)?;
            (None, Some(manifest_in(&text)?))
        }
        Some(Change::SpecMergePatchJson(text)) => {
            whole_spec_only(&paths)?;
            (Some(json_in("spec_merge_patch_json", &text)?), None)
        }
        None => return Err(invalid("spec", "required", "give spec, manifest_yaml or spec_merge_patch_json")),
    };
    Ok(model::ServiceUpdate { labels, spec, manifest })
}

/// `admin`, `edit` or `view`; none when empty.
fn access_in(text: &str) -> Result<Option<model::ClusterAccess>, Status> {
    use model::ClusterAccess;
    match text {
        "" => Ok(None),
        "admin" => Ok(Some(ClusterAccess::Admin)),
        "edit" => Ok(Some(ClusterAccess::Edit)),
        "view" => Ok(Some(ClusterAccess::View)),
        _ => Err(invalid("access", "invalid", "admin, edit or view")),
    }
}

/// `certificate` (also when empty) or `exec`.
fn format_in(text: &str) -> Result<model::KubeconfigFormat, Status> {
    match text {
        "" | "certificate" => Ok(model::KubeconfigFormat::Certificate),
        "exec" => Ok(model::KubeconfigFormat::Exec),
        _ => Err(invalid("format", "invalid", "certificate or exec")),
    }
}

// ---------------------------------------------------------------- views

fn unmanaged_deployment(d: model::UnmanagedDeploymentView) -> pb::UnmanagedDeployment {
    pb::UnmanagedDeployment {
        cluster_id: d.cluster_id.to_string(),
        namespace: d.namespace,
        name: d.name,
        image: d.image,
        replicas: d.replicas,
        current_replicas: d.current_replicas,
        ready_replicas: d.ready_replicas,
        updated_replicas: d.updated_replicas,
        phase: d.phase,
        create_time: convert::opt_timestamp(d.created_at),
        observe_time: Some(convert::timestamp(d.observed_at)),
    }
}

fn namespace(n: model::NamespaceView) -> pb::Namespace {
    pb::Namespace {
        name: n.name,
        cluster_id: n.cluster_id.to_string(),
        create_time: Some(convert::timestamp(n.created_at)),
    }
}

fn probe(p: model::Probe) -> pb::Probe {
    pb::Probe {
        http_path: p.http_path,
        port: p.port,
        initial_delay: Some(duration(p.initial_delay_seconds)),
        period: Some(duration(p.period_seconds)),
    }
}

fn deployment_spec(s: model::DeploymentSpec) -> pb::DeploymentSpec {
    pb::DeploymentSpec {
        image: s.image,
        replicas: Some(s.replicas),
        ports: s
            .ports
            .into_iter()
            .map(|p| pb::ContainerPort { name: p.name, container_port: p.container_port, protocol: Some(p.protocol) })
            .collect(),
        env: s.env.into_iter().map(|e| pb::EnvVar { name: e.name, value: e.value }).collect(),
        resources: Some(pb::ResourceRequests {
            cpu_millis: Some(s.resources.cpu_millis),
            memory_mib: Some(s.resources.memory_mib),
        }),
        probes: Some(pb::Probes { readiness: s.probes.readiness.map(probe), liveness: s.probes.liveness.map(probe) }),
        strategy: Some(pb::RolloutStrategy {
            max_surge: Some(s.strategy.max_surge),
            max_unavailable: Some(s.strategy.max_unavailable),
            progress_deadline: Some(duration(s.strategy.progress_deadline_seconds)),
            auto_rollback: s.strategy.auto_rollback,
        }),
        pod_labels: s.pod_labels.into_iter().collect(),
        node_selector: s.node_selector.into_iter().collect(),
        tolerations: s
            .tolerations
            .into_iter()
            .map(|t| pb::Toleration { key: t.key, operator: Some(t.operator), value: t.value, effect: t.effect })
            .collect(),
        paused: s.paused,
        restart_time: convert::opt_timestamp(s.restarted_at),
        on_drift: s.on_drift,
    }
}

/// A condition in `moke.v1.Condition`'s shape.
fn condition(c: model::Condition) -> pb::Condition {
    pb::Condition {
        r#type: c.condition_type,
        status: c.status,
        reason: c.reason,
        message: c.message,
        last_transition_time: Some(convert::timestamp(c.last_transition_time)),
    }
}

fn deployment(d: model::DeploymentView) -> pb::Deployment {
    let s = d.status;
    pb::Deployment {
        id: d.id.to_string(),
        cluster_id: d.cluster_id.to_string(),
        namespace: d.namespace,
        name: d.name,
        labels: d.labels.into_iter().collect(),
        spec: Some(deployment_spec(d.spec)),
        generation: d.generation,
        revision: d.revision,
        template_revision: d.template_revision,
        last_good_revision: d.last_good_revision,
        status: Some(pb::DeploymentStatus {
            phase: s.phase,
            observed_generation: s.observed_generation,
            replicas: s.replicas,
            current_replicas: s.current_replicas,
            updated_replicas: s.updated_replicas,
            ready_replicas: s.ready_replicas,
            available_replicas: s.available_replicas,
            conditions: s.conditions.into_iter().map(condition).collect(),
            last_error: s.last_error.map(|e| pb::OperationError { code: e.code, message: e.message }),
            observe_time: convert::opt_timestamp(s.observed_at),
            stale: s.stale,
            pods: s
                .pods
                .into_iter()
                .map(|p| pb::Pod {
                    name: p.name,
                    node: p.node,
                    zone: p.zone,
                    revision: p.revision,
                    ready: p.ready,
                    ip: p.ip,
                })
                .collect(),
        }),
        etag: d.etag,
        deletion_request_time: convert::opt_timestamp(d.deletion_requested_at),
        create_time: Some(convert::timestamp(d.created_at)),
        update_time: Some(convert::timestamp(d.updated_at)),
    }
}

fn revision(r: model::RevisionView) -> pb::DeploymentRevision {
    pb::DeploymentRevision {
        revision: r.revision,
        spec: Some(deployment_spec(r.spec)),
        cause: r.cause,
        created_by: r.created_by,
        create_time: Some(convert::timestamp(r.created_at)),
    }
}

fn service(s: model::ServiceView) -> pb::Service {
    pb::Service {
        id: s.id.to_string(),
        cluster_id: s.cluster_id.to_string(),
        namespace: s.namespace,
        name: s.name,
        labels: s.labels.into_iter().collect(),
        spec: Some(pb::ServiceSpec {
            r#type: Some(s.spec.service_type),
            selector: s.spec.selector.into_iter().collect(),
            ports: s
                .spec
                .ports
                .into_iter()
                .map(|p| pb::ServicePort {
                    name: p.name,
                    port: p.port,
                    target_port: p.target_port,
                    protocol: Some(p.protocol),
                    node_port: p.node_port,
                })
                .collect(),
        }),
        cluster_ip: s.cluster_ip,
        endpoints: s
            .endpoints
            .into_iter()
            .map(|e| pb::ServiceEndpoint {
                ip: e.ip,
                port: e.port,
                pod: e.pod,
                node: e.node,
                zone: e.zone,
                ready: e.ready,
            })
            .collect(),
        etag: s.etag,
        create_time: Some(convert::timestamp(s.created_at)),
        update_time: Some(convert::timestamp(s.updated_at)),
    }
}

fn node(n: model::NodeView) -> pb::ClusterNode {
    pb::ClusterNode {
        name: n.name,
        node_pool: n.node_pool,
        zone: n.zone,
        rack: n.rack,
        ready: n.ready,
        unschedulable: n.unschedulable,
        kubernetes_version: n.kubernetes_version,
        allocatable_cpu_millis: n.allocatable_cpu_millis,
        allocatable_memory_mib: n.allocatable_memory_mib,
        pods: n.pods,
        requested_cpu_millis: n.requested_cpu_millis,
        requested_memory_mib: n.requested_memory_mib,
    }
}

fn cluster_metrics(m: model::ClusterMetrics) -> pb::ClusterMetrics {
    pb::ClusterMetrics {
        nodes: m.nodes,
        ready_nodes: m.ready_nodes,
        allocatable_cpu_millis: m.allocatable_cpu_millis,
        allocatable_memory_mib: m.allocatable_memory_mib,
        requested_cpu_millis: m.requested_cpu_millis,
        requested_memory_mib: m.requested_memory_mib,
        pods: m.pods,
        ready_pods: m.ready_pods,
        deployments: m
            .deployments
            .into_iter()
            .map(|d| pb::DeploymentMetrics {
                namespace: d.namespace,
                name: d.name,
                pods: d.pods,
                ready_pods: d.ready_pods,
                pending_pods: d.pending_pods,
                requested_cpu_millis: d.requested_cpu_millis,
                requested_memory_mib: d.requested_memory_mib,
            })
            .collect(),
    }
}
