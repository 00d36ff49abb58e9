//! Deployments in hosted clusters. Every change to a
//! deployment makes an immutable revision and goes to the cluster's region
//! as a workload command; the Operation finishes when the region has rolled
//! it out. A rollout still unfinished after its progress deadline is marked
//! failed and, when the deployment asks for it, rolled back to the last
//! revision that rolled out fully.

use chrono::Utc;
use moke_iam::Action;
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::authz::{Authorized, Lock};
use crate::app::error::Validator;
use crate::app::infra::clusters::{self, ClusterRow};
use crate::app::kernel::changes::RegionalChange;
use crate::app::kernel::jsonb;
use crate::app::kernel::policy;
use crate::app::region::command::{self, ChangeKind, CommandHeader};
use crate::app::region::observed::ObservedStored;
use crate::app::workloads::store::deployments::{
    self as store, DeploymentRow, NewDeployment, ProjectDeploymentKey, SpecChange,
};
use crate::app::workloads::store::revisions::{self, NewRevision};
use crate::app::{
    App, Error, PageRequest, RequestContext, ResourceRef, Result, check_if_match, etag, validate,
    workloads::workload_spec,
};
use crate::ids::{ClusterId, ClusterKind, DeploymentId, DeploymentKind, ProjectKind};
use crate::model::*;
use moke_proto::region as pb;

impl DeploymentRow {
    fn into_view(self, region_silent: bool) -> Result<DeploymentView> {
        let spec = self.spec()?;
        let status: ObservedStored = jsonb::from_column("deployment status", &self.status)?;
        let conditions = status.conditions();
        let workload = status.workload.unwrap_or_default();
        let last_error: Option<OperationError> = self.last_error.and_then(|e| serde_json::from_value(e).ok());
        let phase = if self.deletion_requested_at.is_some() {
            "deleting".to_string()
        } else if last_error.is_some() {
            "failed".to_string()
        } else {
            status.phase
        };
        Ok(DeploymentView {
            id: DeploymentId::from_uuid(self.id),
            cluster_id: ClusterId::from_uuid(self.cluster_id),
            status: DeploymentStatus {
                phase,
                observed_generation: self.observed_generation,
                replicas: spec.replicas,
                current_replicas: workload.replicas,
                updated_replicas: workload.updated_replicas,
                ready_replicas: workload.ready_replicas,
                available_replicas: workload.available_replicas,
                conditions,
                last_error,
                observed_at: self.observed_at,
                stale: region_silent && self.observed_at.is_some(),
                pods: workload.pods.into_iter().map(PodView::from).collect(),
            },
            spec,
            etag: etag(self.id, self.version),
            namespace: self.namespace,
            name: self.name,
            labels: serde_json::from_value::<Labels>(self.labels).unwrap_or_default(),
            generation: self.generation,
            revision: self.revision,
            template_revision: self.template_revision,
            last_good_revision: self.last_good_revision,
            deletion_requested_at: self.deletion_requested_at,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// A deployment in a namespace of a cluster the caller has already looked
/// up (and so may act on).
async fn find(
    conn: &mut PgConnection,
    cluster: &Authorized<ClusterRow>,
    namespace: &str,
    deployment: &ResourceRef<DeploymentKind>,
    lock: Lock,
) -> Result<DeploymentRow> {
    store::find(conn, cluster.id, namespace, deployment.id(), deployment.name(), lock)
        .await?
        .ok_or_else(|| Error::not_found("deployment", deployment.describe()))
}

fn requested_cpu(spec: &DeploymentSpec) -> i64 {
    spec.replicas * spec.resources.cpu_millis
}

/// The 16 bytes a revision list's page token holds: the revision number.
fn revision_key(revision: i64) -> Uuid {
    Uuid::from_u128(u128::try_from(revision).unwrap_or(0))
}

/// The revision a page token continues below; any 16 bytes are a token, so
/// a number past the largest revision is the largest.
fn revision_of_key(key: Uuid) -> i64 {
    i64::try_from(key.as_u128()).unwrap_or(i64::MAX)
}

/// What changes a deployment, and how its revision is named.
#[derive(Clone, serde::Serialize)]
pub enum DeploymentChange {
    Update(DeploymentUpdate),
    Scale(i64),
    Pause,
    Resume,
    Restart,
    Rollback(Option<i64>),
}

impl DeploymentChange {
    fn kind(&self) -> ChangeKind {
        match self {
            DeploymentChange::Update(_) => ChangeKind::DeploymentUpdate,
            DeploymentChange::Scale(_) => ChangeKind::DeploymentScale,
            DeploymentChange::Pause => ChangeKind::DeploymentPause,
            DeploymentChange::Resume => ChangeKind::DeploymentResume,
            DeploymentChange::Restart => ChangeKind::DeploymentRestart,
            DeploymentChange::Rollback(_) => ChangeKind::DeploymentRollback,
        }
    }
}

/// A deployment's place: project, cluster, namespace, and itself.
pub struct DeploymentPath<'a> {
    pub project: &'a ResourceRef<ProjectKind>,
    pub cluster: &'a ResourceRef<ClusterKind>,
    pub namespace: &'a str,
}

impl App {
    /// Checks the per-cluster workload quotas for a change of `added`
    /// deployments and `cpu_delta` requested CPU; call with the cluster locked.
    async fn check_workload_quotas(
        &self,
        tx: &mut PgConnection,
        cluster: &ClusterRow,
        added: i64,
        cpu_delta: i64,
    ) -> Result<()> {
        let usage = store::usage(tx, cluster.id).await?;
        let limits = &self.config().workload_quotas;
        if added > 0 && usage.deployments + added > limits.max_deployments_per_cluster {
            return Err(Error::QuotaExceeded {
                quota: "deployments_per_cluster",
                limit: limits.max_deployments_per_cluster,
                usage: usage.deployments,
                requested: added,
            });
        }
        if cpu_delta > 0 && usage.cpu_millis + cpu_delta > limits.max_requested_cpu_millis_per_cluster {
            return Err(Error::QuotaExceeded {
                quota: "requested_cpu_millis_per_cluster",
                limit: limits.max_requested_cpu_millis_per_cluster,
                usage: usage.cpu_millis,
                requested: cpu_delta,
            });
        }
        Ok(())
    }

    /// The region command for a deployment change.
    fn workload_command(
        kind: ChangeKind,
        op: &OperationView,
        cluster: &ClusterRow,
        row: (Uuid, &str, &str),
        generation: i64,
        spec: &DeploymentSpec,
        template_revision: i64,
    ) -> pb::Command {
        let (id, namespace, name) = row;
        let header =
            CommandHeader { kind, operation: op.id, org_id: cluster.org_id, cluster_id: cluster.id, name, generation };
        command::workload(header, id, namespace, spec, template_revision)
    }

    pub async fn deployment_create(
        &self,
        ctx: &RequestContext,
        at: &DeploymentPath<'_>,
        input: DeploymentCreate,
    ) -> Result<OperationView> {
        let input = &input;
        let request_key = (at.project.describe(), at.cluster.describe(), at.namespace);
        self.idempotent(ctx, "deployment_create", &(request_key, input), |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            // Locked: concurrent creates in one cluster count each other against its quotas.
            let cluster_row =
                clusters::lookup(&mut tx, ctx, at.project, at.cluster, Action::ManageResources, Lock::ForUpdate)
                    .await?;
            super::namespaces::exists(&mut tx, &cluster_row, at.namespace).await?;
            let mut v = Validator::new();
            validate::name(&mut v, "name", &input.name);
            validate::labels(&mut v, "labels", &input.labels);
            let mut spec = workload_spec::of_create(input)?;
            workload_spec::label_pods(&mut spec, &input.name);
            workload_spec::check(&mut v, "spec", &spec);
            v.finish()?;
            if cluster_row.deletion_requested_at.is_some() {
                return Err(Error::conflict("deleting", "the cluster is being deleted"));
            }
            self.check_workload_quotas(&mut tx, &cluster_row, 1, requested_cpu(&spec)).await?;
            policy::check_image(&mut tx, cluster_row.org_id, &spec.image, "spec.image").await?;
            let id = DeploymentId::generate();
            let new = NewDeployment {
                id: id.uuid(),
                org: cluster_row.org_id,
                project: cluster_row.project_id,
                cluster: cluster_row.id,
                namespace: at.namespace,
                name: &input.name,
                labels: &input.labels,
                spec: &spec,
                requested_cpu_millis: requested_cpu(&spec),
            };
            store::insert(&mut tx, new).await?;
            insert_revision(&mut tx, id.uuid(), 1, &spec, "create", ctx).await?;
            let region = cluster_row.spec()?.region;
            let op = self
                .record_change(
                    &mut tx,
                    ctx,
                    RegionalChange {
                        kind: ChangeKind::DeploymentCreate,
                        action: "deployment.create",
                        target_id: id.uuid(),
                        target_ref: id.to_string(),
                        target_name: &input.name,
                        generation: 1,
                        region: &region,
                        needs_region: true,
                        details: json!({ "name": input.name, "namespace": at.namespace, "spec": spec }),
                    },
                    |op| {
                        Self::workload_command(
                            ChangeKind::DeploymentCreate,
                            op,
                            &cluster_row,
                            (id.uuid(), at.namespace, &input.name),
                            1,
                            &spec,
                            1,
                        )
                    },
                )
                .await?;
            store::set_rollout(&mut tx, id.uuid(), op.id.uuid()).await?;
            claim.complete(&mut tx, 202, &op).await?;
            self.commit(ctx, tx).await?;
            Ok(op)
        })
        .await
    }

    pub async fn deployment_list(
        &self,
        ctx: &RequestContext,
        at: &DeploymentPath<'_>,
        page: PageRequest,
    ) -> Result<Page<DeploymentView>> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, at.project, at.cluster, Action::Read, Lock::None).await?;
        super::namespaces::exists(&mut conn, &cluster_row, at.namespace).await?;
        let rows = store::list(&mut conn, cluster_row.id, at.namespace, &page).await?;
        let silent = self.region_silent(&cluster_row.region()?);
        let views = rows.into_iter().map(|row| row.into_view(silent)).collect::<Result<Vec<_>>>()?;
        Ok(page.page(views, |d| d.id.uuid()))
    }

    /// `deployment_view`: spec, revisions, and replicas as observed.
    pub async fn deployment_view(
        &self,
        ctx: &RequestContext,
        at: &DeploymentPath<'_>,
        deployment: &ResourceRef<DeploymentKind>,
    ) -> Result<DeploymentView> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, at.project, at.cluster, Action::Read, Lock::None).await?;
        let row = find(&mut conn, &cluster_row, at.namespace, deployment, Lock::None).await?;
        row.into_view(self.region_silent(&cluster_row.region()?))
    }

    /// `deployment_revision_list`: newest first.
    pub async fn deployment_revision_list(
        &self,
        ctx: &RequestContext,
        at: &DeploymentPath<'_>,
        deployment: &ResourceRef<DeploymentKind>,
        page: PageRequest,
    ) -> Result<Page<RevisionView>> {
        let mut conn = self.db().acquire().await?;
        let cluster_row = clusters::lookup(&mut conn, ctx, at.project, at.cluster, Action::Read, Lock::None).await?;
        let row = find(&mut conn, &cluster_row, at.namespace, deployment, Lock::None).await?;
        let before = page.after.map(revision_of_key);
        let rows = revisions::list(&mut conn, row.id, before, page.fetch_limit()).await?;
        let views = rows
            .into_iter()
            .map(|r| {
                Ok(RevisionView {
                    revision: r.revision,
                    spec: r.spec()?,
                    cause: r.cause,
                    created_by: r.created_by,
                    created_at: r.created_at,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(page.page(views, |r| revision_key(r.revision)))
    }

    /// `deployment_update` and the actions (`scale`, `pause`, `resume`,
    /// `restart`, `rollback`): one new revision, one Operation.
    pub async fn deployment_change(
        &self,
        ctx: &RequestContext,
        at: &DeploymentPath<'_>,
        deployment: &ResourceRef<DeploymentKind>,
        if_match: Option<&str>,
        change: DeploymentChange,
    ) -> Result<OperationView> {
        let kind = change.kind();
        let request_key = (at.project.describe(), at.cluster.describe(), at.namespace, deployment.describe());
        let change = &change;
        self.idempotent(ctx, kind.operation_kind(), &(request_key, if_match, change), |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            let cluster_row =
                clusters::lookup(&mut tx, ctx, at.project, at.cluster, Action::ManageResources, Lock::ForUpdate)
                    .await?;
            let row = find(&mut tx, &cluster_row, at.namespace, deployment, Lock::ForUpdate).await?;
            check_if_match(if_match, &etag(row.id, row.version))?;
            if row.deletion_requested_at.is_some() || cluster_row.deletion_requested_at.is_some() {
                return Err(Error::conflict("deleting", "the deployment or its cluster is being deleted"));
            }
            let current = row.spec()?;
            let (spec, cause, labels) = match change.clone() {
                DeploymentChange::Update(update) => {
                    let mut v = Validator::new();
                    if let Some(labels) = &update.labels {
                        validate::labels(&mut v, "labels", labels);
                    }
                    v.finish()?;
                    (workload_spec::of_update(&current, &update, &row.name)?, "update".to_string(), update.labels)
                }
                DeploymentChange::Scale(replicas) => {
                    (DeploymentSpec { replicas, ..current.clone() }, "scale".into(), None)
                }
                DeploymentChange::Pause => (DeploymentSpec { paused: true, ..current.clone() }, "pause".into(), None),
                DeploymentChange::Resume => {
                    (DeploymentSpec { paused: false, ..current.clone() }, "resume".into(), None)
                }
                DeploymentChange::Restart => {
                    (DeploymentSpec { restarted_at: Some(Utc::now()), ..current.clone() }, "restart".into(), None)
                }
                DeploymentChange::Rollback(to) => {
                    let to = to.or(row.last_good_revision).ok_or_else(|| {
                        Error::conflict("no_good_revision", "no revision has rolled out fully yet; name one")
                    })?;
                    let target = revision_spec(&mut tx, row.id, to).await?;
                    (workload_spec::with_template_of(&current, &target), format!("rollback to {to}"), None)
                }
            };
            let mut spec = spec;
            workload_spec::label_pods(&mut spec, &row.name);
            let mut v = Validator::new();
            workload_spec::check(&mut v, "spec", &spec);
            v.finish()?;
            let op = self.commit_change(&mut tx, ctx, &cluster_row, &row, &current, spec, kind, &cause, labels).await?;
            claim.complete(&mut tx, 202, &op).await?;
            self.commit(ctx, tx).await?;
            Ok(op)
        })
        .await
    }

    /// Writes a deployment change (revision, row, Operation, command,
    /// audit) in `tx`. Nothing changes but labels: the Operation is born
    /// succeeded and nothing goes to the region.
    #[allow(clippy::too_many_arguments)]
    async fn commit_change(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        cluster_row: &ClusterRow,
        row: &DeploymentRow,
        current: &DeploymentSpec,
        spec: DeploymentSpec,
        kind: ChangeKind,
        cause: &str,
        labels: Option<Labels>,
    ) -> Result<OperationView> {
        let changed = spec != *current;
        // A new image passes today's rules, a person's rollback too; only a failed
        // rollout's automatic rollback returns to its last good image regardless.
        let automatic_rollback =
            kind == ChangeKind::DeploymentRollback && ctx.principal.kind == moke_iam::PrincipalKind::System;
        if spec.image != current.image && !automatic_rollback {
            policy::check_image(tx, cluster_row.org_id, &spec.image, "spec.image").await?;
        }
        let cpu_delta = requested_cpu(&spec) - row.requested_cpu_millis;
        if changed && cpu_delta > 0 {
            self.check_workload_quotas(tx, cluster_row, 0, cpu_delta).await?;
        }
        let generation = row.generation + i64::from(changed);
        let revision = row.revision + i64::from(changed);
        let template_revision =
            if workload_spec::same_template(&spec, current) { row.template_revision } else { revision };
        let next = SpecChange {
            labels: labels.as_ref(),
            spec: &spec,
            generation,
            revision,
            template_revision,
            requested_cpu_millis: requested_cpu(&spec),
            changed,
        };
        store::update_spec(tx, row.id, next).await?;
        if changed {
            insert_revision(tx, row.id, revision, &spec, cause, ctx).await?;
        }
        let region = cluster_row.spec()?.region;
        let action = format!("deployment.{}", kind.operation_kind().trim_start_matches("deployment_"));
        let op = self
            .record_change(
                tx,
                ctx,
                RegionalChange {
                    kind,
                    action: &action,
                    target_id: row.id,
                    target_ref: DeploymentId::from_uuid(row.id).to_string(),
                    target_name: &row.name,
                    generation,
                    region: &region,
                    needs_region: changed,
                    details: json!({ "cause": cause, "revision": revision, "labels": labels, "spec": spec }),
                },
                |op| {
                    Self::workload_command(
                        kind,
                        op,
                        cluster_row,
                        (row.id, &row.namespace, &row.name),
                        generation,
                        &spec,
                        template_revision,
                    )
                },
            )
            .await?;
        if changed {
            store::set_rollout(tx, row.id, op.id.uuid()).await?;
        }
        Ok(op)
    }

    /// `deployment_delete`: the deployment goes once the region has removed its pods.
    pub async fn deployment_delete(
        &self,
        ctx: &RequestContext,
        at: &DeploymentPath<'_>,
        deployment: &ResourceRef<DeploymentKind>,
        if_match: Option<&str>,
    ) -> Result<OperationView> {
        let mut tx = self.db().begin().await?;
        let cluster_row =
            clusters::lookup(&mut tx, ctx, at.project, at.cluster, Action::ManageResources, Lock::ForUpdate).await?;
        let row = find(&mut tx, &cluster_row, at.namespace, deployment, Lock::ForUpdate).await?;
        check_if_match(if_match, &etag(row.id, row.version))?;
        if row.deletion_requested_at.is_some() {
            let existing =
                crate::app::region::operations::latest_of_kind(&mut tx, row.id, ChangeKind::DeploymentDelete).await?;
            if let Some(op_id) = existing {
                self.commit(ctx, tx).await?;
                return self.operation_view(ctx, crate::ids::OperationId::from_uuid(op_id), None).await;
            }
        }
        let spec = row.spec()?;
        let generation = row.generation + 1;
        store::request_deletion(&mut tx, row.id, generation).await?;
        let region = cluster_row.spec()?.region;
        let op = self
            .record_change(
                &mut tx,
                ctx,
                RegionalChange {
                    kind: ChangeKind::DeploymentDelete,
                    action: "deployment.delete",
                    target_id: row.id,
                    target_ref: DeploymentId::from_uuid(row.id).to_string(),
                    target_name: &row.name,
                    generation,
                    region: &region,
                    needs_region: true,
                    details: json!({ "name": row.name, "namespace": row.namespace }),
                },
                |op| {
                    Self::workload_command(
                        ChangeKind::DeploymentDelete,
                        op,
                        &cluster_row,
                        (row.id, &row.namespace, &row.name),
                        generation,
                        &spec,
                        row.template_revision,
                    )
                },
            )
            .await?;
        self.commit(ctx, tx).await?;
        Ok(op)
    }

    /// Fails rollouts past their progress deadline and, where asked,
    /// rolls them back to the last revision that rolled out fully. Rollouts
    /// in a silent region are left alone: nothing can be known of them.
    /// Returns how many rollouts were failed.
    pub async fn enforce_rollout_deadlines_once(&self) -> Result<usize> {
        // The connection goes back before each failure takes its own.
        let overdue = store::overdue_rollouts(&mut *self.db().acquire().await?).await?;
        let mut failed = 0;
        for item in overdue.into_iter().filter(|item| !self.region_silent(&item.region)) {
            failed += usize::from(self.fail_rollout(item.id, item.operation_id).await?);
        }
        Ok(failed)
    }

    async fn fail_rollout(&self, deployment: Uuid, operation: Uuid) -> Result<bool> {
        let mut tx = self.db().begin().await?;
        let Some((cluster_row, row)) = lock_with_cluster(&mut tx, deployment).await? else { return Ok(false) };
        if row.rollout_operation_id != Some(operation) {
            return Ok(false);
        }
        let spec = row.spec()?;
        let rollback_to =
            row.last_good_revision.filter(|good| spec.strategy.auto_rollback && *good != row.template_revision);
        let message = format!(
            "revision {} did not roll out within {} s{}",
            row.template_revision,
            spec.strategy.progress_deadline_seconds,
            rollback_to.map(|r| format!("; rolled back to revision {r}")).unwrap_or_default()
        );
        let error = OperationError { code: "progress_deadline_exceeded".into(), message };
        if !store::fail_rollout_operation(&mut tx, operation, &error).await? {
            return Ok(false);
        }
        store::rollout_failed(&mut tx, row.id, &error).await?;
        let ctx = RequestContext::system(row.org_id);
        crate::app::kernel::audit::record(
            &mut tx,
            &ctx,
            crate::app::kernel::audit::AuditRecord {
                action: "deployment.rollout_failed",
                resource_type: "deployment",
                resource_id: Some(DeploymentId::from_uuid(row.id).to_string()),
                details: json!({ "operation_id": crate::ids::OperationId::from_uuid(operation), "error": error }),
            },
        )
        .await?;
        if let Some(good) = rollback_to {
            let target = revision_spec(&mut tx, row.id, good).await?;
            let restored = workload_spec::with_template_of(&spec, &target);
            self.commit_change(
                &mut tx,
                &ctx,
                &cluster_row,
                &row,
                &spec,
                restored,
                ChangeKind::DeploymentRollback,
                &format!("automatic rollback to {good}"),
                None,
            )
            .await?;
            // The failure stays visible until a person changes the deployment.
            store::set_last_error(&mut tx, row.id, &error).await?;
        }
        tx.commit().await?;
        Ok(true)
    }
}

/// Locks a deployment by id for the server's own work, its cluster first:
/// every path that changes a deployment locks the cluster and then the
/// deployment, so no two of them can wait on each other in a cycle. A
/// deployment never moves between clusters, so the unlocked read of its
/// cluster stays true.
async fn lock_with_cluster(conn: &mut PgConnection, deployment: Uuid) -> Result<Option<(ClusterRow, DeploymentRow)>> {
    let Some(cluster) = store::cluster_of(&mut *conn, deployment).await? else { return Ok(None) };
    let cluster_row = clusters::find_by_id(&mut *conn, cluster).await?;
    Ok(store::lock_by_id(conn, deployment).await?.map(|row| (cluster_row, row)))
}

/// The id of a project's deployment named by cluster, namespace and
/// deployment (ids or names).
pub(in crate::app) async fn find_in_project(
    conn: &mut PgConnection,
    project_id: Uuid,
    target: &HookTarget,
) -> Result<Uuid> {
    let cluster = ResourceRef::<ClusterKind>::parse(&target.cluster);
    let deployment = ResourceRef::<DeploymentKind>::parse(&target.deployment);
    let key = ProjectDeploymentKey {
        project: project_id,
        cluster_id: cluster.id(),
        cluster_name: cluster.name(),
        namespace: &target.namespace,
        deployment_id: deployment.id(),
        deployment_name: deployment.name(),
    };
    store::id_in_project(conn, key).await?.ok_or_else(|| {
        Error::not_found("deployment", format!("{}/{}/{}", target.cluster, target.namespace, target.deployment))
    })
}

impl App {
    /// The image a deployment runs now (for a delivery naming only a tag or digest).
    pub(in crate::app) async fn deployment_image(&self, deployment: Uuid) -> Result<String> {
        let spec = store::spec_of(&mut *self.db().acquire().await?, deployment)
            .await?
            .ok_or_else(|| Error::not_found("deployment", DeploymentId::from_uuid(deployment).to_string()))?;
        Ok(spec.image)
    }

    /// Rolls out `image` on a deployment in `tx`, as `ctx` (a webhook acts
    /// as the system on the organization's behalf); `cause` names the
    /// delivery in the revision.
    pub(in crate::app) async fn deploy_image(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        deployment: Uuid,
        image: &str,
        cause: &str,
    ) -> Result<OperationView> {
        let (cluster_row, row) = lock_with_cluster(&mut *tx, deployment)
            .await?
            .filter(|(_, row)| row.org_id == ctx.principal.org_id)
            .ok_or_else(|| Error::not_found("deployment", DeploymentId::from_uuid(deployment).to_string()))?;
        if row.deletion_requested_at.is_some() {
            return Err(Error::conflict("deleting", "the deployment is being deleted"));
        }
        let current = row.spec()?;
        let spec = DeploymentSpec { image: image.to_string(), ..current.clone() };
        let mut v = Validator::new();
        workload_spec::check(&mut v, "spec", &spec);
        v.finish()
            .map_err(|_| Error::invalid_field("image", "invalid", format!("{image:?} is not an image reference")))?;
        self.commit_change(tx, ctx, &cluster_row, &row, &current, spec, ChangeKind::DeploymentUpdate, cause, None).await
    }
}

/// Records a deployment's revision as made by `ctx` (`system` for the
/// server's own changes).
async fn insert_revision(
    tx: &mut PgConnection,
    deployment: Uuid,
    revision: i64,
    spec: &DeploymentSpec,
    cause: &str,
    ctx: &RequestContext,
) -> Result<()> {
    let created_by = crate::app::actor_ref(&ctx.principal);
    revisions::insert(tx, NewRevision { deployment, revision, spec, cause, created_by: &created_by }).await
}

/// The spec of a deployment's revision; one it never had is an invalid
/// `revision` field.
async fn revision_spec(tx: &mut PgConnection, deployment: Uuid, revision: i64) -> Result<DeploymentSpec> {
    revisions::find(tx, deployment, revision)
        .await?
        .ok_or_else(|| Error::invalid_field("revision", "not_found", format!("revision {revision} does not exist")))?
        .spec()
}

impl App {
    /// Takes a change made through the cluster's own API (kubectl) to a
    /// deployment that adopts them (`on_drift: adopt`) as a new revision,
    /// in a transaction of its own. Only an edit of the spec the region
    /// runs now (the report's generation) is taken, as the system on the
    /// organization's behalf, checked as any update is (spec rules, image
    /// policy, quotas, change limits). A refused edit is audited with its
    /// reason, once per edit, and changes nothing: the region puts the spec
    /// back when no new one comes.
    pub(in crate::app) async fn adopt_cluster_edit(
        &self,
        region: &str,
        deployment: Uuid,
        observed_generation: i64,
        edit: &pb::ClusterEdit,
    ) -> Result<()> {
        let Some(edited) = &edit.spec else { return Ok(()) };
        let mut tx = self.db().begin().await?;
        let Some((cluster_row, row)) = lock_with_cluster(&mut tx, deployment).await? else { return Ok(()) };
        let current = row.spec()?;
        let ours = cluster_row.spec()?.region == region;
        if !ours || row.generation != observed_generation || current.on_drift != "adopt" {
            return Ok(());
        }
        if row.deletion_requested_at.is_some() || cluster_row.deletion_requested_at.is_some() {
            return Ok(());
        }
        // The region's words are kept short and plain before they reach a revision or the audit log.
        let plain = |text: &str, most: usize| -> String {
            text.chars().filter(|c| c.is_ascii_graphic() || *c == ' ').take(most).collect()
        };
        let fields: Vec<String> = edit.fields.iter().take(11).map(|f| plain(f, 80)).collect();
        let by = plain(&edit.by, 128);
        let cause = format!("adopted from the cluster: {by} changed {}", fields.join(", "));
        let ctx = RequestContext::system(row.org_id);
        let outcome = match adopted_spec(&current, edited) {
            Err(refusal) => Err(refusal),
            Ok(mut spec) => {
                workload_spec::label_pods(&mut spec, &row.name);
                if spec == current {
                    return Ok(());
                }
                let mut v = Validator::new();
                workload_spec::check(&mut v, "spec", &spec);
                match v.finish() {
                    Err(refusal) => Err(refusal),
                    Ok(()) => {
                        let kind = ChangeKind::DeploymentUpdate;
                        self.commit_change(&mut tx, &ctx, &cluster_row, &row, &current, spec, kind, &cause, None).await
                    }
                }
            }
        };
        let refusal = match outcome {
            Ok(_) => return Ok(tx.commit().await?),
            // What a retry can mend is the ingest's to retry; the rest is the edit's refusal.
            Err(error @ (Error::Internal(_) | Error::Unavailable { .. } | Error::VaultUnavailable(_))) => {
                return Err(error);
            }
            Err(refusal) => refusal,
        };
        tx.rollback().await?;
        let reason = refusal_text(&refusal);
        // One audit event per edit: the digest of what was refused, kept on the deployment.
        let digest = edit_digest(observed_generation, edit);
        let mut tx = self.db().begin().await?;
        if !store::note_refused_edit(&mut tx, row.id, &digest).await? {
            return Ok(());
        }
        crate::app::kernel::audit::insert(
            &mut tx,
            &ctx,
            row.org_id,
            "failure",
            crate::app::kernel::audit::AuditRecord {
                action: "deployment.cluster_edit_refused",
                resource_type: "deployment",
                resource_id: Some(DeploymentId::from_uuid(row.id).to_string()),
                details: json!({ "by": by, "fields": fields, "edited_at": plain(&edit.at, 40), "reason": reason }),
            },
        )
        .await?;
        Ok(tx.commit().await?)
    }
}

/// A cluster edit's identity: the generation it was made on and all it says.
fn edit_digest(generation: i64, edit: &pb::ClusterEdit) -> String {
    use prost::Message as _;
    use sha2::Digest as _;
    let mut hasher = sha2::Sha256::new();
    hasher.update(generation.to_be_bytes());
    hasher.update(edit.encode_to_vec());
    hex::encode(hasher.finalize())
}

/// Moke's spec with what a cluster edit changed among the fields a
/// Deployment object holds of it. Rollout bounds become pod counts only
/// where the edit moved them off what the current ones resolve to.
fn adopted_spec(current: &DeploymentSpec, edited: &pb::WorkloadSpec) -> Result<DeploymentSpec> {
    if !(0..=workload_spec::MAX_REPLICAS).contains(&edited.replicas) {
        let message = format!("0 to {}", workload_spec::MAX_REPLICAS);
        return Err(Error::invalid_field("spec.replicas", "out_of_range", message));
    }
    let resolved = |bound: &str, round_up: bool| workload_spec::bound(bound, edited.replicas, round_up);
    let mut strategy = current.strategy.clone();
    if resolved(&strategy.max_surge, true) != Some(edited.max_surge) {
        strategy.max_surge = edited.max_surge.to_string();
    }
    if resolved(&strategy.max_unavailable, false) != Some(edited.max_unavailable) {
        strategy.max_unavailable = edited.max_unavailable.to_string();
    }
    Ok(DeploymentSpec {
        image: edited.image.clone(),
        replicas: edited.replicas,
        resources: ResourceRequests { cpu_millis: edited.cpu_millis, memory_mib: edited.memory_mib },
        env: edited.env.iter().map(|e| EnvVar { name: e.name.clone(), value: e.value.clone() }).collect(),
        ports: edited
            .ports
            .iter()
            .map(|p| ContainerPort {
                name: Some(p.name.clone()).filter(|n| !n.is_empty()),
                container_port: p.container_port,
                protocol: p.protocol.clone(),
            })
            .collect(),
        node_selector: edited.node_selector.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        tolerations: edited
            .tolerations
            .iter()
            .map(|t| Toleration {
                key: t.key.clone(),
                operator: if t.operator.is_empty() { "Equal".into() } else { t.operator.clone() },
                value: t.value.clone(),
                effect: t.effect.clone(),
            })
            .collect(),
        paused: edited.paused,
        strategy,
        ..current.clone()
    })
}

/// Why a change was refused, in one line of at most 1 KiB: the first bad
/// fields with their messages.
fn refusal_text(error: &Error) -> String {
    let text = match error {
        Error::Invalid(fields) => {
            fields.iter().take(10).map(|f| format!("{}: {}", f.field, f.message)).collect::<Vec<_>>().join("; ")
        }
        other => other.to_string(),
    };
    text.chars().take(1024).collect()
}
