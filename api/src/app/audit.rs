//! The audit log: one row per mutation and per authentication event, written
//! in the same transaction as the change it records.

use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use super::{App, PageRequest, RequestContext, Result};
use crate::ids::{AuditEventId, OrgId};
use crate::model::{AuditEventView, AuditPrincipal, Page};

/// What happened, to which resource.
pub struct AuditRecord<'a> {
    pub action: &'a str,
    pub resource_type: &'a str,
    pub resource_id: Option<String>,
    pub details: Value,
}

/// Appends an event for a successful action of `ctx`'s principal.
pub async fn record(tx: &mut PgConnection, ctx: &RequestContext, event: AuditRecord<'_>) -> Result<()> {
    insert(tx, ctx, ctx.principal.org_id, "success", event).await
}

/// Appends an event with an explicit org (none for platform-wide security
/// events) and outcome (e.g. a refused token).
pub async fn insert(
    conn: &mut PgConnection,
    ctx: &RequestContext,
    org_id: impl Into<Option<Uuid>>,
    outcome: &str,
    event: AuditRecord<'_>,
) -> Result<()> {
    let principal_id = (!ctx.principal.id.is_nil()).then_some(ctx.principal.id);
    sqlx::query!(
        "INSERT INTO audit_events (id, org_id, action, outcome, principal_id, principal_kind,
             resource_type, resource_id, request_id, source_ip, user_agent, details)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        AuditEventId::generate().uuid(),
        org_id.into(),
        event.action,
        outcome,
        principal_id,
        ctx.principal.kind.as_str(),
        event.resource_type,
        event.resource_id,
        ctx.request_id,
        ctx.source_ip,
        ctx.user_agent,
        event.details,
    )
    .execute(conn)
    .await?;
    Ok(())
}

impl App {
    /// `audit_event_list`: the organization's audit log, oldest first.
    pub async fn audit_event_list(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        page: PageRequest,
    ) -> Result<Page<AuditEventView>> {
        self.org_authorized(ctx, org, moke_iam::Action::ReadAudit).await?;
        let rows = sqlx::query!(
            "SELECT id, occurred_at, action, outcome, principal_id, principal_kind, resource_type,
                    resource_id, details, request_id, source_ip, user_agent
             FROM audit_events
             WHERE org_id = $1 AND ($2::uuid IS NULL OR id > $2)
             ORDER BY id LIMIT $3",
            org.uuid(),
            page.after,
            page.fetch_limit(),
        )
        .fetch_all(self.db())
        .await?;
        let events = rows
            .into_iter()
            .map(|row| {
                let principal_id = row.principal_id.map(|id| match row.principal_kind.as_str() {
                    "api_token" => crate::ids::TokenId::from_uuid(id).to_string(),
                    "user" => crate::ids::UserId::from_uuid(id).to_string(),
                    "service_account" => crate::ids::ServiceAccountId::from_uuid(id).to_string(),
                    _ => id.to_string(),
                });
                AuditEventView {
                    id: AuditEventId::from_uuid(row.id),
                    occurred_at: row.occurred_at,
                    action: row.action,
                    outcome: row.outcome,
                    principal: AuditPrincipal { kind: row.principal_kind, id: principal_id },
                    resource_type: row.resource_type,
                    resource_id: row.resource_id,
                    request_id: row.request_id,
                    source_ip: row.source_ip,
                    user_agent: row.user_agent,
                    details: row.details,
                }
            })
            .collect();
        Ok(page.page(events, |e| e.id.uuid()))
    }
}
