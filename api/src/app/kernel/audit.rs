//! The audit log: one row per mutation and per authentication event, written
//! in the same transaction as the change it records.

use moke_iam::{Credential, PrincipalKind};
use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::{App, PageRequest, RequestContext, Result};
use crate::ids::{AuditEventId, OrgId, SessionId, TokenId};
use crate::model::{AuditCredential, AuditEventView, AuditPrincipal, Page};

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

/// Whether a change of `resource_type` `resource_id` was ever audited with
/// the Operation that carried its command to a region (`operation_id` in
/// its details). Reads the organization's events (by its index).
pub(in crate::app) async fn carried_a_command(
    conn: &mut PgConnection,
    org: uuid::Uuid,
    resource_type: &str,
    resource_id: &str,
) -> Result<bool> {
    Ok(sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM audit_events
                          WHERE org_id = $1 AND resource_type = $2 AND resource_id = $3
                            AND details ? 'operation_id') AS "carried!""#,
        org,
        resource_type,
        resource_id,
    )
    .fetch_one(conn)
    .await?)
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
    // Security events about a person's own account are theirs to read, with or without an organization.
    let about_account = event.action.starts_with("auth.") || event.action.starts_with("user.");
    let subject_user = principal_id.filter(|_| about_account && ctx.principal.kind == PrincipalKind::User);
    let credential_id = match ctx.principal.credential {
        Credential::ApiToken(id) => Some(TokenId::from_uuid(id).to_string()),
        Credential::Session { id, .. } => Some(SessionId::from_uuid(id).to_string()),
        Credential::Exchanged { jti } => Some(format!("jti:{jti}")),
        Credential::None => None,
    };
    let method = (ctx.principal.credential != Credential::None).then(|| ctx.principal.credential.method());
    let org_id: Option<Uuid> = org_id.into();
    // An event of no organization about an address (a failed sign-in of an
    // unknown one): the account that later proves the address reads it.
    let subject_email = org_id.is_none().then(|| event.details["email"].as_str()).flatten();
    if outcome == "success" {
        ctx.note_change(crate::model::PlannedChange {
            action: event.action.to_string(),
            resource_type: event.resource_type.to_string(),
            resource_id: event.resource_id.clone(),
            details: event.details.clone(),
        });
    }
    sqlx::query!(
        "INSERT INTO audit_events (id, org_id, action, outcome, principal_id, principal_kind,
             resource_type, resource_id, request_id, source_ip, user_agent, details, credential_id,
             credential_method, subject_user_id, subject_email)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
        AuditEventId::generate().uuid(),
        org_id,
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
        credential_id,
        method,
        subject_user,
        subject_email,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Which audit events to list; every field narrows.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditFilter {
    /// Who acted: a `usr_…`, `sa_…` or (older events) `tok_…` id.
    #[param(pattern = "^(usr|sa|tok)_[0-9a-fA-F]{32}$")]
    pub actor: Option<String>,
    /// An action (`member.remove`), or a family of them (`member.*`): 1 to
    /// 100 lowercase letters, '.' or '_', a '*' only at the end.
    #[param(pattern = r"^[a-z._]{0,99}[a-z._*]$", max_length = 100)]
    pub action: Option<String>,
    /// `success` or `failure`.
    #[param(pattern = "^(success|failure)$")]
    pub outcome: Option<String>,
    /// The id of the resource acted on.
    pub resource: Option<String>,
    /// Events at or after this time (RFC 3339).
    pub since: Option<chrono::DateTime<chrono::Utc>>,
    /// Events before this time (RFC 3339); must be after `since`.
    pub until: Option<chrono::DateTime<chrono::Utc>>,
}

impl AuditFilter {
    /// The filter as query arguments: the actor's id and a LIKE pattern for the action.
    fn parts(&self) -> Result<(Option<Uuid>, Option<String>)> {
        let mut v = crate::app::error::Validator::new();
        let actor = self.actor.as_deref().map(|text| {
            let id = text
                .parse::<crate::ids::UserId>()
                .map(|id| id.uuid())
                .or_else(|_| text.parse::<crate::ids::ServiceAccountId>().map(|id| id.uuid()))
                .or_else(|_| text.parse::<TokenId>().map(|id| id.uuid()));
            v.check(id.is_ok(), "actor", "invalid", "a usr_…, sa_… or tok_… id");
            id.unwrap_or_default()
        });
        let action = self.action.as_deref().map(|text| {
            let ok = !text.is_empty()
                && text.len() <= 100
                && text.bytes().all(|b| b.is_ascii_lowercase() || b == b'.' || b == b'_' || b == b'*')
                && !text[..text.len() - 1].contains('*');
            v.check(ok, "action", "invalid", "an action such as member.remove, or a family such as member.*");
            text.replace('_', "\\_").replace('*', "%")
        });
        if let Some(outcome) = &self.outcome {
            v.check(matches!(outcome.as_str(), "success" | "failure"), "outcome", "invalid", "success or failure");
        }
        if let (Some(since), Some(until)) = (self.since, self.until) {
            v.check(since < until, "until", "out_of_range", "must be after since");
        }
        v.finish()?;
        Ok((actor, action))
    }
}

/// The most events one export carries (narrow the filter for more).
pub const MAX_EXPORT_EVENTS: i64 = 100_000;
/// Events read per round trip while an export streams.
pub const EXPORT_BATCH: i64 = 1_000;
/// How long an export may stream before it stops (as an error, not quietly).
pub const EXPORT_SECONDS: u64 = 600;

struct EventRow {
    id: Uuid,
    occurred_at: chrono::DateTime<chrono::Utc>,
    action: String,
    outcome: String,
    principal_id: Option<Uuid>,
    principal_kind: String,
    resource_type: String,
    resource_id: Option<String>,
    details: Value,
    request_id: Option<String>,
    source_ip: Option<String>,
    user_agent: Option<String>,
    credential_id: Option<String>,
    credential_method: Option<String>,
}

impl EventRow {
    fn into_view(self) -> AuditEventView {
        let principal_id = self.principal_id.map(|id| match self.principal_kind.as_str() {
            "api_token" => TokenId::from_uuid(id).to_string(),
            "user" => crate::ids::UserId::from_uuid(id).to_string(),
            "service_account" => crate::ids::ServiceAccountId::from_uuid(id).to_string(),
            _ => id.to_string(),
        });
        AuditEventView {
            id: AuditEventId::from_uuid(self.id),
            occurred_at: self.occurred_at,
            action: self.action,
            outcome: self.outcome,
            principal: AuditPrincipal { kind: self.principal_kind, id: principal_id },
            credential: self.credential_method.map(|method| AuditCredential { id: self.credential_id, method }),
            resource_type: self.resource_type,
            resource_id: self.resource_id,
            request_id: self.request_id,
            source_ip: self.source_ip,
            user_agent: self.user_agent,
            details: self.details,
        }
    }
}

impl App {
    /// `audit_event_list`: the organization's audit log, oldest first, filtered.
    pub async fn audit_event_list(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        filter: &AuditFilter,
        page: PageRequest,
    ) -> Result<Page<AuditEventView>> {
        self.org_authorized(ctx, org, moke_iam::Action::ReadAudit).await?;
        let events = self.audit_events(org, filter, page.after, page.fetch_limit()).await?;
        Ok(page.page(events, |e| e.id.uuid()))
    }

    /// `audit_event_export`, one batch at a time: the events the filter
    /// selects after `after`, oldest first. The export streams batches until
    /// one is short or [`MAX_EXPORT_EVENTS`] went out, so a large log never
    /// sits in memory.
    pub async fn audit_event_export_batch(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        filter: &AuditFilter,
        after: Option<Uuid>,
    ) -> Result<Vec<AuditEventView>> {
        self.org_authorized(ctx, org, moke_iam::Action::ReadAudit).await?;
        // A long export outlives caches: the credential must still be live now.
        if after.is_some()
            && !crate::app::iam::principals::credential_live(&mut *self.db().acquire().await?, &ctx.principal).await?
        {
            return Err(crate::app::Error::Unauthenticated);
        }
        self.audit_events(org, filter, after, EXPORT_BATCH).await
    }

    async fn audit_events(
        &self,
        org: OrgId,
        filter: &AuditFilter,
        after: Option<Uuid>,
        limit: i64,
    ) -> Result<Vec<AuditEventView>> {
        let (actor, action) = filter.parts()?;
        let rows = sqlx::query_as!(
            EventRow,
            "SELECT id, occurred_at, action, outcome, principal_id, principal_kind, resource_type,
                    resource_id, details, request_id, source_ip, user_agent, credential_id, credential_method
             FROM audit_events
             WHERE org_id = $1 AND ($2::uuid IS NULL OR id > $2)
               AND ($3::uuid IS NULL OR principal_id = $3) AND ($4::text IS NULL OR action LIKE $4)
               AND ($5::text IS NULL OR outcome = $5) AND ($6::text IS NULL OR resource_id = $6)
               AND ($7::timestamptz IS NULL OR occurred_at >= $7) AND ($8::timestamptz IS NULL OR occurred_at < $8)
             ORDER BY id LIMIT $9",
            org.uuid(),
            after,
            actor,
            action,
            filter.outcome,
            filter.resource,
            filter.since,
            filter.until,
            limit,
        )
        .fetch_all(self.db())
        .await?;
        Ok(rows.into_iter().map(EventRow::into_view).collect())
    }

    /// `security_event_list`: events about the caller's own account: its
    /// sign-ins (failed ones too), resets, sessions and links, in every
    /// organization and in none, plus failed sign-ins naming its verified
    /// address before it had an account. Newest first.
    pub async fn security_event_list(&self, ctx: &RequestContext, page: PageRequest) -> Result<Page<AuditEventView>> {
        let bound = match ctx.principal.credential {
            Credential::Session { sso_org, .. } if ctx.principal.kind == PrincipalKind::User => sso_org,
            _ => {
                return Err(crate::app::Error::refused(
                    "session_required",
                    "sign in to read your account's security events (an API token may not)",
                ));
            }
        };
        let rows = sqlx::query_as!(
            EventRow,
            "SELECT e.id, e.occurred_at, e.action, e.outcome, e.principal_id, e.principal_kind, e.resource_type,
                    e.resource_id, e.details, e.request_id, e.source_ip, e.user_agent, e.credential_id,
                    e.credential_method
             FROM audit_events e
             WHERE (e.subject_user_id = $1
                    OR e.subject_email = (SELECT email FROM users WHERE id = $1 AND email_verified_at IS NOT NULL))
               AND ($2::uuid IS NULL OR e.org_id = $2)
               AND ($3::uuid IS NULL OR e.id < $3)
             ORDER BY e.id DESC LIMIT $4",
            ctx.principal.id,
            bound,
            page.after,
            page.fetch_limit(),
        )
        .fetch_all(self.db())
        .await?;
        Ok(page.page(rows.into_iter().map(EventRow::into_view).collect(), |e| e.id.uuid()))
    }
}
