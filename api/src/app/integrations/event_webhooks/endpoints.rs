//! Event webhook endpoints (which events go where, with which secret),
//! their delivery history and redeliveries, and disabling one.

use moke_iam::Action;
use serde_json::json;
use uuid::Uuid;

use crate::app::error::{Validator, or_unique};
use crate::app::{App, Error, RequestContext, Result, integrations::signing};
use crate::ids::{EventId, EventKind, OrgId, WebhookDeliveryId, WebhookEndpointId, WebhookEndpointKind};
use crate::model::*;
use crate::outbound::OutboundClient;

/// Event type patterns an endpoint may subscribe to.
const EVENT_FAMILIES: [&str; 5] = ["cluster.", "nodepool.", "deployment.", "operation.", "webhook_endpoint."];

/// Checks a target URL when it is saved: https (plain http only to a
/// literal allow-listed address), and no literal private address or
/// `localhost`. Names are resolved and checked by the guarded client at
/// every delivery, not here, so saving tells nothing about internal names.
fn check_url(outbound: &OutboundClient, url: &str) -> std::result::Result<reqwest::Url, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
    if !matches!(parsed.scheme(), "https" | "http") {
        return Err(format!("scheme {} is not supported; use https", parsed.scheme()));
    }
    let allow_listed = outbound
        .check_saved_url(&parsed)
        .map_err(|_| "the URL must reach a public address (private, loopback and link-local ones are refused)")?;
    match parsed.scheme() {
        "https" => Ok(parsed),
        _ if allow_listed => Ok(parsed),
        _ => Err("must be https".into()),
    }
}

fn event_type_ok(pattern: &str) -> bool {
    pattern == "*"
        || EVENT_FAMILIES.iter().any(|family| pattern.starts_with(family))
            && pattern.chars().all(|c| c.is_ascii_lowercase() || c == '.' || c == '_' || c == '*')
}

impl App {
    fn endpoint_view(row: EndpointRow) -> WebhookEndpointView {
        WebhookEndpointView {
            id: WebhookEndpointId::from_uuid(row.id),
            url: row.url,
            description: row.description,
            event_types: row.event_types,
            failing_since: row.failing_since,
            disabled_at: row.disabled_at,
            disabled_reason: row.disabled_reason,
            created_at: row.created_at,
        }
    }

    /// `webhook_endpoint_list`.
    pub async fn webhook_endpoint_list(&self, ctx: &RequestContext, org: OrgId) -> Result<Vec<WebhookEndpointView>> {
        self.org_authorized(ctx, org, Action::ReadCredentials).await?;
        let org = org.uuid();
        let rows = sqlx::query_as!(
            EndpointRow,
            "SELECT id, url, description, event_types, failing_since, disabled_at, disabled_reason, created_at
             FROM webhook_endpoints WHERE org_id = $1 ORDER BY id",
            org
        )
        .fetch_all(self.db())
        .await?;
        Ok(rows.into_iter().map(Self::endpoint_view).collect())
    }

    /// `webhook_endpoint_create`: the secret is in the answer and nowhere else.
    pub async fn webhook_endpoint_create(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        input: WebhookEndpointCreate,
    ) -> Result<WebhookEndpointCreated> {
        self.org_authorized(ctx, org, Action::ManageCredentials).await?;
        // The endpoint reads every event of the organization, for as long as it lives.
        crate::app::check_lasting(ctx, moke_iam::Target::org(org.uuid()), &[Action::Read])?;
        let org = org.uuid();
        let mut v = Validator::new();
        v.check(input.url.len() <= 2048, "url", "too_long", "at most 2048 characters");
        if let Err(problem) = check_url(self.outbound(), &input.url) {
            v.push("url", "invalid", problem);
        }
        v.check(!input.event_types.is_empty(), "event_types", "required", "subscribe to at least one event type");
        for (i, pattern) in input.event_types.iter().enumerate() {
            v.check(
                event_type_ok(pattern),
                format!("event_types[{i}]"),
                "invalid",
                "cluster.*, nodepool.*, deployment.*, operation.*, webhook_endpoint.* (or a type within them), or *",
            );
        }
        v.check(input.description.len() <= 500, "description", "too_long", "at most 500 characters");
        v.finish()?;
        let secret = signing::new_secret();
        let secret_enc = self.vault().encrypt(org, &secret).await?;
        let id = WebhookEndpointId::generate();
        let mut tx = self.db().begin().await?;
        let endpoints = crate::app::kernel::quotas::Counted::WebhookEndpoints;
        crate::app::iam::principals::hold_live_credential(&mut tx, ctx, org).await?;
        crate::app::kernel::quotas::check_count(&mut tx, &self.config().quotas, org, endpoints, 1).await?;
        let row = sqlx::query_as!(
            EndpointRow,
            "INSERT INTO webhook_endpoints (id, org_id, url, description, event_types, secret_enc, created_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             RETURNING id, url, description, event_types, failing_since, disabled_at, disabled_reason, created_at",
            id.uuid(),
            org,
            input.url,
            input.description,
            &input.event_types,
            secret_enc,
            ctx.principal.id,
        )
        .fetch_one(&mut *tx)
        .await?;
        crate::app::kernel::audit::record(
            &mut tx,
            ctx,
            crate::app::kernel::audit::AuditRecord {
                action: "webhook_endpoint.create",
                resource_type: "webhook_endpoint",
                resource_id: Some(id.to_string()),
                details: json!({ "url": input.url, "event_types": input.event_types }),
            },
        )
        .await?;
        tx.commit().await?;
        Ok(WebhookEndpointCreated { endpoint: Self::endpoint_view(row), secret })
    }

    /// `webhook_endpoint_delete`.
    pub async fn webhook_endpoint_delete(&self, ctx: &RequestContext, org: OrgId, endpoint: &str) -> Result<()> {
        self.org_authorized(ctx, org, Action::ManageCredentials).await?;
        let org = org.uuid();
        let id = crate::app::parse_id::<WebhookEndpointKind>(endpoint)?;
        let mut tx = self.db().begin().await?;
        let deleted = sqlx::query!("DELETE FROM webhook_endpoints WHERE id = $1 AND org_id = $2", id.uuid(), org)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if deleted == 0 {
            return Err(Error::not_found("webhook endpoint", endpoint));
        }
        crate::app::kernel::audit::record(
            &mut tx,
            ctx,
            crate::app::kernel::audit::AuditRecord {
                action: "webhook_endpoint.delete",
                resource_type: "webhook_endpoint",
                resource_id: Some(id.to_string()),
                details: json!({}),
            },
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// `webhook_delivery_list`: an endpoint's deliveries, newest first, each
    /// with its attempts (status and latency).
    pub async fn webhook_delivery_list(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        endpoint: &str,
    ) -> Result<Vec<WebhookDeliveryView>> {
        self.org_authorized(ctx, org, Action::ReadCredentials).await?;
        let org = org.uuid();
        let id = crate::app::parse_id::<WebhookEndpointKind>(endpoint)?;
        let exists =
            sqlx::query_scalar!("SELECT 1 AS one FROM webhook_endpoints WHERE id = $1 AND org_id = $2", id.uuid(), org)
                .fetch_optional(self.db())
                .await?;
        if exists.is_none() {
            return Err(Error::not_found("webhook endpoint", endpoint));
        }
        let rows = sqlx::query!(
            r#"SELECT d.id, d.event_id, e.event_type, d.status, d.next_attempt_at, d.created_at, d.finished_at,
                      COALESCE(jsonb_agg(jsonb_build_object('attempt', a.attempt, 'attempted_at', a.attempted_at,
                          'status_code', a.status_code, 'error', a.error, 'latency_ms', a.latency_ms)
                          ORDER BY a.attempt) FILTER (WHERE a.attempt IS NOT NULL), '[]') AS "attempts!"
               FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
               LEFT JOIN webhook_attempts a ON a.delivery_id = d.id
               WHERE d.endpoint_id = $1
               GROUP BY d.id, e.event_type
               ORDER BY d.created_at DESC, d.id
               LIMIT 100"#,
            id.uuid()
        )
        .fetch_all(self.db())
        .await?;
        rows.into_iter()
            .map(|r| {
                Ok(WebhookDeliveryView {
                    id: WebhookDeliveryId::from_uuid(r.id),
                    event_id: EventId::from_uuid(r.event_id),
                    event_type: r.event_type,
                    next_attempt_at: (r.status == "pending").then_some(r.next_attempt_at),
                    status: r.status,
                    attempts: serde_json::from_value(r.attempts).map_err(|e| Error::Internal(e.into()))?,
                    created_at: r.created_at,
                    finished_at: r.finished_at,
                })
            })
            .collect()
    }

    /// `webhook_redelivery_create`: sends an event to the endpoint again, as a new delivery.
    pub async fn webhook_redelivery_create(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        endpoint: &str,
        input: RedeliveryCreate,
    ) -> Result<WebhookDeliveryView> {
        self.org_authorized(ctx, org, Action::ManageCredentials).await?;
        let org = org.uuid();
        let endpoint_id = crate::app::parse_id::<WebhookEndpointKind>(endpoint)?;
        let event_id = crate::app::parse_id::<EventKind>(&input.event_id)
            .map_err(|_| Error::invalid_field("event_id", "not_found", "no such event"))?;
        let mut tx = self.db().begin().await?;
        let disabled = sqlx::query_scalar!(
            "SELECT disabled_at FROM webhook_endpoints WHERE id = $1 AND org_id = $2",
            endpoint_id.uuid(),
            org
        )
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| Error::not_found("webhook endpoint", endpoint))?;
        if disabled.is_some() {
            return Err(Error::conflict("disabled", "the endpoint is disabled"));
        }
        let event = sqlx::query!("SELECT event_type FROM events WHERE id = $1 AND org_id = $2", event_id.uuid(), org)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| Error::invalid_field("event_id", "not_found", "no such event"))?;
        let id = WebhookDeliveryId::generate();
        let created_at = sqlx::query_scalar!(
            "INSERT INTO webhook_deliveries (id, event_id, endpoint_id) VALUES ($1, $2, $3) RETURNING created_at",
            id.uuid(),
            event_id.uuid(),
            endpoint_id.uuid(),
        )
        .fetch_one(&mut *tx)
        .await
        .map_err(or_unique(|| Error::conflict("already_exists", "delivery exists")))?;
        crate::app::kernel::audit::record(
            &mut tx,
            ctx,
            crate::app::kernel::audit::AuditRecord {
                action: "webhook_endpoint.redeliver",
                resource_type: "webhook_endpoint",
                resource_id: Some(endpoint_id.to_string()),
                details: json!({ "event_id": event_id }),
            },
        )
        .await?;
        sqlx::query_scalar!("SELECT pg_notify('moke_webhooks', '')").fetch_one(&mut *tx).await?;
        tx.commit().await?;
        Ok(WebhookDeliveryView {
            id,
            event_id,
            event_type: event.event_type,
            status: "pending".into(),
            next_attempt_at: Some(created_at),
            attempts: Vec::new(),
            created_at,
            finished_at: None,
        })
    }

    /// Disables an endpoint, stops its pending deliveries, and tells the
    /// organization with a `webhook_endpoint.disabled` event (to its other
    /// endpoints) and an audit entry.
    pub(in crate::app) async fn disable_endpoint(
        &self,
        tx: &mut sqlx::PgConnection,
        org: Uuid,
        endpoint_id: Uuid,
        url: &str,
        reason: &str,
    ) -> Result<()> {
        let disabled = sqlx::query!(
            "UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = $2
             WHERE id = $1 AND disabled_at IS NULL",
            endpoint_id,
            reason
        )
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if disabled == 0 {
            return Ok(());
        }
        sqlx::query!(
            "UPDATE webhook_deliveries SET status = 'failed', finished_at = now()
             WHERE endpoint_id = $1 AND status = 'pending'",
            endpoint_id
        )
        .execute(&mut *tx)
        .await?;
        let endpoint = WebhookEndpointId::from_uuid(endpoint_id);
        sqlx::query_scalar!(
            "SELECT emit_event($1, 'webhook_endpoint.disabled', $2)",
            org,
            json!({ "endpoint": { "id": endpoint, "url": url, "reason": reason } }),
        )
        .fetch_one(&mut *tx)
        .await?;
        let ctx = RequestContext::system(org);
        crate::app::kernel::audit::record(
            &mut *tx,
            &ctx,
            crate::app::kernel::audit::AuditRecord {
                action: "webhook_endpoint.disable",
                resource_type: "webhook_endpoint",
                resource_id: Some(endpoint.to_string()),
                details: json!({ "reason": reason, "org": OrgId::from_uuid(org) }),
            },
        )
        .await?;
        Ok(())
    }
}

struct EndpointRow {
    id: Uuid,
    url: String,
    description: String,
    event_types: Vec<String>,
    failing_since: Option<chrono::DateTime<chrono::Utc>>,
    disabled_at: Option<chrono::DateTime<chrono::Utc>>,
    disabled_reason: Option<String>,
    created_at: chrono::DateTime<chrono::Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_type_patterns() {
        assert!(event_type_ok("cluster.*"));
        assert!(event_type_ok("deployment.rollout.*"));
        assert!(event_type_ok("*"));
        assert!(!event_type_ok("invoice.*"));
        assert!(!event_type_ok("cluster.%"));
    }
}
