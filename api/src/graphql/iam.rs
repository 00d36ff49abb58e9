//! GraphQL over identity and access: the caller's own account, members and
//! project roles, service accounts, the audit log, single sign-on settings,
//! and CI token exchange. Each resolver calls the app-layer function its
//! REST twin calls.

use async_graphql::connection::Connection;
use async_graphql::{ComplexObject, Context, ID, InputObject, Json, Object, Result, SimpleObject};
use chrono::{DateTime, Utc};

use super::types::{app, caller, caller_for, caller_with_key, connection, id, list_complexity, page};
use super::{Origin, error};
use crate::app::kernel::audit::AuditFilter;
use crate::app::{Error, ResourceRef};
use crate::ids::{ServiceAccountId, UserId};
use crate::model::*;

// ---------------------------------------------------------------- objects

#[ComplexObject]
impl TokenView {
    /// The organization role of the token's owner: owner, admin, billing, member or viewer.
    async fn role(&self) -> &'static str {
        self.role.as_str()
    }
    /// The only actions the token may perform; null when not limited.
    async fn scopes(&self) -> Option<Vec<&'static str>> {
        self.scopes.as_ref().map(|actions| actions.iter().map(|a| a.as_str()).collect())
    }
}

#[ComplexObject]
impl AuditEventView {
    /// What the event records beyond its fields (a JSON object).
    async fn details(&self) -> Json<&serde_json::Value> {
        Json(&self.details)
    }
}

#[ComplexObject]
impl MembershipSummary {
    /// owner, admin, billing, member or viewer.
    async fn role(&self) -> &'static str {
        self.role.as_str()
    }
}

#[ComplexObject]
impl MeView {
    /// The role where the caller acts: owner, admin, billing, member or viewer.
    async fn role(&self) -> &'static str {
        self.role.as_str()
    }
    /// Your sign-in sessions, newest first (a session from an identity
    /// provider sees that provider's sessions only).
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn sessions(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, SessionView>> {
        let result = app(ctx).session_list(caller(ctx)?, page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |s| s.id.uuid()))
    }
    /// Security events about your account (sign-ins, failed ones too,
    /// resets, sessions, SSO links), in every organization and in none,
    /// newest first. Needs a session (not an API token).
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn security_events(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, AuditEventView>> {
        let result = app(ctx).security_event_list(caller(ctx)?, page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |e| e.id.uuid()))
    }
    /// Your personal tokens in the current organization.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn personal_tokens(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, TokenView>> {
        let result = app(ctx).personal_token_list(caller(ctx)?, page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |t| t.id.uuid()))
    }
}

#[ComplexObject]
impl MemberView {
    /// owner, admin, billing, member or viewer.
    async fn role(&self) -> &'static str {
        self.role.as_str()
    }
}

#[ComplexObject]
impl InvitationView {
    /// The role the person gets on accepting: owner, admin, billing, member or viewer.
    async fn role(&self) -> &'static str {
        self.role.as_str()
    }
}

#[ComplexObject]
impl ProjectMemberView {
    /// admin, developer or viewer.
    async fn role(&self) -> &'static str {
        self.role.as_str()
    }
}

#[ComplexObject]
impl ServiceAccountView {
    /// Organization role: owner, admin, billing, member or viewer.
    async fn role(&self) -> &'static str {
        self.role.as_str()
    }
}

#[ComplexObject]
impl SsoConfigView {
    /// The role of people who join through SSO: admin, billing, member or viewer.
    async fn default_role(&self) -> &'static str {
        self.default_role.as_str()
    }
}

/// The id a page of project members is ordered by: the principal's own.
fn principal_uuid(principal: &str) -> uuid::Uuid {
    principal
        .parse::<UserId>()
        .map(|id| id.uuid())
        .or_else(|_| principal.parse::<ServiceAccountId>().map(|id| id.uuid()))
        .unwrap_or_default()
}

/// A new API token; `secret` is shown only in this answer (it is empty in
/// an answer replayed to a retry with the same idempotency key).
#[derive(SimpleObject)]
pub struct ApiTokenCreated {
    token: TokenView,
    secret: String,
}

impl From<TokenCreated> for ApiTokenCreated {
    fn from(created: TokenCreated) -> Self {
        ApiTokenCreated { token: created.view, secret: created.token }
    }
}

/// A public key access tokens are signed with, as a JWK (RFC 7517).
#[derive(SimpleObject)]
pub struct SigningKey {
    /// The key id tokens name in their header.
    kid: String,
    /// Always `EC`.
    kty: String,
    /// Always `P-256`.
    crv: String,
    /// Always `ES256`.
    alg: String,
    /// Always `sig`.
    #[graphql(name = "use")]
    key_use: String,
    /// The point's coordinates, base64url.
    x: String,
    y: String,
}

/// The keys of a JWK Set, as the app layer gives it.
fn signing_keys(jwks: &serde_json::Value) -> Vec<SigningKey> {
    let keys = jwks["keys"].as_array().map(Vec::as_slice).unwrap_or_default();
    keys.iter()
        .map(|k| {
            let text = |name: &str| k[name].as_str().unwrap_or_default().to_string();
            SigningKey {
                kid: text("kid"),
                kty: text("kty"),
                crv: text("crv"),
                alg: text("alg"),
                key_use: text("use"),
                x: text("x"),
                y: text("y"),
            }
        })
        .collect()
}

/// Which audit events to list; every field given narrows.
#[derive(InputObject, Default)]
pub struct AuditEventFilter {
    /// Who acted: a `usr_…`, `sa_…` or (older events) `tok_…` id.
    actor: Option<String>,
    /// An action (`member.remove`), or a family of them (`member.*`).
    action: Option<String>,
    /// `success` or `failure`.
    outcome: Option<String>,
    /// The id of the resource acted on.
    resource: Option<String>,
    /// Events at or after this time.
    since: Option<DateTime<Utc>>,
    /// Events before this time; must be after `since`.
    until: Option<DateTime<Utc>>,
}

impl From<AuditEventFilter> for AuditFilter {
    fn from(f: AuditEventFilter) -> Self {
        AuditFilter {
            actor: f.actor,
            action: f.action,
            outcome: f.outcome,
            resource: f.resource,
            since: f.since,
            until: f.until,
        }
    }
}

// ---------------------------------------------------------------- roots

#[derive(Default)]
pub struct IamQuery;

#[Object]
impl IamQuery {
    /// Who you are, where you act, and your organizations; your sessions,
    /// security events and personal tokens hang off it.
    async fn me(&self, ctx: &Context<'_>) -> Result<MeView> {
        app(ctx).me(caller(ctx)?).await.map_err(error)
    }

    /// The public keys access tokens are signed with (the JWK Set of
    /// `/.well-known/jwks.json`). Needs no credential.
    async fn signing_keys(&self, ctx: &Context<'_>) -> Vec<SigningKey> {
        signing_keys(&app(ctx).jwks())
    }

    /// The organization's members.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn members(
        &self,
        ctx: &Context<'_>,
        org: ID,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, MemberView>> {
        let result = app(ctx).member_list(caller(ctx)?, id(&org)?, page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |m| m.user.uuid()))
    }

    /// The organization's invitations.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn invitations(
        &self,
        ctx: &Context<'_>,
        org: ID,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, InvitationView>> {
        let result = app(ctx).invitation_list(caller(ctx)?, id(&org)?, page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |i| i.id.uuid()))
    }

    /// Who holds a role in a project (id or name).
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn project_members(
        &self,
        ctx: &Context<'_>,
        project: String,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, ProjectMemberView>> {
        let result = app(ctx)
            .project_member_list(caller(ctx)?, &ResourceRef::parse(&project), page(first, after)?)
            .await
            .map_err(error)?;
        Ok(connection(result, |m| principal_uuid(&m.principal)))
    }

    /// The organization's service accounts.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn service_accounts(
        &self,
        ctx: &Context<'_>,
        org: ID,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, ServiceAccountView>> {
        let result =
            app(ctx).service_account_list(caller(ctx)?, id(&org)?, page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |a| a.id.uuid()))
    }

    /// One service account.
    async fn service_account(&self, ctx: &Context<'_>, org: ID, id: ID) -> Result<ServiceAccountView> {
        app(ctx).service_account_view(caller(ctx)?, self::id(&org)?, self::id(&id)?).await.map_err(error)
    }

    /// A service account's CI trust policies.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn trust_policies(
        &self,
        ctx: &Context<'_>,
        org: ID,
        service_account: ID,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, TrustPolicyView>> {
        let result = app(ctx)
            .trust_policy_list(caller(ctx)?, id(&org)?, id(&service_account)?, page(first, after)?)
            .await
            .map_err(error)?;
        Ok(connection(result, |p| p.id.uuid()))
    }

    /// The organization's audit events, oldest first, optionally filtered
    /// by actor, action, outcome, resource and time.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn audit_events(
        &self,
        ctx: &Context<'_>,
        org: ID,
        filter: Option<AuditEventFilter>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, AuditEventView>> {
        let filter = AuditFilter::from(filter.unwrap_or_default());
        let result =
            app(ctx).audit_event_list(caller(ctx)?, id(&org)?, &filter, page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |e| e.id.uuid()))
    }

    /// The organization's single sign-on settings (never the client secret).
    async fn sso_config(&self, ctx: &Context<'_>, org: ID) -> Result<SsoConfigView> {
        app(ctx).sso_config_view(caller(ctx)?, id(&org)?).await.map_err(error)
    }

    /// The domains the organization claims, with the DNS record that proves each.
    #[graphql(complexity = "list_complexity(child_complexity, first)")]
    async fn domains(
        &self,
        ctx: &Context<'_>,
        org: ID,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Connection<String, DomainView>> {
        let result = app(ctx).domain_list(caller(ctx)?, id(&org)?, page(first, after)?).await.map_err(error)?;
        Ok(connection(result, |d| d.id.uuid()))
    }

    /// What the organization demands of its members' credentials.
    async fn credential_policy(&self, ctx: &Context<'_>, org: ID) -> Result<CredentialPolicyView> {
        app(ctx).credential_policy_view(caller(ctx)?, id(&org)?).await.map_err(error)
    }
}

#[derive(Default)]
pub struct IamMutation;

#[Object]
impl IamMutation {
    /// End every session of yours but the one making this request.
    async fn delete_other_sessions(&self, ctx: &Context<'_>, dry_run: Option<bool>) -> Result<SessionsEnded> {
        app(ctx).session_delete_others(&caller_for(ctx, dry_run)?).await.map_err(error)
    }

    /// End one of your sessions.
    async fn revoke_session(&self, ctx: &Context<'_>, dry_run: Option<bool>, session: ID) -> Result<bool> {
        app(ctx).session_delete(&caller_for(ctx, dry_run)?, id(&session)?).await.map_err(error)?;
        Ok(true)
    }

    /// Create a personal token (`moke_pat_…`) acting as you in the current
    /// organization, optionally limited to a project and some actions.
    async fn create_personal_token(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        input: ScopedTokenCreate,
        idempotency_key: Option<String>,
    ) -> Result<ApiTokenCreated> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        Ok(app(ctx).personal_token_create(&caller, input).await.map_err(error)?.into())
    }

    /// Revoke one of your personal tokens.
    async fn delete_personal_token(&self, ctx: &Context<'_>, dry_run: Option<bool>, token: ID) -> Result<bool> {
        app(ctx).personal_token_delete(&caller_for(ctx, dry_run)?, id(&token)?).await.map_err(error)?;
        Ok(true)
    }

    /// Change a member's role (not above your own; only owners change
    /// owners; the last owner stays owner). `ifMatch`: the member's etag.
    async fn update_member(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        user: ID,
        input: MemberUpdate,
        if_match: Option<String>,
    ) -> Result<MemberView> {
        app(ctx)
            .member_update(&caller_for(ctx, dry_run)?, id(&org)?, id(&user)?, if_match.as_deref(), input)
            .await
            .map_err(error)
    }

    /// Remove a member, or leave (your own id). The last owner cannot leave.
    async fn delete_member(&self, ctx: &Context<'_>, dry_run: Option<bool>, org: ID, user: ID) -> Result<bool> {
        app(ctx).member_remove(&caller_for(ctx, dry_run)?, id(&org)?, id(&user)?).await.map_err(error)?;
        Ok(true)
    }

    /// Invite someone by e-mail; the link expires and works once.
    async fn create_invitation(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        input: InvitationCreate,
        idempotency_key: Option<String>,
    ) -> Result<InvitationView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        app(ctx).invitation_create(&caller, id(&org)?, input).await.map_err(error)
    }

    /// Revoke a pending invitation.
    async fn delete_invitation(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        invitation: ID,
    ) -> Result<bool> {
        app(ctx).invitation_delete(&caller_for(ctx, dry_run)?, id(&org)?, id(&invitation)?).await.map_err(error)?;
        Ok(true)
    }

    /// Accept an invitation (signed in with the invited address).
    async fn accept_invitation(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        input: LinkToken,
    ) -> Result<MembershipSummary> {
        app(ctx).invitation_accept(&caller_for(ctx, dry_run)?, input).await.map_err(error)
    }

    /// Give a member or service account (`usr_…` or `sa_…`) a project role.
    /// `ifMatch`: the role's etag.
    async fn update_project_member(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        principal: String,
        input: ProjectMemberSet,
        if_match: Option<String>,
    ) -> Result<ProjectMemberView> {
        let project = ResourceRef::parse(&project);
        app(ctx)
            .project_member_set(&caller_for(ctx, dry_run)?, &project, &principal, if_match.as_deref(), input)
            .await
            .map_err(error)
    }

    /// Take a project role away.
    async fn delete_project_member(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        project: String,
        principal: String,
    ) -> Result<bool> {
        app(ctx)
            .project_member_remove(&caller_for(ctx, dry_run)?, &ResourceRef::parse(&project), &principal)
            .await
            .map_err(error)?;
        Ok(true)
    }

    /// Create a service account with an organization role (not above your own).
    async fn create_service_account(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        input: ServiceAccountCreate,
        idempotency_key: Option<String>,
    ) -> Result<ServiceAccountView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        app(ctx).service_account_create(&caller, id(&org)?, input).await.map_err(error)
    }

    /// Delete a service account; its tokens stop working at once.
    async fn delete_service_account(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        service_account: ID,
    ) -> Result<bool> {
        let caller = caller_for(ctx, dry_run)?;
        app(ctx).service_account_delete(&caller, id(&org)?, id(&service_account)?).await.map_err(error)?;
        Ok(true)
    }

    /// Create a token (`moke_sat_…`) for a service account.
    async fn create_service_account_token(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        service_account: ID,
        input: ScopedTokenCreate,
        idempotency_key: Option<String>,
    ) -> Result<ApiTokenCreated> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        let created = app(ctx)
            .service_account_token_create(&caller, id(&org)?, id(&service_account)?, input)
            .await
            .map_err(error)?;
        Ok(created.into())
    }

    /// Let CI jobs whose ID tokens match (issuer, audience, claims) act as the service account.
    async fn create_trust_policy(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        service_account: ID,
        input: TrustPolicyCreate,
        idempotency_key: Option<String>,
    ) -> Result<TrustPolicyView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        app(ctx).trust_policy_create(&caller, id(&org)?, id(&service_account)?, input).await.map_err(error)
    }

    /// Delete a trust policy.
    async fn delete_trust_policy(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        service_account: ID,
        policy: ID,
    ) -> Result<bool> {
        let caller = caller_for(ctx, dry_run)?;
        app(ctx).trust_policy_delete(&caller, id(&org)?, id(&service_account)?, id(&policy)?).await.map_err(error)?;
        Ok(true)
    }

    /// Configure single sign-on (owners); the client secret is encrypted by
    /// Vault. `ifMatch`: the configuration's etag.
    async fn update_sso_config(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        input: SsoConfigSet,
        if_match: Option<String>,
    ) -> Result<SsoConfigView> {
        app(ctx).sso_config_set(&caller_for(ctx, dry_run)?, id(&org)?, if_match.as_deref(), input).await.map_err(error)
    }

    /// Turn single sign-on off.
    async fn delete_sso_config(&self, ctx: &Context<'_>, dry_run: Option<bool>, org: ID) -> Result<bool> {
        app(ctx).sso_config_delete(&caller_for(ctx, dry_run)?, id(&org)?).await.map_err(error)?;
        Ok(true)
    }

    /// Claim a domain (owners): the answer names the DNS TXT record to
    /// publish before verifying it.
    async fn create_domain(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        input: DomainCreate,
        idempotency_key: Option<String>,
    ) -> Result<DomainView> {
        let caller = caller_with_key(ctx, idempotency_key, dry_run)?;
        app(ctx).domain_create(&caller, id(&org)?, input).await.map_err(error)
    }

    /// Give a domain up (owners): people at it no longer join through SSO.
    async fn delete_domain(&self, ctx: &Context<'_>, dry_run: Option<bool>, org: ID, domain: String) -> Result<bool> {
        app(ctx).domain_delete(&caller_for(ctx, dry_run)?, id(&org)?, &domain).await.map_err(error)?;
        Ok(true)
    }

    /// Check the domain's DNS TXT record now: verified when it carries the token (owners).
    async fn verify_domain(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        domain: String,
    ) -> Result<DomainView> {
        app(ctx).domain_verify(&caller_for(ctx, dry_run)?, id(&org)?, &domain).await.map_err(error)
    }

    /// Set the longest token lifetime, and whether members must use SSO or
    /// a verified address (owners); the whole policy is written. Credentials
    /// the new policy refuses stop working at once. `ifMatch`: the policy's etag.
    async fn update_credential_policy(
        &self,
        ctx: &Context<'_>,
        dry_run: Option<bool>,
        org: ID,
        input: CredentialPolicy,
        if_match: Option<String>,
    ) -> Result<CredentialPolicyView> {
        app(ctx)
            .credential_policy_update(&caller_for(ctx, dry_run)?, id(&org)?, input, if_match.as_deref())
            .await
            .map_err(error)
    }

    /// Exchange a CI system's OIDC ID token for a short-lived service-account
    /// token, when it matches one of the account's trust policies. Needs no
    /// bearer (the ID token is the credential) and has no dry run.
    async fn exchange_token(&self, ctx: &Context<'_>, input: TokenExchangeRequest) -> Result<ExchangedToken> {
        let Origin(origin) = ctx.data::<Origin>().map_err(|_| error(Error::Unauthenticated))?;
        app(ctx).token_exchange(origin, input).await.map_err(error)
    }
}
