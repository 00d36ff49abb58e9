//! Node pools of a cluster: like clusters, every change is an Operation with
//! an outbox command for the cluster's region, and counts against quotas.

use chrono::{DateTime, Utc};
use moke_iam::{Action, Target};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::authz::Lock;
use crate::app::error::or_unique;
use crate::app::infra::clusters::{self, ClusterRow};
use crate::app::infra::store::NodePoolSpecStored;
use crate::app::kernel::changes::RegionalChange;
use crate::app::kernel::jsonb;
use crate::app::kernel::quotas::{self, Demand};
use crate::app::region::command::{self, ChangeKind, CommandHeader};
use crate::app::{App, Error, PageRequest, RequestContext, ResourceRef, Result, check_if_match, etag, validate};
use crate::ids::{ClusterId, ClusterKind, NodePoolId, NodePoolKind, ProjectKind};
use crate::model::*;
use moke_proto::region as pb;

struct NodePoolRow {
    id: Uuid,
    org_id: Uuid,
    cluster_id: Uuid,
    name: String,
    labels: serde_json::Value,
    spec: serde_json::Value,
    generation: i64,
    version: i64,
    status: serde_json::Value,
    observed_generation: i64,
    observed_at: Option<DateTime<Utc>>,
    deletion_requested_at: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl NodePoolRow {
    fn spec(&self) -> Result<NodePoolSpec> {
        jsonb::from_column::<NodePoolSpecStored>("node pool spec", &self.spec).map(NodePoolSpec::from)
    }

    fn into_view(self, region_silent: bool) -> Result<NodePoolView> {
        Ok(NodePoolView {
            id: NodePoolId::from_uuid(self.id),
            cluster_id: ClusterId::from_uuid(self.cluster_id),
            spec: self.spec()?,
            status: clusters::observed(&self.status, self.observed_generation, self.observed_at, region_silent)?,
            etag: etag(self.id, self.version),
            name: self.name,
            labels: serde_json::from_value::<Labels>(self.labels).unwrap_or_default(),
            generation: self.generation,
            deletion_requested_at: self.deletion_requested_at,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

async fn find(
    conn: &mut PgConnection,
    cluster: &ClusterRow,
    pool: &ResourceRef<NodePoolKind>,
    lock: bool,
) -> Result<NodePoolRow> {
    let row = if lock {
        sqlx::query_as!(
            NodePoolRow,
            "SELECT id, org_id, cluster_id, name, labels, spec, generation, version, status,
                    observed_generation, observed_at, deletion_requested_at, created_at, updated_at
             FROM node_pools WHERE cluster_id = $1 AND (id = $2 OR name = $3) FOR UPDATE",
            cluster.id,
            pool.id(),
            pool.name(),
        )
        .fetch_optional(conn)
        .await?
    } else {
        sqlx::query_as!(
            NodePoolRow,
            "SELECT id, org_id, cluster_id, name, labels, spec, generation, version, status,
                    observed_generation, observed_at, deletion_requested_at, created_at, updated_at
             FROM node_pools WHERE cluster_id = $1 AND (id = $2 OR name = $3)",
            cluster.id,
            pool.id(),
            pool.name(),
        )
        .fetch_optional(conn)
        .await?
    };
    row.ok_or_else(|| Error::not_found("node pool", pool.describe()))
}

/// What the kubelet and system daemons keep of every node.
pub(in crate::app) const RESERVED_CPU_MILLIS: i64 = 250;
pub(in crate::app) const RESERVED_MEMORY_MIB: i64 = 1024;

impl App {
    /// The region command for a node-pool change; it carries what each
    /// node can give to pods (the machine type minus the kubelet's reserve).
    #[allow(clippy::too_many_arguments)]
    fn node_pool_command(
        &self,
        kind: ChangeKind,
        op: &OperationView,
        cluster: &ClusterRow,
        pool_id: Uuid,
        name: &str,
        generation: i64,
        spec: &NodePoolSpec,
    ) -> pb::Command {
        let machine = self.config().catalog.machine_type(&spec.machine_type);
        let cpu_millis = machine.map_or(0, |m| m.vcpus * 1000 - RESERVED_CPU_MILLIS);
        let memory_mib = machine.map_or(0, |m| m.memory_gib * 1024 - RESERVED_MEMORY_MIB);
        let header =
            CommandHeader { kind, operation: op.id, org_id: cluster.org_id, cluster_id: cluster.id, name, generation };
        command::node_pool(header, pool_id, spec, (cpu_millis, memory_mib))
    }

    fn vcpus_of(&self, spec: &NodePoolSpec) -> i64 {
        let per_node = self.config().catalog.machine_type(&spec.machine_type).map_or(0, |m| m.vcpus);
        validate::reserved_nodes(spec) * per_node
    }

    /// `node_pool_create`.
    pub async fn node_pool_create(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        input: NodePoolCreate,
    ) -> Result<OperationView> {
        let input = &input;
        let request_key = (project.describe(), cluster.describe());
        self.idempotent(ctx, "node_pool_create", &(request_key, input), |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            // Lock the cluster so concurrent pool creates count each other.
            let cluster_row =
                clusters::lookup(&mut tx, ctx, project, cluster, Action::ManageResources, Lock::ForUpdate).await?;
            let cluster_spec = cluster_row.spec()?;
            let spec = validate::node_pool_create(&self.config().catalog, &cluster_spec.region, input)?;
            if cluster_row.deletion_requested_at.is_some() {
                return Err(Error::conflict("deleting", "the cluster is being deleted"));
            }
            quotas::lock_org(&mut tx, cluster_row.org_id).await?;
            let existing_pools: i64 =
                sqlx::query_scalar!(r#"SELECT count(*) AS "n!" FROM node_pools WHERE cluster_id = $1"#, cluster_row.id)
                    .fetch_one(&mut *tx)
                    .await?;
            let nodes = validate::reserved_nodes(&spec);
            let vcpus = self.vcpus_of(&spec);
            quotas::check(
                &mut tx,
                &self.config().quotas,
                cluster_row.org_id,
                Demand { clusters: 0, node_pools: Some((existing_pools, 1)), nodes, vcpus },
            )
            .await?;
            let id = NodePoolId::generate();
            sqlx::query!(
                "INSERT INTO node_pools (id, org_id, cluster_id, name, labels, spec, reserved_nodes,
                     reserved_vcpus, status)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                id.uuid(),
                cluster_row.org_id,
                cluster_row.id,
                input.name,
                json!(input.labels),
                jsonb::to_column(&NodePoolSpecStored::from(&spec)),
                nodes,
                vcpus,
                json!({ "phase": "pending", "conditions": [] }),
            )
            .execute(&mut *tx)
            .await
            .map_err(or_unique(|| {
                Error::conflict(
                    "already_exists",
                    format!("a node pool named {:?} already exists in this cluster", input.name),
                )
            }))?;
            let op = self
                .record_change(
                    &mut tx,
                    ctx,
                    RegionalChange {
                        kind: ChangeKind::NodePoolCreate,
                        action: "node_pool.create",
                        target_id: id.uuid(),
                        target_ref: id.to_string(),
                        target_name: &input.name,
                        generation: 1,
                        region: &cluster_spec.region,
                        needs_region: true,
                        details: json!({ "name": input.name, "spec": spec }),
                    },
                    |op| {
                        self.node_pool_command(
                            ChangeKind::NodePoolCreate,
                            op,
                            &cluster_row,
                            id.uuid(),
                            &input.name,
                            1,
                            &spec,
                        )
                    },
                )
                .await?;
            claim.complete(&mut tx, 202, &op).await?;
            tx.commit().await?;
            Ok(op)
        })
        .await
    }

    /// `node_pool_list`.
    pub async fn node_pool_list(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        page: PageRequest,
    ) -> Result<Page<NodePoolView>> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?;
        let rows = sqlx::query_as!(
            NodePoolRow,
            "SELECT id, org_id, cluster_id, name, labels, spec, generation, version, status,
                    observed_generation, observed_at, deletion_requested_at, created_at, updated_at
             FROM node_pools WHERE cluster_id = $1 AND ($2::uuid IS NULL OR id > $2)
             ORDER BY id LIMIT $3",
            cluster_row.id,
            page.after,
            page.fetch_limit(),
        )
        .fetch_all(&mut *conn)
        .await?;
        let silent = self.region_silent(&cluster_row.region()?);
        let views = rows.into_iter().map(|row| row.into_view(silent)).collect::<Result<Vec<_>>>()?;
        Ok(page.page(views, |p| p.id.uuid()))
    }

    /// The node pools of several clusters at once (for batch loaders), limited
    /// to the caller's organization.
    pub async fn node_pools_by_cluster(
        &self,
        ctx: &RequestContext,
        clusters: &[Uuid],
    ) -> Result<std::collections::HashMap<Uuid, Vec<NodePoolView>>> {
        moke_iam::authorize(&ctx.principal, Action::Read, Target::org(ctx.principal.org_id))?;
        let rows = sqlx::query_as!(
            NodePoolRow,
            "SELECT id, org_id, cluster_id, name, labels, spec, generation, version, status,
                    observed_generation, observed_at, deletion_requested_at, created_at, updated_at
             FROM node_pools WHERE cluster_id = ANY($1) AND org_id = $2
             ORDER BY id",
            clusters,
            ctx.principal.org_id,
        )
        .fetch_all(self.db())
        .await?;
        let regions: std::collections::HashMap<Uuid, String> = sqlx::query!(
            r#"SELECT id, spec->>'region' AS "region!" FROM clusters WHERE id = ANY($1) AND org_id = $2"#,
            clusters,
            ctx.principal.org_id,
        )
        .fetch_all(self.db())
        .await?
        .into_iter()
        .map(|r| (r.id, r.region))
        .collect();
        let mut by_cluster = std::collections::HashMap::<Uuid, Vec<NodePoolView>>::new();
        for row in rows {
            let cluster = row.cluster_id;
            let silent = regions.get(&cluster).is_some_and(|region| self.region_silent(region));
            by_cluster.entry(cluster).or_default().push(row.into_view(silent)?);
        }
        Ok(by_cluster)
    }

    /// `node_pool_view`.
    pub async fn node_pool_view(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        pool: &ResourceRef<NodePoolKind>,
    ) -> Result<NodePoolView> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?;
        let row = find(&mut conn, &cluster_row, pool, false).await?;
        row.into_view(self.region_silent(&cluster_row.region()?))
    }

    /// `node_pool_update`: count, autoscaling, node labels and taints.
    pub async fn node_pool_update(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        pool: &ResourceRef<NodePoolKind>,
        if_match: Option<&str>,
        update: NodePoolUpdate,
    ) -> Result<OperationView> {
        let mut tx = self.db().begin().await?;
        let cluster_row =
            clusters::lookup(&mut tx, ctx, project, cluster, Action::ManageResources, Lock::ForUpdate).await?;
        let row = find(&mut tx, &cluster_row, pool, true).await?;
        check_if_match(if_match, &etag(row.id, row.version))?;
        if row.deletion_requested_at.is_some() || cluster_row.deletion_requested_at.is_some() {
            return Err(Error::conflict("deleting", "the node pool or its cluster is being deleted"));
        }
        let current = row.spec()?;
        let spec = validate::node_pool_update(&current, &update)?;
        let spec_changed = spec != current;
        let generation = row.generation + i64::from(spec_changed);
        let nodes = validate::reserved_nodes(&spec);
        let vcpus = self.vcpus_of(&spec);
        let (old_nodes, old_vcpus) = (validate::reserved_nodes(&current), self.vcpus_of(&current));
        if nodes > old_nodes || vcpus > old_vcpus {
            quotas::lock_org(&mut tx, row.org_id).await?;
            quotas::check(
                &mut tx,
                &self.config().quotas,
                row.org_id,
                Demand {
                    clusters: 0,
                    node_pools: None,
                    nodes: (nodes - old_nodes).max(0),
                    vcpus: (vcpus - old_vcpus).max(0),
                },
            )
            .await?;
        }
        sqlx::query!(
            "UPDATE node_pools SET labels = COALESCE($2, labels), spec = $3, generation = $4,
                 reserved_nodes = $5, reserved_vcpus = $6, version = version + 1, updated_at = now()
             WHERE id = $1",
            row.id,
            update.labels.as_ref().map(|l| json!(l)),
            jsonb::to_column(&NodePoolSpecStored::from(&spec)),
            generation,
            nodes,
            vcpus,
        )
        .execute(&mut *tx)
        .await?;
        let region = cluster_row.spec()?.region;
        let op = self
            .record_change(
                &mut tx,
                ctx,
                RegionalChange {
                    kind: ChangeKind::NodePoolUpdate,
                    action: "node_pool.update",
                    target_id: row.id,
                    target_ref: NodePoolId::from_uuid(row.id).to_string(),
                    target_name: &row.name,
                    generation,
                    region: &region,
                    needs_region: spec_changed,
                    details: json!({ "labels": update.labels, "spec": update.spec, "generation": generation }),
                },
                |op| {
                    self.node_pool_command(
                        ChangeKind::NodePoolUpdate,
                        op,
                        &cluster_row,
                        row.id,
                        &row.name,
                        generation,
                        &spec,
                    )
                },
            )
            .await?;
        tx.commit().await?;
        Ok(op)
    }

    /// `node_pool_delete`: the pool disappears once the region confirms.
    pub async fn node_pool_delete(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        pool: &ResourceRef<NodePoolKind>,
        if_match: Option<&str>,
    ) -> Result<OperationView> {
        let mut tx = self.db().begin().await?;
        let cluster_row =
            clusters::lookup(&mut tx, ctx, project, cluster, Action::ManageResources, Lock::ForUpdate).await?;
        let row = find(&mut tx, &cluster_row, pool, true).await?;
        check_if_match(if_match, &etag(row.id, row.version))?;
        if row.deletion_requested_at.is_some() {
            let existing = sqlx::query_scalar!(
                "SELECT id FROM operations WHERE target_id = $1 AND kind = 'node_pool_delete'
                 ORDER BY id DESC LIMIT 1",
                row.id
            )
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(op_id) = existing {
                tx.commit().await?;
                return self.operation_view(ctx, crate::ids::OperationId::from_uuid(op_id), None).await;
            }
        }
        let spec = row.spec()?;
        let generation = row.generation + 1;
        sqlx::query!(
            "UPDATE node_pools SET deletion_requested_at = now(), generation = $2,
                 version = version + 1, updated_at = now()
             WHERE id = $1",
            row.id,
            generation,
        )
        .execute(&mut *tx)
        .await?;
        let region = cluster_row.spec()?.region;
        let op = self
            .record_change(
                &mut tx,
                ctx,
                RegionalChange {
                    kind: ChangeKind::NodePoolDelete,
                    action: "node_pool.delete",
                    target_id: row.id,
                    target_ref: NodePoolId::from_uuid(row.id).to_string(),
                    target_name: &row.name,
                    generation,
                    region: &region,
                    needs_region: true,
                    details: json!({ "name": row.name }),
                },
                |op| {
                    self.node_pool_command(
                        ChangeKind::NodePoolDelete,
                        op,
                        &cluster_row,
                        row.id,
                        &row.name,
                        generation,
                        &spec,
                    )
                },
            )
            .await?;
        tx.commit().await?;
        Ok(op)
    }
}
