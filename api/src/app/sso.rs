//! OpenID Connect single sign-on, per organization: the authorization-code
//! flow with PKCE, `state` and `nonce` (each login single use), the
//! authorization response's `iss` checked (RFC 9207), ID tokens verified by
//! `openidconnect`, and just-in-time membership for allowed e-mail domains.
//! The client secret is stored only as Vault transit ciphertext.

use chrono::Utc;
use moke_iam::token::plain_hash;
use moke_iam::{Action, OrgRole};
use openidconnect::core::{CoreAuthenticationFlow, CoreClient, CoreProviderMetadata};
use openidconnect::{
    AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl, Nonce, PkceCodeChallenge, PkceCodeVerifier,
    RedirectUrl, Scope, TokenResponse,
};
use serde_json::json;
use uuid::Uuid;

use super::audit::{self, AuditRecord};
use super::error::Validator;
use super::{App, Error, RequestContext, ResourceRef, Result};
use crate::ids::{OrgId, OrgKind, UserId};
use crate::model::*;

/// How long a started login may take.
const LOGIN_MINUTES: i64 = 10;

struct ProviderRow {
    org_id: Uuid,
    issuer: String,
    client_id: String,
    client_secret_enc: String,
    allowed_domains: Vec<String>,
    default_role: String,
    updated_at: chrono::DateTime<Utc>,
}

/// Why an SSO callback was refused; recorded in the audit log.
fn refused(reason: &'static str) -> (Error, &'static str) {
    (Error::Unauthenticated, reason)
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
        CoreProviderMetadata::discover_async(issuer, self.http_client()).await.map_err(|e| format!("{e}"))
    }

    fn sso_view(&self, row: ProviderRow, org_name: &str) -> SsoConfigView {
        SsoConfigView {
            issuer: row.issuer,
            client_id: row.client_id,
            allowed_domains: row.allowed_domains,
            default_role: OrgRole::parse(&row.default_role).unwrap_or(OrgRole::Viewer),
            login_url: format!("{}/v1/sso/{org_name}/login", self.config().http.public_url),
            redirect_uri: self.config().auth.sso_redirect_uri.clone(),
            updated_at: row.updated_at,
        }
    }

    /// `sso_config_set`: configures (or replaces) the organization's identity provider.
    pub async fn sso_config_set(&self, ctx: &RequestContext, org: OrgId, input: SsoConfigSet) -> Result<SsoConfigView> {
        self.org_authorized(ctx, org, Action::ManageSso).await?;
        let mut v = Validator::new();
        let secure = input.issuer.starts_with("https://")
            || (self.config().auth.allow_insecure_issuers && input.issuer.starts_with("http://"));
        v.check(secure, "issuer", "invalid", "must be an https:// URL");
        v.check(
            !input.client_id.is_empty() && input.client_id.len() <= 255,
            "client_id",
            "invalid",
            "1-255 characters",
        );
        v.check(
            !input.client_secret.is_empty() && input.client_secret.len() <= 1024,
            "client_secret",
            "invalid",
            "1-1024 characters",
        );
        let domains: Vec<String> = input.allowed_domains.iter().map(|d| d.trim().to_lowercase()).collect();
        v.check(
            !domains.is_empty() && domains.len() <= 20 && domains.iter().all(|d| is_domain(d)),
            "allowed_domains",
            "invalid",
            "1 to 20 domain names, e.g. example.com",
        );
        let role = OrgRole::parse(&input.default_role);
        v.check(
            matches!(role, Some(r) if r != OrgRole::Owner),
            "default_role",
            "invalid",
            "must be admin, billing, member or viewer",
        );
        v.finish()?;
        if let Err(error) = self.discover(&input.issuer).await {
            return Err(Error::invalid_field(
                "issuer",
                "discovery_failed",
                format!("could not read {}/.well-known/openid-configuration: {error}", input.issuer),
            ));
        }
        let ciphertext = self.vault().encrypt(org.uuid(), &input.client_secret).await?;
        let mut tx = self.db().begin().await?;
        let row = sqlx::query_as!(
            ProviderRow,
            "INSERT INTO sso_providers (org_id, issuer, client_id, client_secret_enc, allowed_domains, default_role)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (org_id) DO UPDATE SET issuer = EXCLUDED.issuer, client_id = EXCLUDED.client_id,
                 client_secret_enc = EXCLUDED.client_secret_enc, allowed_domains = EXCLUDED.allowed_domains,
                 default_role = EXCLUDED.default_role, version = sso_providers.version + 1, updated_at = now()
             RETURNING org_id, issuer, client_id, client_secret_enc, allowed_domains, default_role, updated_at",
            org.uuid(),
            input.issuer.trim_end_matches('/'),
            input.client_id,
            ciphertext,
            &domains,
            input.default_role,
        )
        .fetch_one(&mut *tx)
        .await?;
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
        let name =
            sqlx::query_scalar!("SELECT name FROM organizations WHERE id = $1", org.uuid()).fetch_one(&mut *tx).await?;
        tx.commit().await?;
        Ok(self.sso_view(row, &name))
    }

    /// `sso_config_view`.
    pub async fn sso_config_view(&self, ctx: &RequestContext, org: OrgId) -> Result<SsoConfigView> {
        self.org_authorized(ctx, org, Action::Read).await?;
        let row = sqlx::query_as!(
            ProviderRow,
            "SELECT org_id, issuer, client_id, client_secret_enc, allowed_domains, default_role, updated_at
             FROM sso_providers WHERE org_id = $1",
            org.uuid(),
        )
        .fetch_optional(self.db())
        .await?
        .ok_or_else(|| Error::not_found("sso configuration", org.to_string()))?;
        let name = sqlx::query_scalar!("SELECT name FROM organizations WHERE id = $1", org.uuid())
            .fetch_one(self.db())
            .await?;
        Ok(self.sso_view(row, &name))
    }

    /// `sso_config_delete`: turns SSO off (existing sessions continue).
    pub async fn sso_config_delete(&self, ctx: &RequestContext, org: OrgId) -> Result<()> {
        self.org_authorized(ctx, org, Action::ManageSso).await?;
        let mut tx = self.db().begin().await?;
        sqlx::query!("DELETE FROM sso_providers WHERE org_id = $1 RETURNING org_id", org.uuid())
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| Error::not_found("sso configuration", org.to_string()))?;
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
        tx.commit().await?;
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
    pub async fn sso_login_start(&self, ctx: &RequestContext, org: &str) -> Result<SsoLoginStart> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        let reference = ResourceRef::<OrgKind>::parse(org);
        let row = sqlx::query_as!(
            ProviderRow,
            "SELECT p.org_id, p.issuer, p.client_id, p.client_secret_enc, p.allowed_domains, p.default_role, p.updated_at
             FROM sso_providers p JOIN organizations o ON o.id = p.org_id
             WHERE ($1::uuid IS NULL OR o.id = $1) AND ($2::text IS NULL OR o.name = $2)",
            reference.id(),
            reference.name(),
        )
        .fetch_optional(self.db())
        .await?
        .ok_or_else(|| Error::not_found("sso configuration", org))?;
        let client = self.provider_client(&row).await.map_err(|(error, _)| error)?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state, nonce) = client
            .authorize_url(CoreAuthenticationFlow::AuthorizationCode, CsrfToken::new_random, Nonce::new_random)
            .add_scope(Scope::new("email".to_string()))
            .add_scope(Scope::new("profile".to_string()))
            .set_pkce_challenge(challenge)
            .url();
        sqlx::query!(
            "INSERT INTO sso_logins (state_hash, org_id, nonce, pkce_verifier, expires_at) VALUES ($1, $2, $3, $4, $5)",
            &plain_hash(state.secret())[..],
            row.org_id,
            nonce.secret(),
            verifier.secret(),
            Utc::now() + chrono::Duration::minutes(LOGIN_MINUTES),
        )
        .execute(self.db())
        .await?;
        Ok(SsoLoginStart { authorization_url: url.to_string() })
    }

    /// `sso_callback`: finishes a login the provider sent back. Every
    /// refusal is audited in the organization with its reason.
    pub async fn sso_callback(
        &self,
        ctx: &RequestContext,
        code: &str,
        state: &str,
        iss: Option<&str>,
    ) -> Result<SessionTokens> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        // The state is single use: claimed here, whatever happens next.
        let login = sqlx::query!(
            "UPDATE sso_logins SET used_at = now()
             WHERE state_hash = $1 AND used_at IS NULL AND expires_at > now()
             RETURNING org_id, nonce, pkce_verifier",
            &plain_hash(state)[..],
        )
        .fetch_optional(self.db())
        .await?
        .ok_or_else(|| {
            Error::invalid_field("state", "invalid_state", "unknown, used or expired sign-in; start again")
        })?;
        match self.finish_sso(ctx, login.org_id, code, iss, &login.nonce, &login.pkce_verifier).await {
            Ok(tokens) => Ok(tokens),
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
    ) -> Result<SessionTokens, (Error, &'static str)> {
        let db = |e: sqlx::Error| (Error::from(e), "database");
        let row = sqlx::query_as!(
            ProviderRow,
            "SELECT org_id, issuer, client_id, client_secret_enc, allowed_domains, default_role, updated_at
             FROM sso_providers WHERE org_id = $1",
            org,
        )
        .fetch_optional(self.db())
        .await
        .map_err(db)?
        .ok_or_else(|| refused("sso_disabled"))?;
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
            .request_async(self.http_client())
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
        let email = claims.email().map(|e| e.as_str().trim().to_lowercase()).ok_or_else(|| refused("no_email"))?;
        if claims.email_verified() == Some(false) {
            return Err(refused("email_not_verified"));
        }
        let domain = email.rsplit_once('@').map(|(_, d)| d.to_string()).unwrap_or_default();
        if !row.allowed_domains.contains(&domain) {
            return Err(refused("domain_not_allowed"));
        }
        let name = claims
            .name()
            .and_then(|n| n.get(None))
            .map(|n| n.as_str().to_string())
            .unwrap_or_else(|| email.split('@').next().unwrap_or_default().to_string());
        let default_role = OrgRole::parse(&row.default_role).unwrap_or(OrgRole::Viewer);
        let mut tx = self.db().begin().await.map_err(db)?;
        // Just-in-time: the person and their membership appear on first sign-in.
        let user = sqlx::query_scalar!(
            "INSERT INTO users (id, email, display_name, email_verified_at) VALUES ($1, $2, $3, now())
             ON CONFLICT (email) DO UPDATE SET email_verified_at = COALESCE(users.email_verified_at, now())
             RETURNING id",
            UserId::generate().uuid(),
            email,
            name.chars().take(100).collect::<String>(),
        )
        .fetch_one(&mut *tx)
        .await
        .map_err(db)?;
        let joined = sqlx::query_scalar!(
            "INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING role",
            org,
            user,
            default_role.as_str(),
        )
        .fetch_optional(&mut *tx)
        .await
        .map_err(db)?;
        let role = sqlx::query_scalar!("SELECT role FROM memberships WHERE org_id = $1 AND user_id = $2", org, user)
            .fetch_one(&mut *tx)
            .await
            .map_err(db)?;
        let actor = self.user_context(ctx, user, org, OrgRole::parse(&role).unwrap_or(OrgRole::Viewer));
        let tokens = self.start_session(&mut tx, &actor, user, org).await.map_err(|e| (e, "session"))?;
        audit::record(
            &mut tx,
            &actor,
            AuditRecord {
                action: "auth.sso_login",
                resource_type: "session",
                resource_id: Some(tokens.session.to_string()),
                details: json!({ "issuer": row.issuer, "subject": claims.subject().as_str(),
                                 "joined": joined.is_some() }),
            },
        )
        .await
        .map_err(|e| (e, "audit"))?;
        tx.commit().await.map_err(db)?;
        Ok(tokens)
    }
}

type ProviderClient = CoreClient<
    openidconnect::EndpointSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointMaybeSet,
    openidconnect::EndpointMaybeSet,
>;
