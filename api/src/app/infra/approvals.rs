//! Approvals: changes the organization's policy holds until someone else
//! approves them (a cluster or node pool deleted, fewer control-plane
//! replicas, a node pool scaled down past a share of its nodes, etcd
//! restored, an upgrade outside the maintenance window).
//!
//! A held change writes nothing to its resource and nothing reaches the
//! region. Its request runs as usual (validation, rights, quotas) up to
//! the gate ([`App::approval_gate`]), which ends it with [`Error::Held`];
//! [`App::unless_held`] then runs it again as a dry run, for the plan the
//! approver is shown, and records an Operation in `awaiting_approval` with
//! the request (`approval_requests`). An approval (`operation_approve`)
//! carries the request out then, as the approver, whose rights it takes
//! too: the same function, on the resource as it is then, with an
//! [`ApprovalGrant`] in its context that passes the gate and makes the
//! change start the waiting Operation instead of a new one, in the change's
//! own transaction. A rejection, a withdrawal (`operation_cancel`) or the
//! expiry sweep fails the Operation, and the request never acts.
//!
//! The approver is a person (never a service account) other than the one
//! who asked, with the policy's approver role.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chrono::Utc;
use futures::future::BoxFuture;
use moke_iam::{Action, OrgRole, PrincipalKind};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::authz::Lock;
use crate::app::infra::store::approvals::{self as store, ApprovalRow};
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::kernel::changes::RegionalChange;
use crate::app::kernel::idempotency::Claim;
use crate::app::kernel::policy::{self, PolicyInForce};
use crate::app::region::command::ChangeKind;
use crate::app::region::observations::{self, OperationProgress};
use crate::app::region::operations::{self, NewOperation};
use crate::app::{App, Error, RequestContext, ResourceRef, Result};
use crate::ids::{ClusterId, NodePoolId, OperationId, ProjectId};
use crate::model::*;

/// The error code of an Operation whose approval was refused.
pub const REJECTED: &str = "rejected";
/// The error code of an Operation nobody approved in time.
pub const EXPIRED: &str = "approval_expired";

/// A held request, as stored: enough to carry it out again, by ids (a
/// name may be reused by another resource meanwhile).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "operation", rename_all = "snake_case")]
pub(in crate::app) enum HeldRequest {
    ClusterDelete {
        project: Uuid,
        cluster: Uuid,
    },
    ClusterUpdate {
        project: Uuid,
        cluster: Uuid,
        update: ClusterUpdate,
    },
    ClusterUpgrade {
        project: Uuid,
        cluster: Uuid,
        upgrade: ClusterUpgradeRequest,
    },
    NodePoolUpdate {
        project: Uuid,
        cluster: Uuid,
        pool: Uuid,
        update: NodePoolUpdate,
    },
    NodePoolDelete {
        project: Uuid,
        cluster: Uuid,
        pool: Uuid,
    },
    /// A node removed without a replacement.
    NodeDelete {
        project: Uuid,
        cluster: Uuid,
        pool: Uuid,
        node: String,
    },
    SnapshotRestore {
        project: Uuid,
        cluster: Uuid,
        snapshot: String,
    },
}

/// What a change is, for the rules that may hold it.
pub(in crate::app) enum Gated {
    ClusterDelete,
    /// Any other change of a cluster's spec.
    ClusterChange {
        /// Control-plane replicas before and after.
        replicas: (i64, i64),
        /// A Kubernetes upgrade outside the maintenance window (or on an excluded day).
        upgrade_outside_window: bool,
        /// A new maintenance window or exclusions: what the rule against
        /// upgrades outside the window would otherwise let a change move first.
        window_changed: bool,
    },
    /// A node-pool change, with its node count before and after.
    NodePoolChange {
        count: (i64, i64),
    },
    NodePoolDelete,
    SnapshotRestore,
}

impl Gated {
    /// The rule of `approvals` that holds this change, if one does.
    fn rule(&self, approvals: &ApprovalPolicy) -> Option<ApprovalRule> {
        let candidates: Vec<ApprovalRule> = match *self {
            Gated::ClusterDelete => vec![ApprovalRule::ClusterDelete],
            Gated::ClusterChange { replicas: (from, to), upgrade_outside_window, window_changed } => [
                (to < from).then_some(ApprovalRule::ControlPlaneReduction),
                (upgrade_outside_window || window_changed).then_some(ApprovalRule::UpgradeOutsideWindow),
            ]
            .into_iter()
            .flatten()
            .collect(),
            // More than the percent of the pool's nodes gone: (from − to) / from > p / 100.
            Gated::NodePoolChange { count: (from, to) } => ((from - to) * 100
                > approvals.scale_down_over_percent * from)
                .then_some(ApprovalRule::NodePoolScaleDown)
                .into_iter()
                .collect(),
            Gated::NodePoolDelete => vec![ApprovalRule::NodePoolDelete],
            Gated::SnapshotRestore => vec![ApprovalRule::SnapshotRestore],
        };
        candidates.into_iter().find(|rule| approvals.required_for.contains(rule))
    }
}

/// The resource a held change is about.
pub(in crate::app) struct HeldTarget<'a> {
    pub kind: ChangeKind,
    pub id: Uuid,
    pub name: &'a str,
    pub generation: i64,
}

/// A change the policy holds: why, and how to carry it out later.
#[derive(Debug)]
pub struct Hold {
    rule: ApprovalRule,
    policy_version: i64,
    approver_role: ApproverRole,
    expires_after_hours: i64,
    kind: ChangeKind,
    target_id: Uuid,
    target_name: String,
    generation: i64,
    request: HeldRequest,
    /// The request's Idempotency-Key, under which the held Operation is
    /// answered to a retry (also once it is decided).
    idempotency: Claim,
}

impl Hold {
    /// Records the held Operation as the answer under `claim`'s key.
    pub(in crate::app) fn answer_under(&mut self, claim: Claim) {
        self.idempotency = claim;
    }
}

/// An approver's go-ahead, carried by the context the approved change runs
/// in: the change starts this Operation (once).
#[derive(Debug)]
pub struct ApprovalGrant {
    operation_id: Uuid,
    reason: Option<String>,
    used: AtomicBool,
}

impl RequestContext {
    /// This context, carrying out the request `grant` approves. Without the
    /// approve request's Idempotency-Key, which the approval itself answers.
    fn approving(&self, grant: Arc<ApprovalGrant>) -> RequestContext {
        let mut ctx = self.clone();
        ctx.approval = Some(grant);
        ctx.idempotency_key = None;
        ctx
    }
}

impl ApprovalRow {
    fn state(&self) -> Result<ApprovalState> {
        ApprovalState::parse(&self.state)
            .ok_or_else(|| Error::Internal(anyhow::anyhow!("unknown approval state {}", self.state)))
    }

    fn approver_role(&self) -> Result<ApproverRole> {
        ApproverRole::parse(&self.approver_role)
            .ok_or_else(|| Error::Internal(anyhow::anyhow!("unknown approver role {}", self.approver_role)))
    }

    fn into_view(self) -> Result<ApprovalView> {
        Ok(ApprovalView {
            operation_id: OperationId::from_uuid(self.operation_id),
            state: self.state()?,
            rule: ApprovalRule::parse(&self.rule)
                .ok_or_else(|| Error::Internal(anyhow::anyhow!("unknown approval rule {}", self.rule)))?,
            policy_version: i64::from(self.policy_version),
            approver_role: self.approver_role()?,
            requested_by: self.requested_by_ref,
            requested_at: self.created_at,
            expires_at: self.expires_at,
            decided_by: self.decided_by,
            decided_at: self.decided_at,
            reason: self.reason,
            plan: crate::app::kernel::jsonb::from_column("approval plan", &self.plan)?,
        })
    }
}

/// Refuses a decision by someone the request does not allow: not a person,
/// the requester (or who made the requesting service account), without the
/// approver role, or with a credential that may not change the resource.
fn check_decider(ctx: &RequestContext, row: &ApprovalRow, target: moke_iam::Target) -> Result<()> {
    let principal = &ctx.principal;
    if principal.kind != PrincipalKind::User {
        return Err(Error::refused("approver_not_a_person", "approvals are decided by people, not service accounts"));
    }
    // A token narrowed to reading, or to another project, decides nothing.
    moke_iam::authorize(principal, Action::ManageResources, target)?;
    if row.accountable.contains(&principal.id) {
        return Err(Error::refused(
            "own_request",
            "someone other than who asked must decide; withdraw your own request with POST …/cancel",
        ));
    }
    let allowed = match row.approver_role()? {
        ApproverRole::Owner => principal.role == OrgRole::Owner,
        ApproverRole::Admin => matches!(principal.role, OrgRole::Owner | OrgRole::Admin),
    };
    if !allowed {
        return Err(Error::refused(
            "approver_role",
            format!("only an organization {} may decide this request", row.approver_role),
        ));
    }
    Ok(())
}

/// The approval request of Operation `id` (404 unless `ctx` sees the
/// Operation), once `ctx` may decide it.
async fn to_decide(conn: &mut PgConnection, ctx: &RequestContext, id: OperationId, lock: Lock) -> Result<ApprovalRow> {
    let op = operations::lookup(&mut *conn, ctx, id, Action::Read, Lock::None).await?.into_inner();
    let row = store::find(&mut *conn, id.uuid(), lock).await?.ok_or_else(not_held)?;
    check_decider(ctx, &row, op.authz_target())?;
    Ok(row)
}

/// Fails a held Operation with `code`, the request closed as `state`.
async fn close(
    tx: &mut PgConnection,
    id: Uuid,
    state: ApprovalState,
    by: &str,
    reason: Option<&str>,
    code: &str,
    message: String,
) -> Result<()> {
    if !store::close(&mut *tx, id, state.as_str(), by, reason).await? {
        return Err(Error::conflict("approval_closed", "the request was decided meanwhile"));
    }
    let report = OperationProgress {
        region: None,
        operation_id: id,
        status: OperationStatus::Failed,
        step: code.to_string(),
        progress: 100,
        error: Some(OperationError { code: code.to_string(), message }),
        earlier: Vec::new(),
    };
    observations::record_progress(tx, report).await?;
    Ok(())
}

fn check_reason(decision: &ApprovalDecision) -> Result<()> {
    match &decision.reason {
        Some(reason) if reason.chars().count() > 500 || reason.chars().any(char::is_control) => {
            Err(Error::invalid_field("reason", "invalid", "at most 500 characters, no control characters"))
        }
        _ => Ok(()),
    }
}

/// Why a request that no longer waits cannot be decided.
fn closed(state: ApprovalState) -> Error {
    Error::conflict("approval_closed", format!("the request is {}; it can no longer be decided", state.as_str()))
}

impl App {
    /// The gate of a change the approval policy may hold, in the change's
    /// transaction after its checks and before its writes: passes when no
    /// rule of the policy in force holds it, when an approver carries it
    /// out, for Moke's own work and (noting the hold) for a dry run; else
    /// ends the request with [`Error::Held`].
    pub(in crate::app) async fn approval_gate(
        &self,
        conn: &mut PgConnection,
        ctx: &RequestContext,
        gated: Gated,
        target: HeldTarget<'_>,
        request: impl FnOnce() -> HeldRequest,
    ) -> Result<()> {
        if let Some(grant) = &ctx.approval {
            // What the approver was shown is what they approve: not a resource changed since.
            let then = operations::target_generation(&mut *conn, grant.operation_id).await?;
            if then != target.generation {
                return Err(Error::conflict(
                    "approval_stale",
                    format!(
                        "the {} changed since the request (generation {then}, now {}); reject it and ask again",
                        target.kind.target().as_str().replace('_', " "),
                        target.generation
                    ),
                ));
            }
            return Ok(());
        }
        if ctx.principal.kind == PrincipalKind::System {
            return Ok(());
        }
        let Some(PolicyInForce { version, approvals, .. }) = policy::in_force(conn, ctx.principal.org_id).await? else {
            return Ok(());
        };
        let Some(rule) = gated.rule(&approvals) else { return Ok(()) };
        if ctx.is_dry_run() {
            ctx.note_approval(PlannedApproval {
                rule,
                policy_version: version,
                approver_role: approvals.approver_role,
                expires_after_hours: approvals.expires_after_hours,
            });
            return Ok(());
        }
        Err(Error::Held(Box::new(Hold {
            rule,
            policy_version: version,
            approver_role: approvals.approver_role,
            expires_after_hours: approvals.expires_after_hours,
            kind: target.kind,
            target_id: target.id,
            target_name: target.name.to_string(),
            generation: target.generation,
            request: request(),
            idempotency: Claim::default(),
        })))
    }

    /// Runs a change the approval policy may hold: as asked, or, when it is
    /// held, as an Operation awaiting approval with the change's plan.
    /// `run` takes its context by value, so its future borrows nothing of it.
    pub(in crate::app) async fn unless_held<'a>(
        &'a self,
        ctx: &RequestContext,
        run: impl Fn(RequestContext) -> BoxFuture<'a, Result<OperationView>>,
    ) -> Result<OperationView> {
        let hold = match run(ctx.clone()).await {
            Err(Error::Held(hold)) => hold,
            other => return other,
        };
        // What the approver is shown: the same request as a dry run, which the gate lets through.
        let plan = match run(ctx.clone().dry_run()).await {
            Err(Error::DryRun(plan)) => *plan,
            Err(other) => return Err(other),
            Ok(_) => return Err(Error::Internal(anyhow::anyhow!("a dry run of a held change did not end as one"))),
        };
        self.hold(ctx, *hold, plan).await
    }

    /// Records a held change: its Operation in `awaiting_approval`, the
    /// request, the audit event and the `operation.awaiting_approval`
    /// event. One request waits per resource: the same request again is
    /// answered with it, another refused.
    async fn hold(&self, ctx: &RequestContext, hold: Hold, plan: DryRunView) -> Result<OperationView> {
        let request = serde_json::to_value(&hold.request).map_err(|e| Error::Internal(e.into()))?;
        let plan = serde_json::to_value(&plan).map_err(|e| Error::Internal(e.into()))?;
        let mut tx = hold.idempotency.begin(self.db()).await?;
        if let Some((waiting, asked, by)) = store::awaiting_for(&mut tx, hold.target_id).await? {
            if asked == request && by == ctx.principal.id {
                let op = operations::lookup(&mut tx, ctx, OperationId::from_uuid(waiting), Action::Read, Lock::None)
                    .await?
                    .into_inner()
                    .into_view()?;
                hold.idempotency.complete(&mut tx, 202, &op).await?;
                self.commit(ctx, tx).await?;
                return Ok(op);
            }
            return Err(Error::conflict(
                "approval_pending",
                format!(
                    "{} awaits approval for this {}; it must be decided or withdrawn first",
                    OperationId::from_uuid(waiting),
                    hold.kind.target().as_str()
                ),
            ));
        }
        let op = operations::insert(
            &mut tx,
            ctx,
            NewOperation {
                kind: hold.kind.operation_kind(),
                target_type: hold.kind.target(),
                target_id: hold.target_id,
                target_name: &hold.target_name,
                target_generation: hold.generation,
                status: OperationStatus::AwaitingApproval,
            },
        )
        .await?;
        let requested_by = crate::app::actor_ref(&ctx.principal);
        let new = store::NewApproval {
            operation_id: op.id.uuid(),
            org_id: ctx.principal.org_id,
            target_id: hold.target_id,
            rule: hold.rule.as_str(),
            policy_version: hold.policy_version,
            approver_role: hold.approver_role.as_str(),
            request: &request,
            plan: &plan,
            requested_by: ctx.principal.id,
            requested_by_ref: &requested_by,
            expires_after_hours: hold.expires_after_hours,
        };
        if !store::insert(&mut tx, new).await? {
            return Err(Error::conflict("approval_pending", "another change of this resource awaits approval"));
        }
        let details = json!({
            "operation_id": op.id,
            "rule": hold.rule,
            "policy_version": hold.policy_version,
            "approver_role": hold.approver_role,
            "request": request,
        });
        let event = AuditRecord {
            action: "operation.approval_request",
            resource_type: hold.kind.target().as_str(),
            resource_id: Some(hold.kind.target().id_text(hold.target_id)),
            details: details.clone(),
        };
        audit::record(&mut tx, ctx, event).await?;
        let payload = json!({
            "operation": { "id": op.id, "kind": op.kind, "status": op.status, "target": op.target },
            "approval": { "rule": hold.rule, "policy_version": hold.policy_version,
                          "approver_role": hold.approver_role, "requested_by": requested_by },
        });
        crate::app::integrations::store::webhooks::emit_event(
            &mut tx,
            ctx.principal.org_id,
            "operation.awaiting_approval",
            payload,
        )
        .await?;
        hold.idempotency.complete(&mut tx, 202, &op).await?;
        self.commit(ctx, tx).await?;
        Ok(op)
    }

    /// Starts the Operation an approver's change carries out (in the
    /// change's transaction, from `record_change`) and closes its request
    /// as approved; `None` for a change no approval carries.
    pub(in crate::app) async fn start_approved_change(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        change: &RegionalChange<'_>,
    ) -> Result<Option<OperationView>> {
        let Some(grant) = ctx.approval.as_ref().filter(|grant| !grant.used.swap(true, Ordering::SeqCst)) else {
            return Ok(None);
        };
        if !change.needs_region {
            // Nothing would reach the region (the resource is already as asked): no Operation to start.
            return Err(Error::conflict(
                "approval_moot",
                "the change no longer changes anything; reject or withdraw the request",
            ));
        }
        let by = crate::app::actor_ref(&ctx.principal);
        if !store::approve(&mut *tx, grant.operation_id, &by, grant.reason.as_deref()).await? {
            return Err(Error::conflict("approval_closed", "the request expired or was decided meanwhile"));
        }
        let op = operations::start_approved(tx, grant.operation_id, change).await?;
        let event = AuditRecord {
            action: "operation.approve",
            resource_type: "operation",
            resource_id: Some(op.id.to_string()),
            details: json!({ "reason": grant.reason, "target": op.target }),
        };
        audit::record(&mut *tx, ctx, event).await?;
        let payload = json!({ "operation": { "id": op.id, "kind": op.kind, "target": op.target }, "approved_by": by });
        crate::app::integrations::store::webhooks::emit_event(
            &mut *tx,
            ctx.principal.org_id,
            "operation.approved",
            payload,
        )
        .await?;
        Ok(Some(op))
    }

    /// `operation_approval_view`: the approval request of a held Operation.
    pub async fn operation_approval_view(&self, ctx: &RequestContext, id: OperationId) -> Result<ApprovalView> {
        let mut conn = self.db().acquire().await?;
        operations::lookup(&mut conn, ctx, id, Action::Read, Lock::None).await?;
        let row = store::find(&mut conn, id.uuid(), Lock::None)
            .await?
            .ok_or_else(|| Error::not_found("approval", id.to_string()))?;
        row.into_view()
    }

    /// `operation_approve`: carries out the held change now, as the
    /// approver (whose rights it needs too), starting its Operation. An
    /// approved request is answered again.
    pub async fn operation_approve(
        &self,
        ctx: &RequestContext,
        id: OperationId,
        decision: ApprovalDecision,
    ) -> Result<OperationView> {
        check_reason(&decision)?;
        let mut conn = self.db().acquire().await?;
        let row = to_decide(&mut conn, ctx, id, Lock::None).await?;
        match row.state()? {
            ApprovalState::Awaiting => {}
            ApprovalState::Approved => return self.operation_view(ctx, id, None).await,
            other => return Err(closed(other)),
        }
        if row.expires_at <= Utc::now() {
            return Err(closed(ApprovalState::Expired));
        }
        // Two people means two who were there before the request: a
        // membership invited or promoted since could be the requester's own.
        if store::role_newer_than_request(&mut conn, row.operation_id, ctx.principal.id).await? {
            return Err(Error::refused(
                "approver_too_recent",
                "your role in the organization was granted or changed after this request was made; \
                 someone who held their role before it must approve",
            ));
        }
        drop(conn);
        let request: HeldRequest = crate::app::kernel::jsonb::from_column("held request", &row.request)?;
        let grant =
            Arc::new(ApprovalGrant { operation_id: row.operation_id, reason: decision.reason, used: false.into() });
        let approver = ctx.approving(grant.clone());
        let op = self.carry_out(&approver, request).await?;
        if !grant.used.load(Ordering::SeqCst) {
            // Nothing new was started: the change was under way already
            // (a delete asked for again answers the one running).
            return Err(Error::conflict(
                "approval_moot",
                format!("nothing to approve: {} already does this; withdraw the request", op.id),
            ));
        }
        Ok(op)
    }

    /// The held `request`, carried out in `ctx` (an approver's).
    async fn carry_out(&self, ctx: &RequestContext, request: HeldRequest) -> Result<OperationView> {
        let ids = |project: Uuid, cluster: Uuid| {
            (ResourceRef::Id(ProjectId::from_uuid(project)), ResourceRef::Id(ClusterId::from_uuid(cluster)))
        };
        match request {
            HeldRequest::ClusterDelete { project, cluster } => {
                let (project, cluster) = ids(project, cluster);
                self.cluster_delete(ctx, &project, &cluster, None).await
            }
            HeldRequest::ClusterUpdate { project, cluster, update } => {
                let (project, cluster) = ids(project, cluster);
                self.cluster_update(ctx, &project, &cluster, None, update).await
            }
            HeldRequest::ClusterUpgrade { project, cluster, upgrade } => {
                let (project, cluster) = ids(project, cluster);
                self.cluster_upgrade(ctx, &project, &cluster, None, upgrade).await
            }
            HeldRequest::NodePoolUpdate { project, cluster, pool, update } => {
                let (project, cluster) = ids(project, cluster);
                let pool = ResourceRef::Id(NodePoolId::from_uuid(pool));
                self.node_pool_update(ctx, &project, &cluster, &pool, None, update).await
            }
            HeldRequest::NodePoolDelete { project, cluster, pool } => {
                let (project, cluster) = ids(project, cluster);
                let pool = ResourceRef::Id(NodePoolId::from_uuid(pool));
                self.node_pool_delete(ctx, &project, &cluster, &pool, None).await
            }
            HeldRequest::NodeDelete { project, cluster, pool, node } => {
                let (project, cluster) = ids(project, cluster);
                let pool = ResourceRef::Id(NodePoolId::from_uuid(pool));
                self.node_pool_node_delete(ctx, &project, &cluster, &pool, &node, false, None).await
            }
            HeldRequest::SnapshotRestore { project, cluster, snapshot } => {
                let (project, cluster) = ids(project, cluster);
                self.cluster_snapshot_restore(ctx, &project, &cluster, &snapshot, None).await
            }
        }
    }

    /// `operation_reject`: the held change never acts; its Operation fails
    /// with `rejected`. A rejected request is answered again.
    pub async fn operation_reject(
        &self,
        ctx: &RequestContext,
        id: OperationId,
        decision: ApprovalDecision,
    ) -> Result<OperationView> {
        check_reason(&decision)?;
        let mut tx = self.db().begin().await?;
        let row = to_decide(&mut tx, ctx, id, Lock::ForUpdate).await?;
        match row.state()? {
            ApprovalState::Awaiting => {}
            ApprovalState::Rejected => {
                drop(tx);
                return self.operation_view(ctx, id, None).await;
            }
            other => return Err(closed(other)),
        }
        let by = crate::app::actor_ref(&ctx.principal);
        let message = match &decision.reason {
            Some(reason) => format!("rejected by {by}: {reason}"),
            None => format!("rejected by {by}"),
        };
        close(&mut tx, id.uuid(), ApprovalState::Rejected, &by, decision.reason.as_deref(), REJECTED, message).await?;
        let event = AuditRecord {
            action: "operation.reject",
            resource_type: "operation",
            resource_id: Some(id.to_string()),
            details: json!({ "reason": decision.reason, "rule": row.rule, "requested_by": row.requested_by_ref }),
        };
        audit::record(&mut tx, ctx, event).await?;
        self.commit(ctx, tx).await?;
        self.operation_view(ctx, id, None).await
    }

    /// Withdraws the caller's (or anyone's who may change the resource)
    /// held change, from `operation_cancel`: its Operation fails with `cancelled`.
    pub(in crate::app) async fn withdraw_held(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        id: OperationId,
    ) -> Result<()> {
        let by = crate::app::actor_ref(&ctx.principal);
        let code = crate::app::infra::cancel::CANCELLED;
        close(tx, id.uuid(), ApprovalState::Withdrawn, &by, None, code, format!("withdrawn by {by} before approval"))
            .await?;
        let event = AuditRecord {
            action: "operation.cancel",
            resource_type: "operation",
            resource_id: Some(id.to_string()),
            details: json!({ "awaiting_approval": true }),
        };
        audit::record(tx, ctx, event).await
    }

    /// Expires requests nobody decided in time (at most 100 a round): each
    /// Operation fails with `approval_expired`. Returns how many expired.
    pub async fn expire_approvals_once(&self) -> Result<usize> {
        let mut tx = self.db().begin().await?;
        let due = store::expired(&mut tx).await?;
        for (operation, org) in &due {
            let message = "nobody approved it in time; ask again if it is still wanted".to_string();
            close(&mut tx, *operation, ApprovalState::Expired, "system", None, EXPIRED, message).await?;
            let ctx = RequestContext::system(*org);
            let event = AuditRecord {
                action: "operation.approval_expire",
                resource_type: "operation",
                resource_id: Some(OperationId::from_uuid(*operation).to_string()),
                details: json!({}),
            };
            audit::record(&mut tx, &ctx, event).await?;
        }
        tx.commit().await?;
        Ok(due.len())
    }
}

fn not_held() -> Error {
    Error::conflict("not_awaiting_approval", "the operation was not held for approval")
}
