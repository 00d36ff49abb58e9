//! Dry runs: one mechanism for every mutation.
//!
//! A surface asks for a dry run by building its [`RequestContext`] with
//! [`RequestContext::dry_run`]. The mutation then runs as it always does
//! (validation, authorization, quotas, the rows of its transaction, which
//! fire the same constraints and triggers) until it commits through
//! [`App::commit`], which instead reads back what the transaction would
//! have recorded, rolls it back and ends the mutation with
//! [`Error::DryRun`] carrying the plan. Nothing after the commit runs, and
//! nothing before it leaves the transaction: [`DryRunLog`] collects the
//! audit events and Operations as they are written, and the few mutations
//! that reach outside the database first (a cluster's CA in Vault, a
//! kubeconfig's certificate) skip that step when [`RequestContext::is_dry_run`].
//! Each surface answers [`Error::DryRun`] as its success.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use sqlx::{PgConnection, Postgres, Transaction};
use uuid::Uuid;

use crate::app::infra::revisions::spec_diff;
use crate::app::infra::store::spec_revisions;
use crate::app::infra::store::{ClusterSpecStored, NodePoolSpecStored};
use crate::app::kernel::jsonb;
use crate::app::region::command::{ChangeKind, ResourceKind};
use crate::app::{App, Error, RequestContext, Result};
use crate::model::{
    ClusterSpec, DryRunView, NodePoolSpec, OperationTarget, PlannedApproval, PlannedChange, PlannedOperation,
    SpecChange,
};

/// What a dry run's transaction recorded, in order, collected as it is
/// written (shared by the clones of its context).
#[derive(Debug)]
pub struct DryRunLog {
    /// The caller: what a context acting for someone else (Moke itself)
    /// records is counted, never listed.
    caller: Uuid,
    /// False in a context for work done on the caller's behalf across
    /// resources it may not see ([`RequestContext::on_behalf`]): counted too.
    listed: bool,
    entries: Arc<Mutex<Recorded>>,
}

#[derive(Debug, Default)]
struct Recorded {
    changes: Vec<PlannedChange>,
    operations: Vec<RecordedOperation>,
    /// Changes made on the caller's behalf: how many of each action on each kind.
    on_behalf: BTreeMap<(String, String), u64>,
    /// The approval policy's hold the change would wait in.
    approval: Option<PlannedApproval>,
}

#[derive(Debug)]
struct RecordedOperation {
    operation_id: Uuid,
    kind: ChangeKind,
    target_id: Uuid,
    target: OperationTarget,
    needs_region: bool,
}

impl DryRunLog {
    fn recorded(&self) -> std::sync::MutexGuard<'_, Recorded> {
        // A panic elsewhere cannot leave half an entry: take what is there.
        self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl RequestContext {
    /// This context, asking for a dry run: its mutation ends at its commit
    /// with [`Error::DryRun`] and writes nothing.
    pub fn dry_run(mut self) -> RequestContext {
        let caller = self.principal.id;
        self.dry_run = Some(Arc::new(DryRunLog { caller, listed: true, entries: Arc::default() }));
        self
    }

    /// This context, for changes made on the caller's behalf in resources
    /// the caller may not be allowed to see (a departing credential's
    /// access revoked in every cluster of the organization): a dry run
    /// counts what it records and lists none of it.
    pub(in crate::app) fn on_behalf(&self) -> RequestContext {
        let mut ctx = self.clone();
        if let Some(log) = &self.dry_run {
            ctx.dry_run = Some(Arc::new(DryRunLog { caller: log.caller, listed: false, entries: log.entries.clone() }));
        }
        ctx
    }

    /// Whether what this context records is listed in its dry run's plan.
    fn listed(&self, log: &DryRunLog) -> bool {
        log.listed && self.principal.id == log.caller
    }

    /// Whether this request is a dry run: a mutation must not act outside
    /// its transaction (Vault, mail, other services).
    pub fn is_dry_run(&self) -> bool {
        self.dry_run.is_some()
    }

    /// Notes an audit event a dry run's transaction wrote.
    pub(in crate::app) fn note_change(&self, change: PlannedChange) {
        let Some(log) = &self.dry_run else { return };
        let listed = self.listed(log);
        let mut recorded = log.recorded();
        if listed {
            recorded.changes.push(change);
        } else {
            *recorded.on_behalf.entry((change.action, change.resource_type)).or_default() += 1;
        }
    }

    /// Notes that the organization's approval policy would hold the change.
    pub(in crate::app) fn note_approval(&self, approval: PlannedApproval) {
        if let Some(log) = &self.dry_run {
            log.recorded().approval.get_or_insert(approval);
        }
    }

    /// Notes an Operation a dry run's transaction started.
    pub(in crate::app) fn note_operation(
        &self,
        operation_id: Uuid,
        kind: ChangeKind,
        target_id: Uuid,
        target: OperationTarget,
        needs_region: bool,
    ) {
        // One on the caller's behalf is counted with its audit event.
        if let Some(log) = self.dry_run.as_ref().filter(|log| self.listed(log)) {
            log.recorded().operations.push(RecordedOperation { operation_id, kind, target_id, target, needs_region });
        }
    }
}

impl App {
    /// Commits a request's mutation, or, for a dry run, rolls it back and
    /// ends the mutation with [`Error::DryRun`] and what it would have done.
    /// Every mutation a request makes commits here.
    pub(in crate::app) async fn commit(
        &self,
        ctx: &RequestContext,
        mut tx: Transaction<'static, Postgres>,
    ) -> Result<()> {
        let Some(log) = &ctx.dry_run else {
            tx.commit().await?;
            return Ok(());
        };
        let (mut changes, recorded, on_behalf, approval) = {
            let mut entries = log.recorded();
            let entries = &mut *entries;
            (
                std::mem::take(&mut entries.changes),
                std::mem::take(&mut entries.operations),
                std::mem::take(&mut entries.on_behalf),
                entries.approval.take(),
            )
        };
        for ((action, resource_type), count) in on_behalf {
            let details = serde_json::json!({ "count": count, "on_behalf": "made by Moke for this change, not listed one by one" });
            changes.push(PlannedChange { action, resource_type, resource_id: None, details });
        }
        let mut operations = Vec::with_capacity(recorded.len());
        for op in recorded {
            let diff = spec_change(&mut tx, &op).await?;
            let steps = if op.needs_region {
                planned_steps(op.kind, &diff)
            } else {
                vec!["done: the gateway alone makes this change".to_string()]
            };
            operations.push(PlannedOperation {
                kind: op.kind.operation_kind().to_string(),
                target: op.target,
                needs_region: op.needs_region,
                diff,
                steps,
            });
        }
        tx.rollback().await?;
        Err(Error::DryRun(Box::new(DryRunView { dry_run: true, changes, operations, approval })))
    }
}

/// The end of a dry run of a mutation that acts outside the database (a
/// certificate Vault would sign): `change` is what it would have done.
pub(in crate::app) fn outside_database(change: PlannedChange) -> Error {
    Error::DryRun(Box::new(DryRunView { dry_run: true, changes: vec![change], operations: Vec::new(), approval: None }))
}

/// What the Operation's target spec would become against the revision
/// before, from the revision the transaction wrote and attributed to it
/// (clusters and node pools keep them; other targets have none).
async fn spec_change(conn: &mut PgConnection, op: &RecordedOperation) -> Result<Vec<SpecChange>> {
    let public = |kind: ResourceKind, spec: &serde_json::Value| -> Result<serde_json::Value> {
        let value = match kind {
            ResourceKind::Cluster => serde_json::to_value(ClusterSpec::from(jsonb::from_column::<ClusterSpecStored>(
                "cluster spec revision",
                spec,
            )?)),
            _ => serde_json::to_value(NodePoolSpec::from(jsonb::from_column::<NodePoolSpecStored>(
                "node pool spec revision",
                spec,
            )?)),
        };
        value.map_err(|e| Error::Internal(e.into()))
    };
    let kind = op.kind.target();
    if !matches!(kind, ResourceKind::Cluster | ResourceKind::NodePool) {
        return Ok(Vec::new());
    }
    // Only a revision this Operation made: a change that leaves the
    // generation (labels) made none.
    let made = spec_revisions::find(conn, op.target_id, op.target.generation).await?;
    let Some(after) = made.filter(|revision| revision.operation_id == Some(op.operation_id)) else {
        return Ok(Vec::new());
    };
    let before = match spec_revisions::previous(conn, op.target_id, op.target.generation).await? {
        Some(before) => public(kind, &before.spec)?,
        None => serde_json::Value::Object(Default::default()),
    };
    Ok(spec_diff(&before, &public(kind, &after.spec)?))
}

/// The steps of a move to another Kubernetes version: the control plane
/// blue-green, then each pool by surge.
const UPGRADE: &[&str] = &[
    "queued",
    "new control plane at the target version started",
    "new control plane healthy",
    "traffic switched to the new control plane",
    "old control plane retired",
    "each node pool's nodes replaced by surge, within its upgrade policy",
    "running",
];

/// The steps an Operation of `kind` would go through, as the region
/// reports them, refined by what its spec change touches.
fn planned_steps(kind: ChangeKind, diff: &[SpecChange]) -> Vec<String> {
    let touches = |prefix: &str| diff.iter().any(|c| c.path == prefix || c.path.starts_with(&format!("{prefix}/")));
    let steps: &[&str] = match kind {
        ChangeKind::ClusterCreate => &[
            "queued",
            "provisioning the control plane",
            "control plane serving",
            "provisioning the node pools",
            "running",
        ],
        ChangeKind::ClusterUpgrade => UPGRADE,
        ChangeKind::ClusterUpdate if touches("/kubernetes_version") => UPGRADE,
        ChangeKind::ClusterUpdate if touches("/control_plane") => {
            &["queued", "control-plane replicas changed one at a time", "running"]
        }
        ChangeKind::ClusterUpdate => &["queued", "cluster settings applied", "running"],
        ChangeKind::ClusterDelete => {
            &["queued", "workloads and node pools removed", "control plane removed", "deleted"]
        }
        ChangeKind::ClusterCertificate => &["queued", "cluster credentials rotated", "done"],
        ChangeKind::ClusterSnapshot => &["queued", "etcd snapshot taken", "done"],
        ChangeKind::NamespaceCreate => &["queued", "namespace made in the cluster's API", "done"],
        ChangeKind::NamespaceDelete => &["queued", "namespace and its objects deleted in the cluster's API", "done"],
        ChangeKind::ServiceCreate | ChangeKind::ServiceUpdate => {
            &["queued", "service applied in the cluster's API", "done"]
        }
        ChangeKind::ServiceDelete => &["queued", "service deleted in the cluster's API", "done"],
        ChangeKind::ClusterRestore => &[
            "queued",
            "API servers stopped",
            "one etcd member restored from the snapshot",
            "etcd scaled back to 3 members",
            "API servers started",
            "running",
        ],
        ChangeKind::NodePoolCreate => &["queued", "nodes provisioned", "nodes joined and ready", "running"],
        ChangeKind::NodePoolUpdate if touches("/machine_type") || touches("/labels") || touches("/taints") => &[
            "queued",
            "surge nodes added with the new settings, within the upgrade policy",
            "old nodes cordoned and drained, their pods moved",
            "old nodes removed",
            "running",
        ],
        ChangeKind::NodePoolUpdate if touches("/count") || touches("/autoscaling") => {
            &["queued", "nodes added or drained and removed to the new size", "running"]
        }
        ChangeKind::NodePoolUpdate => &["queued", "node pool settings applied", "running"],
        ChangeKind::NodePoolRecycle => &[
            "queued",
            "a replacement node added, within the upgrade policy",
            "each named node cordoned, drained and removed",
            "running",
        ],
        ChangeKind::NodeDelete => &["queued", "the node cordoned and drained", "the node removed", "running"],
        ChangeKind::NodePoolDelete => &["queued", "nodes cordoned and drained", "nodes removed", "deleted"],
        ChangeKind::DeploymentCreate
        | ChangeKind::DeploymentUpdate
        | ChangeKind::DeploymentRestart
        | ChangeKind::DeploymentRollback
        | ChangeKind::DeploymentResume => &[
            "queued",
            "new pods started within max surge",
            "old pods stopped within max unavailable",
            "rollout complete",
        ],
        ChangeKind::DeploymentScale => &["queued", "pods added or removed to the new count", "rollout complete"],
        ChangeKind::DeploymentPause => &["queued", "rollout paused", "done"],
        ChangeKind::DeploymentDelete => &["queued", "pods stopped", "deleted"],
    };
    steps.iter().map(|step| step.to_string()).collect()
}
