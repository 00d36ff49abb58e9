//! The identity and access services of `moke.v1` (`iam.proto`): the
//! caller's own account, members and project roles, service accounts, the
//! audit log, single sign-on settings, and CI token exchange. Each method
//! calls the app-layer function its REST twin calls, and converts.

use std::pin::Pin;

use futures::Stream;
use moke_proto::v1::*;
use tonic::{Request, Response, Status};

use super::convert::{opt_timestamp, timestamp, timestamp_in};
use super::services::{Api, Reply, id, if_match, mask_paths};
use super::{anonymous_context, context, page, status};
use crate::app::kernel::audit::AuditFilter;
use crate::app::{Error, ResourceRef};
use crate::model;

// ---------------------------------------------------------------- conversions

fn user(u: model::UserView) -> User {
    User {
        id: u.id.to_string(),
        email: u.email,
        display_name: u.display_name,
        email_verified: u.email_verified,
        create_time: Some(timestamp(u.created_at)),
    }
}

fn membership(m: model::MembershipSummary) -> Membership {
    Membership {
        organization: m.organization.to_string(),
        organization_name: m.organization_name,
        role: m.role.as_str().to_string(),
    }
}

fn me(m: model::MeView) -> Me {
    Me {
        kind: m.kind,
        id: m.id,
        user: m.user.map(user),
        organization: m.organization.to_string(),
        role: m.role.as_str().to_string(),
        memberships: m.memberships.into_iter().map(membership).collect(),
    }
}

fn session(s: model::SessionView) -> Session {
    Session {
        id: s.id.to_string(),
        current: s.current,
        method: s.method,
        organization: s.organization.to_string(),
        organization_name: s.organization_name,
        create_time: Some(timestamp(s.created_at)),
        expire_time: Some(timestamp(s.expires_at)),
        last_use_time: opt_timestamp(s.last_used_at),
        created_from_ip: s.created_from_ip.unwrap_or_default(),
        last_ip: s.last_ip.unwrap_or_default(),
        user_agent: s.user_agent.unwrap_or_default(),
    }
}

fn audit_event(e: model::AuditEventView) -> AuditEvent {
    AuditEvent {
        id: e.id.to_string(),
        occur_time: Some(timestamp(e.occurred_at)),
        action: e.action,
        outcome: e.outcome,
        principal: Some(AuditPrincipal { kind: e.principal.kind, id: e.principal.id.unwrap_or_default() }),
        credential: e.credential.map(|c| AuditCredential { id: c.id.unwrap_or_default(), method: c.method }),
        resource_type: e.resource_type,
        resource_id: e.resource_id.unwrap_or_default(),
        request_id: e.request_id.unwrap_or_default(),
        source_ip: e.source_ip.unwrap_or_default(),
        user_agent: e.user_agent.unwrap_or_default(),
        details_json: e.details.to_string(),
    }
}

fn api_token(t: model::TokenView) -> ApiToken {
    ApiToken {
        id: t.id.to_string(),
        name: t.name,
        kind: t.kind,
        service_account: t.service_account.map(|id| id.to_string()).unwrap_or_default(),
        user: t.user.map(|id| id.to_string()).unwrap_or_default(),
        role: t.role.as_str().to_string(),
        project: t.project.map(|id| id.to_string()).unwrap_or_default(),
        scopes: t.scopes.unwrap_or_default().into_iter().map(|a| a.as_str().to_string()).collect(),
        hint: t.hint,
        create_time: Some(timestamp(t.created_at)),
        expire_time: opt_timestamp(t.expires_at),
        last_use_time: opt_timestamp(t.last_used_at),
        revoke_time: opt_timestamp(t.revoked_at),
    }
}

/// A token request's fields as the model's scoped create (no scopes: not limited).
fn scoped_token_in(
    name: String,
    project: Option<String>,
    scopes: Vec<String>,
    expires_in_seconds: Option<i64>,
) -> model::ScopedTokenCreate {
    model::ScopedTokenCreate { name, project, scopes: (!scopes.is_empty()).then_some(scopes), expires_in_seconds }
}

fn exchanged_token(t: model::ExchangedToken) -> ExchangedToken {
    ExchangedToken {
        access_token: t.access_token,
        token_type: t.token_type,
        expires_in: Some(prost_types::Duration { seconds: t.expires_in, nanos: 0 }),
        service_account: t.service_account.to_string(),
        organization: t.organization.to_string(),
    }
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
                r#use: text("use"),
                x: text("x"),
                y: text("y"),
            }
        })
        .collect()
}

fn member(m: model::MemberView) -> Member {
    Member {
        user: m.user.to_string(),
        email: m.email,
        display_name: m.display_name,
        role: m.role.as_str().to_string(),
        etag: m.etag,
        join_time: Some(timestamp(m.joined_at)),
    }
}

fn invitation(i: model::InvitationView) -> Invitation {
    Invitation {
        id: i.id.to_string(),
        email: i.email,
        role: i.role.as_str().to_string(),
        create_time: Some(timestamp(i.created_at)),
        expire_time: Some(timestamp(i.expires_at)),
        accept_time: opt_timestamp(i.accepted_at),
        revoke_time: opt_timestamp(i.revoked_at),
    }
}

fn project_member(m: model::ProjectMemberView) -> ProjectMember {
    ProjectMember {
        principal: m.principal,
        role: m.role.as_str().to_string(),
        etag: m.etag,
        create_time: Some(timestamp(m.created_at)),
    }
}

fn service_account(a: model::ServiceAccountView) -> ServiceAccount {
    ServiceAccount {
        id: a.id.to_string(),
        name: a.name,
        description: a.description,
        role: a.role.as_str().to_string(),
        create_time: Some(timestamp(a.created_at)),
    }
}

fn trust_policy(p: model::TrustPolicyView) -> TrustPolicy {
    TrustPolicy {
        id: p.id.to_string(),
        service_account: p.service_account.to_string(),
        issuer: p.issuer,
        audience: p.audience,
        claims: p.claims.into_iter().collect(),
        create_time: Some(timestamp(p.created_at)),
        expire_time: opt_timestamp(p.expires_at),
    }
}

fn sso_config(c: model::SsoConfigView) -> SsoConfig {
    SsoConfig {
        issuer: c.issuer,
        client_id: c.client_id,
        allowed_domains: c.allowed_domains,
        default_role: c.default_role.as_str().to_string(),
        login_url: c.login_url,
        redirect_uri: c.redirect_uri,
        etag: c.etag,
        update_time: Some(timestamp(c.updated_at)),
    }
}

fn domain(d: model::DomainView) -> Domain {
    Domain {
        id: d.id.to_string(),
        domain: d.domain,
        verification: Some(DomainVerificationRecord {
            name: d.verification.name,
            record_type: d.verification.record_type,
            value: d.verification.value,
        }),
        verified: d.verified,
        verify_time: opt_timestamp(d.verified_at),
        last_check_time: opt_timestamp(d.last_checked_at),
        last_error: d.last_error.unwrap_or_default(),
        create_time: Some(timestamp(d.created_at)),
    }
}

fn credential_policy(p: model::CredentialPolicyView) -> CredentialPolicy {
    CredentialPolicy {
        max_token_lifetime_seconds: p.max_token_lifetime_seconds,
        require_sso: p.require_sso,
        require_verified_email: p.require_verified_email,
        etag: p.etag,
        update_time: opt_timestamp(p.updated_at),
    }
}

/// The update mask of a resource REST replaces whole (a PUT): omitted,
/// `*`, or naming every one of `fields`.
fn whole_mask(mask: Option<prost_types::FieldMask>, fields: &[&str]) -> Result<(), Status> {
    let given = mask.as_ref().is_some_and(|m| !m.paths.is_empty() && m.paths != ["*"]);
    if !given {
        return Ok(());
    }
    let paths = mask_paths(mask, fields)?;
    if fields.iter().all(|field| paths.iter().any(|p| p == field)) {
        return Ok(());
    }
    Err(status(Error::invalid_field(
        "update_mask",
        "invalid",
        format!("this resource is replaced whole: omit update_mask, send \"*\", or name {}", fields.join(", ")),
    )))
}

/// An audit filter from a request's fields (empty text and unset times: no narrowing).
fn audit_filter(
    actor: String,
    action: String,
    outcome: String,
    resource: String,
    since: Option<prost_types::Timestamp>,
    until: Option<prost_types::Timestamp>,
) -> Result<AuditFilter, Status> {
    let text = |t: String| (!t.is_empty()).then_some(t);
    Ok(AuditFilter {
        actor: text(actor),
        action: text(action),
        outcome: text(outcome),
        resource: text(resource),
        since: since.map(|t| timestamp_in("since", t)).transpose()?,
        until: until.map(|t| timestamp_in("until", t)).transpose()?,
    })
}

// ---------------------------------------------------------------- services

#[tonic::async_trait]
impl me_service_server::MeService for Api {
    async fn get_me(&self, request: Request<GetMeRequest>) -> Reply<Me> {
        let ctx = context(&self.app, &request, "").await?;
        let view = self.app.me(&ctx).await.map_err(status)?;
        Ok(Response::new(me(view)))
    }

    async fn list_sessions(&self, request: Request<ListSessionsRequest>) -> Reply<ListSessionsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let page = self.app.session_list(&ctx, page(r.page_size, &r.page_token)?).await.map_err(status)?;
        Ok(Response::new(ListSessionsResponse {
            sessions: page.items.into_iter().map(session).collect(),
            next_page_token: super::convert::next_page(page.next_page),
        }))
    }

    async fn delete_other_sessions(
        &self,
        request: Request<DeleteOtherSessionsRequest>,
    ) -> Reply<DeleteOtherSessionsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let ended = self.app.session_delete_others(&ctx).await.map_err(status)?.ended;
        Ok(Response::new(DeleteOtherSessionsResponse { ended: i64::try_from(ended).unwrap_or(i64::MAX) }))
    }

    async fn revoke_session(&self, request: Request<RevokeSessionRequest>) -> Reply<RevokeSessionResponse> {
        let ctx = context(&self.app, &request, "").await?;
        self.app.session_delete(&ctx, id(&request.get_ref().session)?).await.map_err(status)?;
        Ok(Response::new(RevokeSessionResponse {}))
    }

    async fn list_security_events(
        &self,
        request: Request<ListSecurityEventsRequest>,
    ) -> Reply<ListSecurityEventsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let page = self.app.security_event_list(&ctx, page(r.page_size, &r.page_token)?).await.map_err(status)?;
        Ok(Response::new(ListSecurityEventsResponse {
            events: page.items.into_iter().map(audit_event).collect(),
            next_page_token: super::convert::next_page(page.next_page),
        }))
    }

    async fn list_personal_tokens(
        &self,
        request: Request<ListPersonalTokensRequest>,
    ) -> Reply<ListPersonalTokensResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let page = self.app.personal_token_list(&ctx, page(r.page_size, &r.page_token)?).await.map_err(status)?;
        Ok(Response::new(ListPersonalTokensResponse {
            tokens: page.items.into_iter().map(api_token).collect(),
            next_page_token: super::convert::next_page(page.next_page),
        }))
    }

    async fn create_personal_token(
        &self,
        request: Request<CreatePersonalTokenRequest>,
    ) -> Reply<CreatePersonalTokenResponse> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let input = scoped_token_in(r.name, r.project, r.scopes, r.expires_in_seconds);
        let created = self.app.personal_token_create(&ctx, input).await.map_err(status)?;
        Ok(Response::new(CreatePersonalTokenResponse { token: Some(api_token(created.view)), secret: created.token }))
    }

    async fn delete_personal_token(
        &self,
        request: Request<DeletePersonalTokenRequest>,
    ) -> Reply<DeletePersonalTokenResponse> {
        let ctx = context(&self.app, &request, "").await?;
        self.app.personal_token_delete(&ctx, id(&request.get_ref().token)?).await.map_err(status)?;
        Ok(Response::new(DeletePersonalTokenResponse {}))
    }
}

#[tonic::async_trait]
impl auth_service_server::AuthService for Api {
    async fn exchange_token(&self, request: Request<ExchangeTokenRequest>) -> Reply<ExchangedToken> {
        let ctx = anonymous_context(&request)?;
        let r = request.into_inner();
        let input = model::TokenExchangeRequest { subject_token: r.subject_token, service_account: r.service_account };
        let token = self.app.token_exchange(&ctx, input).await.map_err(status)?;
        Ok(Response::new(exchanged_token(token)))
    }

    async fn list_signing_keys(&self, _request: Request<ListSigningKeysRequest>) -> Reply<ListSigningKeysResponse> {
        Ok(Response::new(ListSigningKeysResponse { keys: signing_keys(&self.app.jwks()) }))
    }
}

#[tonic::async_trait]
impl member_service_server::MemberService for Api {
    async fn list_members(&self, request: Request<ListMembersRequest>) -> Reply<ListMembersResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let page = self.app.member_list(&ctx, id(&r.org)?, page(r.page_size, &r.page_token)?).await.map_err(status)?;
        Ok(Response::new(ListMembersResponse {
            members: page.items.into_iter().map(member).collect(),
            next_page_token: super::convert::next_page(page.next_page),
        }))
    }

    async fn update_member(&self, request: Request<UpdateMemberRequest>) -> Reply<Member> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        mask_paths(r.update_mask, &["role"])?;
        let input = model::MemberUpdate { role: r.role };
        let view =
            self.app.member_update(&ctx, id(&r.org)?, id(&r.user)?, if_match(&r.etag), input).await.map_err(status)?;
        Ok(Response::new(member(view)))
    }

    async fn delete_member(&self, request: Request<DeleteMemberRequest>) -> Reply<DeleteMemberResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        self.app.member_remove(&ctx, id(&r.org)?, id(&r.user)?).await.map_err(status)?;
        Ok(Response::new(DeleteMemberResponse {}))
    }

    async fn list_invitations(&self, request: Request<ListInvitationsRequest>) -> Reply<ListInvitationsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let page =
            self.app.invitation_list(&ctx, id(&r.org)?, page(r.page_size, &r.page_token)?).await.map_err(status)?;
        Ok(Response::new(ListInvitationsResponse {
            invitations: page.items.into_iter().map(invitation).collect(),
            next_page_token: super::convert::next_page(page.next_page),
        }))
    }

    async fn create_invitation(&self, request: Request<CreateInvitationRequest>) -> Reply<Invitation> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let input = model::InvitationCreate { email: r.email, role: r.role };
        let view = self.app.invitation_create(&ctx, id(&r.org)?, input).await.map_err(status)?;
        Ok(Response::new(invitation(view)))
    }

    async fn delete_invitation(&self, request: Request<DeleteInvitationRequest>) -> Reply<DeleteInvitationResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        self.app.invitation_delete(&ctx, id(&r.org)?, id(&r.invitation)?).await.map_err(status)?;
        Ok(Response::new(DeleteInvitationResponse {}))
    }

    async fn accept_invitation(&self, request: Request<AcceptInvitationRequest>) -> Reply<Membership> {
        let ctx = context(&self.app, &request, "").await?;
        let input = model::LinkToken { token: request.into_inner().token };
        let joined = self.app.invitation_accept(&ctx, input).await.map_err(status)?;
        Ok(Response::new(membership(joined)))
    }

    async fn list_project_members(
        &self,
        request: Request<ListProjectMembersRequest>,
    ) -> Reply<ListProjectMembersResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let page = self
            .app
            .project_member_list(&ctx, &ResourceRef::parse(&r.project), page(r.page_size, &r.page_token)?)
            .await
            .map_err(status)?;
        Ok(Response::new(ListProjectMembersResponse {
            members: page.items.into_iter().map(project_member).collect(),
            next_page_token: super::convert::next_page(page.next_page),
        }))
    }

    async fn update_project_member(&self, request: Request<UpdateProjectMemberRequest>) -> Reply<ProjectMember> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        mask_paths(r.update_mask, &["role"])?;
        let input = model::ProjectMemberSet { role: r.role };
        let view = self
            .app
            .project_member_set(&ctx, &ResourceRef::parse(&r.project), &r.principal, if_match(&r.etag), input)
            .await
            .map_err(status)?;
        Ok(Response::new(project_member(view)))
    }

    async fn delete_project_member(
        &self,
        request: Request<DeleteProjectMemberRequest>,
    ) -> Reply<DeleteProjectMemberResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        self.app.project_member_remove(&ctx, &ResourceRef::parse(&r.project), &r.principal).await.map_err(status)?;
        Ok(Response::new(DeleteProjectMemberResponse {}))
    }
}

#[tonic::async_trait]
impl service_account_service_server::ServiceAccountService for Api {
    async fn list_service_accounts(
        &self,
        request: Request<ListServiceAccountsRequest>,
    ) -> Reply<ListServiceAccountsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let page = self
            .app
            .service_account_list(&ctx, id(&r.org)?, page(r.page_size, &r.page_token)?)
            .await
            .map_err(status)?;
        Ok(Response::new(ListServiceAccountsResponse {
            service_accounts: page.items.into_iter().map(service_account).collect(),
            next_page_token: super::convert::next_page(page.next_page),
        }))
    }

    async fn create_service_account(&self, request: Request<CreateServiceAccountRequest>) -> Reply<ServiceAccount> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let input = model::ServiceAccountCreate { name: r.name, description: r.description, role: r.role };
        let view = self.app.service_account_create(&ctx, id(&r.org)?, input).await.map_err(status)?;
        Ok(Response::new(service_account(view)))
    }

    async fn get_service_account(&self, request: Request<GetServiceAccountRequest>) -> Reply<ServiceAccount> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let view = self.app.service_account_view(&ctx, id(&r.org)?, id(&r.service_account)?).await.map_err(status)?;
        Ok(Response::new(service_account(view)))
    }

    async fn delete_service_account(
        &self,
        request: Request<DeleteServiceAccountRequest>,
    ) -> Reply<DeleteServiceAccountResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        self.app.service_account_delete(&ctx, id(&r.org)?, id(&r.service_account)?).await.map_err(status)?;
        Ok(Response::new(DeleteServiceAccountResponse {}))
    }

    async fn create_service_account_token(
        &self,
        request: Request<CreateServiceAccountTokenRequest>,
    ) -> Reply<CreateServiceAccountTokenResponse> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let (org, account) = (id(&r.org)?, id(&r.service_account)?);
        let input = scoped_token_in(r.name, r.project, r.scopes, r.expires_in_seconds);
        let created = self.app.service_account_token_create(&ctx, org, account, input).await.map_err(status)?;
        Ok(Response::new(CreateServiceAccountTokenResponse {
            token: Some(api_token(created.view)),
            secret: created.token,
        }))
    }

    async fn list_trust_policies(
        &self,
        request: Request<ListTrustPoliciesRequest>,
    ) -> Reply<ListTrustPoliciesResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let page = self
            .app
            .trust_policy_list(&ctx, id(&r.org)?, id(&r.service_account)?, page(r.page_size, &r.page_token)?)
            .await
            .map_err(status)?;
        Ok(Response::new(ListTrustPoliciesResponse {
            trust_policies: page.items.into_iter().map(trust_policy).collect(),
            next_page_token: super::convert::next_page(page.next_page),
        }))
    }

    async fn create_trust_policy(&self, request: Request<CreateTrustPolicyRequest>) -> Reply<TrustPolicy> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let (org, account) = (id(&r.org)?, id(&r.service_account)?);
        let input =
            model::TrustPolicyCreate { issuer: r.issuer, audience: r.audience, claims: r.claims.into_iter().collect() };
        let view = self.app.trust_policy_create(&ctx, org, account, input).await.map_err(status)?;
        Ok(Response::new(trust_policy(view)))
    }

    async fn delete_trust_policy(
        &self,
        request: Request<DeleteTrustPolicyRequest>,
    ) -> Reply<DeleteTrustPolicyResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        self.app
            .trust_policy_delete(&ctx, id(&r.org)?, id(&r.service_account)?, id(&r.trust_policy)?)
            .await
            .map_err(status)?;
        Ok(Response::new(DeleteTrustPolicyResponse {}))
    }
}

#[tonic::async_trait]
impl audit_service_server::AuditService for Api {
    type ExportAuditEventsStream = Pin<Box<dyn Stream<Item = Result<ExportAuditEventsResponse, Status>> + Send>>;

    async fn list_audit_events(&self, request: Request<ListAuditEventsRequest>) -> Reply<ListAuditEventsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        let filter = audit_filter(r.actor, r.action, r.outcome, r.resource, r.since, r.until)?;
        let page = self
            .app
            .audit_event_list(&ctx, id(&r.org)?, &filter, page(r.page_size, &r.page_token)?)
            .await
            .map_err(status)?;
        Ok(Response::new(ListAuditEventsResponse {
            events: page.items.into_iter().map(audit_event).collect(),
            next_page_token: super::convert::next_page(page.next_page),
        }))
    }

    /// As REST's `audit_event_export`: the first batch answers authorization
    /// and filter errors; each later batch is read as the caller stands then
    /// (authenticated again), so a revoked credential ends the stream.
    async fn export_audit_events(
        &self,
        request: Request<ExportAuditEventsRequest>,
    ) -> Reply<Self::ExportAuditEventsStream> {
        let watcher = super::watcher(&self.app, &request).await?;
        let r = request.into_inner();
        let filter = audit_filter(r.actor, r.action, r.outcome, r.resource, r.since, r.until)?;
        let batches =
            crate::app::kernel::watch::audit_event_export(watcher, id(&r.org)?, filter).await.map_err(status)?;
        let batches = futures::StreamExt::map(batches, |batch| {
            batch
                .map(|events| ExportAuditEventsResponse { events: events.into_iter().map(audit_event).collect() })
                .map_err(status)
        });
        Ok(Response::new(Box::pin(batches)))
    }
}

#[tonic::async_trait]
impl sso_service_server::SsoService for Api {
    async fn get_sso_config(&self, request: Request<GetSsoConfigRequest>) -> Reply<SsoConfig> {
        let ctx = context(&self.app, &request, "").await?;
        let view = self.app.sso_config_view(&ctx, id(&request.get_ref().org)?).await.map_err(status)?;
        Ok(Response::new(sso_config(view)))
    }

    async fn update_sso_config(&self, request: Request<UpdateSsoConfigRequest>) -> Reply<SsoConfig> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        whole_mask(r.update_mask, &["issuer", "client_id", "client_secret", "allowed_domains", "default_role"])?;
        let input = model::SsoConfigSet {
            issuer: r.issuer,
            client_id: r.client_id,
            client_secret: r.client_secret,
            allowed_domains: r.allowed_domains,
            default_role: r.default_role,
        };
        let view = self.app.sso_config_set(&ctx, id(&r.org)?, if_match(&r.etag), input).await.map_err(status)?;
        Ok(Response::new(sso_config(view)))
    }

    async fn delete_sso_config(&self, request: Request<DeleteSsoConfigRequest>) -> Reply<DeleteSsoConfigResponse> {
        let ctx = context(&self.app, &request, "").await?;
        self.app.sso_config_delete(&ctx, id(&request.get_ref().org)?).await.map_err(status)?;
        Ok(Response::new(DeleteSsoConfigResponse {}))
    }

    async fn list_domains(&self, request: Request<ListDomainsRequest>) -> Reply<ListDomainsResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let page = self.app.domain_list(&ctx, id(&r.org)?, page(r.page_size, &r.page_token)?).await.map_err(status)?;
        Ok(Response::new(ListDomainsResponse {
            domains: page.items.into_iter().map(domain).collect(),
            next_page_token: super::convert::next_page(page.next_page),
        }))
    }

    async fn create_domain(&self, request: Request<CreateDomainRequest>) -> Reply<Domain> {
        let ctx = context(&self.app, &request, &request.get_ref().request_id).await?;
        let r = request.into_inner();
        let view = self
            .app
            .domain_create(&ctx, id(&r.org)?, model::DomainCreate { domain: r.domain })
            .await
            .map_err(status)?;
        Ok(Response::new(domain(view)))
    }

    async fn delete_domain(&self, request: Request<DeleteDomainRequest>) -> Reply<DeleteDomainResponse> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        self.app.domain_delete(&ctx, id(&r.org)?, &r.domain).await.map_err(status)?;
        Ok(Response::new(DeleteDomainResponse {}))
    }

    async fn verify_domain(&self, request: Request<VerifyDomainRequest>) -> Reply<Domain> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.get_ref();
        let view = self.app.domain_verify(&ctx, id(&r.org)?, &r.domain).await.map_err(status)?;
        Ok(Response::new(domain(view)))
    }

    async fn get_credential_policy(&self, request: Request<GetCredentialPolicyRequest>) -> Reply<CredentialPolicy> {
        let ctx = context(&self.app, &request, "").await?;
        let view = self.app.credential_policy_view(&ctx, id(&request.get_ref().org)?).await.map_err(status)?;
        Ok(Response::new(credential_policy(view)))
    }

    async fn update_credential_policy(
        &self,
        request: Request<UpdateCredentialPolicyRequest>,
    ) -> Reply<CredentialPolicy> {
        let ctx = context(&self.app, &request, "").await?;
        let r = request.into_inner();
        whole_mask(r.update_mask, &["max_token_lifetime_seconds", "require_sso", "require_verified_email"])?;
        let input = model::CredentialPolicy {
            max_token_lifetime_seconds: r.max_token_lifetime_seconds,
            require_sso: r.require_sso,
            require_verified_email: r.require_verified_email,
        };
        let view =
            self.app.credential_policy_update(&ctx, id(&r.org)?, input, if_match(&r.etag)).await.map_err(status)?;
        Ok(Response::new(credential_policy(view)))
    }
}
