//! Event webhook endpoints (which events go where, with which secret),
//! their delivery history and redeliveries, and disabling one.

use chrono::{DateTime, Utc};
use moke_iam::Action;
use serde_json::json;
use uuid::Uuid;

use crate::app::authz::Lock;
use crate::app::error::Validator;
use crate::app::integrations::store::webhooks::{self as store, EndpointChange, EndpointRow, NewEndpoint};
use crate::app::{App, Error, PageRequest, RequestContext, Result, integrations::signing};
use crate::ids::{EventId, EventKind, OrgId, WebhookDeliveryId, WebhookEndpointId};
use crate::model::*;
use crate::outbound::OutboundClient;

/// Event type patterns an endpoint may subscribe to.
const EVENT_FAMILIES: [&str; 7] =
    ["cluster.", "nodepool.", "deployment.", "operation.", "webhook_endpoint.", "invoice.", "budget."];

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

/// Where a delivery list continues ([`WebhookDeliveryView::key_of`]): before this time and id. Any 16 bytes
/// are a token: a time outside years 1-9999 is taken as the nearest of them.
fn delivery_of_key(key: Uuid) -> (DateTime<Utc>, Uuid) {
    let bytes = key.as_bytes();
    let micros = i64::from_be_bytes(bytes[..8].try_into().expect("8 bytes"));
    const FIRST: i64 = -62_135_596_800_000_000; // 0001-01-01T00:00:00Z
    const LAST: i64 = 253_402_300_799_999_999; // 9999-12-31T23:59:59.999999Z
    let at = DateTime::from_timestamp_micros(micros.clamp(FIRST, LAST)).expect("within years 1-9999");
    // The last page's delivery had an id starting with these 8 bytes: the
    // list goes on below the smallest such id.
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&bytes[8..]);
    (at, Uuid::from_bytes(id))
}

fn event_type_ok(pattern: &str) -> bool {
    pattern == "*"
        || EVENT_FAMILIES.iter().any(|family| pattern.starts_with(family))
            && pattern.chars().all(|c| c.is_ascii_lowercase() || c == '.' || c == '_' || c == '*')
}

/// Whether any of the patterns subscribes to billing events, which carry amounts.
fn names_billing(event_types: &[String]) -> bool {
    event_types.iter().any(|pattern| pattern.starts_with("invoice.") || pattern.starts_with("budget."))
}

/// The checks of an endpoint's URL, event types and description that create
/// and update share: each field given is checked as create checks it.
fn check_fields(
    v: &mut Validator,
    outbound: &OutboundClient,
    url: Option<&str>,
    event_types: Option<&[String]>,
    description: Option<&str>,
) {
    if let Some(url) = url {
        v.check(url.chars().count() <= 2048, "url", "too_long", "at most 2048 characters");
        if let Err(problem) = check_url(outbound, url) {
            v.push("url", "invalid", problem);
        }
    }
    if let Some(event_types) = event_types {
        use crate::model::{MAX_EVENT_TYPE_CHARS, MAX_EVENT_TYPES};
        v.check(!event_types.is_empty(), "event_types", "required", "subscribe to at least one event type");
        v.check(
            event_types.len() <= MAX_EVENT_TYPES,
            "event_types",
            "too_many",
            format!("at most {MAX_EVENT_TYPES} patterns"),
        );
        for (i, pattern) in event_types.iter().enumerate() {
            v.check(
                pattern.chars().count() <= MAX_EVENT_TYPE_CHARS && event_type_ok(pattern),
                format!("event_types[{i}]"),
                "invalid",
                "cluster.*, nodepool.*, deployment.*, operation.*, webhook_endpoint.*, invoice.*, budget.* (or a type within them), or *",
            );
        }
    }
    if let Some(description) = description {
        v.check(description.chars().count() <= 500, "description", "too_long", "at most 500 characters");
    }
}

impl App {
    /// Forgets the previous signing secrets of endpoints and deploy hooks
    /// whose grace period is over (the hourly sweep of expired records).
    pub async fn purge_expired_previous_secrets(&self) -> Result<u64> {
        let mut conn = self.db().acquire().await?;
        store::purge_expired_previous_secrets(&mut conn).await
    }

    fn endpoint_view(row: EndpointRow) -> WebhookEndpointView {
        WebhookEndpointView {
            id: WebhookEndpointId::from_uuid(row.id),
            url: row.url,
            description: row.description,
            event_types: row.event_types,
            failing_since: row.failing_since,
            disabled_at: row.disabled_at,
            disabled_reason: row.disabled_reason,
            previous_secret_expires_at: row.previous_secret_expires_at.filter(|at| *at > Utc::now()),
            created_at: row.created_at,
        }
    }

    /// `webhook_endpoint_list`: in id (creation) order.
    pub async fn webhook_endpoint_list(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        page: PageRequest,
    ) -> Result<Page<WebhookEndpointView>> {
        self.org_authorized(ctx, org, Action::ReadCredentials).await?;
        let mut conn = self.db().acquire().await?;
        let rows = store::list(&mut conn, org.uuid(), &page).await?;
        Ok(page.page(rows.into_iter().map(Self::endpoint_view).collect(), |e| e.id.uuid()))
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
        let (url, description) = (Some(input.url.as_str()), Some(input.description.as_str()));
        check_fields(&mut v, self.outbound(), url, Some(&input.event_types), description);
        v.finish()?;
        // Billing events carry amounts: only a creator who may read billing, for good, subscribes to them.
        if names_billing(&input.event_types) {
            self.org_authorized(ctx, OrgId::from_uuid(org), Action::ReadBilling).await?;
            crate::app::check_lasting(ctx, moke_iam::Target::org(org), &[Action::ReadBilling])?;
        }
        let input = &input;
        self.idempotent(ctx, "webhook_endpoint_create", &(org, input), |claim| async move {
            let secret = signing::new_secret();
            let secret_enc = self.vault().encrypt(org, &secret).await?;
            let id = WebhookEndpointId::generate();
            let mut tx = claim.begin(self.db()).await?;
            let endpoints = crate::app::kernel::quotas::Counted::WebhookEndpoints;
            crate::app::iam::principals::hold_live_credential(&mut tx, ctx, org).await?;
            crate::app::kernel::quotas::check_count(&mut tx, self.config(), org, endpoints, 1).await?;
            let new = NewEndpoint {
                id: id.uuid(),
                org,
                url: &input.url,
                description: &input.description,
                event_types: &input.event_types,
                secret_enc: &secret_enc,
                created_by: ctx.principal.id,
            };
            let row = store::insert(&mut tx, new).await?;
            crate::app::kernel::audit::record(
                &mut tx,
                ctx,
                crate::app::kernel::audit::AuditRecord {
                    action: "webhook_endpoint.create",
                    resource_type: "webhook_endpoint",
                    resource_id: Some(id.to_string()),
                    details: json!({ "url": url_on_record(&input.url), "event_types": input.event_types }),
                },
            )
            .await?;
            let created = WebhookEndpointCreated { endpoint: Self::endpoint_view(row), secret };
            // The stored replay never holds the secret: a retry learns the endpoint only.
            let replay = WebhookEndpointCreated { secret: String::new(), ..created.clone() };
            claim.complete(&mut tx, 201, &replay).await?;
            self.commit(ctx, tx).await?;
            Ok(created)
        })
        .await
    }

    /// `webhook_endpoint_view`: one endpoint, never its secret.
    pub async fn webhook_endpoint_view(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        endpoint: WebhookEndpointId,
    ) -> Result<WebhookEndpointView> {
        self.org_authorized(ctx, org, Action::ReadCredentials).await?;
        let mut conn = self.db().acquire().await?;
        let row = store::find(&mut conn, org.uuid(), endpoint.uuid(), Lock::None)
            .await?
            .ok_or_else(|| Error::not_found("webhook endpoint", endpoint.to_string()))?;
        Ok(Self::endpoint_view(row))
    }

    /// `webhook_endpoint_update`: the fields given change, each checked as
    /// create checks it. A change of where the endpoint sends or what it
    /// receives (its URL, its event types, enabling it) is held to what
    /// create asks of its caller: a lasting credential that reads the
    /// organization, and for billing events one that reads billing. `enabled:
    /// false` disables it as a failing endpoint is disabled (pending
    /// deliveries fail, a `webhook_endpoint.disabled` event); `enabled: true`
    /// clears the disabled state and `failing_since`. Whoever points it at a
    /// new URL answers for it as its creator does: an eviction of either
    /// disables it.
    pub async fn webhook_endpoint_update(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        endpoint: WebhookEndpointId,
        input: WebhookEndpointUpdate,
    ) -> Result<WebhookEndpointView> {
        self.org_authorized(ctx, org, Action::ManageCredentials).await?;
        let redirects = input.url.is_some() || input.event_types.is_some() || input.enabled == Some(true);
        if redirects {
            // The endpoint reads every event of the organization, for as long as it lives.
            crate::app::check_lasting(ctx, moke_iam::Target::org(org.uuid()), &[Action::Read])?;
        }
        let mut v = Validator::new();
        let (url, event_types) = (input.url.as_deref(), input.event_types.as_deref());
        check_fields(&mut v, self.outbound(), url, event_types, input.description.as_deref());
        v.finish()?;
        let org_id = org.uuid();
        let mut tx = self.db().begin().await?;
        crate::app::iam::principals::hold_live_credential(&mut tx, ctx, org_id).await?;
        let current = store::find(&mut tx, org_id, endpoint.uuid(), Lock::ForUpdate)
            .await?
            .ok_or_else(|| Error::not_found("webhook endpoint", endpoint.to_string()))?;
        // Billing events carry amounts: only who may read billing, for good,
        // sends them somewhere new (deliveries already queued included),
        // subscribes to them, drops them, or turns them back on.
        let new_types = input.event_types.as_deref().unwrap_or(&current.event_types);
        if redirects && (names_billing(new_types) || names_billing(&current.event_types)) {
            self.org_authorized(ctx, org, Action::ReadBilling).await?;
            crate::app::check_lasting(ctx, moke_iam::Target::org(org_id), &[Action::ReadBilling])?;
        }
        if input.enabled == Some(true) && input.url.is_none() {
            // Turned back on, the URL it has must pass today's rules too.
            let mut v = Validator::new();
            check_fields(&mut v, self.outbound(), Some(&current.url), None, None);
            v.finish()?;
        }
        let new_url = input.url.as_deref().filter(|url| *url != current.url);
        let change = EndpointChange {
            url: new_url,
            description: input.description.as_deref(),
            event_types: input.event_types.as_deref(),
            url_set_by: new_url.map(|_| ctx.principal.id),
        };
        store::update(&mut tx, org_id, endpoint.uuid(), change).await?;
        if let Some(event_types) = &input.event_types {
            // What it no longer subscribes to does not go out, queued or not.
            store::fail_unsubscribed(&mut tx, endpoint.uuid(), event_types).await?;
        }
        match input.enabled {
            Some(false) => {
                let reason = "disabled on request";
                if store::disable(&mut tx, endpoint.uuid(), reason).await? {
                    let url = new_url.unwrap_or(&current.url);
                    let event = json!({ "endpoint": { "id": endpoint, "url": url_on_record(url), "reason": reason } });
                    store::emit_event(&mut tx, org_id, "webhook_endpoint.disabled", event).await?;
                }
            }
            Some(true) => {
                store::enable(&mut tx, endpoint.uuid()).await?;
            }
            None => {}
        }
        crate::app::kernel::audit::record(
            &mut tx,
            ctx,
            crate::app::kernel::audit::AuditRecord {
                action: "webhook_endpoint.update",
                resource_type: "webhook_endpoint",
                resource_id: Some(endpoint.to_string()),
                details: {
                    let mut details = json!(input);
                    if let Some(url) = &input.url {
                        details["url"] = json!(url_on_record(url));
                    }
                    details
                },
            },
        )
        .await?;
        let row = store::find(&mut tx, org_id, endpoint.uuid(), Lock::None)
            .await?
            .ok_or_else(|| Error::not_found("webhook endpoint", endpoint.to_string()))?;
        self.commit(ctx, tx).await?;
        Ok(Self::endpoint_view(row))
    }

    /// `webhook_endpoint_secret_rotate`: a new signing secret, shown only in
    /// the answer. Deliveries are signed with it from now on and, for
    /// `previous_secret_valid_seconds` (24 h by default; 0: not at all),
    /// with the previous one too, so the receiver can switch without
    /// refusing one. A second rotation replaces whatever previous secret was
    /// still signing.
    pub async fn webhook_endpoint_secret_rotate(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        endpoint: WebhookEndpointId,
        input: WebhookEndpointSecretRotate,
    ) -> Result<WebhookEndpointCreated> {
        let keep = input.previous_secret_valid_seconds.unwrap_or(86_400);
        let mut v = Validator::new();
        v.check(
            (0..=604_800).contains(&keep),
            "previous_secret_valid_seconds",
            "out_of_range",
            "between 0 (stop now) and 604800 (7 days)",
        );
        v.finish()?;
        // Authorized before the key is consulted, and the organization and
        // endpoint are part of the request: a replay is answered only to a
        // caller who may rotate this endpoint's secret now.
        self.org_authorized(ctx, org, Action::ManageCredentials).await?;
        // The secret speaks for the organization to the receiver, for as long as the endpoint lives.
        crate::app::check_lasting(ctx, moke_iam::Target::org(org.uuid()), &[Action::Read])?;
        let org = org.uuid();
        self.idempotent(ctx, "webhook_endpoint_secret_rotate", &(org, endpoint, keep), |claim| async move {
            let secret = signing::new_secret();
            let secret_enc = self.vault().encrypt(org, &secret).await?;
            let mut tx = claim.begin(self.db()).await?;
            crate::app::iam::principals::hold_live_credential(&mut tx, ctx, org).await?;
            let row = store::rotate_secret(&mut tx, org, endpoint.uuid(), &secret_enc, keep)
                .await?
                .ok_or_else(|| Error::not_found("webhook endpoint", endpoint.to_string()))?;
            crate::app::kernel::audit::record(
                &mut tx,
                ctx,
                crate::app::kernel::audit::AuditRecord {
                    action: "webhook_endpoint.rotate_secret",
                    resource_type: "webhook_endpoint",
                    resource_id: Some(endpoint.to_string()),
                    details: json!({ "previous_secret_valid_seconds": keep }),
                },
            )
            .await?;
            let rotated = WebhookEndpointCreated { endpoint: Self::endpoint_view(row), secret };
            // The stored replay never holds the secret: a retry learns the endpoint only.
            let replay = WebhookEndpointCreated { secret: String::new(), ..rotated.clone() };
            claim.complete(&mut tx, 200, &replay).await?;
            self.commit(ctx, tx).await?;
            Ok(rotated)
        })
        .await
    }

    pub async fn webhook_endpoint_delete(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        endpoint: WebhookEndpointId,
    ) -> Result<()> {
        self.org_authorized(ctx, org, Action::ManageCredentials).await?;
        let org = org.uuid();
        let id = endpoint;
        let mut tx = self.db().begin().await?;
        if !store::delete(&mut tx, org, id.uuid()).await? {
            return Err(Error::not_found("webhook endpoint", endpoint.to_string()));
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
        self.commit(ctx, tx).await?;
        Ok(())
    }

    /// `webhook_delivery_list`: an endpoint's deliveries, newest first, each
    /// with its attempts (status and latency).
    pub async fn webhook_delivery_list(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        endpoint: WebhookEndpointId,
        page: PageRequest,
    ) -> Result<Page<WebhookDeliveryView>> {
        self.org_authorized(ctx, org, Action::ReadCredentials).await?;
        let org = org.uuid();
        let mut conn = self.db().acquire().await?;
        if store::find(&mut conn, org, endpoint.uuid(), Lock::None).await?.is_none() {
            return Err(Error::not_found("webhook endpoint", endpoint.to_string()));
        }
        let before = page.after.map(delivery_of_key);
        let rows = store::deliveries(&mut conn, endpoint.uuid(), before, page.fetch_limit()).await?;
        let views = rows
            .into_iter()
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
            .collect::<Result<Vec<_>>>()?;
        Ok(page.page(views, WebhookDeliveryView::cursor_key))
    }

    /// `webhook_redelivery_create`: sends an event to the endpoint again, as a new delivery.
    pub async fn webhook_redelivery_create(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        endpoint: WebhookEndpointId,
        input: RedeliveryCreate,
    ) -> Result<WebhookDeliveryView> {
        self.org_authorized(ctx, org, Action::ManageCredentials).await?;
        let org = org.uuid();
        let endpoint_id = endpoint;
        let event_id = crate::app::parse_id::<EventKind>(&input.event_id)
            .map_err(|_| Error::invalid_field("event_id", "not_found", "no such event"))?;
        let input = &input;
        self.idempotent(ctx, "webhook_redelivery_create", &(org, endpoint_id, input), |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            let found = store::find(&mut tx, org, endpoint_id.uuid(), Lock::None)
                .await?
                .ok_or_else(|| Error::not_found("webhook endpoint", endpoint.to_string()))?;
            if found.disabled_at.is_some() {
                return Err(Error::conflict("disabled", "the endpoint is disabled"));
            }
            let event_type = store::event_type(&mut tx, org, event_id.uuid())
                .await?
                .ok_or_else(|| Error::invalid_field("event_id", "not_found", "no such event"))?;
            // A billing event goes again only where it went: to an endpoint that
            // names its family, at the word of someone who may read billing.
            if let Some(family) = ["invoice.", "budget."].into_iter().find(|f| event_type.starts_with(f)) {
                crate::app::check_lasting(ctx, moke_iam::Target::org(org), &[Action::ReadBilling])?;
                if !found.event_types.iter().any(|pattern| pattern.starts_with(family)) {
                    return Err(Error::invalid_field(
                        "event_id",
                        "not_subscribed",
                        format!("the endpoint does not subscribe to {family}* events"),
                    ));
                }
            }
            let id = WebhookDeliveryId::generate();
            let created_at = store::insert_delivery(&mut tx, id.uuid(), event_id.uuid(), endpoint_id.uuid()).await?;
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
            let view = WebhookDeliveryView {
                id,
                event_id,
                event_type,
                status: "pending".into(),
                next_attempt_at: Some(created_at),
                attempts: Vec::new(),
                created_at,
                finished_at: None,
            };
            claim.complete(&mut tx, 202, &view).await?;
            self.commit(ctx, tx).await?;
            Ok(view)
        })
        .await
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
        if !store::disable(&mut *tx, endpoint_id, reason).await? {
            return Ok(());
        }
        let endpoint = WebhookEndpointId::from_uuid(endpoint_id);
        let event = json!({ "endpoint": { "id": endpoint, "url": url_on_record(url), "reason": reason } });
        store::emit_event(&mut *tx, org, "webhook_endpoint.disabled", event).await?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_type_patterns() {
        assert!(event_type_ok("cluster.*"));
        assert!(event_type_ok("deployment.rollout.*"));
        assert!(event_type_ok("*"));
        assert!(event_type_ok("invoice.*"));
        assert!(event_type_ok("budget.threshold_reached"));
        assert!(!event_type_ok("payment.*"));
        assert!(!event_type_ok("cluster.%"));
    }

    #[test]
    fn delivery_page_keys() {
        let at = DateTime::from_timestamp_micros(1_800_000_000_123_456).unwrap();
        let id = Uuid::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
        let (back_at, back_id) = delivery_of_key(WebhookDeliveryView::key_of(at, id));
        assert_eq!(back_at, at, "to the microsecond");
        assert_eq!(back_id, Uuid::from_u128(0x0123_4567_89ab_cdef_0000_0000_0000_0000));
        assert!(back_id <= id, "the delivery itself is not after its own key");
        // Any 16 bytes continue somewhere.
        let (first, _) = delivery_of_key(Uuid::from_bytes([0x80; 16]));
        let (last, _) = delivery_of_key(Uuid::from_bytes([0x7f; 16]));
        assert!(first < last);
    }
}

/// An endpoint's URL as the audit log and events show it: scheme, host and
/// port, with `/…` for a path or query left out. Many receivers take a
/// secret in the URL (`https://hooks.slack.com/services/…`, `?token=`), and
/// the audit log and other endpoints reach roles that may not read webhooks.
pub(crate) fn url_on_record(url: &str) -> String {
    let Ok(parsed) = url::Url::parse(url) else { return "(not a URL)".to_string() };
    let host = parsed.host_str().unwrap_or_default();
    let port = parsed.port().map(|p| format!(":{p}")).unwrap_or_default();
    let more = parsed.path() != "/" || parsed.query().is_some() || parsed.fragment().is_some();
    format!("{}://{host}{port}{}", parsed.scheme(), if more { "/…" } else { "" })
}

#[cfg(test)]
mod url_tests {
    use super::url_on_record;

    #[test]
    fn a_recorded_url_keeps_no_path_query_or_credentials() {
        assert_eq!(url_on_record("https://hooks.slack.com/services/T0/B0/secret"), "https://hooks.slack.com/…");
        assert_eq!(url_on_record("https://user:pw@example.com:8443/?token=x"), "https://example.com:8443/…");
        assert_eq!(url_on_record("https://example.com"), "https://example.com");
    }
}
