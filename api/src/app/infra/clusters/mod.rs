//! Hosted Kubernetes clusters: desired spec in Postgres, built by a region.
//! Every change answers with an Operation and leaves an outbox command.

pub mod auto_upgrades;
pub mod events;
pub mod pki;
pub mod snapshots;
pub mod status;
pub mod upgrades;

use chrono::{DateTime, Utc};
use moke_iam::{Action, Target};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::authz::{Authorized, Lock};
use crate::app::infra::approvals::{Gated, HeldRequest, HeldTarget};
pub(in crate::app) use crate::app::infra::store::clusters::ClusterRow;
use crate::app::infra::store::clusters::{self as store, ClusterKey, NewCluster};
use crate::app::kernel::changes::RegionalChange;
use crate::app::kernel::jsonb;
use crate::app::kernel::quotas::{self, Demand};
use crate::app::region::command::{self, ChangeKind, CommandHeader};
use crate::app::region::observed::ObservedStored;
use crate::app::region::operations;
use crate::app::{
    App, Error, FaultPoint, PageRequest, RequestContext, ResourceRef, Result, check_if_match, etag, validate,
};
use crate::ids::{ClusterId, ClusterKind, ProjectId, ProjectKind};
use crate::model::*;
use moke_proto::region as pb;

/// Builds the observed half of a view from the stored columns; `stale`
/// when the region has fallen silent since.
pub(in crate::app) fn observed(
    status: &serde_json::Value,
    observed_generation: i64,
    observed_at: Option<DateTime<Utc>>,
    region_silent: bool,
) -> Result<ObservedStatus> {
    let status: ObservedStored = jsonb::from_column("status", status)?;
    Ok(ObservedStatus {
        conditions: status.conditions(),
        phase: status.phase,
        observed_generation,
        observed_at,
        stale: region_silent && observed_at.is_some(),
        endpoint: status.endpoint.filter(|e| !e.is_empty()),
    })
}

impl ClusterRow {
    /// The view, with what `catalog` offers it to upgrade to today.
    fn into_view(self, region_silent: bool, catalog: &crate::config::Catalog) -> Result<ClusterView> {
        let spec = self.spec()?;
        let offered = upgrades::upgrades(catalog, &spec.kubernetes_version, Utc::now().date_naive());
        Ok(ClusterView {
            id: ClusterId::from_uuid(self.id),
            project_id: ProjectId::from_uuid(self.project_id),
            upgrade_available: offered.available.last().map(|v| v.version.clone()),
            spec,
            status: observed(&self.status, self.observed_generation, self.observed_at, region_silent)?,
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

/// Locks a cluster by id, for work the server does on its own (no caller to scope by).
pub(in crate::app) async fn find_by_id(conn: &mut PgConnection, id: Uuid) -> Result<ClusterRow> {
    store::find_by_id(conn, id).await?.ok_or_else(|| Error::not_found("cluster", ClusterId::from_uuid(id).to_string()))
}

/// A cluster of the caller's organization inside a project, if the caller
/// may do `action` in that project.
pub(in crate::app) async fn lookup(
    conn: &mut PgConnection,
    ctx: &RequestContext,
    project: &ResourceRef<ProjectKind>,
    cluster: &ResourceRef<ClusterKind>,
    action: Action,
    lock: Lock,
) -> Result<Authorized<ClusterRow>> {
    let row = find(&mut *conn, ctx, project, cluster, lock).await?;
    let target = Target::project(row.org_id, row.project_id);
    Authorized::check(ctx, action, target, row)
}

/// Finds a cluster of the caller's organization inside a project
/// (unchecked: only [`lookup`] hands it out).
async fn find(
    conn: &mut PgConnection,
    ctx: &RequestContext,
    project: &ResourceRef<ProjectKind>,
    cluster: &ResourceRef<ClusterKind>,
    lock: Lock,
) -> Result<ClusterRow> {
    let key = ClusterKey {
        org: ctx.principal.org_id,
        project_id: project.id(),
        project_name: project.name(),
        cluster_id: cluster.id(),
        cluster_name: cluster.name(),
        only_project: ctx.principal.scope.project,
    };
    let row = store::find(&mut *conn, key, lock).await?;
    match row {
        Some(row) => Ok(row),
        None => {
            // Say which of the two is missing.
            crate::app::infra::projects::lookup(conn, ctx, project, Action::Read, Lock::None).await?;
            Err(Error::not_found("cluster", cluster.describe()))
        }
    }
}

/// Refuses putting a cluster on a release channel (`spec`, over `current`
/// when it exists) with a credential that expires: the upgrades the channel
/// brings go on long after it, as deploy hooks do.
fn check_release_channel(
    ctx: &RequestContext,
    target: Target,
    current: Option<&ClusterSpec>,
    spec: &ClusterSpec,
) -> Result<()> {
    let joins = spec.release_channel != ReleaseChannel::None
        && current.is_none_or(|current| current.release_channel != spec.release_channel);
    if joins { crate::app::check_lasting(ctx, target, &[Action::ManageResources]) } else { Ok(()) }
}

/// A checked new spec of a cluster or node pool and how to record it.
pub(in crate::app) struct SpecWrite<'a, S> {
    pub current: &'a S,
    pub spec: S,
    /// New labels, if they change too.
    pub labels: Option<&'a Labels>,
    pub kind: ChangeKind,
    /// Audit action, e.g. `cluster.update`.
    pub action: &'a str,
    /// What the audit event records (the generation is added).
    pub details: serde_json::Value,
}

/// Which cluster a region command is about.
struct CommandTarget<'a> {
    id: Uuid,
    org_id: Uuid,
    name: &'a str,
}

/// The command a region receives for a cluster change.
fn command(
    kind: ChangeKind,
    op: &OperationView,
    target: CommandTarget<'_>,
    generation: i64,
    spec: &ClusterSpec,
    ca_pem: &str,
) -> pb::Command {
    let header = CommandHeader {
        kind,
        operation: op.id,
        org_id: target.org_id,
        cluster_id: target.id,
        name: target.name,
        generation,
    };
    command::cluster(header, spec, ca_pem)
}

impl App {
    /// `cluster_create`: records the desired cluster and queues its creation.
    pub async fn cluster_create(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        input: ClusterCreate,
    ) -> Result<OperationView> {
        let spec = validate::cluster_create(&self.config().catalog, &input)?;
        let input = &input;
        let spec = &spec;
        let project_key = project.describe();
        self.idempotent(ctx, "cluster_create", &(project_key, input), |claim| async move {
            // Authorize before Vault is asked for anything.
            let mut conn = self.db().acquire().await?;
            let found =
                crate::app::infra::projects::lookup(&mut conn, ctx, project, Action::ManageResources, Lock::None)
                    .await?;

            check_release_channel(ctx, Target::project(found.org_id, found.id), None, spec)?;
            // A quota already used up fails before Vault works; the locked check below decides.
            quotas::check(&mut conn, self.config(), found.org_id, Demand { clusters: 1, ..Demand::default() }).await?;
            drop(conn);
            let id = ClusterId::generate();
            if ctx.is_dry_run() {
                // A dry run asks Vault for nothing: a CA that is never used.
                let ca = crate::vault::ClusterCa {
                    mount: "dry-run".into(),
                    issuer_id: "dry-run".into(),
                    key_id: "dry-run".into(),
                    certificate_pem: String::new(),
                };
                return self.insert_cluster(ctx, project, input, spec, id, &ca, claim).await;
            }
            // The cluster's certificate authority; without Vault no cluster is made (503).
            let ca = {
                let _permit = self.ca_permits().acquire().await.map_err(|e| Error::Internal(e.into()))?;
                self.vault().create_cluster_ca(&id.to_string()).await?
            };
            let created = self.insert_cluster(ctx, project, input, spec, id, &ca, claim).await;
            if created.is_err() {
                // Nothing refers to the new CA: destroy it now rather than leave it to the sweep.
                let _ = self.vault().delete_cluster_ca(&ca.mount, &ca.issuer_id, &ca.key_id).await;
            }
            created
        })
        .await
    }

    /// The transaction of `cluster_create`, once the CA exists.
    #[allow(clippy::too_many_arguments)]
    async fn insert_cluster(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        input: &ClusterCreate,
        spec: &ClusterSpec,
        id: ClusterId,
        ca: &crate::vault::ClusterCa,
        claim: crate::app::kernel::idempotency::Claim,
    ) -> Result<OperationView> {
        {
            let mut tx = claim.begin(self.db()).await?;
            let project_row =
                crate::app::infra::projects::lookup(&mut tx, ctx, project, Action::ManageResources, Lock::None).await?;
            quotas::lock_org(&mut tx, project_row.org_id).await?;
            quotas::check(&mut tx, self.config(), project_row.org_id, Demand { clusters: 1, ..Demand::default() })
                .await?;
            let new = NewCluster {
                id: id.uuid(),
                org: project_row.org_id,
                project: project_row.id,
                name: &input.name,
                labels: &input.labels,
                spec,
            };
            store::insert(&mut tx, new).await?;
            self.fault(FaultPoint::AfterSpecInsert)?;
            crate::app::infra::clusters::pki::store_ca(&mut tx, id.uuid(), project_row.org_id, ca).await?;
            let op = self
                .record_change(
                    &mut tx,
                    ctx,
                    RegionalChange {
                        kind: ChangeKind::ClusterCreate,
                        action: "cluster.create",
                        target_id: id.uuid(),
                        target_ref: id.to_string(),
                        target_name: &input.name,
                        generation: 1,
                        region: &spec.region,
                        needs_region: true,
                        details: json!({ "name": input.name, "spec": spec }),
                    },
                    |op| {
                        let target = CommandTarget { id: id.uuid(), org_id: project_row.org_id, name: &input.name };
                        command(ChangeKind::ClusterCreate, op, target, 1, spec, &ca.certificate_pem)
                    },
                )
                .await?;
            claim.complete(&mut tx, 202, &op).await?;
            self.commit(ctx, tx).await?;
            Ok(op)
        }
    }

    /// `cluster_list`: a project's clusters, oldest first.
    pub async fn cluster_list(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        page: PageRequest,
    ) -> Result<Page<ClusterView>> {
        let mut conn = self.db().acquire().await?;
        let project_row =
            crate::app::infra::projects::lookup(&mut conn, ctx, project, Action::Read, Lock::None).await?;

        let rows = store::list(&mut conn, project_row.id, &page).await?;
        let views = rows
            .into_iter()
            .map(|row| {
                let silent = self.region_silent(&row.region()?);
                row.into_view(silent, &self.config().catalog)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(page.page(views, |c| c.id.uuid()))
    }

    /// `cluster_view`: desired spec and last observed status.
    pub async fn cluster_view(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
    ) -> Result<ClusterView> {
        let mut conn = self.db().acquire().await?;
        let row = lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?.into_inner();
        let silent = self.region_silent(&row.region()?);
        row.into_view(silent, &self.config().catalog)
    }

    /// The first `per_project` clusters of each of several projects (for the
    /// GraphQL loader of `Project.clusters`, whose keys are projects the
    /// caller has already read); limited to the caller's organization and,
    /// for a scoped credential, its project.
    pub(crate) async fn clusters_by_project(
        &self,
        ctx: &RequestContext,
        projects: &[Uuid],
        per_project: i64,
    ) -> Result<std::collections::HashMap<Uuid, Vec<ClusterView>>> {
        moke_iam::authorize(&ctx.principal, Action::Read, Target::org(ctx.principal.org_id))?;
        let projects: Vec<Uuid> = match ctx.principal.scope.project {
            Some(only) => projects.iter().copied().filter(|p| *p == only).collect(),
            None => projects.to_vec(),
        };
        let mut conn = self.db().acquire().await?;
        let rows = store::first_of_projects(&mut conn, ctx.principal.org_id, &projects, per_project).await?;
        let mut by_project = std::collections::HashMap::<Uuid, Vec<ClusterView>>::new();
        for row in rows {
            let project = row.project_id;
            let silent = self.region_silent(&row.region()?);
            by_project.entry(project).or_default().push(row.into_view(silent, &self.config().catalog)?);
        }
        Ok(by_project)
    }

    /// `cluster_operation_list`: the work on the cluster, its node pools and
    /// its deployments (those since deleted too), newest first.
    pub async fn cluster_operation_list(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        page: PageRequest,
    ) -> Result<Page<OperationView>> {
        let mut conn = self.db().acquire().await?;
        let row = lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?.into_inner();
        let (scope, after, limit) = (ctx.principal.scope.project, page.after, page.fetch_limit());
        let rows = operations::of_clusters(&mut conn, row.org_id, scope, &[row.id], after, limit).await?;
        let operations = rows.into_iter().map(|row| row.into_view()).collect::<Result<Vec<_>>>()?;
        Ok(page.page(operations, |o| o.id.uuid()))
    }

    /// `cluster_update`: labels change at once; a spec change bumps the
    /// generation and is queued for the region (a new Kubernetes version is
    /// an upgrade, as `cluster_upgrade` makes it).
    pub async fn cluster_update(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        if_match: Option<&str>,
        update: ClusterUpdate,
    ) -> Result<OperationView> {
        self.unless_held(ctx, |ctx| {
            let update = update.clone();
            Box::pin(async move {
                self.change_cluster(&ctx, project, cluster, if_match, update, "cluster_update", |_| Ok(())).await
            })
        })
        .await
    }

    /// A change of the cluster's labels or spec, answered (and replayed
    /// for its Idempotency-Key) as `request`, after `check` of the current
    /// spec. One that changes the Kubernetes version is an upgrade: a
    /// `cluster_upgrade` Operation, refused while another runs.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::app) async fn change_cluster(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        if_match: Option<&str>,
        update: ClusterUpdate,
        request: &'static str,
        check: impl FnOnce(&ClusterSpec) -> Result<()>,
    ) -> Result<OperationView> {
        let update = &update;
        let request_key = (project.describe(), cluster.describe(), if_match, update);
        self.idempotent(ctx, request, &request_key, |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            let row =
                lookup(&mut tx, ctx, project, cluster, Action::ManageResources, Lock::ForUpdate).await?.into_inner();
            check_if_match(if_match, &etag(row.id, row.version))?;
            if row.deletion_requested_at.is_some() {
                return Err(Error::conflict("deleting", "the cluster is being deleted"));
            }
            let current = row.spec()?;
            check(&current)?;
            let spec = validate::cluster_update(&self.config().catalog, &current, update)?;
            let (kind, action) = if spec.kubernetes_version != current.kubernetes_version {
                if upgrades::upgrade_running(&mut tx, row.id).await? {
                    return Err(Error::conflict(
                        "upgrade_in_progress",
                        "an upgrade of this cluster is still running; wait for its Operation to finish",
                    ));
                }
                (ChangeKind::ClusterUpgrade, "cluster.upgrade")
            } else {
                (ChangeKind::ClusterUpdate, "cluster.update")
            };
            let gated = Gated::ClusterChange {
                replicas: (current.control_plane.replicas, spec.control_plane.replicas),
                upgrade_outside_window: kind == ChangeKind::ClusterUpgrade
                    && auto_upgrades::outside_window(&current, Utc::now()),
                window_changed: spec.maintenance_window != current.maintenance_window
                    || spec.maintenance_exclusions != current.maintenance_exclusions,
            };
            let held = HeldTarget { kind, id: row.id, name: &row.name, generation: row.generation };
            self.approval_gate(&mut tx, ctx, gated, held, || {
                let (project, cluster) = (row.project_id, row.id);
                match (request, &update.spec) {
                    ("cluster_upgrade", Some(ClusterSpecPatch { kubernetes_version: Some(version), .. })) => {
                        let upgrade = ClusterUpgradeRequest { kubernetes_version: version.clone() };
                        HeldRequest::ClusterUpgrade { project, cluster, upgrade }
                    }
                    _ => HeldRequest::ClusterUpdate { project, cluster, update: update.clone() },
                }
            })
            .await?;
            let details = json!({ "labels": update.labels, "spec": update.spec });
            let change = SpecWrite { current: &current, spec, labels: update.labels.as_ref(), kind, action, details };
            let op = self.write_cluster_spec(&mut tx, ctx, &row, change).await?;
            claim.complete(&mut tx, 202, &op).await?;
            self.commit(ctx, tx).await?;
            Ok(op)
        })
        .await
    }

    /// Writes a checked new spec over the cluster's `current` one as its
    /// next generation (the same one for labels alone) and records the
    /// change. A firewall change takes cluster-admin rights; a spec change
    /// waits for a restore.
    pub(in crate::app) async fn write_cluster_spec(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        row: &ClusterRow,
        change: SpecWrite<'_, ClusterSpec>,
    ) -> Result<OperationView> {
        let SpecWrite { current, spec, labels, kind, action, mut details } = change;
        if spec.control_plane_firewall != current.control_plane_firewall {
            // Who may reach the API endpoint is a cluster admin's call, as its credentials are.
            let on = Target::project(row.org_id, row.project_id);
            moke_iam::authorize(&ctx.principal, Action::AdministerClusters, on)?;
        }
        check_release_channel(ctx, Target::project(row.org_id, row.project_id), Some(current), &spec)?;
        let spec_changed = spec != *current;
        if spec_changed {
            snapshots::refuse_while_restoring(&mut *tx, row).await?;
        }
        let generation = row.generation + i64::from(spec_changed);
        store::update_spec(&mut *tx, row.id, labels, &spec, generation).await?;
        if let Some(details) = details.as_object_mut() {
            details.insert("generation".into(), json!(generation));
        }
        let target = CommandTarget { id: row.id, org_id: row.org_id, name: &row.name };
        self.record_change(
            tx,
            ctx,
            RegionalChange {
                kind,
                action,
                target_id: row.id,
                target_ref: ClusterId::from_uuid(row.id).to_string(),
                target_name: &row.name,
                generation,
                region: &spec.region,
                // Label-only changes need no region: done at once.
                needs_region: spec_changed,
                details,
            },
            |op| command(kind, op, target, generation, &spec, ""),
        )
        .await
    }

    /// `cluster_delete`: refused while deletion protection is on; the cluster
    /// and its node pools disappear once the region confirms.
    pub async fn cluster_delete(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        if_match: Option<&str>,
    ) -> Result<OperationView> {
        self.unless_held(ctx, |ctx| {
            Box::pin(async move { self.delete_cluster(&ctx, project, cluster, if_match).await })
        })
        .await
    }

    /// [`App::cluster_delete`], unless the approval policy holds it.
    async fn delete_cluster(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        if_match: Option<&str>,
    ) -> Result<OperationView> {
        let mut tx = self.db().begin().await?;
        let row = lookup(&mut tx, ctx, project, cluster, Action::ManageResources, Lock::ForUpdate).await?.into_inner();
        check_if_match(if_match, &etag(row.id, row.version))?;
        let spec = row.spec()?;
        if spec.deletion_protection {
            return Err(Error::conflict(
                "deletion_protected",
                "deletion protection is on; turn spec.deletion_protection off first",
            ));
        }
        if row.deletion_requested_at.is_some() {
            // Already being deleted: answer with the pending delete operation.
            let existing =
                crate::app::region::operations::latest_of_kind(&mut tx, row.id, ChangeKind::ClusterDelete).await?;
            if let Some(op_id) = existing {
                self.commit(ctx, tx).await?;
                return self.operation_view(ctx, crate::ids::OperationId::from_uuid(op_id), None).await;
            }
        }
        let held =
            HeldTarget { kind: ChangeKind::ClusterDelete, id: row.id, name: &row.name, generation: row.generation };
        self.approval_gate(&mut tx, ctx, Gated::ClusterDelete, held, || HeldRequest::ClusterDelete {
            project: row.project_id,
            cluster: row.id,
        })
        .await?;
        let generation = row.generation + 1;
        store::request_deletion(&mut tx, row.id, generation).await?;
        let target = CommandTarget { id: row.id, org_id: row.org_id, name: &row.name };
        let op = self
            .record_change(
                &mut tx,
                ctx,
                RegionalChange {
                    kind: ChangeKind::ClusterDelete,
                    action: "cluster.delete",
                    target_id: row.id,
                    target_ref: ClusterId::from_uuid(row.id).to_string(),
                    target_name: &row.name,
                    generation,
                    region: &spec.region,
                    needs_region: true,
                    details: json!({ "name": row.name }),
                },
                |op| command(ChangeKind::ClusterDelete, op, target, generation, &spec, ""),
            )
            .await?;
        self.commit(ctx, tx).await?;
        Ok(op)
    }
}
