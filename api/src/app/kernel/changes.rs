//! The write every region-bound mutation ends with: its Operation, the
//! command for the region (in the outbox) and the audit event, in the
//! caller's transaction, and who made a cluster's or node pool's new spec
//! revision. One function, so no mutation can forget a part.

use moke_proto::region as pb;
use serde_json::{Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::infra::store::spec_revisions;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::kernel::policy;
use crate::app::region::command::{ChangeKind, ResourceKind};
use crate::app::region::operations::{self, NewOperation};
use crate::app::region::outbox::{self, NewMessage};
use crate::app::{App, RequestContext, Result};
use crate::model::{OperationStatus, OperationView};

/// A change to a resource a region holds.
pub(in crate::app) struct RegionalChange<'a> {
    /// The Operation's kind, the command's, and what the target is.
    pub kind: ChangeKind,
    /// Audit action, e.g. `cluster.create`.
    pub action: &'a str,
    pub target_id: Uuid,
    /// The target's prefixed id, as the audit log shows it.
    pub target_ref: String,
    pub target_name: &'a str,
    /// The desired generation the change brings about.
    pub generation: i64,
    pub region: &'a str,
    /// False when the gateway completed the change alone (labels only): the
    /// Operation is born succeeded and nothing is queued.
    pub needs_region: bool,
    /// What the audit event records besides the operation id.
    pub details: Value,
}

impl App {
    /// Records `change` in `tx`; `command` builds the region's command once
    /// the Operation exists (the command names it).
    pub(in crate::app) async fn record_change(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        change: RegionalChange<'_>,
        command: impl FnOnce(&OperationView) -> pb::Command,
    ) -> Result<OperationView> {
        let backlog = Some(self.config().outbox.max_backlog_per_region);
        self.record_change_within(tx, ctx, change, command, backlog).await
    }

    /// [`App::record_change`], queueing past a full region backlog when
    /// `max_backlog` is `None` (for revocations, which may not be refused).
    pub(in crate::app) async fn record_change_within(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        change: RegionalChange<'_>,
        command: impl FnOnce(&OperationView) -> pb::Command,
        max_backlog: Option<i64>,
    ) -> Result<OperationView> {
        let policy = policy::in_force(&mut *tx, ctx.principal.org_id).await?;
        if let Some(policy) = policy.as_ref().filter(|_| change.needs_region && policy::is_disruptive(change.kind)) {
            let cluster = match change.kind.target() {
                ResourceKind::NodePool => {
                    sqlx::query_scalar("SELECT cluster_id FROM node_pools WHERE id = $1")
                        .bind(change.target_id)
                        .fetch_one(&mut *tx)
                        .await?
                }
                _ => change.target_id,
            };
            policy::check_limits(&mut *tx, policy, ctx.principal.org_id, cluster, change.region).await?;
        }
        // A change an approver carries out starts the Operation that waited for it.
        let op = match self.start_approved_change(&mut *tx, ctx, &change).await? {
            Some(op) => op,
            None => {
                let status = if change.needs_region { OperationStatus::Pending } else { OperationStatus::Succeeded };
                let new = NewOperation {
                    kind: change.kind.operation_kind(),
                    target_type: change.kind.target(),
                    target_id: change.target_id,
                    target_name: change.target_name,
                    target_generation: change.generation,
                    status,
                };
                operations::insert(&mut *tx, ctx, new).await?
            }
        };
        if change.needs_region {
            let message = NewMessage {
                region: change.region,
                kind: change.kind,
                operation_id: op.id.uuid(),
                resource_id: change.target_id,
                generation: change.generation,
                command: command(&op),
            };
            outbox::enqueue(&mut *tx, message, max_backlog).await?;
        }
        ctx.note_operation(op.id.uuid(), change.kind, change.target_id, op.target.clone(), change.needs_region);
        if matches!(change.kind.target(), ResourceKind::Cluster | ResourceKind::NodePool) {
            // The database wrote the spec's revision when the generation
            // moved; say who made it and how.
            let created_by = crate::app::actor_ref(&ctx.principal);
            spec_revisions::attribute(tx, change.target_id, change.generation, op.id.uuid(), &created_by).await?;
        }
        let mut details = change.details;
        if let Some(details) = details.as_object_mut() {
            details.insert("operation_id".into(), json!(op.id));
            // The policy version that allowed it.
            if let Some(policy) = &policy {
                details.insert("policy_version".into(), json!(policy.version));
            }
        }
        let event = AuditRecord {
            action: change.action,
            resource_type: change.kind.audited_resource_type(),
            resource_id: Some(change.target_ref),
            details,
        };
        audit::record(tx, ctx, event).await?;
        Ok(op)
    }
}
