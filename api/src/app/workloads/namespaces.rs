//! Namespaces of hosted clusters: every cluster has `default`; `kube-*`
//! belong to the cluster itself; one is deleted only when empty. Those made
//! here reach the cluster's API by a command to its region, and those made
//! with kubectl are listed here from the region's reports. And what
//! customers made in them with kubectl, listed as unmanaged.

use moke_iam::Action;
use serde_json::json;
use sqlx::PgConnection;

use crate::app::authz::{Authorized, Lock};
use crate::app::error::Validator;
use crate::app::infra::clusters::{self, ClusterRow};
use crate::app::kernel::changes::RegionalChange;
use crate::app::region::command::{self, ChangeKind, CommandHeader};
use crate::app::workloads::store::namespaces as store;
use crate::app::workloads::store::unmanaged;
use crate::app::{App, Error, PageRequest, RequestContext, ResourceRef, Result, validate};
use crate::ids::{ClusterId, ClusterKind, ProjectKind};
use crate::model::{NamespaceCreate, NamespaceView, Page, UnmanagedDeploymentView};

/// Namespaces Moke keeps for the cluster's own use.
pub(in crate::app) const RESERVED_NAMESPACE_PREFIX: &str = "kube-";

/// Fails with 404 unless the cluster (already looked up, and so one the
/// caller may act in) has the namespace.
pub(in crate::app) async fn exists(
    conn: &mut PgConnection,
    cluster: &Authorized<ClusterRow>,
    namespace: &str,
) -> Result<()> {
    let found = store::find(conn, cluster.id, namespace, Lock::None).await?;
    found.map(|_| ()).ok_or_else(|| Error::not_found("namespace", namespace))
}

impl App {
    /// `namespace_list`: in creation order (`default` first).
    pub async fn namespace_list(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        page: PageRequest,
    ) -> Result<Page<NamespaceView>> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?;
        let rows = page.page(store::list(&mut conn, cluster_row.id, &page).await?, |r| r.id);
        Ok(Page {
            items: rows
                .items
                .into_iter()
                .map(|r| NamespaceView {
                    name: r.name,
                    cluster_id: ClusterId::from_uuid(cluster_row.id),
                    created_at: r.created_at,
                })
                .collect(),
            next_page: rows.next_page,
        })
    }

    /// `unmanaged_deployment_list`: the cluster's kubectl-made Deployments
    /// (those of `namespace` only, when given) in the order its region
    /// first reported them.
    pub async fn unmanaged_deployment_list(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        namespace: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<UnmanagedDeploymentView>> {
        let namespace = namespace.filter(|n| !n.is_empty());
        let mut v = Validator::new();
        if let Some(namespace) = namespace {
            validate::name(&mut v, "namespace", namespace);
        }
        v.finish()?;
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?;
        let rows = page.page(unmanaged::list(&mut conn, cluster_row.id, namespace, &page).await?, |r| r.id);
        Ok(Page {
            items: rows
                .items
                .into_iter()
                .map(|r| UnmanagedDeploymentView {
                    cluster_id: ClusterId::from_uuid(cluster_row.id),
                    namespace: r.namespace,
                    name: r.name,
                    image: r.image,
                    replicas: r.replicas,
                    current_replicas: r.current_replicas,
                    ready_replicas: r.ready_replicas,
                    updated_replicas: r.updated_replicas,
                    phase: r.phase,
                    created_at: r.created_in_cluster_at,
                    observed_at: r.observed_at,
                })
                .collect(),
            next_page: rows.next_page,
        })
    }

    pub async fn namespace_create(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        input: NamespaceCreate,
    ) -> Result<NamespaceView> {
        let mut v = Validator::new();
        validate::name(&mut v, "name", &input.name);
        v.check(
            !input.name.starts_with(RESERVED_NAMESPACE_PREFIX),
            "name",
            "reserved",
            "kube-* namespaces belong to the cluster",
        );
        let input = &input;
        let request_key = (project.describe(), cluster.describe());
        self.idempotent(ctx, "namespace_create", &(request_key, input), |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            // Locked before the organization (the quota check), as node pools
            // and deployments lock them: one order, so no deadlock.
            let cluster_row =
                clusters::lookup(&mut tx, ctx, project, cluster, Action::ManageResources, Lock::ForUpdate).await?;
            v.finish()?;
            let namespaces = crate::app::kernel::quotas::Counted::NamespacesInCluster(cluster_row.id);
            crate::app::kernel::quotas::check_count(&mut tx, self.config(), cluster_row.org_id, namespaces, 1).await?;
            if cluster_row.deletion_requested_at.is_some() {
                return Err(Error::conflict("deleting", "the cluster is being deleted"));
            }
            let row = store::insert(&mut tx, cluster_row.id, cluster_row.org_id, &input.name).await?;
            let change = (ChangeKind::NamespaceCreate, row.id);
            self.record_namespace_change(&mut tx, ctx, &cluster_row, change, &input.name, None).await?;
            let view = NamespaceView {
                name: row.name,
                cluster_id: ClusterId::from_uuid(cluster_row.id),
                created_at: row.created_at,
            };
            claim.complete(&mut tx, 201, &view).await?;
            self.commit(ctx, tx).await?;
            Ok(view)
        })
        .await
    }

    /// `namespace_delete`: only an empty namespace other than `default`.
    pub async fn namespace_delete(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        namespace: &str,
    ) -> Result<()> {
        let mut tx = self.db().begin().await?;
        // The cluster lock orders this delete with the creates in the
        // namespace (they take it too): none lands in a namespace going away.
        let cluster_row =
            clusters::lookup(&mut tx, ctx, project, cluster, Action::ManageResources, Lock::ForUpdate).await?;
        let row = store::find(&mut tx, cluster_row.id, namespace, Lock::None)
            .await?
            .ok_or_else(|| Error::not_found("namespace", namespace))?;
        if namespace == "default" {
            return Err(Error::conflict("protected", "the default namespace cannot be deleted"));
        }
        if cluster_row.deletion_requested_at.is_some() {
            return Err(Error::conflict("deleting", "the cluster is being deleted"));
        }
        if row.made_with == "kubectl" {
            return Err(Error::conflict(
                "made_with_kubectl",
                format!("namespace {namespace:?} was made with kubectl and is yours there: delete it with kubectl"),
            ));
        }
        let in_use = store::resource_count(&mut tx, cluster_row.id, namespace).await?;
        if in_use > 0 {
            return Err(Error::conflict(
                "not_empty",
                format!("namespace {namespace:?} still has {in_use} deployment(s) or service(s)"),
            ));
        }
        // Deleting a namespace deletes what is in it: never the customer's running workloads.
        let made_with_kubectl = unmanaged::count_in(&mut tx, cluster_row.id, namespace).await?;
        if made_with_kubectl > 0 {
            return Err(Error::conflict(
                "not_empty",
                format!("namespace {namespace:?} still has {made_with_kubectl} deployment(s) made with kubectl"),
            ));
        }
        store::delete(&mut tx, cluster_row.id, namespace).await?;
        let change = (ChangeKind::NamespaceDelete, row.id);
        self.record_namespace_change(&mut tx, ctx, &cluster_row, change, namespace, None).await?;
        self.commit(ctx, tx).await?;
        Ok(())
    }

    /// Records a namespace's create or delete (`change`: which, and the
    /// namespace's id): the Operation, the command that makes the cluster's
    /// API agree, and the audit event.
    pub(super) async fn record_namespace_change(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        cluster: &ClusterRow,
        (kind, id): (ChangeKind, uuid::Uuid),
        name: &str,
        reason: Option<&str>,
    ) -> Result<()> {
        let region = cluster.region()?;
        let change = RegionalChange {
            kind,
            action: if kind == ChangeKind::NamespaceCreate { "namespace.create" } else { "namespace.delete" },
            target_id: cluster.id,
            target_ref: audit_ref(cluster.id, name),
            target_name: &cluster.name,
            generation: cluster.generation,
            region: &region,
            needs_region: true,
            details: match reason {
                Some(reason) => json!({ "name": name, "reason": reason }),
                None => json!({ "name": name }),
            },
        };
        let (org_id, cluster_id, generation) = (cluster.org_id, cluster.id, cluster.generation);
        self.record_change(tx, ctx, change, |op| {
            let header = CommandHeader { kind, operation: op.id, org_id, cluster_id, name: &cluster.name, generation };
            command::namespace(header, name, id)
        })
        .await?;
        Ok(())
    }
}

/// How the audit log names a cluster's namespace: `<cluster id>/<name>`.
pub(super) fn audit_ref(cluster: uuid::Uuid, name: &str) -> String {
    format!("{}/{name}", ClusterId::from_uuid(cluster))
}
