//! `operation_cancel`: stopping a spec change that is no longer wanted.
//!
//! A change is cancelled by writing back the spec it replaced, as the
//! resource's next generation (an Operation of its own that the region
//! carries out like any change): a region that had not started acts on
//! nothing it would have to undo, and one part-way through stops between
//! steps and converges back, undoing what it did (a node already moved to a
//! new machine type is replaced again). The cancelled Operation fails with
//! `cancelled`. Commands the gateway has not delivered are taken back, so the
//! region never sees the change at all.
//!
//! An Operation awaiting approval is withdrawn: nothing changed, and its
//! request never acts (`infra::approvals`).
//!
//! Cancellable: `cluster_update`, `node_pool_update`, and, while its command
//! has not left the gateway, `cluster_upgrade` (a control plane cannot be
//! downgraded once the region has it), `node_pool_recycle` (a node once
//! cordoned is not taken back), `cluster_snapshot` and `cluster_restore`
//! (etcd restored half-way would be on neither state). Only the latest
//! change of its target: a later one supersedes it.

use moke_iam::Action;
use serde_json::json;
use sqlx::PgConnection;

use crate::app::authz::Lock;
use crate::app::infra::clusters::{self, SpecWrite};
use crate::app::infra::node_pools::NodeChange;
use crate::app::infra::store::node_pools as pool_store;
use crate::app::infra::store::spec_revisions::{self, SpecRevisionRow};
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::kernel::idempotency::Claim;
use crate::app::region::command::ChangeKind;
use crate::app::region::observations::{self, OperationProgress};
use crate::app::region::operations::{self, OperationRow};
use crate::app::region::outbox;
use crate::app::{App, Error, RequestContext, ResourceRef, Result};
use crate::ids::{ClusterId, OperationId, ProjectId};
use crate::model::*;

/// The error code of a cancelled Operation.
pub const CANCELLED: &str = "cancelled";

/// Why an Operation of `kind` (none: the gateway's own work) cannot be
/// cancelled, if it cannot.
fn not_cancellable(kind: Option<ChangeKind>) -> Option<&'static str> {
    use ChangeKind::*;
    let Some(kind) = kind else { return Some("the gateway carries this work out alone") };
    Some(match kind {
        ClusterUpdate | ClusterUpgrade | NodePoolUpdate => return None,
        // Only before the region has them (see `operation_cancel`).
        NodePoolRecycle | ClusterSnapshot | ClusterRestore => return None,
        ClusterCreate => "a cluster being created is stopped by deleting it",
        NodePoolCreate => "a node pool being created is stopped by deleting it",
        ClusterDelete | NodePoolDelete => "a deletion cannot be called back; deletion protection guards against one",
        ClusterCertificate => "the gateway sends certificates on its own",
        NamespaceCreate | NamespaceDelete => "delete the namespace, or make it again, instead",
        ServiceCreate | ServiceUpdate | ServiceDelete => "change the service again, or delete it, instead",
        NodeDelete => "a node's removal changes the pool's count; add the node back by raising the count",
        DeploymentCreate | DeploymentUpdate | DeploymentScale | DeploymentPause | DeploymentResume
        | DeploymentRestart | DeploymentRollback | DeploymentDelete => "roll a deployment back to a revision instead",
    })
}

/// An Operation that has ended: one cancelled is answered again (and the
/// answer stored for the request's Idempotency-Key), any other refused.
async fn answer_finished(
    mut tx: sqlx::Transaction<'static, sqlx::Postgres>,
    claim: &Claim,
    op: OperationRow,
) -> Result<OperationView> {
    if op.error_code() != Some(CANCELLED) {
        return Err(Error::conflict("operation_finished", "the operation has finished; there is nothing to cancel"));
    }
    let view = op.into_view()?;
    claim.complete(&mut tx, 200, &view).await?;
    tx.commit().await?;
    Ok(view)
}

impl App {
    /// `operation_cancel`: cancels a spec change before or while the region
    /// carries it out (see the module). Cancelling one already cancelled
    /// answers it again.
    pub async fn operation_cancel(&self, ctx: &RequestContext, id: OperationId) -> Result<OperationView> {
        self.idempotent(ctx, "operation_cancel", &id.to_string(), |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            let op = operations::lookup(&mut tx, ctx, id, Action::ManageResources, Lock::None).await?.into_inner();
            if op.status()?.is_terminal() {
                return answer_finished(tx, &claim, op).await;
            }
            if op.status()? == OperationStatus::AwaitingApproval {
                // Nothing has changed yet: the request is withdrawn.
                self.withdraw_held(&mut tx, ctx, id).await?;
                let view = operations::lookup(&mut tx, ctx, id, Action::Read, Lock::None).await?.into_inner().into_view()?;
                claim.complete(&mut tx, 200, &view).await?;
                self.commit(ctx, tx).await?;
                return Ok(view);
            }
            let kind = ChangeKind::of_operation_kind(&op.kind);
            if let Some(reason) = not_cancellable(kind) {
                return Err(Error::conflict("not_cancellable", format!("{} cannot be cancelled: {reason}", op.kind)));
            }
            // Stopping work takes the rights starting it takes.
            let rights = match kind {
                Some(ChangeKind::ClusterRestore) => Action::AdministerClusters,
                _ => Action::ManageResources,
            };
            let (Some(project), Some(cluster)) = (op.project_id, op.cluster_id) else {
                return Err(Error::conflict("not_cancellable", "the operation names no cluster"));
            };
            // The target first, then the Operation, as every change takes them.
            let (project, cluster) =
                (ResourceRef::Id(ProjectId::from_uuid(project)), ResourceRef::Id(ClusterId::from_uuid(cluster)));
            let cluster_row = clusters::lookup(&mut tx, ctx, &project, &cluster, rights, Lock::ForUpdate).await?;
            let pool = match kind {
                Some(ChangeKind::NodePoolUpdate | ChangeKind::NodePoolRecycle) => Some(
                    pool_store::find(&mut tx, cluster_row.id, Some(op.target_id), None, Lock::ForUpdate)
                        .await?
                        .ok_or_else(|| Error::conflict("operation_finished", "the node pool is gone"))?,
                ),
                _ => None,
            };
            let op = operations::lookup(&mut tx, ctx, id, rights, Lock::ForUpdate).await?.into_inner();
            if op.status()?.is_terminal() {
                return answer_finished(tx, &claim, op).await;
            }
            if cluster_row.deletion_requested_at.is_some() {
                return Err(Error::conflict("deleting", "the cluster is being deleted"));
            }
            // Before the region sees it, if it has not yet.
            let withdrawn = if ctx.is_dry_run() {
                outbox::withdrawable(&mut tx, id.uuid()).await?
            } else {
                outbox::withdraw(&mut tx, id.uuid()).await?
            };
            if let Some(reason) = kind.and_then(only_before_the_region).filter(|_| !withdrawn) {
                return Err(Error::conflict("operation_started", format!("the region has started it: {reason}")));
            }
            let revert = if matches!(kind, Some(ChangeKind::ClusterSnapshot | ChangeKind::ClusterRestore)) {
                // Nothing of the cluster's spec moved: the region never hears of it.
                fail_cancelled(&mut tx, ctx, id, withdrawn).await?;
                None
            } else if let (Some(row), Some(ChangeKind::NodePoolRecycle)) = (&pool, kind) {
                if row.deletion_requested_at.is_some() {
                    return Err(Error::conflict("deleting", "the node pool is being deleted"));
                }
                previous_spec(&mut tx, &op, row.generation).await?;
                fail_cancelled(&mut tx, ctx, id, withdrawn).await?;
                // The pool at its next generation as it was, no node named:
                // the region, which never had the recycle, replaces nothing.
                let change = NodeChange {
                    kind: ChangeKind::NodePoolUpdate,
                    action: "node_pool.update",
                    spec: row.spec()?,
                    replace: Vec::new(),
                    removing: row.still_removing()?,
                    details: json!({ "reverts": id }),
                };
                Some(self.change_nodes(&mut tx, ctx, &cluster_row, row, change).await?)
            } else if let Some(row) = pool {
                if row.deletion_requested_at.is_some() {
                    return Err(Error::conflict("deleting", "the node pool is being deleted"));
                }
                let spec = previous_spec(&mut tx, &op, row.generation).await?.node_pool_spec()?;
                if self.config().catalog.machine_type(&spec.machine_type).is_none() {
                    let detail = format!(
                        "the pool's machine type before this change, {}, is no longer offered",
                        spec.machine_type
                    );
                    return Err(Error::conflict("not_cancellable", detail));
                }
                fail_cancelled(&mut tx, ctx, id, withdrawn).await?;
                let current = row.spec()?;
                let change = revert_write(&current, spec, ChangeKind::NodePoolUpdate, "node_pool.update", id);
                Some(self.write_pool_spec(&mut tx, ctx, &cluster_row, &row, change).await?)
            } else {
                let upgrade = kind == Some(ChangeKind::ClusterUpgrade);
                let spec = previous_spec(&mut tx, &op, cluster_row.generation).await?.cluster_spec()?;
                let current = cluster_row.spec()?;
                if spec.kubernetes_version != current.kubernetes_version && !upgrade {
                    // Only an upgrade's own cancel moves the version, and only back.
                    return Err(Error::conflict(
                        "not_cancellable",
                        "undoing this change would change the Kubernetes version; upgrade the cluster instead",
                    ));
                }
                fail_cancelled(&mut tx, ctx, id, withdrawn).await?;
                let change = revert_write(&current, spec, ChangeKind::ClusterUpdate, "cluster.update", id);
                Some(self.write_cluster_spec(&mut tx, ctx, &cluster_row, change).await?)
            };
            let event = AuditRecord {
                action: "operation.cancel",
                resource_type: "operation",
                resource_id: Some(id.to_string()),
                details: json!({ "kind": op.kind, "withdrawn": withdrawn, "revert_operation_id": revert.map(|op| op.id) }),
            };
            audit::record(&mut tx, ctx, event).await?;
            let view =
                operations::lookup(&mut tx, ctx, id, Action::Read, Lock::None).await?.into_inner().into_view()?;
            claim.complete(&mut tx, 200, &view).await?;
            self.commit(ctx, tx).await?;
            Ok(view)
        })
        .await
    }
}

/// Why an Operation of `kind` is cancellable only while its command has not
/// left the gateway, if it is one of those.
fn only_before_the_region(kind: ChangeKind) -> Option<&'static str> {
    match kind {
        ChangeKind::ClusterUpgrade => Some("a control plane cannot be moved back to an older version"),
        ChangeKind::NodePoolRecycle => Some("nodes already cordoned are not taken back"),
        ChangeKind::ClusterSnapshot => Some("a snapshot takes seconds; the snapshot policy prunes it"),
        ChangeKind::ClusterRestore => Some("a restore cannot stop half-way: etcd would be left on neither state"),
        _ => None,
    }
}

/// The spec the cancelled change replaced: the revision before its
/// generation, which must still be its target's latest (`generation`).
async fn previous_spec(tx: &mut PgConnection, op: &OperationRow, generation: i64) -> Result<SpecRevisionRow> {
    if generation != op.target_generation {
        return Err(Error::conflict(
            "superseded",
            "a later change of the same resource followed; cancel that one, or change the resource again",
        ));
    }
    spec_revisions::previous(tx, op.target_id, generation)
        .await?
        .ok_or_else(|| Error::conflict("not_cancellable", "the spec before this change is no longer kept"))
}

/// Ends the Operation as cancelled, with a step saying by whom and whether
/// the region ever saw it.
async fn fail_cancelled(tx: &mut PgConnection, ctx: &RequestContext, id: OperationId, withdrawn: bool) -> Result<()> {
    let by = crate::app::actor_ref(&ctx.principal);
    let message = if withdrawn {
        format!("cancelled by {by} before the region received it")
    } else {
        format!("cancelled by {by}; the region converges back to the spec before it")
    };
    let report = OperationProgress {
        region: None,
        operation_id: id.uuid(),
        status: OperationStatus::Failed,
        step: CANCELLED.into(),
        progress: 100,
        error: Some(OperationError { code: CANCELLED.into(), message }),
        earlier: Vec::new(),
    };
    if !observations::record_progress(tx, report).await? {
        return Err(Error::conflict("operation_finished", "the operation has finished; there is nothing to cancel"));
    }
    Ok(())
}

/// The write that brings the spec before a cancelled change back.
fn revert_write<'a, S>(
    current: &'a S,
    spec: S,
    kind: ChangeKind,
    action: &'a str,
    cancelled: OperationId,
) -> SpecWrite<'a, S> {
    SpecWrite { current, spec, labels: None, kind, action, details: json!({ "reverts": cancelled }) }
}
