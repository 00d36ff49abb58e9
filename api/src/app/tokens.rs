//! Organization-scoped API tokens: minting (shown once), listing, revoking,
//! and authenticating a bearer token into a [`Principal`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use moke_iam::token::{NewToken, hash_token, is_well_formed};
use moke_iam::{Action, OrgRole, Principal, PrincipalKind};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use super::audit::{self, AuditRecord};
use super::error::Validator;
use super::{App, Error, PageRequest, RequestContext, Result};
use crate::ids::{OrgId, TokenId};
use crate::model::{Page, TokenCreate, TokenCreated, TokenView};

/// How long a verified token is trusted without asking the database. Also
/// how often its `last_used_at` is refreshed.
const CACHE_TTL: Duration = Duration::from_secs(60);
const CACHE_MAX_ENTRIES: usize = 100_000;

/// Verified tokens of this process, keyed by hash. Entries are evicted by
/// the `moke_tokens` notification on revocation (see
/// [`super::notifications`]) and are used only while that listener is live.
#[derive(Default)]
pub struct TokenCache {
    entries: Mutex<HashMap<[u8; 32], CachedToken>>,
    live: AtomicBool,
    /// Bumped by every eviction, so a lookup that raced one is not cached.
    evictions: AtomicU64,
}

struct CachedToken {
    principal: Principal,
    expires_at: Option<DateTime<Utc>>,
    cached_at: Instant,
}

impl TokenCache {
    fn get(&self, hash: &[u8; 32]) -> Option<Principal> {
        if !self.live.load(Ordering::Acquire) {
            return None;
        }
        let entries = self.entries.lock().expect("token cache lock");
        let entry = entries.get(hash)?;
        let fresh = entry.cached_at.elapsed() < CACHE_TTL && entry.expires_at.is_none_or(|at| at > Utc::now());
        fresh.then(|| entry.principal.clone())
    }

    /// The eviction count to pass to [`TokenCache::put`] after a lookup.
    fn generation(&self) -> u64 {
        self.evictions.load(Ordering::Acquire)
    }

    /// Caches a lookup made at eviction `generation`, unless an eviction
    /// happened since (the lookup may predate a revocation).
    fn put(&self, hash: [u8; 32], principal: Principal, expires_at: Option<DateTime<Utc>>, generation: u64) {
        if !self.live.load(Ordering::Acquire) {
            return;
        }
        let mut entries = self.entries.lock().expect("token cache lock");
        if self.evictions.load(Ordering::Acquire) != generation {
            return;
        }
        if entries.len() >= CACHE_MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(hash, CachedToken { principal, expires_at, cached_at: Instant::now() });
    }

    /// Forgets the token with this id.
    pub fn evict(&self, token_id: Uuid) {
        let mut entries = self.entries.lock().expect("token cache lock");
        self.evictions.fetch_add(1, Ordering::AcqRel);
        entries.retain(|_, entry| entry.principal.id != token_id);
    }

    pub fn clear(&self) {
        let mut entries = self.entries.lock().expect("token cache lock");
        self.evictions.fetch_add(1, Ordering::AcqRel);
        entries.clear();
    }

    /// How many tokens are cached (for tests and metrics).
    pub fn len(&self) -> usize {
        self.entries.lock().expect("token cache lock").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether revocations are being heard; without that the cache is bypassed.
    pub fn set_live(&self, live: bool) {
        if !live {
            self.clear();
        }
        self.live.store(live, Ordering::Release);
    }
}

const MIN_LIFETIME_SECONDS: i64 = 300;
const MAX_LIFETIME_SECONDS: i64 = 365 * 24 * 3600;

struct TokenRow {
    id: Uuid,
    name: String,
    role: String,
    token_hint: String,
    created_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    last_used_at: Option<DateTime<Utc>>,
    revoked_at: Option<DateTime<Utc>>,
}

impl TokenRow {
    fn into_view(self) -> TokenView {
        TokenView {
            id: TokenId::from_uuid(self.id),
            name: self.name,
            role: OrgRole::parse(&self.role).unwrap_or(OrgRole::Viewer),
            hint: self.token_hint,
            created_at: self.created_at,
            expires_at: self.expires_at,
            last_used_at: self.last_used_at,
            revoked_at: self.revoked_at,
        }
    }
}

/// Mints a token inside the caller's transaction and audits it.
pub(super) async fn insert_token(
    tx: &mut PgConnection,
    ctx: &RequestContext,
    name: &str,
    role: OrgRole,
    expires_at: Option<DateTime<Utc>>,
) -> Result<TokenCreated> {
    let secret = NewToken::generate();
    let id = TokenId::generate();
    let creator = (!ctx.principal.id.is_nil()).then_some(ctx.principal.id);
    let row = sqlx::query_as!(
        TokenRow,
        "INSERT INTO api_tokens (id, org_id, name, role, token_hash, token_hint, created_by, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         RETURNING id, name, role, token_hint, created_at, expires_at, last_used_at, revoked_at",
        id.uuid(),
        ctx.principal.org_id,
        name,
        role.as_str(),
        &secret.hash[..],
        secret.hint(),
        creator,
        expires_at,
    )
    .fetch_one(&mut *tx)
    .await?;
    audit::record(
        tx,
        ctx,
        AuditRecord {
            action: "token.create",
            resource_type: "token",
            resource_id: Some(id.to_string()),
            details: json!({ "name": name, "role": role.as_str(), "expires_at": expires_at }),
        },
    )
    .await?;
    Ok(TokenCreated { view: row.into_view(), token: secret.plaintext })
}

impl App {
    /// Turns a bearer token into a principal, recording its use. Unknown,
    /// revoked and expired tokens are all refused alike; the refusal of a
    /// known token is audited in its organization.
    pub async fn authenticate(&self, bearer: &str, meta: &RequestContext) -> Result<Principal> {
        if !is_well_formed(bearer) {
            return Err(Error::Unauthenticated);
        }
        let hash = hash_token(bearer);
        if let Some(principal) = self.token_cache().get(&hash) {
            return Ok(principal);
        }
        let generation = self.token_cache().generation();
        // One round trip: look the token up and, at most once a minute, stamp its use.
        let row = sqlx::query!(
            r#"WITH found AS (
                   SELECT id, org_id, role, revoked_at, expires_at,
                          (revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())) AS usable,
                          last_used_at
                   FROM api_tokens WHERE token_hash = $1
               ), stamped AS (
                   UPDATE api_tokens SET last_used_at = now()
                   WHERE id = (SELECT id FROM found WHERE usable
                               AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds'))
                   RETURNING id
               )
               SELECT id AS "id!", org_id AS "org_id!", role AS "role!", usable AS "usable!",
                      revoked_at, expires_at
               FROM found"#,
            &hash[..],
        )
        .fetch_optional(self.db())
        .await?;
        let Some(row) = row else {
            return Err(Error::Unauthenticated);
        };
        let principal = Principal {
            id: row.id,
            kind: PrincipalKind::ApiToken,
            org_id: row.org_id,
            role: OrgRole::parse(&row.role).unwrap_or(OrgRole::Viewer),
        };
        if !row.usable {
            let reason = if row.revoked_at.is_some() { "revoked" } else { "expired" };
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
        self.token_cache().put(hash, principal.clone(), row.expires_at, generation);
        Ok(principal)
    }

    /// `token_create`: a new token, at most as powerful as its creator.
    pub async fn token_create(&self, ctx: &RequestContext, org: OrgId, input: TokenCreate) -> Result<TokenCreated> {
        self.org_authorized(ctx, org, Action::ManageCredentials).await?;
        let mut v = Validator::new();
        v.check(
            !input.name.trim().is_empty() && input.name.len() <= 100,
            "name",
            "invalid",
            "must be 1-100 characters",
        );
        let role = OrgRole::parse(&input.role);
        match role {
            None => v.push("role", "invalid", "must be owner, admin, billing, member or viewer"),
            // A lower enum position is a more powerful role.
            Some(role) => v.check(
                role >= ctx.principal.role,
                "role",
                "exceeds_own_role",
                format!("cannot grant more than your own role ({})", ctx.principal.role.as_str()),
            ),
        }
        if let Some(seconds) = input.expires_in_seconds {
            v.check(
                (MIN_LIFETIME_SECONDS..=MAX_LIFETIME_SECONDS).contains(&seconds),
                "expires_in_seconds",
                "out_of_range",
                format!("must be between {MIN_LIFETIME_SECONDS} and {MAX_LIFETIME_SECONDS}"),
            );
        }
        v.finish()?;
        let role = role.expect("validated");
        let expires_at = input.expires_in_seconds.map(|s| Utc::now() + chrono::Duration::seconds(s));
        let input = &input;
        self.idempotent(ctx, "token_create", &(org, input), |claim| async move {
            let mut tx = self.db().begin().await?;
            let created = insert_token(&mut tx, ctx, &input.name, role, expires_at).await?;
            // The stored replay never holds the secret: a retry learns the id only.
            let replay = TokenCreated { token: String::new(), ..created.clone() };
            super::idempotency::complete(claim.as_ref(), &mut tx, 201, &replay).await?;
            tx.commit().await?;
            Ok(created)
        })
        .await
    }

    /// `token_list`: the organization's tokens, never their secrets.
    pub async fn token_list(&self, ctx: &RequestContext, org: OrgId, page: PageRequest) -> Result<Page<TokenView>> {
        self.org_authorized(ctx, org, Action::ReadCredentials).await?;
        let rows = sqlx::query_as!(
            TokenRow,
            "SELECT id, name, role, token_hint, created_at, expires_at, last_used_at, revoked_at
             FROM api_tokens WHERE org_id = $1 AND ($2::uuid IS NULL OR id > $2)
             ORDER BY id LIMIT $3",
            org.uuid(),
            page.after,
            page.fetch_limit(),
        )
        .fetch_all(self.db())
        .await?;
        Ok(page.page(rows.into_iter().map(TokenRow::into_view).collect(), |t| t.id.uuid()))
    }

    /// `token_view`: one token.
    pub async fn token_view(&self, ctx: &RequestContext, org: OrgId, id: TokenId) -> Result<TokenView> {
        self.org_authorized(ctx, org, Action::ReadCredentials).await?;
        sqlx::query_as!(
            TokenRow,
            "SELECT id, name, role, token_hint, created_at, expires_at, last_used_at, revoked_at
             FROM api_tokens WHERE org_id = $1 AND id = $2",
            org.uuid(),
            id.uuid(),
        )
        .fetch_optional(self.db())
        .await?
        .map(TokenRow::into_view)
        .ok_or_else(|| Error::not_found("token", id.to_string()))
    }

    /// `token_delete`: revokes a token; the next request made with it is refused.
    /// Revoking an already revoked token succeeds and changes nothing.
    pub async fn token_delete(&self, ctx: &RequestContext, org: OrgId, id: TokenId) -> Result<()> {
        self.org_authorized(ctx, org, Action::ManageCredentials).await?;
        let mut tx = self.db().begin().await?;
        let row = sqlx::query!(
            "UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, now())
             WHERE org_id = $1 AND id = $2 RETURNING name",
            org.uuid(),
            id.uuid(),
        )
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| Error::not_found("token", id.to_string()))?;
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: "token.revoke",
                resource_type: "token",
                resource_id: Some(id.to_string()),
                details: json!({ "name": row.name }),
            },
        )
        .await?;
        tx.commit().await?;
        // Other gateways hear of it through the `moke_tokens` notification.
        self.token_cache().evict(id.uuid());
        Ok(())
    }
}
