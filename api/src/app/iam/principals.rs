//! Authentication: turning a bearer credential (an API token or a signed
//! access token) into a [`Principal`] with its roles, and the per-process
//! cache that spares the database most of that work.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use moke_iam::token::{TokenKind, parse, peppered_hash, plain_hash};
use moke_iam::{Credential, OrgRole, Principal, PrincipalKind, ProjectRole, Scope};
use serde_json::json;
use uuid::Uuid;

use crate::app::iam::store;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::{App, Error, RequestContext, Result};
use crate::ids::{OrgId, ServiceAccountId, SessionId, TokenId, UserId};

/// How long a verified credential is trusted without asking the database.
/// Also how often a token's `last_used_at` is refreshed.
const CACHE_TTL: Duration = Duration::from_secs(60);
const CACHE_MAX_ENTRIES: usize = 100_000;

/// Verified credentials of this process, keyed by a hash of the bearer text.
/// Entries are evicted by the `moke_tokens` (token id) and `moke_principals`
/// (user or service account id) notifications, and are used only while that
/// listener is live (see [`crate::app::region::notifications`]).
#[derive(Default)]
pub struct PrincipalCache {
    entries: Mutex<HashMap<[u8; 32], Cached>>,
    /// Per organization, which client networks each refused token was
    /// audited from in its current minute (see [`PrincipalCache::refusal_due`]).
    refusals: Mutex<HashMap<Uuid, HashMap<Uuid, RefusalWindow>>>,
    live: AtomicBool,
    /// Bumped by every eviction, so a lookup that raced one is not cached.
    evictions: AtomicU64,
}

/// The refusals of one token audited within one minute.
struct RefusalWindow {
    started: Instant,
    /// Client networks ([`crate::app::iam::rate_limit::client_key`]) already recorded.
    sources: Vec<Option<std::net::IpAddr>>,
}

/// Client networks a refused token is recorded from per minute; more are
/// refused without a record, so a leaked token cannot flood the audit log.
const REFUSAL_SOURCES_PER_MINUTE: usize = 5;
/// Tokens of one organization whose refusals are tracked at once: when all
/// are current, that organization's further refusals go unrecorded for the
/// minute (one tenant's revoked tokens never silence another's records).
const REFUSAL_MAX_TOKENS_PER_ORG: usize = 1_000;
/// Organizations tracked at once (those with only past windows go first).
const REFUSAL_MAX_ORGS: usize = 10_000;
/// Token windows tracked at once across all organizations (a bound on
/// memory): when all are current, the organization with the most makes room.
const REFUSAL_MAX_WINDOWS: usize = 100_000;

struct Cached {
    principal: Principal,
    expires_at: Option<DateTime<Utc>>,
    cached_at: Instant,
}

impl PrincipalCache {
    fn get(&self, key: &[u8; 32]) -> Option<Principal> {
        if !self.live.load(Ordering::Acquire) {
            return None;
        }
        let entries = self.entries.lock().expect("principal cache lock");
        let entry = entries.get(key)?;
        let fresh = entry.cached_at.elapsed() < CACHE_TTL && entry.expires_at.is_none_or(|at| at > Utc::now());
        fresh.then(|| entry.principal.clone())
    }

    /// The eviction count to pass to [`PrincipalCache::put`] after a lookup.
    fn generation(&self) -> u64 {
        self.evictions.load(Ordering::Acquire)
    }

    /// Caches a lookup made at eviction `generation`, unless an eviction
    /// happened since (the lookup may predate a revocation).
    fn put(&self, key: [u8; 32], principal: Principal, expires_at: Option<DateTime<Utc>>, generation: u64) {
        if !self.live.load(Ordering::Acquire) {
            return;
        }
        let mut entries = self.entries.lock().expect("principal cache lock");
        if self.evictions.load(Ordering::Acquire) != generation {
            return;
        }
        if entries.len() >= CACHE_MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(key, Cached { principal, expires_at, cached_at: Instant::now() });
    }

    /// Forgets every entry of this actor, credential (token or session id) or organization.
    pub fn evict(&self, id: Uuid) {
        let mut entries = self.entries.lock().expect("principal cache lock");
        self.evictions.fetch_add(1, Ordering::AcqRel);
        entries.retain(|_, entry| {
            entry.principal.id != id && entry.principal.credential.id() != Some(id) && entry.principal.org_id != id
        });
    }

    pub fn clear(&self) {
        let mut entries = self.entries.lock().expect("principal cache lock");
        self.evictions.fetch_add(1, Ordering::AcqRel);
        entries.clear();
    }

    /// True when a refusal of `org`'s `token` from `from` should be audited
    /// now: once a minute per client network (an IPv6 /64 counts as one),
    /// for at most [`REFUSAL_SOURCES_PER_MINUTE`] networks per token.
    fn refusal_due(&self, org: Uuid, token: Uuid, from: Option<&str>) -> bool {
        let current = |window: &RefusalWindow| window.started.elapsed() < CACHE_TTL;
        let source = from.and_then(|ip| ip.parse().ok()).map(crate::app::iam::rate_limit::client_key);
        let mut refusals = self.refusals.lock().expect("refusal lock");
        if !refusals.contains_key(&org) && refusals.len() >= REFUSAL_MAX_ORGS {
            refusals.retain(|_, tokens| tokens.values().any(current));
            if refusals.len() >= REFUSAL_MAX_ORGS {
                return false;
            }
        }
        let new_token = !refusals.get(&org).is_some_and(|tokens| tokens.contains_key(&token));
        if new_token && refusals.values().map(HashMap::len).sum::<usize>() >= REFUSAL_MAX_WINDOWS {
            refusals.values_mut().for_each(|tokens| tokens.retain(|_, window| current(window)));
            refusals.retain(|_, tokens| !tokens.is_empty());
            if refusals.values().map(HashMap::len).sum::<usize>() >= REFUSAL_MAX_WINDOWS {
                // The noisiest organization makes room: no tenant's revoked
                // tokens silence another's records.
                let noisiest = refusals.iter().max_by_key(|(_, tokens)| tokens.len()).map(|(org, _)| *org);
                if let Some(org) = noisiest {
                    refusals.remove(&org);
                }
            }
        }
        let tokens = refusals.entry(org).or_default();
        if !tokens.contains_key(&token) && tokens.len() >= REFUSAL_MAX_TOKENS_PER_ORG {
            tokens.retain(|_, window| current(window));
            if tokens.len() >= REFUSAL_MAX_TOKENS_PER_ORG {
                return false;
            }
        }
        let window = tokens.entry(token).or_insert_with(|| RefusalWindow { started: Instant::now(), sources: vec![] });
        if !current(window) {
            *window = RefusalWindow { started: Instant::now(), sources: vec![] };
        }
        if window.sources.contains(&source) || window.sources.len() >= REFUSAL_SOURCES_PER_MINUTE {
            return false;
        }
        window.sources.push(source);
        true
    }

    /// How many credentials are cached (for tests and metrics).
    pub fn len(&self) -> usize {
        self.entries.lock().expect("principal cache lock").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether evictions are being heard; without that the cache is bypassed.
    pub fn set_live(&self, live: bool) {
        if !live {
            self.clear();
        }
        self.live.store(live, Ordering::Release);
    }
}

/// Reads the parallel arrays of project ids and role names a lookup returns.
fn project_roles(ids: Option<Vec<Uuid>>, roles: Option<Vec<String>>) -> Vec<(Uuid, ProjectRole)> {
    ids.unwrap_or_default()
        .into_iter()
        .zip(roles.unwrap_or_default())
        .filter_map(|(id, role)| ProjectRole::parse(&role).map(|role| (id, role)))
        .collect()
}

fn scope(project: Option<Uuid>, actions: Option<Vec<String>>) -> Scope {
    Scope {
        project,
        actions: actions.map(|names| names.iter().filter_map(|name| moke_iam::Action::parse(name)).collect()),
    }
}

/// Whether the caller's credential (an API token or a session) is still
/// neither revoked nor expired in the database, whatever a cache says.
/// An exchanged CI token is live until it expires or its row is revoked.
pub(in crate::app) async fn credential_live(conn: &mut sqlx::PgConnection, principal: &Principal) -> Result<bool> {
    let id = match principal.credential {
        Credential::ApiToken(id) | Credential::Session { id, .. } => id,
        Credential::Exchanged { jti } => {
            if principal.expires_at.is_some_and(|at| at <= Utc::now().timestamp()) {
                return Ok(false);
            }
            return store::principals::exchanged_not_revoked(conn, jti).await;
        }
        Credential::None => return Ok(true),
    };
    store::principals::token_or_session_live(conn, id).await
}

/// Serializes a change made with the caller's credential (a token, a trust
/// policy, a service account, an invitation, a hook, an endpoint) with
/// whatever ends that credential: takes the rows a password reset or an
/// address proven takes first (the person's account, then the
/// organization's quota lock), then checks the credential is still live.
/// A revocation that commits first refuses the change; one that commits
/// later sees what the change made, and ends it too.
pub(in crate::app) async fn hold_live_credential(
    conn: &mut sqlx::PgConnection,
    ctx: &RequestContext,
    org: Uuid,
) -> Result<()> {
    if ctx.principal.kind == PrincipalKind::User && !ctx.principal.id.is_nil() {
        store::users::share(&mut *conn, ctx.principal.id).await?;
    }
    crate::app::kernel::quotas::lock_org(&mut *conn, org).await?;
    if !credential_live(&mut *conn, &ctx.principal).await? {
        return Err(Error::Unauthenticated);
    }
    Ok(())
}

/// `user` acting in `org` through their `session`, as an access token of
/// that session and organization authenticates: `None` when the session is
/// not theirs or not live, began at another organization's identity
/// provider, or they are no member of `org`; refused when `org`'s
/// credential policy does not admit the session.
pub(in crate::app) async fn session_principal(
    conn: &mut sqlx::PgConnection,
    user: Uuid,
    org: Uuid,
    session: Uuid,
) -> Result<Option<Principal>> {
    let Some(row) = store::principals::session_member(conn, user, org, session).await? else {
        return Ok(None);
    };
    // A session from an organization's identity provider acts there only.
    if row.sso_org_id.is_some_and(|bound| bound != org) {
        return Ok(None);
    }
    let Some(role) = OrgRole::parse(&row.role) else {
        return Ok(None);
    };
    let policy = MemberPolicy { require_sso: row.require_sso, require_verified_email: row.require_verified_email };
    policy.admits(role, row.sso_org_id.is_some(), row.verified)?;
    Ok(Some(Principal {
        id: user,
        kind: PrincipalKind::User,
        credential: Credential::Session { id: session, sso_org: row.sso_org_id },
        org_id: org,
        role,
        project_roles: project_roles(Some(row.project_ids), Some(row.project_roles)),
        scope: Scope::default(),
        expires_at: None,
    }))
}

/// What an organization's credential policy asks of a member's credential.
pub(in crate::app) struct MemberPolicy {
    pub require_sso: bool,
    pub require_verified_email: bool,
}

impl MemberPolicy {
    /// Refuses a person's credential the policy does not admit. Owners are
    /// exempt from `require_sso`, so an outage of the identity provider never
    /// locks an organization out of its own settings.
    pub fn admits(&self, role: OrgRole, through_sso: bool, email_verified: bool) -> Result<()> {
        if self.require_verified_email && !email_verified {
            return Err(Error::refused(
                "email_unverified",
                "this organization requires a verified e-mail address; verify yours and sign in again",
            ));
        }
        if self.require_sso && !through_sso && role != OrgRole::Owner {
            return Err(Error::refused(
                "sso_required",
                "this organization requires signing in through its identity provider (GET /v1/sso/{org}/login)",
            ));
        }
        Ok(())
    }
}

/// The token of an `Authorization` header's value (`Bearer <token>`);
/// anything else is refused.
pub fn bearer_of(authorization: &str) -> Result<&str> {
    let token = authorization.strip_prefix("Bearer ").or_else(|| authorization.strip_prefix("bearer "));
    token.map(str::trim).ok_or(Error::Unauthenticated)
}

impl App {
    /// The caller of `ctx`, by an `Authorization` header's value
    /// (`Bearer <token>`), within its rate limit: how every surface learns
    /// who is calling.
    pub async fn authenticate_request(&self, authorization: &str, ctx: RequestContext) -> Result<RequestContext> {
        Ok(self.authenticate_request_counted(authorization, ctx).await?.0)
    }

    /// [`App::authenticate_request`], with what the caller's rate limit still
    /// allows (for the `RateLimit-*` headers of the answer).
    pub async fn authenticate_request_counted(
        &self,
        authorization: &str,
        ctx: RequestContext,
    ) -> Result<(RequestContext, crate::app::iam::rate_limit::Allowance)> {
        let principal = self.authenticate(bearer_of(authorization)?, &ctx).await?;
        let allowance = self.rate_limits().check_principal(principal.id)?;
        Ok((RequestContext { principal, ..ctx }, allowance))
    }

    /// Turns a bearer credential into a principal. Unknown, revoked and
    /// expired credentials are all refused alike (401); the refusal of a
    /// known token is audited in its organization.
    pub async fn authenticate(&self, bearer: &str, meta: &RequestContext) -> Result<Principal> {
        if bearer.starts_with("moke_") {
            self.authenticate_api_token(bearer, meta).await
        } else {
            self.authenticate_access_token(bearer).await
        }
    }

    async fn authenticate_api_token(&self, bearer: &str, meta: &RequestContext) -> Result<Principal> {
        let hash = match parse(bearer) {
            Some(TokenKind::Legacy) => plain_hash(bearer),
            Some(_) => peppered_hash(self.vault().pepper(), bearer),
            None => return Err(Error::Unauthenticated),
        };
        if let Some(principal) = self.principal_cache().get(&hash) {
            return Ok(principal);
        }
        let generation = self.principal_cache().generation();
        // One round trip: the token, its owner's roles, the organization's
        // credential policy, and at most once a minute a use stamp.
        let row = store::principals::token_by_hash(&mut *self.db().acquire().await?, &hash[..]).await?;
        let Some(row) = row else {
            return Err(Error::Unauthenticated);
        };
        let (kind, id) = match (row.user_id, row.service_account_id) {
            (Some(user), _) => (PrincipalKind::User, user),
            (None, Some(account)) => (PrincipalKind::ServiceAccount, account),
            (None, None) => (PrincipalKind::ServiceAccount, row.id),
        };
        let role = row.role.as_deref().and_then(OrgRole::parse);
        let principal = Principal {
            id,
            kind,
            credential: Credential::ApiToken(row.id),
            org_id: row.org_id,
            role: role.unwrap_or(OrgRole::Viewer),
            project_roles: project_roles(Some(row.project_ids), Some(row.project_roles)),
            scope: scope(row.project_id, row.scopes),
            expires_at: row.expires_at.map(|at| at.timestamp()),
        };
        if !row.usable || role.is_none() {
            let reason = if row.revoked_at.is_some() {
                "revoked"
            } else if role.is_none() {
                "owner_not_a_member"
            } else {
                "expired"
            };
            if !self.principal_cache().refusal_due(row.org_id, row.id, meta.source_ip.as_deref()) {
                return Err(Error::Unauthenticated);
            }
            let ctx = RequestContext { principal, ..meta.clone() };
            let mut conn = self.db().acquire().await?;
            audit::insert(
                &mut conn,
                &ctx,
                row.org_id,
                "failure",
                AuditRecord {
                    action: "auth.token_rejected",
                    resource_type: "token",
                    resource_id: Some(TokenId::from_uuid(row.id).to_string()),
                    details: json!({ "reason": reason }),
                },
            )
            .await?;
            return Err(Error::Unauthenticated);
        }
        if kind == PrincipalKind::User {
            let policy =
                MemberPolicy { require_sso: row.require_sso, require_verified_email: row.require_verified_email };
            policy.admits(principal.role, row.issued_via.as_deref() == Some("sso"), row.verified.unwrap_or(false))?;
        }
        self.principal_cache().put(hash, principal.clone(), row.expires_at, generation);
        Ok(principal)
    }

    /// A signed access token (JWT) from a login session or a CI exchange.
    async fn authenticate_access_token(&self, bearer: &str) -> Result<Principal> {
        let key = plain_hash(bearer);
        if let Some(principal) = self.principal_cache().get(&key) {
            return Ok(principal);
        }
        let claims = self.vault().keyring().verify(bearer).map_err(|_| Error::Unauthenticated)?;
        let generation = self.principal_cache().generation();
        let org: OrgId = claims.org.parse().map_err(|_| Error::Unauthenticated)?;
        let expires_at = DateTime::from_timestamp(claims.exp, 0);
        let principal = if let Ok(user) = claims.sub.parse::<UserId>() {
            let session: SessionId =
                claims.sid.as_deref().and_then(|s| s.parse().ok()).ok_or(Error::Unauthenticated)?;
            let mut conn = self.db().acquire().await?;
            session_principal(&mut conn, user.uuid(), org.uuid(), session.uuid())
                .await?
                .ok_or(Error::Unauthenticated)?
        } else if let Ok(account) = claims.sub.parse::<ServiceAccountId>() {
            let row = store::principals::exchanged_account(
                &mut *self.db().acquire().await?,
                account.uuid(),
                org.uuid(),
                claims.jti.parse::<Uuid>().ok(),
            )
            .await?
            .ok_or(Error::Unauthenticated)?;
            Principal {
                id: account.uuid(),
                kind: PrincipalKind::ServiceAccount,
                credential: Credential::Exchanged { jti: claims.jti.parse().unwrap_or_default() },
                org_id: org.uuid(),
                role: OrgRole::parse(&row.role).ok_or(Error::Unauthenticated)?,
                project_roles: project_roles(Some(row.project_ids), Some(row.project_roles)),
                scope: Scope::default(),
                expires_at: Some(claims.exp),
            }
        } else {
            return Err(Error::Unauthenticated);
        };
        self.principal_cache().put(key, principal.clone(), expires_at, generation);
        Ok(principal)
    }
}

#[cfg(test)]
mod refusal_tests {
    use super::*;

    #[test]
    fn a_refused_token_is_recorded_from_a_few_networks_a_minute() {
        let cache = PrincipalCache::default();
        let (org, token) = (Uuid::from_u128(10), Uuid::from_u128(1));
        assert!(cache.refusal_due(org, token, Some("2001:db8::1")));
        assert!(!cache.refusal_due(org, token, Some("2001:db8::2")), "the same /64 is one network");
        for n in 1..REFUSAL_SOURCES_PER_MINUTE {
            assert!(cache.refusal_due(org, token, Some(&format!("192.0.2.{n}"))));
        }
        assert!(!cache.refusal_due(org, token, Some("198.51.100.1")), "one network more than a minute records");
        assert!(cache.refusal_due(org, Uuid::from_u128(2), Some("198.51.100.1")), "another token is recorded");
    }

    #[test]
    fn one_organizations_refusals_never_silence_anothers() {
        let cache = PrincipalCache::default();
        let (noisy, quiet) = (Uuid::from_u128(10), Uuid::from_u128(11));
        for n in 0..REFUSAL_MAX_TOKENS_PER_ORG as u128 {
            assert!(cache.refusal_due(noisy, Uuid::from_u128(1_000 + n), Some("192.0.2.1")));
        }
        assert!(!cache.refusal_due(noisy, Uuid::from_u128(1), Some("192.0.2.1")), "the noisy organization is full");
        assert!(cache.refusal_due(quiet, Uuid::from_u128(2), Some("192.0.2.1")), "the other still records");
    }

    #[test]
    fn many_noisy_organizations_never_silence_a_quiet_one() {
        let cache = PrincipalCache::default();
        let orgs = (REFUSAL_MAX_WINDOWS / REFUSAL_MAX_TOKENS_PER_ORG) as u128;
        for org in 0..orgs {
            for n in 0..REFUSAL_MAX_TOKENS_PER_ORG as u128 {
                cache.refusal_due(Uuid::from_u128(org), Uuid::from_u128(org << 32 | n), Some("192.0.2.1"));
            }
        }
        let quiet = Uuid::from_u128(u128::MAX);
        assert!(
            cache.refusal_due(quiet, Uuid::from_u128(7), Some("192.0.2.1")),
            "recorded though every slot was taken"
        );
        let windows: usize = cache.refusals.lock().unwrap().values().map(HashMap::len).sum();
        assert!(windows <= REFUSAL_MAX_WINDOWS, "{windows}");
    }
}
