//! Node pools of a cluster: like clusters, every change is an Operation with
//! an outbox command for the cluster's region, and counts against quotas.

use moke_iam::{Action, Target};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::authz::{Authorized, Lock};
use crate::app::billing;
use crate::app::infra::approvals::{Gated, HeldRequest, HeldTarget};
use crate::app::infra::clusters::{self, ClusterRow, SpecWrite};
use crate::app::infra::store::node_pools::{self as store, NewNodePool, NodePoolRow};
use crate::app::infra::store::spec_revisions;
use crate::app::kernel::changes::RegionalChange;
use crate::app::kernel::quotas::{self, Demand};
use crate::app::region::command::{self, ChangeKind, CommandHeader};
use crate::app::region::operations;
use crate::app::{App, Error, PageRequest, RequestContext, ResourceRef, Result, check_if_match, etag, validate};
use crate::ids::{ClusterId, ClusterKind, NodePoolId, NodePoolKind, ProjectKind};
use crate::model::*;
use moke_proto::region as pb;

impl NodePoolRow {
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

/// A pool of a cluster the caller has already looked up (and so may act on).
pub(super) async fn find(
    conn: &mut PgConnection,
    cluster: &Authorized<ClusterRow>,
    pool: &ResourceRef<NodePoolKind>,
    lock: Lock,
) -> Result<NodePoolRow> {
    store::find(conn, cluster.id, pool.id(), pool.name(), lock)
        .await?
        .ok_or_else(|| Error::not_found("node pool", pool.describe()))
}

/// A pool to change, locked with its cluster, after the caller's right to
/// manage the cluster's resources and the pool's `If-Match` are checked;
/// neither may be on its way out.
async fn pool_to_change(
    tx: &mut PgConnection,
    ctx: &RequestContext,
    project: &ResourceRef<ProjectKind>,
    cluster: &ResourceRef<ClusterKind>,
    pool: &ResourceRef<NodePoolKind>,
    if_match: Option<&str>,
) -> Result<(Authorized<ClusterRow>, NodePoolRow)> {
    let cluster_row =
        clusters::lookup(&mut *tx, ctx, project, cluster, Action::ManageResources, Lock::ForUpdate).await?;
    let row = find(&mut *tx, &cluster_row, pool, Lock::ForUpdate).await?;
    check_if_match(if_match, &etag(row.id, row.version))?;
    if row.deletion_requested_at.is_some() || cluster_row.deletion_requested_at.is_some() {
        return Err(Error::conflict("deleting", "the node pool or its cluster is being deleted"));
    }
    Ok((cluster_row, row))
}

/// How far back a scale-down is measured from (the most nodes the pool's
/// spec asked for since), so one made in steps is judged whole.
const SCALE_DOWN_HOURS: i64 = 24;

/// Refuses a change to named nodes while another is under way in the pool:
/// nodes are replaced or removed one Operation at a time.
async fn no_node_change_running(tx: &mut PgConnection, pool: &NodePoolRow) -> Result<()> {
    for kind in [ChangeKind::NodePoolRecycle, ChangeKind::NodeDelete] {
        if operations::unfinished(&mut *tx, pool.id, kind.operation_kind()).await? {
            return Err(Error::conflict(
                "nodes_changing",
                format!("nodes of pool {} are being replaced or removed; wait for that Operation", pool.name),
            ));
        }
    }
    Ok(())
}

/// What a change to named nodes of a pool asks of its region.
pub(in crate::app::infra) struct NodeChange<'a> {
    pub kind: ChangeKind,
    pub action: &'a str,
    /// The pool's spec after the change (a lower count when a node goes for good).
    pub spec: NodePoolSpec,
    /// Nodes to replace by surge, cordon and drain.
    pub replace: Vec<String>,
    /// Every node still to be removed with no replacement, this change's included.
    pub removing: Vec<String>,
    pub details: serde_json::Value,
}

/// The specs of a cluster's pools not being deleted.
async fn live_specs(conn: &mut PgConnection, cluster: Uuid) -> Result<Vec<NodePoolSpec>> {
    store::live_in(conn, cluster).await?.iter().map(NodePoolRow::spec).collect()
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
            let existing_pools = store::count_in(&mut tx, cluster_row.id).await?;
            let nodes = validate::reserved_nodes(&spec);
            let vcpus = self.vcpus_of(&spec);
            quotas::check(
                &mut tx,
                self.config(),
                cluster_row.org_id,
                Demand { clusters: 0, node_pools: Some((existing_pools, 1)), nodes, vcpus },
            )
            .await?;
            let id = NodePoolId::generate();
            let new = NewNodePool {
                id: id.uuid(),
                org: cluster_row.org_id,
                cluster: cluster_row.id,
                name: &input.name,
                labels: &input.labels,
                spec: &spec,
                reserved: (nodes, vcpus),
            };
            store::insert(&mut tx, new).await?;
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
            self.commit(ctx, tx).await?;
            Ok(op)
        })
        .await
    }

    pub async fn node_pool_list(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        page: PageRequest,
    ) -> Result<Page<NodePoolView>> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?;
        let rows = store::list(&mut conn, cluster_row.id, &page).await?;
        let silent = self.region_silent(&cluster_row.region()?);
        let views = rows.into_iter().map(|row| row.into_view(silent)).collect::<Result<Vec<_>>>()?;
        Ok(page.page(views, |p| p.id.uuid()))
    }

    /// The node pools of several clusters at once (for batch loaders), limited
    /// to the caller's organization and, for a scoped credential, its project.
    pub async fn node_pools_by_cluster(
        &self,
        ctx: &RequestContext,
        clusters: &[Uuid],
    ) -> Result<std::collections::HashMap<Uuid, Vec<NodePoolView>>> {
        moke_iam::authorize(&ctx.principal, Action::Read, Target::org(ctx.principal.org_id))?;
        let mut conn = self.db().acquire().await?;
        let (org, project) = (ctx.principal.org_id, ctx.principal.scope.project);
        let (rows, regions) = store::of_clusters(&mut conn, org, project, clusters).await?;
        let regions: std::collections::HashMap<Uuid, String> = regions.into_iter().collect();
        let mut by_cluster = std::collections::HashMap::<Uuid, Vec<NodePoolView>>::new();
        for row in rows {
            let cluster = row.cluster_id;
            let silent = regions.get(&cluster).is_some_and(|region| self.region_silent(region));
            by_cluster.entry(cluster).or_default().push(row.into_view(silent)?);
        }
        Ok(by_cluster)
    }

    pub async fn node_pool_view(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        pool: &ResourceRef<NodePoolKind>,
    ) -> Result<NodePoolView> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?;
        let row = find(&mut conn, &cluster_row, pool, Lock::None).await?;
        row.into_view(self.region_silent(&cluster_row.region()?))
    }

    /// `node_pool_estimate`: what adding the pool `input` would do to the
    /// cluster's monthly price. The pool is checked as `node_pool_create`
    /// checks it (but for its name being free); nothing is written.
    pub async fn node_pool_estimate(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        input: NodePoolCreate,
    ) -> Result<PriceChange> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?;
        let cluster_spec = cluster_row.spec()?;
        let added = validate::node_pool_create(&self.config().catalog, &cluster_spec.region, &input)?;
        let current = live_specs(&mut conn, cluster_row.id).await?;
        let mut proposed = current.clone();
        proposed.push(added);
        let replicas = cluster_spec.control_plane.replicas;
        billing::price_change(&billing::shape(replicas, &current), &billing::shape(replicas, &proposed))
    }

    /// `node_pool_update_estimate`: what `update` (as `node_pool_update`
    /// takes it) would do to the cluster's monthly price; nothing is written.
    pub async fn node_pool_update_estimate(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        pool: &ResourceRef<NodePoolKind>,
        update: NodePoolUpdate,
    ) -> Result<PriceChange> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?;
        let row = find(&mut conn, &cluster_row, pool, Lock::None).await?;
        if row.deletion_requested_at.is_some() {
            return Err(Error::conflict("deleting", "the node pool is being deleted"));
        }
        let changed = validate::node_pool_update(&self.config().catalog, &row.spec()?, &update)?;
        let others: Vec<NodePoolSpec> = store::live_in(&mut conn, cluster_row.id)
            .await?
            .into_iter()
            .filter(|other| other.id != row.id)
            .map(|other| other.spec())
            .collect::<Result<_>>()?;
        let (mut current, mut proposed) = (others.clone(), others);
        current.push(row.spec()?);
        proposed.push(changed);
        let replicas = cluster_row.spec()?.control_plane.replicas;
        billing::price_change(&billing::shape(replicas, &current), &billing::shape(replicas, &proposed))
    }

    /// `node_pool_update`: count, autoscaling, machine type, node labels and
    /// taints (a new machine type, labels or taints replace the nodes).
    pub async fn node_pool_update(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        pool: &ResourceRef<NodePoolKind>,
        if_match: Option<&str>,
        update: NodePoolUpdate,
    ) -> Result<OperationView> {
        let update = &update;
        self.unless_held(ctx, |ctx| {
            Box::pin(async move { self.update_node_pool(&ctx, project, cluster, pool, if_match, update).await })
        })
        .await
    }

    /// [`App::node_pool_update`], unless the approval policy holds it.
    async fn update_node_pool(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        pool: &ResourceRef<NodePoolKind>,
        if_match: Option<&str>,
        update: &NodePoolUpdate,
    ) -> Result<OperationView> {
        let mut tx = self.db().begin().await?;
        let (cluster_row, row) = pool_to_change(&mut tx, ctx, project, cluster, pool, if_match).await?;
        let current = row.spec()?;
        let spec = validate::node_pool_update(&self.config().catalog, &current, update)?;
        let held =
            HeldTarget { kind: ChangeKind::NodePoolUpdate, id: row.id, name: &row.name, generation: row.generation };
        // A scale-down lowers the most nodes the pool may run (its count, or
        // its autoscaler's ceiling), measured from what runs: an autoscaled
        // pool runs what its autoscaler set. Lowering the floor only lets
        // the autoscaler remove idle nodes, and is not one.
        let ceiling = |spec: &NodePoolSpec| spec.autoscaling.as_ref().map_or(spec.count, |a| a.max_count);
        let (old_ceiling, new_ceiling) = (ceiling(&current), ceiling(&spec));
        let from = if current.autoscaling.is_some() {
            let removing = row.still_removing()?;
            let running = row.observed_nodes()?.iter().filter(|n| !removing.contains(&n.name)).count() as i64;
            running.min(old_ceiling)
        } else {
            let recent = spec_revisions::largest_count_since(&mut tx, row.id, SCALE_DOWN_HOURS).await?;
            current.count.max(recent.unwrap_or(0))
        };
        let to = if new_ceiling < old_ceiling { new_ceiling.min(from) } else { from };
        let gated = Gated::NodePoolChange { count: (from, to) };
        self.approval_gate(&mut tx, ctx, gated, held, || HeldRequest::NodePoolUpdate {
            project: cluster_row.project_id,
            cluster: cluster_row.id,
            pool: row.id,
            update: update.clone(),
        })
        .await?;
        let details = json!({ "labels": update.labels, "spec": update.spec });
        let change = SpecWrite {
            current: &current,
            spec,
            labels: update.labels.as_ref(),
            kind: ChangeKind::NodePoolUpdate,
            action: "node_pool.update",
            details,
        };
        let op = self.write_pool_spec(&mut tx, ctx, &cluster_row, &row, change).await?;
        self.commit(ctx, tx).await?;
        Ok(op)
    }

    /// Writes a checked new spec over the pool's `current` one as its next
    /// generation (the same one for labels alone), within the organization's
    /// quotas for any growth, and records the change.
    pub(in crate::app) async fn write_pool_spec(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        cluster_row: &ClusterRow,
        row: &NodePoolRow,
        change: SpecWrite<'_, NodePoolSpec>,
    ) -> Result<OperationView> {
        let SpecWrite { current, spec, labels, kind, action, mut details } = change;
        let spec_changed = spec != *current;
        let generation = row.generation + i64::from(spec_changed);
        let nodes = validate::reserved_nodes(&spec);
        let vcpus = self.vcpus_of(&spec);
        let (old_nodes, old_vcpus) = (validate::reserved_nodes(current), self.vcpus_of(current));
        if nodes > old_nodes || vcpus > old_vcpus {
            quotas::lock_org(&mut *tx, row.org_id).await?;
            quotas::check(
                &mut *tx,
                self.config(),
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
        // Old nodes run until replaced: a smaller type frees its vCPUs only at a later change.
        let reserved_vcpus = if spec.machine_type == current.machine_type { vcpus } else { vcpus.max(old_vcpus) };
        store::update_spec(&mut *tx, row.id, labels, &spec, generation, (nodes, reserved_vcpus)).await?;
        if spec.machine_type != current.machine_type {
            store::set_replaced_machine_type(&mut *tx, row.id, &current.machine_type).await?;
        }
        let removing = row.still_removing()?;
        store::set_removing_nodes(&mut *tx, row.id, &removing).await?;
        let region = cluster_row.spec()?.region;
        if let Some(details) = details.as_object_mut() {
            details.insert("generation".into(), json!(generation));
        }
        self.record_change(
            tx,
            ctx,
            RegionalChange {
                kind,
                action,
                target_id: row.id,
                target_ref: NodePoolId::from_uuid(row.id).to_string(),
                target_name: &row.name,
                generation,
                region: &region,
                needs_region: spec_changed,
                details,
            },
            |op| pb::Command {
                remove_nodes: removing.clone(),
                ..self.node_pool_command(kind, op, cluster_row, row.id, &row.name, generation, &spec)
            },
        )
        .await
    }

    /// Writes `change` to the pool at its next generation, as an Operation
    /// the region finishes once the named nodes are replaced or gone.
    pub(in crate::app::infra) async fn change_nodes(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        cluster_row: &ClusterRow,
        row: &NodePoolRow,
        change: NodeChange<'_>,
    ) -> Result<OperationView> {
        let generation = row.generation + 1;
        let reserved = (validate::reserved_nodes(&change.spec), self.vcpus_of(&change.spec));
        store::update_spec(&mut *tx, row.id, None, &change.spec, generation, reserved).await?;
        store::set_removing_nodes(&mut *tx, row.id, &change.removing).await?;
        let region = cluster_row.spec()?.region;
        let NodeChange { kind, action, spec, replace, removing, details } = change;
        self.record_change(
            tx,
            ctx,
            RegionalChange {
                kind,
                action,
                target_id: row.id,
                target_ref: NodePoolId::from_uuid(row.id).to_string(),
                target_name: &row.name,
                generation,
                region: &region,
                needs_region: true,
                details,
            },
            |op| pb::Command {
                replace_nodes: replace,
                remove_nodes: removing,
                ..self.node_pool_command(kind, op, cluster_row, row.id, &row.name, generation, &spec)
            },
        )
        .await
    }

    /// `node_pool_recycle`: replaces the named nodes of the pool, or all of
    /// them, one at a time: a new node first, then the old one cordoned,
    /// drained and deleted (DOKS `recycle`).
    pub async fn node_pool_recycle(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        pool: &ResourceRef<NodePoolKind>,
        if_match: Option<&str>,
        request: NodePoolRecycleRequest,
    ) -> Result<OperationView> {
        if let Some(names) = &request.nodes {
            validate::node_names(names)?;
        }
        let request_key = (project.describe(), cluster.describe(), pool.describe(), if_match);
        let request = &request;
        self.idempotent(ctx, "node_pool_recycle", &(request_key, request), |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            let (cluster_row, row) = pool_to_change(&mut tx, ctx, project, cluster, pool, if_match).await?;
            no_node_change_running(&mut tx, &row).await?;
            let observed: Vec<String> = row.observed_nodes()?.into_iter().map(|n| n.name).collect();
            let removing = row.still_removing()?;
            let nodes = match &request.nodes {
                None => observed.iter().filter(|n| !removing.contains(n)).cloned().collect(),
                Some(names) => {
                    let mut v = crate::app::error::Validator::new();
                    for (i, name) in names.iter().enumerate() {
                        v.check(
                            observed.contains(name),
                            format!("nodes[{i}]"),
                            "unknown_node",
                            format!(
                                "{name:?} is not a node of pool {} (see GET …/clusters/{{cluster}}/nodes)",
                                row.name
                            ),
                        );
                        v.check(
                            !removing.contains(name),
                            format!("nodes[{i}]"),
                            "being_removed",
                            format!("{name:?} is being removed already"),
                        );
                    }
                    v.finish()?;
                    names.clone()
                }
            };
            if nodes.is_empty() {
                return Err(Error::conflict("no_nodes", format!("node pool {} has no nodes to recycle yet", row.name)));
            }
            let change = NodeChange {
                kind: ChangeKind::NodePoolRecycle,
                action: "node_pool.recycle",
                spec: row.spec()?,
                details: json!({ "nodes": nodes }),
                replace: nodes,
                removing,
            };
            let op = self.change_nodes(&mut tx, ctx, &cluster_row, &row, change).await?;
            claim.complete(&mut tx, 202, &op).await?;
            self.commit(ctx, tx).await?;
            Ok(op)
        })
        .await
    }

    /// `node_pool_node_delete`: removes one node of the pool, cordoned and
    /// drained first. With `replace`, a new node takes its place (the
    /// pool's count stays); without, the count is one lower. Asking again
    /// for a node already on its way out answers with that Operation.
    #[allow(clippy::too_many_arguments)]
    pub async fn node_pool_node_delete(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        pool: &ResourceRef<NodePoolKind>,
        node: &str,
        replace: bool,
        if_match: Option<&str>,
    ) -> Result<OperationView> {
        if !validate::is_node_name(node) {
            return Err(Error::invalid_field("node", "invalid_name", "not a node name"));
        }
        self.unless_held(ctx, |ctx| {
            Box::pin(async move { self.delete_node(&ctx, project, cluster, pool, node, replace, if_match).await })
        })
        .await
    }

    /// [`App::node_pool_node_delete`], unless the approval policy holds it
    /// (a removal without replacement is a scale-down by one).
    #[allow(clippy::too_many_arguments)]
    async fn delete_node(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        pool: &ResourceRef<NodePoolKind>,
        node: &str,
        replace: bool,
        if_match: Option<&str>,
    ) -> Result<OperationView> {
        let mut tx = self.db().begin().await?;
        let (cluster_row, row) = pool_to_change(&mut tx, ctx, project, cluster, pool, if_match).await?;
        let mut removing = row.still_removing()?;
        if removing.iter().any(|n| n == node) {
            // Node changes run one at a time, so the newest is this node's.
            let existing = operations::latest_of_kind(&mut tx, row.id, ChangeKind::NodeDelete).await?;
            if let Some(op_id) = existing {
                self.commit(ctx, tx).await?;
                return self.operation_view(ctx, crate::ids::OperationId::from_uuid(op_id), None).await;
            }
        }
        if !row.observed_nodes()?.iter().any(|n| n.name == node) {
            return Err(Error::not_found("node", node));
        }
        no_node_change_running(&mut tx, &row).await?;
        let mut spec = row.spec()?;
        let mut replaced = Vec::new();
        if replace {
            replaced.push(node.to_string());
        } else {
            let floor = spec.autoscaling.as_ref().map_or(0, |a| a.min_count);
            // An autoscaled pool runs what its autoscaler set, which the region lowers itself.
            let size = if spec.autoscaling.is_some() {
                row.observed_nodes()?.iter().filter(|n| !removing.contains(&n.name)).count() as i64
            } else {
                spec.count
            };
            if size <= floor {
                return Err(Error::conflict(
                    "at_minimum",
                    format!("node pool {} runs {size} node(s), its minimum: replace the node instead", row.name),
                ));
            }
            let held =
                HeldTarget { kind: ChangeKind::NodeDelete, id: row.id, name: &row.name, generation: row.generation };
            let from = if spec.autoscaling.is_some() {
                size
            } else {
                let recent = spec_revisions::largest_count_since(&mut tx, row.id, SCALE_DOWN_HOURS).await?;
                size.max(recent.unwrap_or(0))
            };
            let gated = Gated::NodePoolChange { count: (from, size - 1) };
            self.approval_gate(&mut tx, ctx, gated, held, || HeldRequest::NodeDelete {
                project: cluster_row.project_id,
                cluster: cluster_row.id,
                pool: row.id,
                node: node.to_string(),
            })
            .await?;
            if spec.autoscaling.is_none() {
                spec.count -= 1;
            }
            removing.push(node.to_string());
        }
        let change = NodeChange {
            kind: ChangeKind::NodeDelete,
            action: "node_pool.node_delete",
            spec,
            replace: replaced,
            removing,
            details: json!({ "node": node, "replace": replace }),
        };
        let op = self.change_nodes(&mut tx, ctx, &cluster_row, &row, change).await?;
        self.commit(ctx, tx).await?;
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
        self.unless_held(ctx, |ctx| {
            Box::pin(async move { self.delete_node_pool(&ctx, project, cluster, pool, if_match).await })
        })
        .await
    }

    /// [`App::node_pool_delete`], unless the approval policy holds it.
    async fn delete_node_pool(
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
        let row = find(&mut tx, &cluster_row, pool, Lock::ForUpdate).await?;
        check_if_match(if_match, &etag(row.id, row.version))?;
        if row.deletion_requested_at.is_some() {
            let existing = operations::latest_of_kind(&mut tx, row.id, ChangeKind::NodePoolDelete).await?;
            if let Some(op_id) = existing {
                self.commit(ctx, tx).await?;
                return self.operation_view(ctx, crate::ids::OperationId::from_uuid(op_id), None).await;
            }
        }
        let held =
            HeldTarget { kind: ChangeKind::NodePoolDelete, id: row.id, name: &row.name, generation: row.generation };
        self.approval_gate(&mut tx, ctx, Gated::NodePoolDelete, held, || HeldRequest::NodePoolDelete {
            project: cluster_row.project_id,
            cluster: cluster_row.id,
            pool: row.id,
        })
        .await?;
        let spec = row.spec()?;
        let generation = row.generation + 1;
        store::request_deletion(&mut tx, row.id, generation).await?;
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
        self.commit(ctx, tx).await?;
        Ok(op)
    }
}
