//! OpenID Connect single sign-on, per organization: the authorization-code
//! flow with PKCE, `state` and `nonce` (each login single use, and bound to
//! the browser that started it by a cookie), the authorization response's
//! `iss` checked (RFC 9207), ID tokens verified by `openidconnect`.
//!
//! An SSO identity is keyed by (organization, issuer, subject), never by
//! e-mail address. A new identity becomes an account just in time only for
//! an address in a domain the organization has proven it owns (DNS, see
//! [`crate::app::iam::domains`]); one whose address belongs to an existing account is
//! linked only when that account's owner confirms, signed in or through a
//! link mailed to their verified address; an account whose address was never
//! verified is never linked. A session from an organization's identity
//! provider acts in that organization only. The client secret is stored only
//! as Vault transit ciphertext.

use chrono::Utc;
use moke_iam::token::{plain_hash, random_secret};
use moke_iam::{Action, Credential, OrgRole, PrincipalKind};
use openidconnect::core::{CoreAuthenticationFlow, CoreClient, CoreProviderMetadata};
use openidconnect::{
    AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl, Nonce, PkceCodeChallenge, PkceCodeVerifier,
    RedirectUrl, Scope, TokenResponse,
};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::authz::Lock;
use crate::app::error::Validator;
use crate::app::iam::sessions::SessionMethod;
use crate::app::iam::store;
use crate::app::iam::store::sso::ProviderRow;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::kernel::mail::Mail;
use crate::app::{App, Error, RequestContext, ResourceRef, Result};
use crate::ids::{OrgId, OrgKind, UserId};
use crate::model::*;

/// How long a started login may take.
const LOGIN_MINUTES: i64 = 10;

/// What an SSO sign-in that signs nobody in answers, whatever the reason.
const LINK_DETAIL: &str = "if a Moke account uses this address, it signs in through this identity only once its \
     owner confirms: signed in (POST /v1/me/sso-links/confirm with link_token) or through the link mailed to it";

/// Link e-mails one address receives in an hour at most.
const LINK_MAILS_PER_HOUR: i64 = 3;

/// Why an SSO callback was refused; recorded in the audit log.
fn refused(reason: &'static str) -> (Error, &'static str) {
    (Error::Unauthenticated, reason)
}

/// A database failure during an SSO callback, as its audit reason names it.
fn database(error: Error) -> (Error, &'static str) {
    (error, "database")
}

fn is_domain(text: &str) -> bool {
    text.len() <= 253
        && text.contains('.')
        && text.split('.').all(|label| {
            !label.is_empty() && label.len() <= 63 && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

impl App {
    async fn discover(&self, issuer: &str) -> Result<CoreProviderMetadata, String> {
        let issuer = IssuerUrl::new(issuer.to_string()).map_err(|e| e.to_string())?;
        CoreProviderMetadata::discover_async(issuer, self.outbound()).await.map_err(|e| format!("{e}"))
    }

    fn sso_view(&self, row: ProviderRow, org_name: &str) -> SsoConfigView {
        SsoConfigView {
            issuer: row.issuer,
            client_id: row.client_id,
            allowed_domains: row.allowed_domains,
            default_role: OrgRole::parse(&row.default_role).unwrap_or(OrgRole::Viewer),
            login_url: format!("{}/v1/sso/{org_name}/login", self.config().http.public_url),
            redirect_uri: self.config().auth.sso_redirect_uri.clone(),
            etag: crate::app::etag(row.org_id, row.version),
            updated_at: row.updated_at,
        }
    }

    /// `sso_config_set`: configures (or replaces) the organization's identity
    /// provider; `if_match` guards against lost updates (while none is
    /// configured, any `If-Match` fails).
    pub async fn sso_config_set(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        if_match: Option<&str>,
        input: SsoConfigSet,
    ) -> Result<SsoConfigView> {
        self.org_authorized(ctx, org, Action::ManageSso).await?;
        let mut v = Validator::new();
        let secure = input.issuer.starts_with("https://")
            || (self.config().auth.allow_insecure_issuers && input.issuer.starts_with("http://"));
        v.check(secure, "issuer", "invalid", "must be an https:// URL");
        v.check(
            !input.client_id.is_empty() && input.client_id.chars().count() <= 255,
            "client_id",
            "invalid",
            "1-255 characters",
        );
        v.check(
            !input.client_secret.is_empty() && input.client_secret.chars().count() <= 1024,
            "client_secret",
            "invalid",
            "1-1024 characters",
        );
        let domains: Vec<String> = input.allowed_domains.iter().map(|d| d.trim().to_lowercase()).collect();
        v.check(
            domains.len() <= 20 && domains.iter().all(|d| is_domain(d)),
            "allowed_domains",
            "invalid",
            "at most 20 domain names, e.g. example.com",
        );
        let role = OrgRole::parse(&input.default_role);
        v.check(
            matches!(role, Some(r) if r != OrgRole::Owner),
            "default_role",
            "invalid",
            "must be admin, billing, member or viewer",
        );
        v.finish()?;
        // The default role is given to everyone who joins this way: no more than the caller holds.
        let joiner = moke_iam::Principal {
            role: role.expect("validated"),
            project_roles: Vec::new(),
            scope: moke_iam::Scope::default(),
            expires_at: None,
            ..ctx.principal.clone()
        };
        moke_iam::may_confer(&ctx.principal, &joiner)?;
        let verified = store::domains::verified(&mut *self.db().acquire().await?, org.uuid()).await?;
        let mut v = Validator::new();
        for (i, domain) in domains.iter().enumerate() {
            v.check(
                verified.contains(domain),
                format!("allowed_domains[{i}]"),
                "domain_not_verified",
                "verify the organization owns this domain first (POST /v1/orgs/{org}/domains)",
            );
        }
        v.finish()?;
        if let Err(error) = self.discover(&input.issuer).await {
            tracing::info!(issuer = %input.issuer, %error, "SSO discovery failed");
            return Err(Error::invalid_field(
                "issuer",
                crate::outbound::REFUSED_CODE,
                "could not read the provider's discovery document at a public address",
            ));
        }
        let ciphertext = self.vault().encrypt(org.uuid(), &input.client_secret).await?;
        let mut tx = self.db().begin().await?;
        // Who may sign in, and as what, lasts: set only while the caller's
        // credential does (discovery above may have taken a while).
        crate::app::iam::principals::hold_live_credential(&mut tx, ctx, org.uuid()).await?;
        let version = store::sso::lock_version(&mut tx, org.uuid()).await?;
        let current = version.map(|version| crate::app::etag(org.uuid(), version));
        crate::app::check_if_match_creating(if_match, current.as_deref())?;
        let new = store::sso::NewProvider {
            org: org.uuid(),
            issuer: input.issuer.trim_end_matches('/'),
            client_id: &input.client_id,
            client_secret_enc: &ciphertext,
            allowed_domains: &domains,
            default_role: &input.default_role,
            updated_by: ctx.principal.id,
        };
        let row = store::sso::upsert(&mut tx, new).await?;
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: "sso.configure",
                resource_type: "org",
                resource_id: Some(org.to_string()),
                details: json!({ "issuer": row.issuer, "client_id": row.client_id,
                                 "allowed_domains": row.allowed_domains, "default_role": row.default_role }),
            },
        )
        .await?;
        let name = store::orgs::name(&mut tx, org.uuid()).await?;
        self.commit(ctx, tx).await?;
        Ok(self.sso_view(row, &name))
    }

    pub async fn sso_config_view(&self, ctx: &RequestContext, org: OrgId) -> Result<SsoConfigView> {
        self.org_authorized(ctx, org, Action::Read).await?;
        let mut conn = self.db().acquire().await?;
        let row = store::sso::find(&mut conn, org.uuid())
            .await?
            .ok_or_else(|| Error::not_found("sso configuration", org.to_string()))?;
        let name = store::orgs::name(&mut conn, org.uuid()).await?;
        Ok(self.sso_view(row, &name))
    }

    /// `sso_config_delete`: turns SSO off (existing sessions continue).
    pub async fn sso_config_delete(&self, ctx: &RequestContext, org: OrgId) -> Result<()> {
        self.org_authorized(ctx, org, Action::ManageSso).await?;
        let mut tx = self.db().begin().await?;
        if !store::sso::delete(&mut tx, org.uuid()).await? {
            return Err(Error::not_found("sso configuration", org.to_string()));
        }
        audit::record(
            &mut tx,
            ctx,
            AuditRecord {
                action: "sso.delete",
                resource_type: "org",
                resource_id: Some(org.to_string()),
                details: json!({}),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        Ok(())
    }

    /// The provider's client for an organization, with its secret from Vault.
    async fn provider_client(&self, row: &ProviderRow) -> Result<ProviderClient, (Error, &'static str)> {
        let metadata = self.discover(&row.issuer).await.map_err(|error| {
            tracing::warn!(issuer = %row.issuer, %error, "SSO discovery failed");
            (
                Error::Unavailable { detail: "the identity provider cannot be reached".into(), retry_after_seconds: 5 },
                "provider_unreachable",
            )
        })?;
        let secret = self
            .vault()
            .decrypt(row.org_id, &row.client_secret_enc)
            .await
            .map_err(|e| (e.into(), "vault_unavailable"))?;
        let redirect = RedirectUrl::new(self.config().auth.sso_redirect_uri.clone())
            .map_err(|e| (Error::Internal(e.into()), "bad_redirect_uri"))?;
        Ok(CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(row.client_id.clone()),
            Some(ClientSecret::new(secret)),
        )
        .set_redirect_uri(redirect))
    }

    /// `sso_login_start`: where to send the browser to sign in to `org`
    /// (an organization name or id) through its identity provider.
    /// `browser_binding` is a random value the surface keeps in the
    /// browser's cookie; the callback must present it again.
    pub async fn sso_login_start(
        &self,
        ctx: &RequestContext,
        org: &str,
        browser_binding: &str,
    ) -> Result<SsoLoginStart> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        let reference = ResourceRef::<OrgKind>::parse(org);
        let mut conn = self.db().acquire().await?;
        let row = store::sso::find_by_org_ref(&mut conn, reference.id(), reference.name())
            .await?
            .ok_or_else(|| Error::not_found("sso configuration", org))?;
        drop(conn);
        let client = self.provider_client(&row).await.map_err(|(error, _)| error)?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state, nonce) = client
            .authorize_url(CoreAuthenticationFlow::AuthorizationCode, CsrfToken::new_random, Nonce::new_random)
            .add_scope(Scope::new("email".to_string()))
            .add_scope(Scope::new("profile".to_string()))
            .set_pkce_challenge(challenge)
            .url();
        let new = store::sso::NewLogin {
            state_hash: &plain_hash(state.secret())[..],
            org: row.org_id,
            nonce: nonce.secret(),
            pkce_verifier: verifier.secret(),
            expires_at: Utc::now() + chrono::Duration::minutes(LOGIN_MINUTES),
            browser_binding_hash: &plain_hash(browser_binding)[..],
        };
        store::sso::insert_login(&mut *self.db().acquire().await?, new).await?;
        Ok(SsoLoginStart { authorization_url: url.to_string() })
    }

    /// `sso_callback`: finishes a login the provider sent back, in the
    /// browser that started it. Every refusal is audited in the organization
    /// with its reason.
    pub async fn sso_callback(
        &self,
        ctx: &RequestContext,
        code: &str,
        state: &str,
        iss: Option<&str>,
        browser_binding: Option<&str>,
    ) -> Result<SsoOutcome> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        // The state is single use: claimed here, whatever happens next.
        let login =
            store::sso::claim_login(&mut *self.db().acquire().await?, &plain_hash(state)[..]).await?.ok_or_else(
                || Error::invalid_field("state", "invalid_state", "unknown, used or expired sign-in; start again"),
            )?;
        // RFC 9700 §4.7: a login finished in another browser than the one
        // that started it is an injected (or stolen) authorization response.
        let same_browser = match (&login.browser_binding_hash, browser_binding) {
            (Some(expected), Some(presented)) => plain_hash(presented)[..] == expected[..],
            _ => false,
        };
        let result = if same_browser {
            self.finish_sso(ctx, login.org_id, code, iss, &login.nonce, &login.pkce_verifier).await
        } else {
            Err(refused("browser_mismatch"))
        };
        match result {
            Ok(outcome) => Ok(outcome),
            // The state is spent: a retry of this callback cannot succeed.
            Err((Error::Unavailable { retry_after_seconds, .. }, "database")) => Err(Error::Unavailable {
                detail: "the sign-in was interrupted; start it again".into(),
                retry_after_seconds,
            }),
            Err((error, reason)) => {
                let mut conn = self.db().acquire().await?;
                audit::insert(
                    &mut conn,
                    ctx,
                    login.org_id,
                    "failure",
                    AuditRecord {
                        action: "auth.sso_login",
                        resource_type: "org",
                        resource_id: Some(OrgId::from_uuid(login.org_id).to_string()),
                        details: json!({ "reason": reason }),
                    },
                )
                .await?;
                Err(error)
            }
        }
    }

    async fn finish_sso(
        &self,
        ctx: &RequestContext,
        org: Uuid,
        code: &str,
        iss: Option<&str>,
        nonce: &str,
        verifier: &str,
    ) -> Result<SsoOutcome, (Error, &'static str)> {
        let db = |e: sqlx::Error| (Error::from(e), "database");
        let mut conn = self.db().acquire().await.map_err(db)?;
        let row = store::sso::find(&mut conn, org).await.map_err(database)?.ok_or_else(|| refused("sso_disabled"))?;
        drop(conn);
        // RFC 9207: a response from another issuer is a mix-up attack.
        if iss.is_some_and(|iss| iss.trim_end_matches('/') != row.issuer) {
            return Err(refused("wrong_issuer"));
        }
        let client = self.provider_client(&row).await?;
        let exchange = client.exchange_code(AuthorizationCode::new(code.to_string())).map_err(|e| {
            tracing::warn!(error = %e, "SSO provider has no token endpoint");
            refused("no_token_endpoint")
        })?;
        let response = exchange
            .set_pkce_verifier(PkceCodeVerifier::new(verifier.to_string()))
            .request_async(self.outbound())
            .await
            .map_err(|e| {
                tracing::info!(error = %e, "SSO code exchange refused");
                refused("code_exchange_failed")
            })?;
        let id_token = response.id_token().ok_or_else(|| refused("no_id_token"))?;
        let skew = chrono::Duration::seconds(self.config().auth.id_token_clock_skew_seconds);
        let verifier = client.id_token_verifier().set_time_fn(move || Utc::now() - skew);
        let claims = id_token.claims(&verifier, &Nonce::new(nonce.to_string())).map_err(|e| {
            tracing::info!(error = %e, "SSO ID token refused");
            let text = e.to_string();
            if text.contains("nonce") {
                refused("nonce_mismatch")
            } else if text.contains("expired") {
                refused("id_token_expired")
            } else if text.contains("audience") {
                refused("wrong_audience")
            } else {
                refused("id_token_invalid")
            }
        })?;
        let identity = Identity {
            org,
            provider_version: row.version,
            issuer: row.issuer.clone(),
            subject: claims.subject().as_str().to_string(),
            email: claims.email().map(|e| e.as_str().trim().to_lowercase()),
            email_verified: claims.email_verified(),
            name: claims.name().and_then(|n| n.get(None)).map(|n| n.as_str().to_string()),
        };
        let default_role = OrgRole::parse(&row.default_role).unwrap_or(OrgRole::Viewer);
        let mut tx = self.db().begin().await.map_err(db)?;
        // The account row first, as a password reset or an address proven
        // takes it: if one of them ends this link meanwhile, the update below
        // finds no link, and a session made here is ended by them otherwise.
        let known =
            store::sso::identity_user(&mut tx, org, &identity.issuer, &identity.subject).await.map_err(database)?;
        // After the account row (the order an eviction takes them), the
        // settings this sign-in was judged by hold until it is recorded:
        // changed or deleted meanwhile (an owner's edit, an eviction of
        // their maker), it signs nobody in.
        let hold_settings = async |tx: &mut PgConnection| {
            let settings = store::sso::share_version(&mut *tx, org).await.map_err(database)?;
            if settings == Some(row.version) { Ok(()) } else { Err(refused("sso_settings_changed")) }
        };
        if let Some(user) = known {
            store::users::share(&mut tx, user).await.map_err(database)?;
            hold_settings(&mut tx).await?;
        }
        let linked =
            store::sso::touch_identity(&mut tx, org, &identity.issuer, &identity.subject).await.map_err(database)?;
        if linked.is_some() && linked != known {
            // Linked to another account between the two reads: that account's
            // row was not taken, so this attempt signs nobody in.
            return Err(refused("sso_link_changed"));
        }
        if let Some(user) = linked {
            if known.is_none() {
                hold_settings(&mut tx).await?;
            }
            let tokens = self.sso_session(&mut tx, ctx, &identity, user, &row.allowed_domains, default_role).await?;
            tx.commit().await.map_err(db)?;
            return Ok(SsoOutcome::SignedIn(tokens));
        }
        // A new identity: matched to an account only by what its owner proves.
        let email = identity.email.clone().ok_or_else(|| refused("no_email"))?;
        if identity.email_verified != Some(true) {
            return Err(refused("email_not_verified"));
        }
        let parted = tokio::time::Instant::now();
        let existing = store::users::find_by_email(&mut tx, &email, Lock::ForUpdate).await.map_err(database)?;
        hold_settings(&mut tx).await?;
        let joinable = existing.is_none()
            && self.may_join(&mut tx, &identity, &email, &row.allowed_domains).await.map_err(database)?;
        if joinable {
            let name = identity.name.clone().unwrap_or_else(|| email.split('@').next().unwrap_or_default().into());
            let user = store::users::insert_through_sso(
                &mut tx,
                UserId::generate().uuid(),
                &email,
                &name.chars().take(100).collect::<String>(),
                identity.org,
                &identity.issuer,
            )
            .await
            .map_err(database)?;
            self.link_identity(&mut tx, &identity, user, &email).await.map_err(database)?;
            let tokens = self.sso_session(&mut tx, ctx, &identity, user, &row.allowed_domains, default_role).await?;
            tx.commit().await.map_err(db)?;
            return Ok(SsoOutcome::SignedIn(tokens));
        }
        // Whether an account uses this address or not, the identity provider
        // (run by whoever configured it) gets the same answer and the same
        // record: a link for an owner to confirm. Only a verified account gets
        // a real one; an account whose address nobody proved is never merged
        // (pre-hijack), and its owner is told.
        let pending = match existing {
            Some(user) if user.email_verified_at.is_some() => {
                self.request_link(&mut tx, ctx, &identity, user.id, &email, &user.display_name).await?
            }
            Some(user) => {
                self.account_event(&mut tx, ctx, &identity, user.id, "auth.sso_link_refused", "unverified_account")
                    .await
                    .map_err(|e| (e, "audit"))?;
                self.decoy_link().await?
            }
            None => self.decoy_link().await?,
        };
        audit::insert(
            &mut tx,
            ctx,
            identity.org,
            "success",
            AuditRecord {
                action: "auth.sso_link_requested",
                resource_type: "org",
                resource_id: Some(OrgId::from_uuid(identity.org).to_string()),
                details: json!({ "issuer": identity.issuer, "subject": identity.subject }),
            },
        )
        .await
        .map_err(|e| (e, "audit"))?;
        tx.commit().await.map_err(db)?;
        crate::app::answer_uniformly(parted).await;
        Ok(SsoOutcome::LinkRequired(pending))
    }

    /// What a link request answers when there is nothing to link: the same
    /// shape, a token that matches nothing, the same work (a Vault call, as a
    /// mail's encryption) and the same failure when Vault is down.
    async fn decoy_link(&self) -> Result<SsoLinkPending, (Error, &'static str)> {
        self.vault().encrypt(Uuid::nil(), &random_secret(600)).await.map_err(|e| (e.into(), "mail"))?;
        Ok(SsoLinkPending { link_token: random_secret(43), detail: LINK_DETAIL.to_string() })
    }

    /// Records an event about an account in the account's own security
    /// events (no organization sees it).
    async fn account_event(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        identity: &Identity,
        user: Uuid,
        action: &str,
        reason: &str,
    ) -> Result<()> {
        let actor = self.user_context(ctx, user, Uuid::nil(), OrgRole::Viewer);
        audit::insert(
            tx,
            &actor,
            None,
            "failure",
            AuditRecord {
                action,
                resource_type: "user",
                resource_id: Some(UserId::from_uuid(user).to_string()),
                details: json!({ "issuer": identity.issuer, "organization": OrgId::from_uuid(identity.org),
                                 "reason": reason }),
            },
        )
        .await
    }

    /// True when `email`'s domain is one the organization verified and lets
    /// join through SSO.
    async fn may_join(
        &self,
        tx: &mut PgConnection,
        identity: &Identity,
        email: &str,
        allowed_domains: &[String],
    ) -> Result<bool> {
        let domain = email.rsplit_once('@').map(|(_, d)| d.to_string()).unwrap_or_default();
        if !allowed_domains.contains(&domain) {
            return Ok(false);
        }
        store::domains::is_verified(tx, identity.org, &domain).await
    }

    async fn link_identity(&self, tx: &mut PgConnection, identity: &Identity, user: Uuid, email: &str) -> Result<()> {
        store::sso::link_identity(tx, identity.org, &identity.issuer, &identity.subject, user, email).await
    }

    /// A session in the identity's organization for its linked `user`: a
    /// member already, or joining now if their address is in a domain the
    /// organization verified and lets join.
    async fn sso_session(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        identity: &Identity,
        user: Uuid,
        allowed_domains: &[String],
        default_role: OrgRole,
    ) -> Result<SessionTokens, (Error, &'static str)> {
        let org = identity.org;
        let mut role = store::memberships::role(&mut *tx, org, user).await.map_err(database)?;
        let mut joined = false;
        if role.is_none() {
            let email = store::users::email(&mut *tx, user).await.map_err(database)?;
            if !self.may_join(&mut *tx, identity, &email, allowed_domains).await.map_err(database)? {
                return Err(refused("not_a_member"));
            }
            store::memberships::join(&mut *tx, org, user, default_role.as_str()).await.map_err(database)?;
            role = Some(default_role.as_str().to_string());
            joined = true;
        }
        let role = OrgRole::parse(role.as_deref().unwrap_or_default()).unwrap_or(OrgRole::Viewer);
        let actor = self.user_context(ctx, user, org, role);
        let tokens = self
            .start_session(&mut *tx, &actor, user, org, SessionMethod::Sso { org })
            .await
            .map_err(|e| (e, "session"))?;
        audit::record(
            &mut *tx,
            &actor,
            AuditRecord {
                action: "auth.sso_login",
                resource_type: "session",
                resource_id: Some(tokens.session.to_string()),
                details: json!({ "issuer": identity.issuer, "subject": identity.subject, "joined": joined }),
            },
        )
        .await
        .map_err(|e| (e, "audit"))?;
        Ok(tokens)
    }

    /// Records a pending link of `identity` to an existing account and mails
    /// its owner the confirmation link.
    async fn request_link(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        identity: &Identity,
        user: Uuid,
        email: &str,
        display_name: &str,
    ) -> Result<SsoLinkPending, (Error, &'static str)> {
        let (token, mail_token) = (random_secret(43), random_secret(43));
        let minutes = self.config().auth.sso_link_minutes;
        let new = store::sso::NewLinkRequest {
            token_hash: &plain_hash(&token)[..],
            mail_token_hash: &plain_hash(&mail_token)[..],
            org: identity.org,
            issuer: &identity.issuer,
            subject: &identity.subject,
            user,
            email,
            expires_at: Utc::now() + chrono::Duration::minutes(minutes),
            provider_version: identity.provider_version,
        };
        store::sso::insert_link_request(&mut *tx, new).await.map_err(database)?;
        let org_name = store::orgs::display_name(&mut *tx, identity.org).await.map_err(database)?;
        let body = format!(
            "Hello {display_name},\n\nSomeone signed in to {org_name} on Moke through its identity provider \
             ({}) as {email}, the address of your Moke account. If it was you, confirm within {minutes} minutes \
             that this identity may sign you in to {org_name} (it will act there only):\n\n\
             {}/sso/link?token={mail_token}\n\nOr send the token to POST /v1/auth/sso-link/confirm: {mail_token}\n\n\
             If it was not you, ignore this message: nothing is linked.\n",
            identity.issuer,
            self.config().http.public_url
        );
        let mail = Mail {
            kind: "sso_link",
            to: email,
            subject: "Confirm signing in to Moke through your organization's identity provider",
            body: &body,
            org: Some(identity.org),
        };
        let recent = store::sso::link_mails_this_hour(&mut *tx, email).await.map_err(database)?;
        if recent < LINK_MAILS_PER_HOUR {
            crate::app::kernel::mail::enqueue(&mut *tx, self, mail).await.map_err(|e| (e, "mail"))?;
        } else {
            // The same work as a mail, so a capped address looks like any other.
            self.vault().encrypt(Uuid::nil(), &body).await.map_err(|e| (e.into(), "mail"))?;
        }
        self.account_event(&mut *tx, ctx, identity, user, "auth.sso_link_requested", "confirmation_mailed")
            .await
            .map_err(|e| (e, "audit"))?;
        Ok(SsoLinkPending { link_token: token, detail: LINK_DETAIL.to_string() })
    }

    /// Spends a link request (by the browser's token or the mailed one) and
    /// makes the link.
    async fn confirm_link(
        &self,
        tx: &mut PgConnection,
        token: &str,
        mailed: bool,
        signed_in_as: Option<Uuid>,
    ) -> Result<(Identity, Uuid)> {
        let request = store::sso::spend_link_request(&mut *tx, &plain_hash(token)[..], mailed, signed_in_as)
            .await?
            .ok_or_else(|| Error::invalid_field("token", "invalid_token", "unknown, used or expired link request"))?;
        // Only while the settings that asked are still the organization's
        // (an owner may have changed or removed them since).
        let current = store::sso::share_version_of(&mut *tx, request.org_id, &request.issuer).await?;
        if current.is_none() || current != request.provider_version {
            return Err(Error::invalid_field(
                "token",
                "invalid_token",
                "the organization's single sign-on settings changed since; sign in again",
            ));
        }
        let identity = Identity {
            org: request.org_id,
            provider_version: request.provider_version.unwrap_or_default(),
            issuer: request.issuer,
            subject: request.subject,
            email: Some(request.email.clone()),
            email_verified: Some(true),
            name: None,
        };
        self.link_identity(&mut *tx, &identity, request.user_id, &request.email).await?;
        Ok((identity, request.user_id))
    }

    async fn audit_link(
        &self,
        tx: &mut PgConnection,
        ctx: &RequestContext,
        identity: &Identity,
        user: Uuid,
        how: &str,
    ) -> Result<()> {
        let actor = self.user_context(ctx, user, identity.org, OrgRole::Viewer);
        audit::insert(
            tx,
            &actor,
            identity.org,
            "success",
            AuditRecord {
                action: "auth.sso_link",
                resource_type: "user",
                resource_id: Some(UserId::from_uuid(user).to_string()),
                details: json!({ "issuer": identity.issuer, "subject": identity.subject, "confirmed": how }),
            },
        )
        .await
    }

    /// `sso_link_confirm`: the signed-in owner of an account confirms that
    /// the SSO identity which matched it may sign them in.
    pub async fn sso_link_confirm(&self, ctx: &RequestContext, input: LinkToken) -> Result<SsoLinkView> {
        let (Credential::Session { sso_org: None, .. }, PrincipalKind::User) =
            (ctx.principal.credential, ctx.principal.kind)
        else {
            return Err(Error::refused(
                "password_session_required",
                "confirm a link while signed in with your password",
            ));
        };
        let mut tx = self.db().begin().await?;
        // The link lasts: made only while the confirming session does.
        crate::app::iam::principals::hold_live_credential(&mut tx, ctx, ctx.principal.org_id).await?;
        let (identity, user) = self.confirm_link(&mut tx, &input.token, false, Some(ctx.principal.id)).await?;
        self.audit_link(&mut tx, ctx, &identity, user, "signed_in").await?;
        let org_name = store::orgs::name(&mut tx, identity.org).await?;
        self.commit(ctx, tx).await?;
        Ok(SsoLinkView {
            organization: OrgId::from_uuid(identity.org),
            organization_name: org_name,
            issuer: identity.issuer,
        })
    }

    /// `sso_link_confirm_mailed`: the link mailed to the account's verified
    /// address: makes the link and signs in through it.
    pub async fn sso_link_confirm_mailed(&self, ctx: &RequestContext, input: LinkToken) -> Result<SessionTokens> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        let mut tx = self.db().begin().await?;
        let (identity, user) = self.confirm_link(&mut tx, &input.token, true, None).await?;
        self.audit_link(&mut tx, ctx, &identity, user, "mailed_link").await?;
        let row = store::sso::join_policy(&mut tx, identity.org)
            .await?
            .ok_or_else(|| Error::conflict("sso_disabled", "the organization turned single sign-on off"))?;
        let default_role = OrgRole::parse(&row.default_role).unwrap_or(OrgRole::Viewer);
        let tokens = self
            .sso_session(&mut tx, ctx, &identity, user, &row.allowed_domains, default_role)
            .await
            .map_err(|(error, _)| error)?;
        self.commit(ctx, tx).await?;
        Ok(tokens)
    }
}

impl App {
    /// Forgets sign-ins, sign-up requests, link requests and device sign-ins
    /// a day after they expired (their PKCE verifiers and hashes serve
    /// nothing after), and device-code attempt windows long over.
    pub async fn purge_sign_in_leftovers(&self) -> Result<u64> {
        let mut conn = self.db().acquire().await?;
        let mut purged = 0;
        purged += store::sso::purge_expired_logins(&mut conn).await?;
        purged += store::signups::purge_expired(&mut conn).await?;
        purged += store::sso::purge_expired_link_requests(&mut conn).await?;
        purged += store::device_authorizations::purge_expired(&mut conn).await?;
        Ok(purged)
    }
}

/// An identity an identity provider vouched for.
struct Identity {
    org: Uuid,
    /// The version of the organization's settings it signed in under.
    provider_version: i64,
    issuer: String,
    subject: String,
    email: Option<String>,
    email_verified: Option<bool>,
    name: Option<String>,
}

type ProviderClient = CoreClient<
    openidconnect::EndpointSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointMaybeSet,
    openidconnect::EndpointMaybeSet,
>;
