//! Login sessions: password sign-in with per-account backoff, short-lived
//! signed access tokens, rotating refresh tokens whose reuse ends the whole
//! session, logout, and signing-key rotation.

use chrono::Utc;
use moke_iam::jwt::AccessClaims;
use moke_iam::token::{plain_hash, random_secret};
use moke_iam::{Credential, OrgRole, password};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::error::Validator;
use crate::app::iam::principals::MemberPolicy;
use crate::app::iam::store;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::{App, Error, RequestContext, ResourceRef, Result, validate};
use crate::ids::{OrgId, SessionId, UserId};
use crate::model::*;

/// Refresh tokens are `mkr_` and 43 random characters.
const REFRESH_PREFIX: &str = "mkr_";

/// How a session began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::app) enum SessionMethod {
    Password,
    /// At this organization's identity provider: the session acts there only.
    Sso {
        org: Uuid,
    },
}

impl SessionMethod {
    fn as_str(self) -> &'static str {
        match self {
            SessionMethod::Password => "password",
            SessionMethod::Sso { .. } => "sso",
        }
    }
    fn sso_org(self) -> Option<Uuid> {
        match self {
            SessionMethod::Password => None,
            SessionMethod::Sso { org } => Some(org),
        }
    }
}

impl App {
    /// Signs an access token for a principal of `org`.
    pub(in crate::app) fn sign_access_token(
        &self,
        sub: String,
        org: Uuid,
        sid: Option<String>,
        lifetime: i64,
        jti: Uuid,
    ) -> String {
        let keyring = self.vault().keyring();
        let now = Utc::now().timestamp();
        keyring.sign(&AccessClaims {
            iss: keyring.issuer().to_string(),
            aud: keyring.audience().to_string(),
            sub,
            exp: now + lifetime,
            nbf: now,
            iat: now,
            jti: jti.to_string(),
            org: OrgId::from_uuid(org).to_string(),
            sid,
        })
    }

    /// A new refresh token for `session`, stored hashed.
    async fn new_refresh_token(&self, tx: &mut PgConnection, session: Uuid) -> Result<String> {
        let token = format!("{REFRESH_PREFIX}{}", random_secret(43));
        store::sessions::insert_refresh_token(tx, &plain_hash(&token)[..], session).await?;
        Ok(token)
    }

    fn session_tokens(&self, user: Uuid, org: Uuid, session: Uuid, refresh_token: String) -> SessionTokens {
        let lifetime = self.config().auth.access_token_seconds;
        let sid = SessionId::from_uuid(session);
        SessionTokens {
            access_token: self.sign_access_token(
                UserId::from_uuid(user).to_string(),
                org,
                Some(sid.to_string()),
                lifetime,
                Uuid::now_v7(),
            ),
            token_type: "Bearer".to_string(),
            expires_in: lifetime,
            refresh_token,
            organization: OrgId::from_uuid(org),
            session: sid,
        }
    }

    /// Starts a session for `user` in `org` inside the caller's transaction.
    pub(in crate::app) async fn start_session(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        user: Uuid,
        org: Uuid,
        method: SessionMethod,
    ) -> Result<SessionTokens> {
        let session = SessionId::generate().uuid();
        let new = store::sessions::NewSession {
            id: session,
            user,
            org,
            expires_at: Utc::now() + chrono::Duration::days(self.config().auth.session_days),
            source_ip: ctx.source_ip.as_deref(),
            user_agent: ctx.user_agent.as_deref(),
            method: method.as_str(),
            sso_org: method.sso_org(),
        };
        store::sessions::insert(&mut *tx, new).await?;
        let refresh = self.new_refresh_token(tx, session).await?;
        Ok(self.session_tokens(user, org, session, refresh))
    }

    /// The organization a person signing in with a password acts in: the
    /// one asked for (id or name), or their oldest membership whose policy
    /// admits a password session. Another organization is "not found"; one
    /// whose policy refuses the session says why.
    async fn choose_org(&self, conn: &mut PgConnection, user: Uuid, asked: Option<&str>) -> Result<(Uuid, OrgRole)> {
        let reference = asked.map(ResourceRef::<crate::ids::OrgKind>::parse);
        let rows = store::memberships::password_sign_in_orgs(
            conn,
            user,
            reference.as_ref().and_then(|r| r.id()),
            reference.as_ref().and_then(|r| r.name()),
        )
        .await?;
        let mut refusal = None;
        for row in rows {
            let role = OrgRole::parse(&row.role).unwrap_or(OrgRole::Viewer);
            let policy =
                MemberPolicy { require_sso: row.require_sso, require_verified_email: row.require_verified_email };
            match policy.admits(role, false, row.verified) {
                Ok(()) => return Ok((row.org_id, role)),
                Err(error) => refusal = refusal.or(Some(error)),
            }
        }
        match (refusal, asked) {
            (Some(refused), _) => Err(refused),
            (None, Some(asked)) => Err(Error::not_found("organization", asked)),
            (None, None) => Err(Error::conflict("no_membership", "this account belongs to no organization")),
        }
    }

    /// `login`: e-mail and password for a session. Wrong passwords for one
    /// address back off exponentially after a few; unknown addresses cost
    /// the same time as known ones.
    pub async fn login(&self, ctx: &RequestContext, input: LoginRequest) -> Result<SessionTokens> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        let mut v = Validator::new();
        let email = validate::email(&mut v, "email", &input.email);
        v.check(!input.password.is_empty(), "password", "required", "must not be empty");
        v.finish()?;
        let mut conn = self.db().acquire().await?;
        let blocked = store::users::blocked_seconds(&mut conn, &email).await?;
        if let Some(seconds) = blocked {
            return Err(Error::RateLimited {
                limit: self.config().rate_limits.login_failures_before_backoff as u32,
                window_seconds: self.config().rate_limits.login_backoff_max_seconds as u64,
                retry_after_seconds: seconds.ceil().max(1.0) as u64,
            });
        }
        let user = store::users::password_by_email(&mut conn, &email).await?;
        drop(conn);
        let stored = user.as_ref().and_then(|u| u.password_hash.clone());
        let attempt = input.password.clone();
        let matches = tokio::task::spawn_blocking(move || match stored {
            Some(stored) => password::verify(&attempt, &stored),
            None => {
                password::verify_nothing(&attempt);
                false
            }
        })
        .await
        .map_err(|e| Error::Internal(anyhow::anyhow!("password check task: {e}")))?;
        let mut tx = self.db().begin().await?;
        let Some(user) = user.filter(|_| matches) else {
            let limits = &self.config().rate_limits;
            store::users::record_login_failure(
                &mut tx,
                &email,
                limits.login_failures_before_backoff,
                limits.login_backoff_max_seconds as f64,
            )
            .await?;
            let known = store::users::id_by_email(&mut tx, &email).await?;
            match known {
                Some(id) => {
                    self.audit_in_user_orgs(
                        &mut tx,
                        ctx,
                        id,
                        "auth.login",
                        "failure",
                        json!({ "reason": "bad_password" }),
                    )
                    .await?
                }
                None => {
                    audit::insert(
                        &mut tx,
                        ctx,
                        None,
                        "failure",
                        AuditRecord {
                            action: "auth.login",
                            resource_type: "user",
                            resource_id: None,
                            details: json!({ "reason": "unknown_email", "email": email }),
                        },
                    )
                    .await?
                }
            }
            self.commit(ctx, tx).await?;
            return Err(Error::Unauthenticated);
        };
        // The password checked is still the account's: a reset, or an owner
        // proving the address, that committed meanwhile wins (they take this
        // row first, so the two serialize here).
        let unchanged = store::users::share_version(&mut tx, user.id).await? == user.version;
        if !unchanged {
            return Err(Error::Unauthenticated);
        }
        store::users::clear_login_failures(&mut tx, &email).await?;
        let (org, role) = self.choose_org(&mut tx, user.id, input.organization.as_deref()).await?;
        let actor = self.user_context(ctx, user.id, org, role);
        let tokens = self.start_session(&mut tx, &actor, user.id, org, SessionMethod::Password).await?;
        audit::record(
            &mut tx,
            &actor,
            AuditRecord {
                action: "auth.login",
                resource_type: "session",
                resource_id: Some(tokens.session.to_string()),
                details: json!({ "method": "password" }),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        Ok(tokens)
    }

    /// `token_refresh`: spends a refresh token for a new pair. A refresh
    /// token used twice means it leaked: the whole session ends.
    pub async fn token_refresh(&self, ctx: &RequestContext, input: RefreshRequest) -> Result<SessionTokens> {
        let mut tx = self.db().begin().await?;
        let row = store::sessions::lock_by_refresh_token(&mut tx, &plain_hash(&input.refresh_token)[..])
            .await?
            .ok_or(Error::Unauthenticated)?;
        if row.used_at.is_some() {
            if store::sessions::revoke_for_reuse(&mut tx, row.session_id).await? {
                // A replayed refresh token means it was stolen: whatever the
                // thief got from hosted clusters ends too.
                let bound = row.sso_org_id;
                self.revoke_user_cluster_credentials(&mut tx, ctx, row.user_id, bound, "refresh_token_reuse").await?;
                let actor = self.user_context(ctx, row.user_id, row.org_id, OrgRole::Viewer);
                audit::insert(
                    &mut tx,
                    &actor,
                    row.org_id,
                    "failure",
                    AuditRecord {
                        action: "auth.refresh_token_reuse",
                        resource_type: "session",
                        resource_id: Some(SessionId::from_uuid(row.session_id).to_string()),
                        details: json!({ "effect": "session revoked" }),
                    },
                )
                .await?;
            }
            self.commit(ctx, tx).await?;
            self.principal_cache().evict(row.session_id);
            return Err(Error::Unauthenticated);
        }
        if row.revoked_at.is_some() || row.expires_at <= Utc::now() {
            return Err(Error::Unauthenticated);
        }
        let org = match (input.organization.as_deref(), row.sso_org_id) {
            (None, _) => row.org_id,
            // A session from an identity provider never leaves its organization.
            (Some(asked), Some(bound)) => {
                let reference = ResourceRef::<crate::ids::OrgKind>::parse(asked);
                if !store::orgs::is_named(&mut tx, bound, reference.id(), reference.name()).await? {
                    return Err(Error::refused(
                        "sso_session_bound",
                        "this session comes from an organization's identity provider and acts only there; \
                         sign in again to act elsewhere",
                    ));
                }
                bound
            }
            (Some(asked), None) => self.choose_org(&mut tx, row.user_id, Some(asked)).await?.0,
        };
        store::sessions::spend_refresh_token(&mut tx, &plain_hash(&input.refresh_token)[..]).await?;
        store::sessions::touch(&mut tx, row.session_id, org, ctx.source_ip.as_deref()).await?;
        let refresh = self.new_refresh_token(&mut tx, row.session_id).await?;
        self.commit(ctx, tx).await?;
        Ok(self.session_tokens(row.user_id, org, row.session_id, refresh))
    }

    /// `logout`: ends the session of the given refresh token, or of the
    /// caller's access token. Ending an ended session succeeds.
    pub async fn logout(&self, ctx: &RequestContext, input: LogoutRequest) -> Result<()> {
        let session = match (&input.refresh_token, ctx.principal.credential) {
            (Some(token), _) => {
                let mut conn = self.db().acquire().await?;
                store::sessions::of_refresh_token(&mut conn, &plain_hash(token)[..])
                    .await?
                    .ok_or(Error::Unauthenticated)?
            }
            (None, Credential::Session { id, .. }) => id,
            (None, _) => {
                return Err(Error::invalid_field("refresh_token", "required", "send the session's refresh token"));
            }
        };
        let mut tx = self.db().begin().await?;
        let ended = store::sessions::revoke_for_logout(&mut tx, session).await?;
        if let Some(ended) = ended {
            let actor = self.user_context(ctx, ended.user_id, ended.org_id, ctx.principal.role);
            audit::insert(
                &mut tx,
                &actor,
                ended.org_id,
                "success",
                AuditRecord {
                    action: "auth.logout",
                    resource_type: "session",
                    resource_id: Some(SessionId::from_uuid(session).to_string()),
                    details: json!({}),
                },
            )
            .await?;
        }
        self.commit(ctx, tx).await?;
        self.principal_cache().evict(session);
        Ok(())
    }

    /// The session making the request, and the organization it is bound
    /// to if it came from an identity provider. Only sessions manage sessions.
    fn current_session(ctx: &RequestContext) -> Result<(Uuid, Option<Uuid>)> {
        match ctx.principal.credential {
            Credential::Session { id, sso_org } if ctx.principal.kind == moke_iam::PrincipalKind::User => {
                Ok((id, sso_org))
            }
            _ => Err(Error::refused("session_required", "sign in to manage your sessions (an API token may not)")),
        }
    }

    /// `session_list`: the caller's live sessions, newest first. A session
    /// from an identity provider sees only that provider's sessions.
    pub async fn session_list(&self, ctx: &RequestContext, page: crate::app::PageRequest) -> Result<Page<SessionView>> {
        let (current, bound) = Self::current_session(ctx)?;
        let mut conn = self.db().acquire().await?;
        let rows = store::sessions::list_live(&mut conn, ctx.principal.id, bound, &page).await?;
        let views = rows
            .into_iter()
            .map(|row| SessionView {
                id: SessionId::from_uuid(row.id),
                current: row.id == current,
                method: row.method,
                organization: OrgId::from_uuid(row.org_id),
                organization_name: row.org_name,
                created_at: row.created_at,
                expires_at: row.expires_at,
                last_used_at: row.last_used_at,
                created_from_ip: row.source_ip,
                last_ip: row.last_ip,
                user_agent: row.user_agent,
            })
            .collect();
        Ok(page.page(views, |s| s.id.uuid()))
    }

    /// `session_delete`: ends one of the caller's sessions (the current one
    /// too: that is signing out).
    pub async fn session_delete(&self, ctx: &RequestContext, id: SessionId) -> Result<()> {
        let (_, bound) = Self::current_session(ctx)?;
        self.end_sessions(ctx, bound, Some(id.uuid()), None).await?;
        Ok(())
    }

    /// `session_delete_others`: ends every session of the caller but the current one.
    pub async fn session_delete_others(&self, ctx: &RequestContext) -> Result<SessionsEnded> {
        let (current, bound) = Self::current_session(ctx)?;
        let ended = self.end_sessions(ctx, bound, None, Some(current)).await?;
        Ok(SessionsEnded { ended })
    }

    /// Ends the caller's sessions: `only` that one, or all but `except`;
    /// audited per session, evicted from every gateway's cache.
    async fn end_sessions(
        &self,
        ctx: &RequestContext,
        bound: Option<Uuid>,
        only: Option<Uuid>,
        except: Option<Uuid>,
    ) -> Result<usize> {
        let mut tx = self.db().begin().await?;
        let ended = store::sessions::revoke_by_owner(&mut tx, ctx.principal.id, bound, only, except).await?;
        if let (Some(only), true) = (only, ended.is_empty()) {
            return Err(Error::not_found("session", SessionId::from_uuid(only).to_string()));
        }
        // Ending another session says it may be stolen: kubeconfigs it
        // obtained end too (the person downloads new ones). Signing out of
        // the current one keeps them, as logout does.
        let current = Self::current_session(ctx).map(|(id, _)| id).ok();
        if ended.iter().any(|session| Some(session.id) != current) {
            self.revoke_user_cluster_credentials(&mut tx, ctx, ctx.principal.id, bound, "sessions_revoked").await?;
        }
        for session in &ended {
            audit::insert(
                &mut tx,
                ctx,
                session.org_id,
                "success",
                AuditRecord {
                    action: "auth.session_revoke",
                    resource_type: "session",
                    resource_id: Some(SessionId::from_uuid(session.id).to_string()),
                    details: json!({}),
                },
            )
            .await?;
        }
        self.commit(ctx, tx).await?;
        for session in &ended {
            self.principal_cache().evict(session.id);
        }
        Ok(ended.len())
    }

    /// Revokes a person's cluster credentials in every organization they
    /// belong to (or only `bound`, for a session from an identity provider).
    pub(in crate::app) async fn revoke_user_cluster_credentials(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        user: Uuid,
        bound: Option<Uuid>,
        reason: &str,
    ) -> Result<()> {
        let orgs = store::memberships::org_ids_of_user_in(tx, user, bound).await?;
        let text = UserId::from_uuid(user).to_string();
        for org in orgs {
            let reach = crate::app::infra::clusters::pki::Reach::Organization;
            crate::app::infra::clusters::pki::revoke_principal_credentials(
                self, tx, ctx, org, user, &text, reason, reach,
            )
            .await?;
        }
        Ok(())
    }

    /// Makes a new JWT signing key current (operators: `moke-server
    /// rotate-signing-key`). Needs Vault: 503 while it is down.
    pub async fn rotate_signing_key(&self) -> Result<SigningKeyRotated> {
        let kid = self.vault().rotate_signing_key().await?;
        tracing::info!(%kid, "JWT signing key rotated");
        Ok(SigningKeyRotated { kid })
    }

    /// The public signing keys (`/.well-known/jwks.json`).
    pub fn jwks(&self) -> serde_json::Value {
        self.vault().keyring().jwks()
    }
}
