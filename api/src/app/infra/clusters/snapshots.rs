//! etcd snapshots of a cluster's control plane: those its region keeps
//! (on the schedule of the cluster's `snapshot_policy`, or taken on
//! request) and restores from them. A restore follows seed 001's recovery
//! from quorum loss: the API servers stop, a single member is restored
//! from the snapshot, etcd is scaled back to three, the API servers start.

use moke_iam::Action;
use serde_json::json;
use sqlx::PgConnection;

use super::{CommandTarget, lookup};
use crate::app::authz::Lock;
use crate::app::infra::approvals::{Gated, HeldRequest, HeldTarget};
use crate::app::kernel::changes::RegionalChange;
use crate::app::kernel::jsonb;
use crate::app::region::command::{self, ChangeKind, CommandHeader};
use crate::app::region::observed::{ObservedStored, SnapshotObserved};
use crate::app::region::operations;
use crate::app::{App, Error, RequestContext, ResourceRef, Result, check_if_match, etag, validate};
use crate::ids::{ClusterId, ClusterKind, ProjectKind};
use crate::model::*;

use super::ClusterRow;

/// The snapshots the cluster's region last reported keeping, oldest first.
fn kept(row: &ClusterRow) -> Result<Vec<SnapshotObserved>> {
    let status: ObservedStored = jsonb::from_column("cluster status", &row.status)?;
    Ok(status.snapshots.unwrap_or_default())
}

fn view(snapshot: SnapshotObserved) -> EtcdSnapshotView {
    EtcdSnapshotView {
        name: snapshot.name,
        taken_at: snapshot.taken_at,
        size_bytes: snapshot.size_bytes,
        kubernetes_version: snapshot.kubernetes_version,
        trigger: if snapshot.on_demand { SnapshotTrigger::OnDemand } else { SnapshotTrigger::Scheduled },
    }
}

/// 409 `restore_in_progress` while etcd is being restored: its Operation
/// runs, or (after that failed at its deadline) the region still reports
/// the cluster `restoring`.
pub(in crate::app) async fn refuse_while_restoring(tx: &mut PgConnection, row: &ClusterRow) -> Result<()> {
    let status: ObservedStored = jsonb::from_column("cluster status", &row.status)?;
    if status.phase == "restoring"
        || operations::unfinished(&mut *tx, row.id, ChangeKind::ClusterRestore.operation_kind()).await?
    {
        return Err(Error::conflict(
            "restore_in_progress",
            "etcd is being restored from a snapshot; change the cluster once its Operation has finished",
        ));
    }
    Ok(())
}

/// A cluster whose etcd may be snapshotted or restored now, locked: it
/// runs, is not being deleted or restored, and (for a restore, which
/// needs the version a snapshot was taken on) is not being upgraded.
async fn etcd_target(
    tx: &mut PgConnection,
    ctx: &RequestContext,
    (project, cluster): (&ResourceRef<ProjectKind>, &ResourceRef<ClusterKind>),
    if_match: Option<&str>,
    action: Action,
) -> Result<ClusterRow> {
    let row = lookup(&mut *tx, ctx, project, cluster, action, Lock::ForUpdate).await?.into_inner();
    check_if_match(if_match, &etag(row.id, row.version))?;
    if row.deletion_requested_at.is_some() {
        return Err(Error::conflict("deleting", "the cluster is being deleted"));
    }
    let status: ObservedStored = jsonb::from_column("cluster status", &row.status)?;
    if status.phase == "pending" {
        return Err(Error::conflict("not_ready", "the cluster's control plane is not running yet"));
    }
    refuse_while_restoring(&mut *tx, &row).await?;
    if action == Action::AdministerClusters {
        if super::upgrades::upgrade_running(&mut *tx, row.id).await? {
            return Err(Error::conflict(
                "upgrade_in_progress",
                "an upgrade of this cluster is still running; wait for its Operation to finish",
            ));
        }
        // A change still on its way would reach a region mid-restore and be refused there.
        if row.observed_generation < row.generation {
            return Err(Error::conflict(
                "update_in_progress",
                "a change of this cluster has not reached its region yet; restore once it has",
            ));
        }
    }
    Ok(row)
}

impl App {
    /// `cluster_snapshot_list`: the etcd snapshots the region keeps of the
    /// cluster, newest first.
    pub async fn cluster_snapshot_list(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
    ) -> Result<EtcdSnapshots> {
        let mut conn = self.db().acquire().await?;
        let row = lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?.into_inner();
        Ok(EtcdSnapshots { items: kept(&row)?.into_iter().rev().map(view).collect() })
    }

    /// `cluster_snapshot_create`: an etcd snapshot taken now, kept with
    /// the scheduled ones under the cluster's retention.
    pub async fn cluster_snapshot_create(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        if_match: Option<&str>,
    ) -> Result<OperationView> {
        let request_key = (project.describe(), cluster.describe(), if_match);
        self.idempotent(ctx, "cluster_snapshot_create", &request_key, |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            let row = etcd_target(&mut tx, ctx, (project, cluster), if_match, Action::ManageResources).await?;
            // One at a time: on-demand snapshots never crowd out the scheduled ones faster than they finish.
            if operations::unfinished(&mut tx, row.id, ChangeKind::ClusterSnapshot.operation_kind()).await? {
                return Err(Error::conflict(
                    "snapshot_in_progress",
                    "a snapshot of this cluster is being taken; wait for its Operation to finish",
                ));
            }
            let change = EtcdChange {
                kind: ChangeKind::ClusterSnapshot,
                action: "cluster.snapshot_create",
                snapshot: "",
                details: json!({}),
            };
            let op = self.record_etcd_change(&mut tx, ctx, &row, change).await?;
            claim.complete(&mut tx, 202, &op).await?;
            self.commit(ctx, tx).await?;
            Ok(op)
        })
        .await
    }

    /// `cluster_snapshot_restore`: etcd restored from one of its snapshots
    /// (taken on the Kubernetes version the cluster runs). Everything the
    /// cluster's API held since is lost, so it takes cluster-admin rights.
    pub async fn cluster_snapshot_restore(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        snapshot: &str,
        if_match: Option<&str>,
    ) -> Result<OperationView> {
        if !validate::is_snapshot_name(snapshot) {
            return Err(Error::invalid_field("snapshot", "invalid_name", "not a snapshot name"));
        }
        self.unless_held(ctx, |ctx| {
            Box::pin(async move { self.restore_snapshot(&ctx, project, cluster, snapshot, if_match).await })
        })
        .await
    }

    /// [`App::cluster_snapshot_restore`], unless the approval policy holds it.
    async fn restore_snapshot(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        snapshot: &str,
        if_match: Option<&str>,
    ) -> Result<OperationView> {
        let request_key = (project.describe(), cluster.describe(), snapshot, if_match);
        self.idempotent(ctx, "cluster_snapshot_restore", &request_key, |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            let row = etcd_target(&mut tx, ctx, (project, cluster), if_match, Action::AdministerClusters).await?;
            let found = kept(&row)?
                .into_iter()
                .find(|s| s.name == snapshot)
                .ok_or_else(|| Error::not_found("snapshot", snapshot))?;
            let running = row.spec()?.kubernetes_version;
            if found.kubernetes_version != running {
                return Err(Error::conflict(
                    "version_mismatch",
                    format!(
                        "{snapshot} was taken on Kubernetes {}; the cluster runs {running}, and etcd restores only \
                         onto the version it was taken on",
                        found.kubernetes_version
                    ),
                ));
            }
            let held = HeldTarget {
                kind: ChangeKind::ClusterRestore,
                id: row.id,
                name: &row.name,
                generation: row.generation,
            };
            self.approval_gate(&mut tx, ctx, Gated::SnapshotRestore, held, || HeldRequest::SnapshotRestore {
                project: row.project_id,
                cluster: row.id,
                snapshot: snapshot.to_string(),
            })
            .await?;
            let change = EtcdChange {
                kind: ChangeKind::ClusterRestore,
                action: "cluster.snapshot_restore",
                snapshot,
                details: json!({ "snapshot": snapshot, "taken_at": found.taken_at }),
            };
            let op = self.record_etcd_change(&mut tx, ctx, &row, change).await?;
            claim.complete(&mut tx, 202, &op).await?;
            self.commit(ctx, tx).await?;
            Ok(op)
        })
        .await
    }

    /// Records a snapshot or restore of the cluster's etcd: its Operation,
    /// audit event and region command. The cluster's spec and generation
    /// stay: the region acts once per Operation instead.
    async fn record_etcd_change(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        row: &ClusterRow,
        change: EtcdChange<'_>,
    ) -> Result<OperationView> {
        let region = row.spec()?.region;
        let target = CommandTarget { id: row.id, org_id: row.org_id, name: &row.name };
        self.record_change(
            tx,
            ctx,
            RegionalChange {
                kind: change.kind,
                action: change.action,
                target_id: row.id,
                target_ref: ClusterId::from_uuid(row.id).to_string(),
                target_name: &row.name,
                generation: row.generation,
                region: &region,
                needs_region: true,
                details: change.details,
            },
            |op| {
                let header = CommandHeader {
                    kind: change.kind,
                    operation: op.id,
                    org_id: target.org_id,
                    cluster_id: target.id,
                    name: target.name,
                    generation: row.generation,
                };
                command::etcd(header, change.snapshot)
            },
        )
        .await
    }
}

/// How long a snapshot may take before its Operation fails (it holds up
/// the next one).
pub const SNAPSHOT_DEADLINE_SECONDS: i64 = 10 * 60;
/// How long a restore may take before its Operation fails (it holds up
/// every change of the cluster).
pub const RESTORE_DEADLINE_SECONDS: i64 = 60 * 60;

impl App {
    /// Fails snapshot and restore Operations past their deadline (a lost
    /// command would otherwise hold the cluster up for good), with
    /// `deadline_exceeded` and an audit event. Those of a silent region are
    /// left alone: nothing can be known of them. Returns how many failed.
    pub async fn enforce_etcd_deadlines_once(&self) -> Result<usize> {
        // Only regions that sent a heartbeat lately: a silent one's stuck work never crowds out the rest.
        let overdue: Vec<(uuid::Uuid, uuid::Uuid, String, String)> = sqlx::query_as(
            "SELECT o.id, o.org_id, o.kind, o.target_id::text
             FROM operations o JOIN clusters c ON c.id = o.target_id
             WHERE o.status IN ('pending', 'running')
               AND ((o.kind = 'cluster_snapshot' AND o.created_at < now() - make_interval(secs => $1))
                 OR (o.kind = 'cluster_restore' AND o.created_at < now() - make_interval(secs => $2)))
               AND EXISTS (SELECT 1 FROM region_health h WHERE h.region = c.spec->>'region'
                             AND h.last_heartbeat_at > now() - make_interval(secs => $3))
             ORDER BY o.created_at LIMIT 100",
        )
        .bind(SNAPSHOT_DEADLINE_SECONDS as f64)
        .bind(RESTORE_DEADLINE_SECONDS as f64)
        .bind(self.config().outbox.region_stale_after_seconds.max(1) as f64)
        .fetch_all(self.db())
        .await?;
        let mut failed = 0;
        for (operation, org, kind, cluster) in overdue {
            let what = if kind == "cluster_snapshot" { "snapshot" } else { "restore" };
            let minutes =
                if kind == "cluster_snapshot" { SNAPSHOT_DEADLINE_SECONDS } else { RESTORE_DEADLINE_SECONDS } / 60;
            let error = crate::model::OperationError {
                code: "deadline_exceeded".into(),
                message: format!("the region did not finish the {what} within {minutes} minutes"),
            };
            let mut tx = self.db().begin().await?;
            let report = crate::app::region::observations::OperationProgress {
                region: None,
                operation_id: operation,
                status: OperationStatus::Failed,
                step: "deadline_exceeded".into(),
                progress: 100,
                error: Some(error.clone()),
                earlier: Vec::new(),
            };
            if !crate::app::region::observations::record_progress(&mut tx, report).await? {
                continue; // finished meanwhile (or by another replica): nothing to record
            }
            crate::app::kernel::audit::record(
                &mut tx,
                &RequestContext::system(org),
                crate::app::kernel::audit::AuditRecord {
                    action: if what == "snapshot" { "cluster.snapshot_failed" } else { "cluster.restore_failed" },
                    resource_type: "cluster",
                    resource_id: uuid::Uuid::parse_str(&cluster).ok().map(|id| ClusterId::from_uuid(id).to_string()),
                    details: json!({ "operation_id": crate::ids::OperationId::from_uuid(operation), "error": error }),
                },
            )
            .await?;
            tx.commit().await?;
            failed += 1;
        }
        Ok(failed)
    }
}

/// A snapshot (`snapshot` empty) or a restore from `snapshot`.
struct EtcdChange<'a> {
    kind: ChangeKind,
    action: &'static str,
    snapshot: &'a str,
    details: serde_json::Value,
}
