//! Namespaces of hosted clusters: every cluster has `default`; `kube-*`
//! belong to the cluster itself; one is deleted only when empty.

use moke_iam::Action;
use serde_json::json;
use sqlx::PgConnection;

use crate::app::authz::Lock;
use crate::app::error::{Validator, or_unique};
use crate::app::infra::clusters::{self, ClusterRow};
use crate::app::{App, Error, RequestContext, ResourceRef, Result, validate};
use crate::ids::{ClusterId, ClusterKind, ProjectKind};
use crate::model::{NamespaceCreate, NamespaceView};

/// Namespaces Moke keeps for the cluster's own use.
const RESERVED_NAMESPACE_PREFIX: &str = "kube-";

/// Fails with 404 unless the cluster has the namespace.
pub(in crate::app) async fn exists(conn: &mut PgConnection, cluster: &ClusterRow, namespace: &str) -> Result<()> {
    let found = sqlx::query_scalar!(
        "SELECT 1 AS one FROM namespaces WHERE cluster_id = $1 AND name = $2",
        cluster.id,
        namespace
    )
    .fetch_optional(conn)
    .await?;
    found.map(|_| ()).ok_or_else(|| Error::not_found("namespace", namespace))
}

impl App {
    /// `namespace_list`.
    pub async fn namespace_list(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
    ) -> Result<Vec<NamespaceView>> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?;
        let rows =
            sqlx::query!("SELECT name, created_at FROM namespaces WHERE cluster_id = $1 ORDER BY name", cluster_row.id)
                .fetch_all(&mut *conn)
                .await?;
        Ok(rows
            .into_iter()
            .map(|r| NamespaceView {
                name: r.name,
                cluster_id: ClusterId::from_uuid(cluster_row.id),
                created_at: r.created_at,
            })
            .collect())
    }

    /// `namespace_create`.
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
        let mut tx = self.db().begin().await?;
        let cluster_row = clusters::lookup(&mut tx, ctx, project, cluster, Action::ManageResources, Lock::None).await?;
        v.finish()?;
        let namespaces = crate::app::kernel::quotas::Counted::NamespacesInCluster(cluster_row.id);
        crate::app::kernel::quotas::check_count(&mut tx, &self.config().quotas, cluster_row.org_id, namespaces, 1)
            .await?;
        let created_at = sqlx::query_scalar!(
            "INSERT INTO namespaces (cluster_id, org_id, name) VALUES ($1, $2, $3) RETURNING created_at",
            cluster_row.id,
            cluster_row.org_id,
            input.name,
        )
        .fetch_one(&mut *tx)
        .await
        .map_err(or_unique(|| Error::conflict("already_exists", format!("namespace {:?} exists", input.name))))?;
        crate::app::kernel::audit::record(
            &mut tx,
            ctx,
            crate::app::kernel::audit::AuditRecord {
                action: "namespace.create",
                resource_type: "namespace",
                resource_id: Some(format!("{}/{}", ClusterId::from_uuid(cluster_row.id), input.name)),
                details: json!({ "name": input.name }),
            },
        )
        .await?;
        tx.commit().await?;
        Ok(NamespaceView { name: input.name, cluster_id: ClusterId::from_uuid(cluster_row.id), created_at })
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
        let cluster_row = clusters::lookup(&mut tx, ctx, project, cluster, Action::ManageResources, Lock::None).await?;
        exists(&mut tx, &cluster_row, namespace).await?;
        if namespace == "default" {
            return Err(Error::conflict("protected", "the default namespace cannot be deleted"));
        }
        let in_use: i64 = sqlx::query_scalar!(
            r#"SELECT (SELECT count(*) FROM deployments WHERE cluster_id = $1 AND namespace = $2)
                    + (SELECT count(*) FROM services WHERE cluster_id = $1 AND namespace = $2) AS "n!""#,
            cluster_row.id,
            namespace
        )
        .fetch_one(&mut *tx)
        .await?;
        if in_use > 0 {
            return Err(Error::conflict(
                "not_empty",
                format!("namespace {namespace:?} still has {in_use} deployment(s) or service(s)"),
            ));
        }
        sqlx::query!("DELETE FROM namespaces WHERE cluster_id = $1 AND name = $2", cluster_row.id, namespace)
            .execute(&mut *tx)
            .await?;
        crate::app::kernel::audit::record(
            &mut tx,
            ctx,
            crate::app::kernel::audit::AuditRecord {
                action: "namespace.delete",
                resource_type: "namespace",
                resource_id: Some(format!("{}/{namespace}", ClusterId::from_uuid(cluster_row.id))),
                details: json!({ "name": namespace }),
            },
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }
}
