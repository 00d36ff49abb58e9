//! The app layer: every operation any surface offers, as one function each.
//!
//! Functions here take a [`RequestContext`] (who is calling, from where) and
//! plain inputs from [`crate::model`], and return views or an [`Error`]. They
//! authorize through [`moke_iam::authorize`], validate, enforce quotas and run
//! one Postgres transaction per mutation (desired state, Operation, outbox
//! row, audit event, idempotency record together). No HTTP types here.

pub mod authz;
pub mod billing;
pub mod error;
pub mod iam;
pub mod infra;
pub mod integrations;
pub mod kernel;
pub mod region;
mod validate;
pub mod workloads;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use moke_iam::Principal;
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::config::Config;
use crate::ids::{Id, IdKind};
pub use error::{Error, FieldError, Result};
pub use iam::orgs::BootstrapOrg;
pub use iam::principals::PrincipalCache;
pub use iam::rate_limit::RateLimits;
pub use region::operations::OperationWatch;

/// Who is calling and from where; built by each surface, recorded in audit events.
#[derive(Debug, Clone)]
pub struct RequestContext {
    pub principal: Principal,
    pub request_id: Option<String>,
    pub source_ip: Option<String>,
    pub user_agent: Option<String>,
    /// The client's `Idempotency-Key` (REST) or `request_id` (gRPC), for creates.
    pub idempotency_key: Option<String>,
    /// Set for a dry run ([`RequestContext::dry_run`]): what its transaction records.
    pub dry_run: Option<Arc<kernel::dry_run::DryRunLog>>,
    /// Set while an approver carries out a change the approval policy held
    /// (`infra::approvals`): its Operation, which the change starts.
    pub(crate) approval: Option<Arc<infra::approvals::ApprovalGrant>>,
}

/// What a surface knows of a request before it is authenticated.
#[derive(Debug, Default)]
pub struct RequestMeta {
    pub request_id: Option<String>,
    pub source_ip: Option<String>,
    pub user_agent: Option<String>,
    /// The client's `Idempotency-Key` (REST) or `request_id` (gRPC).
    pub idempotency_key: Option<String>,
}

impl RequestContext {
    /// A request not yet authenticated, as every surface (REST, gRPC,
    /// GraphQL over HTTP and WebSocket) starts one: a principal that
    /// [`moke_iam::authorize`] refuses everything, and the request's
    /// metadata (the user agent cut to 256 characters).
    pub fn anonymous(meta: RequestMeta) -> RequestContext {
        let mut principal = RequestContext::system(Uuid::nil()).principal;
        principal.kind = moke_iam::PrincipalKind::Anonymous;
        principal.role = moke_iam::OrgRole::Viewer;
        RequestContext {
            principal,
            request_id: meta.request_id,
            source_ip: meta.source_ip,
            user_agent: meta.user_agent.map(|ua| ua.chars().take(256).collect()),
            idempotency_key: meta.idempotency_key,
            dry_run: None,
            approval: None,
        }
    }

    /// A context for the server acting on its own behalf (bootstrap, jobs).
    pub fn system(org_id: Uuid) -> RequestContext {
        RequestContext {
            principal: Principal {
                id: Uuid::nil(),
                kind: moke_iam::PrincipalKind::System,
                credential: moke_iam::Credential::None,
                org_id,
                role: moke_iam::OrgRole::Owner,
                project_roles: Vec::new(),
                scope: moke_iam::Scope::default(),
                expires_at: None,
            },
            request_id: None,
            source_ip: None,
            user_agent: None,
            idempotency_key: None,
            dry_run: None,
            approval: None,
        }
    }
}

/// Places in mutations where tests can make the transaction fail, to prove
/// that nothing is half-written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultPoint {
    /// Right after a cluster's desired spec is inserted, before its Operation.
    AfterSpecInsert,
}

/// The gateway's application state, shared by every surface.
pub struct App {
    db: PgPool,
    config: Arc<Config>,
    operations: OperationWatch,
    watch_slots: kernel::watch::WatchSlots,
    principals: PrincipalCache,
    vault: Arc<crate::vault::Vault>,
    rate_limits: RateLimits,
    issuer_keys: iam::token_exchange::IssuerKeys,
    outbound: crate::outbound::OutboundClient,
    status_arrived: tokio::sync::Notify,
    csr_arrived: tokio::sync::Notify,
    ca_permits: tokio::sync::Semaphore,
    outbox_arrived: tokio::sync::Notify,
    region_clock: region::observations::RegionClock,
    hook_secrets: integrations::deploy_hooks::HookSecrets,
    webhooks_due: tokio::sync::Notify,
    fault_after_spec_insert: AtomicBool,
    shutdown: CancellationToken,
}

impl App {
    pub fn new(db: PgPool, config: Arc<Config>, vault: Arc<crate::vault::Vault>) -> Arc<App> {
        Arc::new(App {
            operations: OperationWatch::new(),
            watch_slots: kernel::watch::WatchSlots::default(),
            principals: PrincipalCache::default(),
            rate_limits: RateLimits::new(&config.rate_limits),
            issuer_keys: iam::token_exchange::IssuerKeys::default(),
            outbound: crate::outbound::OutboundClient::new(&config.outbound, "Moke/1"),
            vault,
            status_arrived: tokio::sync::Notify::new(),
            csr_arrived: tokio::sync::Notify::new(),
            ca_permits: tokio::sync::Semaphore::new(config.vault.pki_concurrency),
            outbox_arrived: tokio::sync::Notify::new(),
            region_clock: Default::default(),
            hook_secrets: Default::default(),
            webhooks_due: tokio::sync::Notify::new(),
            db,
            config,
            fault_after_spec_insert: AtomicBool::new(false),
            shutdown: CancellationToken::new(),
        })
    }

    pub fn db(&self) -> &PgPool {
        &self.db
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The one client for requests to addresses customers chose (identity
    /// providers, CI issuers, event webhooks): public addresses only.
    pub fn outbound(&self) -> &crate::outbound::OutboundClient {
        &self.outbound
    }

    /// Woken when events were written (`NOTIFY moke_webhooks`).
    pub fn webhooks_due(&self) -> &tokio::sync::Notify {
        &self.webhooks_due
    }

    /// Cancelled when the server starts shutting down: long-polls answer at once.
    pub fn shutdown_token(&self) -> &CancellationToken {
        &self.shutdown
    }

    pub fn operation_watch(&self) -> &OperationWatch {
        &self.operations
    }

    /// The watches each principal holds (see [`kernel::watch`]).
    pub fn watch_slots(&self) -> &kernel::watch::WatchSlots {
        &self.watch_slots
    }

    /// Authenticated principals of this process (see [`PrincipalCache`]).
    pub fn principal_cache(&self) -> &PrincipalCache {
        &self.principals
    }

    pub fn vault(&self) -> &crate::vault::Vault {
        &self.vault
    }

    /// A shared handle on the Vault adapter (for its background task).
    pub fn vault_handle(&self) -> Arc<crate::vault::Vault> {
        self.vault.clone()
    }

    pub fn rate_limits(&self) -> &RateLimits {
        &self.rate_limits
    }

    fn issuer_key_cache(&self) -> &iam::token_exchange::IssuerKeys {
        &self.issuer_keys
    }

    /// Signalled when a command is committed to the outbox.
    pub fn outbox_arrived(&self) -> &tokio::sync::Notify {
        &self.outbox_arrived
    }

    /// Limits how many cluster CAs this gateway makes at once.
    pub fn ca_permits(&self) -> &tokio::sync::Semaphore {
        &self.ca_permits
    }

    /// Signalled when a control plane asks for its serving certificate.
    pub fn csr_arrived(&self) -> &tokio::sync::Notify {
        &self.csr_arrived
    }

    /// Signalled when a region report lands in the inbox.
    pub fn status_arrived(&self) -> &tokio::sync::Notify {
        &self.status_arrived
    }

    /// Arms (or disarms) a fault point. For tests of transactional integrity.
    pub fn inject_fault(&self, point: FaultPoint, armed: bool) {
        match point {
            FaultPoint::AfterSpecInsert => self.fault_after_spec_insert.store(armed, Ordering::SeqCst),
        }
    }

    fn fault(&self, point: FaultPoint) -> Result<()> {
        let armed = match point {
            FaultPoint::AfterSpecInsert => self.fault_after_spec_insert.load(Ordering::SeqCst),
        };
        if armed { Err(Error::Internal(anyhow::anyhow!("injected fault at {point:?}"))) } else { Ok(()) }
    }

    /// True when the database answers and every migration is applied.
    pub async fn ready(&self) -> Result<(), String> {
        // Not a checked query: sqlx's own table does not exist when queries are checked.
        let applied: i64 = sqlx::query_scalar("SELECT count(*) FROM _sqlx_migrations WHERE success")
            .fetch_one(&self.db)
            .await
            .map_err(|e| format!("database: {e}"))?;
        let known = crate::MIGRATOR.iter().count() as i64;
        if applied < known {
            return Err(format!("database: {applied} of {known} migrations applied"));
        }
        Ok(())
    }
}

/// Refuses making something that lasts and acts with `actions` on `target`
/// (a deploy hook's secret deploys; an event endpoint reads every event)
/// unless the caller may perform those actions there itself, with a
/// credential that does not expire.
fn check_lasting(ctx: &RequestContext, target: moke_iam::Target, actions: &[moke_iam::Action]) -> Result<()> {
    if ctx.principal.kind == moke_iam::PrincipalKind::System {
        return Ok(());
    }
    if ctx.principal.expires_at.is_some() {
        return Err(moke_iam::Excess::Expiry.into());
    }
    for action in actions {
        if moke_iam::authorize(&ctx.principal, *action, target).is_err() {
            return Err(moke_iam::Excess::Action(*action).into());
        }
    }
    Ok(())
}

/// How long an answer that must not tell whether an account exists (sign-up,
/// password reset, an SSO sign-in that signs nobody in) takes at least,
/// counted from where its branches part: well above what any branch costs,
/// so the branches take equally long from outside.
const UNIFORM_ANSWER: std::time::Duration = std::time::Duration::from_millis(250);

/// Waits until [`UNIFORM_ANSWER`] has passed since `parted`.
async fn answer_uniformly(parted: tokio::time::Instant) {
    tokio::time::sleep_until(parted + UNIFORM_ANSWER).await;
}

/// The prefixed id of a principal as clients see it: `usr_…`, `sa_…`.
pub fn principal_ref(principal: &Principal) -> String {
    match principal.kind {
        moke_iam::PrincipalKind::User => crate::ids::UserId::from_uuid(principal.id).to_string(),
        _ => crate::ids::ServiceAccountId::from_uuid(principal.id).to_string(),
    }
}

/// Who made a change, as revisions record it: the principal's prefixed id,
/// or `system` for the server's own changes.
pub fn actor_ref(principal: &Principal) -> String {
    match principal.kind {
        moke_iam::PrincipalKind::System => "system".to_string(),
        _ => principal_ref(principal),
    }
}

/// Reads an id a client sent. Text that cannot be an id of this kind names
/// nothing that exists, so it is "not found", exactly like a missing id.
pub fn parse_id<K: IdKind>(text: &str) -> Result<Id<K>> {
    text.parse().map_err(|_| Error::not_found(K::KIND, text))
}

/// A reference to a resource in a path: its prefixed id or its name.
pub enum ResourceRef<K: IdKind> {
    Id(Id<K>),
    Name(String),
}

impl<K: IdKind> ResourceRef<K> {
    pub fn parse(text: &str) -> ResourceRef<K> {
        match text.parse::<Id<K>>() {
            Ok(id) => ResourceRef::Id(id),
            Err(_) => ResourceRef::Name(text.to_string()),
        }
    }
    fn id(&self) -> Option<Uuid> {
        match self {
            ResourceRef::Id(id) => Some(id.uuid()),
            ResourceRef::Name(_) => None,
        }
    }
    fn name(&self) -> Option<&str> {
        match self {
            ResourceRef::Id(_) => None,
            ResourceRef::Name(name) => Some(name),
        }
    }
    fn describe(&self) -> String {
        match self {
            ResourceRef::Id(id) => id.to_string(),
            ResourceRef::Name(name) => name.clone(),
        }
    }
}

/// A validated page request: keyset pagination over time-ordered ids.
#[derive(Debug, Clone, Copy)]
pub struct PageRequest {
    pub limit: i64,
    pub after: Option<Uuid>,
}

impl PageRequest {
    pub const DEFAULT_LIMIT: i64 = 50;
    pub const MAX_LIMIT: i64 = 500;

    /// Checks `limit` and `page_token` together, naming each bad one.
    pub fn parse(limit: Option<i64>, page_token: Option<&str>) -> Result<PageRequest> {
        let mut v = error::Validator::new();
        let limit = limit.unwrap_or(Self::DEFAULT_LIMIT);
        v.check(
            (1..=Self::MAX_LIMIT).contains(&limit),
            "limit",
            "out_of_range",
            format!("must be between 1 and {}", Self::MAX_LIMIT),
        );
        let after = match page_token {
            None | Some("") => None,
            Some(token) => {
                let decoded = URL_SAFE_NO_PAD.decode(token).ok().and_then(|bytes| Uuid::from_slice(&bytes).ok());
                v.check(decoded.is_some(), "page_token", "invalid", "not a token from a previous page");
                decoded
            }
        };
        v.finish()?;
        Ok(PageRequest { limit, after })
    }

    /// The opaque token that continues a list after the item with `id`
    /// (also the cursor of that item in GraphQL connections).
    pub fn cursor(id: Uuid) -> String {
        URL_SAFE_NO_PAD.encode(id.as_bytes())
    }

    /// Turns `limit + 1` fetched rows into a page.
    pub fn page<T>(self, mut rows: Vec<T>, id_of: impl Fn(&T) -> Uuid) -> crate::model::Page<T> {
        let next_page = if rows.len() as i64 > self.limit {
            rows.truncate(self.limit as usize);
            rows.last().map(|last| Self::cursor(id_of(last)))
        } else {
            None
        };
        crate::model::Page { items: rows, next_page }
    }

    /// Pages a list held in memory: `items` sorted by `key_of`, ascending;
    /// the page is the items whose key follows the token's. A list ordered
    /// by something other than an id maps each item to 16 bytes that sort
    /// as it does, so every list has the one token format.
    pub fn page_sorted<T>(self, items: Vec<T>, key_of: impl Fn(&T) -> Uuid) -> crate::model::Page<T> {
        let rows = items
            .into_iter()
            .filter(|item| self.after.is_none_or(|after| key_of(item) > after))
            .take(self.fetch_limit() as usize)
            .collect();
        self.page(rows, key_of)
    }

    /// How many rows to fetch: one more than the page, to tell whether
    /// another page follows.
    pub(crate) fn fetch_limit(self) -> i64 {
        self.limit + 1
    }
}

/// The strong ETag of a row version: quoted, opaque.
pub fn etag(id: Uuid, version: i64) -> String {
    format!("\"{}-{}\"", &id.simple().to_string()[24..], version)
}

/// [`check_if_match`] for a resource a `PUT` may create: while it does not
/// exist (`current` is `None`), any `If-Match`, even `*`, fails (RFC 9110
/// §13.1.1); without one the `PUT` creates it.
fn check_if_match_creating(if_match: Option<&str>, current: Option<&str>) -> Result<()> {
    match (current, if_match) {
        (Some(current), _) => check_if_match(if_match, current),
        (None, Some(_)) => Err(Error::PreconditionFailed { current_etag: "none (it does not exist yet)".into() }),
        (None, None) => Ok(()),
    }
}

/// Refuses the update when the client's `If-Match` does not match.
fn check_if_match(if_match: Option<&str>, current: &str) -> Result<()> {
    match if_match {
        Some(list) if !list.split(',').any(|tag| matches!(tag.trim(), "*") || tag.trim() == current) => {
            Err(Error::PreconditionFailed { current_etag: current.to_string() })
        }
        _ => Ok(()),
    }
}
