//! Namespaces, deployments, services, and a cluster's nodes, metrics and
//! credentials over GraphQL (the rollout watch is `Subscription.deploymentRollout`
//! in `types.rs`). Each resolver calls the same app-layer function as REST.
//!
//! These lists are top-level fields only, not nested ones such as
//! `Cluster.namespaces`, `Cluster.nodes` or `Deployment.revisions`: the app
//! layer lists them for one parent at a time, with no batched form a
//! DataLoader could use, so a page of parents would cost a query each.

use async_graphql::connection::{Connection, Edge};
use async_graphql::{ComplexObject, Context, InputObject, Json, Object, OutputType, Result};
use serde_json::Value;

use super::error;
use super::types::{app, caller, caller_for, caller_with_key, connection, list_complexity, page};
use crate::app::workloads::deployments::{DeploymentChange, DeploymentPath};
use crate::app::{Error, RequestContext, ResourceRef};
use crate::ids::{ClusterKind, ProjectKind};
use crate::model::*;

#[ComplexObject]
impl DeploymentView {
    async fn labels(&self) -> Json<&Labels> {
        Json(&self.labels)
    }
}

#[ComplexObject]
impl ServiceView {
    async fn labels(&self) -> Json<&Labels> {
        Json(&self.labels)
    }
}

/// A namespace's place, as the arguments name it.
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

/// A page as a connection when its items do not hold their page keys
/// (namespaces, nodes): the last edge's cursor, `pageInfo.endCursor`, is the
/// page's `next_page` token, which continues the list; the other edges'
/// cursors are empty.
fn end_cursor_connection<V: OutputType>(page: Page<V>) -> Connection<String, V> {
    let mut connection = Connection::new(false, page.next_page.is_some());
    let last = page.items.len().saturating_sub(1);
    let mut end = page.next_page;
    connection.edges.extend(page.items.into_iter().enumerate().map(|(i, item)| {
        let cursor = if i == last { end.take().unwrap_or_default() } else { String::new() };
        Edge::new(cursor, item)
    }));
    connection
}

/// A Kubernetes manifest sent as YAML (JSON is YAML too), as the JSON
/// object REST takes.
fn manifest_in(text: &str) -> Result<Value> {
    serde_norway::from_str(text)
        .map_err(|e| error(Error::invalid_field("manifest", "invalid_manifest", format!("not YAML: {e}"))))
}

/// The spec of an update: a typed patch or REST's merge patch (not both),
/// as REST's merge patch.
fn spec_patch(typed: Option<Value>, merge_patch: Option<Json<Value>>) -> Result<Option<Value>> {
    match (typed, merge_patch) {
        (Some(_), Some(_)) => Err(error(Error::invalid_field(
            "specMergePatch",
            "conflicting",
            "give either spec or specMergePatch, not both",
        ))),
        (typed, merge_patch) => Ok(typed.or(merge_patch.map(|p| p.0))),
    }
}

/// Builds a JSON merge patch of the fields given.
struct PatchBuilder(serde_json::Map<String, Value>);

impl PatchBuilder {
    fn set<T: serde::Serialize>(&mut self, field: &str, value: Option<T>) -> Result<()> {
        if let Some(value) = value {
            let value = serde_json::to_value(value).map_err(|e| error(Error::Internal(e.into())))?;
            self.0.insert(field.to_string(), value);
        }
        Ok(())
    }
}

/// A new deployment from exactly one of `spec` (the portable contract) or
/// `manifest` (a Kubernetes `apps/v1` Deployment as YAML or JSON).
#[derive(InputObject)]
#[graphql(name = "DeploymentCreate")]
pub struct DeploymentCreateInput {
    /// A DNS label, unique in the namespace.
    name: String,
    #[graphql(default)]
    labels: Labels,
    spec: Option<DeploymentSpec>,
    /// A Kubernetes `apps/v1` Deployment as YAML (or JSON); its `metadata.name`, if any, must be `name`.
    manifest: Option<String>,
}

/// Fields of the portable spec to replace; what is left out stays. Each
/// given field is replaced whole (unset parts get their defaults), except
/// the label maps, which are merged key by key as REST's merge patch merges
/// them (remove keys with `specMergePatch`).
#[derive(InputObject)]
pub struct DeploymentSpecPatch {
    image: Option<String>,
    replicas: Option<i64>,
    ports: Option<Vec<ContainerPort>>,
    env: Option<Vec<EnvVar>>,
    resources: Option<ResourceRequests>,
    /// Replaces both probes: one left out is removed.
    probes: Option<Probes>,
    strategy: Option<RolloutStrategy>,
    pod_labels: Option<Labels>,
    node_selector: Option<Labels>,
    tolerations: Option<Vec<Toleration>>,
    paused: Option<bool>,
}

impl DeploymentSpecPatch {
    /// As a JSON merge patch of the spec.
    fn merge_patch(self) -> Result<Value> {
        let mut patch = PatchBuilder(serde_json::Map::new());
        patch.set("image", self.image)?;
        patch.set("replicas", self.replicas)?;
        patch.set("ports", self.ports)?;
        patch.set("env", self.env)?;
        patch.set("resources", self.resources)?;
        patch.set("probes", self.probes.map(|p| p.replacement()))?;
        patch.set("strategy", self.strategy)?;
        patch.set("pod_labels", self.pod_labels)?;
        patch.set("node_selector", self.node_selector)?;
        patch.set("tolerations", self.tolerations)?;
        patch.set("paused", self.paused)?;
        Ok(Value::Object(patch.0))
    }
}

/// A change to a deployment; what is left out stays. The spec changes
/// from at most one of `spec`, `manifest` or `specMergePatch`.
#[derive(InputObject)]
pub struct DeploymentPatch {
    /// Replaces the labels.
    labels: Option<Json<Labels>>,
    spec: Option<DeploymentSpecPatch>,
    /// Replaces the spec with a Kubernetes `apps/v1` Deployment (YAML or JSON).
    manifest: Option<String>,
    /// REST's `spec` exactly: a JSON merge patch (RFC 7386) of the portable
    /// spec with its REST (snake_case) field names.
    spec_merge_patch: Option<Json<Value>>,
}

impl DeploymentPatch {
    fn into_update(self) -> Result<DeploymentUpdate> {
        let typed = self.spec.map(DeploymentSpecPatch::merge_patch).transpose()?;
        Ok(DeploymentUpdate {
            labels: self.labels.map(|l| l.0),
            spec: spec_patch(typed, self.spec_merge_patch)?,
            manifest: self.manifest.as_deref().map(manifest_in).transpose()?,
        })
    }
}

/// A new service from exactly one of `spec` or `manifest` (a Kubernetes
/// `v1` Service as YAML or JSON).
#[derive(InputObject)]
#[graphql(name = "ServiceCreate")]
pub struct ServiceCreateInput {
    /// A DNS label, unique in the namespace.
    name: String,
    #[graphql(default)]
    labels: Labels,
    spec: Option<ServiceSpec>,
    /// A Kubernetes `v1` Service as YAML (or JSON).
    manifest: Option<String>,
}

/// Fields of a service's spec to replace; `selector` is merged key by key
/// as REST's merge patch merges it.
#[derive(InputObject)]
pub struct ServiceSpecPatch {
    /// `ClusterIP` or `NodePort`.
    #[graphql(name = "type")]
    service_type: Option<String>,
    selector: Option<Labels>,
    ports: Option<Vec<ServicePort>>,
}

/// A change to a service; what is left out stays. The spec changes from
/// at most one of `spec`, `manifest` or `specMergePatch`.
#[derive(InputObject)]
pub struct ServicePatch {
    /// Replaces the labels.
    labels: Option<Json<Labels>>,
    spec: Option<ServiceSpecPatch>,
    /// Replaces the spec with a Kubernetes `v1` Service (YAML or JSON).
    manifest: Option<String>,
    /// REST's `spec` exactly: a JSON merge patch (RFC 7386) of the spec.
    spec_merge_patch: Option<Json<Value>>,
}

impl ServicePatch {
    fn into_update(self) -> Result<ServiceUpdate> {
        let typed = match self.spec {
            Some(spec) => {
                let mut patch = PatchBuilder(serde_json::Map::new());
                patch.set("type", spec.service_type)?;
                patch.set("selector", spec.selector)?;
                patch.set("ports", spec.ports)?;
                Some(Value::Object(patch.0))
            }
            None => None,
        };
        Ok(ServiceUpdate {
            labels: self.labels.map(|l| l.0),
            spec: spec_patch(typed, self.spec_merge_patch)?,
            manifest: self.manifest.as_deref().map(manifest_in).transpose()?,
        })
    }
}

/// Runs one change of a deployment (update or action) as REST's `change` does.
async fn change(
    ctx: &Context<'_>,
    caller: &RequestContext,
    place: Place,
    deployment: &str,
    if_match: Option<&str>,
    change: DeploymentChange,
) -> Result<OperationView> {
    app(ctx)
        .deployment_change(caller, &place.at(), &ResourceRef::parse(deployment), if_match, change)
        .await
        .map_err(error)
}

#[derive(Default)]
pub struct WorkloadsQuery;

#[Object]
impl WorkloadsQuery {
    /// The cluster's namespaces in creation order (`default` first). Only
    /// the last edge's cursor (`pageInfo.endCursor`) continues the list.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn namespaces(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, NamespaceView>> {
        let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
        let result =
            app(ctx).namespace_list(caller(ctx)?, &project, &cluster, page(first, after)?).await.map_err(error)?;
        Ok(end_cursor_connection(result))
    }

    /// The cluster's Deployments made with kubectl (those of `namespace`
    /// only, when given), in the order its region first reported them;
    /// Moke lists them and never changes them.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn unmanaged_deployments(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        namespace: Option<String>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, UnmanagedDeploymentView>> {
        let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
        let result = app(ctx)
            .unmanaged_deployment_list(caller(ctx)?, &project, &cluster, namespace.as_deref(), page(first, after)?)
            .await
            .map_err(error)?;
        Ok(end_cursor_connection(result))
    }

    /// The deployments of a namespace, in creation order.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn deployments(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        namespace: String,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, DeploymentView>> {
        let place = Place::new(&project, &cluster, namespace);
        let result = app(ctx).deployment_list(caller(ctx)?, &place.at(), page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |d| d.id.uuid()))
    }

    /// A deployment (id or name): its spec, revisions, and replicas as the region observes them.
    async fn deployment(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        namespace: String,
        deployment: String,
    ) -> Result<DeploymentView> {
        let place = Place::new(&project, &cluster, namespace);
        app(ctx).deployment_view(caller(ctx)?, &place.at(), &ResourceRef::parse(&deployment)).await.map_err(error)
    }

    /// The deployment's revisions, newest first; each is immutable.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn deployment_revisions(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        namespace: String,
        deployment: String,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, RevisionView>> {
        let place = Place::new(&project, &cluster, namespace);
        let result = app(ctx)
            .deployment_revision_list(caller(ctx)?, &place.at(), &ResourceRef::parse(&deployment), page(first, after)?)
            .await
            .map_err(error)?;
        Ok(connection(result, RevisionView::cursor_key))
    }

    /// The services of a namespace in creation order, each with its endpoints.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn services(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        namespace: String,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, ServiceView>> {
        let place = Place::new(&project, &cluster, namespace);
        let result = app(ctx).service_list(caller(ctx)?, &place.at(), page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |s| s.id.uuid()))
    }

    /// A service (id or name) with its endpoints (the observed pods it selects).
    async fn service(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        namespace: String,
        service: String,
    ) -> Result<ServiceView> {
        let place = Place::new(&project, &cluster, namespace);
        app(ctx).service_get(caller(ctx)?, &place.at(), &ResourceRef::parse(&service)).await.map_err(error)
    }

    /// The cluster's worker nodes as its region last observed them, with the
    /// pods placed on each, grouped by the first 8 bytes of their names.
    /// Only the last edge's cursor (`pageInfo.endCursor`) continues the list.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn cluster_nodes(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, NodeView>> {
        let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
        let result =
            app(ctx).cluster_node_list(caller(ctx)?, &project, &cluster, page(first, after)?).await.map_err(error)?;
        Ok(end_cursor_connection(result))
    }

    /// Capacity against the CPU and memory the cluster's pods request,
    /// cluster-wide and per deployment.
    async fn cluster_metrics(&self, ctx: &Context<'_>, project: String, cluster: String) -> Result<ClusterMetrics> {
        let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
        app(ctx).cluster_metrics_view(caller(ctx)?, &project, &cluster).await.map_err(error)
    }

    /// A kubeconfig for the cluster: a client certificate from its own CA
    /// naming you and your groups (`CERTIFICATE`, the default), or an exec
    /// plugin (`EXEC`). `expirySeconds`: 600 to 2592000, 7 days by default;
    /// `access`: the highest your roles allow by default.
    async fn cluster_kubeconfig(
        &self,
        ctx: &Context<'_>,
        project: String,
        cluster: String,
        expiry_seconds: Option<i64>,
        access: Option<ClusterAccess>,
        format: Option<KubeconfigFormat>,
    ) -> Result<KubeconfigView> {
        let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
        app(ctx)
            .cluster_kubeconfig(caller(ctx)?, &project, &cluster, expiry_seconds, access, format.unwrap_or_default())
            .await
            .map_err(error)
    }
}

#[derive(Default)]
pub struct WorkloadsMutation;

#[Object]
impl WorkloadsMutation {
    async fn create_namespace(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        input: NamespaceCreate,
        idempotency_key: Option<String>,
    ) -> Result<NamespaceView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
        app(ctx).namespace_create(&caller, &project, &cluster, input).await.map_err(error)
    }

    /// Deletes an empty namespace (never `default`).
    async fn delete_namespace(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        namespace: String,
    ) -> Result<bool> {
        let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
        app(ctx).namespace_delete(&caller_for(ctx, dry_run)?, &project, &cluster, &namespace).await.map_err(error)?;
        Ok(true)
    }

    /// Creates a deployment; answers with the Operation that rolls it out.
    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn create_deployment(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        namespace: String,
        input: DeploymentCreateInput,
        idempotency_key: Option<String>,
    ) -> Result<OperationView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        let input = DeploymentCreate {
            name: input.name,
            labels: input.labels,
            spec: input.spec,
            manifest: input.manifest.as_deref().map(manifest_in).transpose()?,
        };
        let place = Place::new(&project, &cluster, namespace);
        app(ctx).deployment_create(&caller, &place.at(), input).await.map_err(error)
    }

    /// Changes a deployment's labels and spec.
    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn update_deployment(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        namespace: String,
        deployment: String,
        patch: DeploymentPatch,
        if_match: Option<String>,
    ) -> Result<OperationView> {
        let update = DeploymentChange::Update(patch.into_update()?);
        let place = Place::new(&project, &cluster, namespace);
        change(ctx, &caller_for(ctx, dry_run)?, place, &deployment, if_match.as_deref(), update).await
    }

    /// Deletes a deployment; it goes once the region has removed its pods.
    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn delete_deployment(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        namespace: String,
        deployment: String,
        if_match: Option<String>,
    ) -> Result<OperationView> {
        let place = Place::new(&project, &cluster, namespace);
        app(ctx)
            .deployment_delete(
                &caller_for(ctx, dry_run)?,
                &place.at(),
                &ResourceRef::parse(&deployment),
                if_match.as_deref(),
            )
            .await
            .map_err(error)
    }

    /// Sets the number of pods (0 to 1000).
    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn scale_deployment(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        namespace: String,
        deployment: String,
        replicas: i64,
        if_match: Option<String>,
        idempotency_key: Option<String>,
    ) -> Result<OperationView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        let place = Place::new(&project, &cluster, namespace);
        change(ctx, &caller, place, &deployment, if_match.as_deref(), DeploymentChange::Scale(replicas)).await
    }

    /// Pauses rollouts: template changes wait until `resumeDeployment`.
    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn pause_deployment(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        namespace: String,
        deployment: String,
        if_match: Option<String>,
        idempotency_key: Option<String>,
    ) -> Result<OperationView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        let place = Place::new(&project, &cluster, namespace);
        change(ctx, &caller, place, &deployment, if_match.as_deref(), DeploymentChange::Pause).await
    }

    /// Resumes rollouts.
    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn resume_deployment(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        namespace: String,
        deployment: String,
        if_match: Option<String>,
        idempotency_key: Option<String>,
    ) -> Result<OperationView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        let place = Place::new(&project, &cluster, namespace);
        change(ctx, &caller, place, &deployment, if_match.as_deref(), DeploymentChange::Resume).await
    }

    /// Replaces every pod, one rollout step at a time.
    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn restart_deployment(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        namespace: String,
        deployment: String,
        if_match: Option<String>,
        idempotency_key: Option<String>,
    ) -> Result<OperationView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        let place = Place::new(&project, &cluster, namespace);
        change(ctx, &caller, place, &deployment, if_match.as_deref(), DeploymentChange::Restart).await
    }

    /// Rolls back to `revision`'s pod template (the last one that rolled out
    /// fully when left out).
    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn rollback_deployment(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        namespace: String,
        deployment: String,
        revision: Option<i64>,
        if_match: Option<String>,
        idempotency_key: Option<String>,
    ) -> Result<OperationView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        let place = Place::new(&project, &cluster, namespace);
        change(ctx, &caller, place, &deployment, if_match.as_deref(), DeploymentChange::Rollback(revision)).await
    }

    /// Creates a service from the portable `spec` or a Kubernetes `manifest`.
    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn create_service(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        namespace: String,
        input: ServiceCreateInput,
        idempotency_key: Option<String>,
    ) -> Result<ServiceView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        let input = ServiceCreate {
            name: input.name,
            labels: input.labels,
            spec: input.spec,
            manifest: input.manifest.as_deref().map(manifest_in).transpose()?,
        };
        let place = Place::new(&project, &cluster, namespace);
        app(ctx).service_create(&caller, &place.at(), input).await.map_err(error)
    }

    /// Changes a service's labels and spec.
    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn update_service(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        namespace: String,
        service: String,
        patch: ServicePatch,
        if_match: Option<String>,
    ) -> Result<ServiceView> {
        let update = patch.into_update()?;
        let place = Place::new(&project, &cluster, namespace);
        app(ctx)
            .service_update(
                &caller_for(ctx, dry_run)?,
                &place.at(),
                &ResourceRef::parse(&service),
                if_match.as_deref(),
                update,
            )
            .await
            .map_err(error)
    }

    #[allow(clippy::too_many_arguments)] // each argument is one of the field's
    async fn delete_service(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        namespace: String,
        service: String,
        if_match: Option<String>,
    ) -> Result<bool> {
        let place = Place::new(&project, &cluster, namespace);
        app(ctx)
            .service_delete(&caller_for(ctx, dry_run)?, &place.at(), &ResourceRef::parse(&service), if_match.as_deref())
            .await
            .map_err(error)?;
        Ok(true)
    }

    /// Short-lived cluster credentials as a kubectl ExecCredential (what
    /// `moke kubeconfig token` prints); `access` is the highest your roles
    /// allow by default. Safe to retry: nothing is stored.
    async fn create_cluster_credentials(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        access: Option<ClusterAccess>,
    ) -> Result<ExecCredential> {
        let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
        app(ctx).cluster_credentials_create(&caller_for(ctx, dry_run)?, &project, &cluster, access).await.map_err(error)
    }

    /// Revokes every credential issued for the cluster so far; the control
    /// plane refuses them once the Operation succeeds.
    async fn revoke_cluster_credentials(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        cluster: String,
        idempotency_key: Option<String>,
    ) -> Result<OperationView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        let (project, cluster) = (ResourceRef::parse(&project), ResourceRef::parse(&cluster));
        app(ctx).cluster_credentials_revoke(&caller, &project, &cluster).await.map_err(error)
    }
}
