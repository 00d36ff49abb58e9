//! Organization IAM routes: members, invitations, service accounts with
//! their tokens and trust policies, single sign-on settings, and project roles.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{Ctx, IdempotencyKeyHeader, IfMatch, IfMatchHeader, Json, ListParams, Query};
use super::orgs::path_id;
use super::problem::Problems;
use super::{ApiResult, created, with_etag};
use crate::app::{App, ResourceRef};
use crate::ids::{InvitationId, OrgId, ServiceAccountId, TrustPolicyId, UserId};
use crate::model::*;

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new()
        .routes(routes!(member_list))
        .routes(routes!(member_update, member_remove))
        .routes(routes!(invitation_list, invitation_create))
        .routes(routes!(invitation_delete))
        .routes(routes!(service_account_list, service_account_create))
        .routes(routes!(service_account_view, service_account_delete))
        .routes(routes!(service_account_token_create))
        .routes(routes!(trust_policy_list, trust_policy_create))
        .routes(routes!(trust_policy_delete))
        .routes(routes!(sso_config_view, sso_config_set, sso_config_delete))
        .routes(routes!(domain_list, domain_create))
        .routes(routes!(domain_delete))
        .routes(routes!(domain_verify))
        .routes(routes!(credential_policy_view, credential_policy_update))
        .routes(routes!(project_member_list))
        .routes(routes!(project_member_set, project_member_remove))
}

/// List the organization's members.
#[utoipa::path(get, path = "/v1/orgs/{org}/members", operation_id = "member_list", tag = "members",
    params(("org" = String, Path, description = "Organization id"), ListParams), security(("bearer" = [])),
    responses((status = 200, body = Page<MemberView>), Problems))]
async fn member_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    Ok(axum::Json(app.member_list(&ctx, path_id(&org)?, list.page()?).await?).into_response())
}

/// Change a member's role (not above your own; only owners change owners;
/// the last owner stays owner).
#[utoipa::path(patch, path = "/v1/orgs/{org}/members/{user}", operation_id = "member_update", tag = "members",
    params(("org" = String, Path, description = "Organization id"), ("user" = String, Path, description = "User id (`usr_…`)"),
           IfMatchHeader),
    request_body = MemberUpdate, security(("bearer" = [])),
    responses((status = 200, body = MemberView), Problems))]
async fn member_update(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, user)): Path<(String, String)>,
    IfMatch(if_match): IfMatch,
    Json(input): Json<MemberUpdate>,
) -> ApiResult {
    let user: UserId = path_id(&user)?;
    let view = app.member_update(&ctx, path_id(&org)?, user, if_match.as_deref(), input).await?;
    Ok(with_etag(&view.etag.clone(), view))
}

/// Remove a member, or leave (your own id). The last owner cannot leave.
#[utoipa::path(delete, path = "/v1/orgs/{org}/members/{user}", operation_id = "member_delete", tag = "members",
    params(("org" = String, Path, description = "Organization id"), ("user" = String, Path, description = "User id")),
    security(("bearer" = [])),
    responses((status = 204, description = "Removed"), Problems))]
async fn member_remove(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, user)): Path<(String, String)>,
) -> ApiResult {
    let user: UserId = path_id(&user)?;
    app.member_remove(&ctx, path_id(&org)?, user).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// List invitations.
#[utoipa::path(get, path = "/v1/orgs/{org}/invitations", operation_id = "invitation_list", tag = "members",
    params(("org" = String, Path, description = "Organization id"), ListParams), security(("bearer" = [])),
    responses((status = 200, body = Page<InvitationView>), Problems))]
async fn invitation_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    Ok(axum::Json(app.invitation_list(&ctx, path_id(&org)?, list.page()?).await?).into_response())
}

/// Invite someone by e-mail; the link expires and works once.
#[utoipa::path(post, path = "/v1/orgs/{org}/invitations", operation_id = "invitation_create", tag = "members",
    params(("org" = String, Path, description = "Organization id"),
           IdempotencyKeyHeader),
    request_body = InvitationCreate, security(("bearer" = [])),
    responses((status = 201, body = InvitationView), Problems))]
async fn invitation_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Json(input): Json<InvitationCreate>,
) -> ApiResult {
    let org: OrgId = path_id(&org)?;
    let view = app.invitation_create(&ctx, org, input).await?;
    Ok(created(format!("/v1/orgs/{org}/invitations/{}", view.id), "", view))
}

/// Revoke a pending invitation.
#[utoipa::path(delete, path = "/v1/orgs/{org}/invitations/{invitation}", operation_id = "invitation_delete", tag = "members",
    params(("org" = String, Path, description = "Organization id"), ("invitation" = String, Path, description = "Invitation id (`inv_…`)")),
    security(("bearer" = [])),
    responses((status = 204, description = "Revoked"), Problems))]
async fn invitation_delete(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, invitation)): Path<(String, String)>,
) -> ApiResult {
    let invitation: InvitationId = path_id(&invitation)?;
    app.invitation_delete(&ctx, path_id(&org)?, invitation).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// List service accounts.
#[utoipa::path(get, path = "/v1/orgs/{org}/service-accounts", operation_id = "service_account_list", tag = "service-accounts",
    params(("org" = String, Path, description = "Organization id"), ListParams), security(("bearer" = [])),
    responses((status = 200, body = Page<ServiceAccountView>), Problems))]
async fn service_account_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    Ok(axum::Json(app.service_account_list(&ctx, path_id(&org)?, list.page()?).await?).into_response())
}

/// Create a service account with an organization role (not above your own).
#[utoipa::path(post, path = "/v1/orgs/{org}/service-accounts", operation_id = "service_account_create", tag = "service-accounts",
    params(("org" = String, Path, description = "Organization id"),
           IdempotencyKeyHeader),
    request_body = ServiceAccountCreate, security(("bearer" = [])),
    responses((status = 201, body = ServiceAccountView), Problems))]
async fn service_account_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Json(input): Json<ServiceAccountCreate>,
) -> ApiResult {
    let org: OrgId = path_id(&org)?;
    let view = app.service_account_create(&ctx, org, input).await?;
    Ok(created(format!("/v1/orgs/{org}/service-accounts/{}", view.id), "", view))
}

/// View a service account.
#[utoipa::path(get, path = "/v1/orgs/{org}/service-accounts/{service_account}", operation_id = "service_account_view", tag = "service-accounts",
    params(("org" = String, Path, description = "Organization id"), ("service_account" = String, Path, description = "Service account id (`sa_…`)")),
    security(("bearer" = [])),
    responses((status = 200, body = ServiceAccountView), Problems))]
async fn service_account_view(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, account)): Path<(String, String)>,
) -> ApiResult {
    let account: ServiceAccountId = path_id(&account)?;
    Ok(axum::Json(app.service_account_view(&ctx, path_id(&org)?, account).await?).into_response())
}

/// Delete a service account; its tokens stop working at once.
#[utoipa::path(delete, path = "/v1/orgs/{org}/service-accounts/{service_account}", operation_id = "service_account_delete", tag = "service-accounts",
    params(("org" = String, Path, description = "Organization id"), ("service_account" = String, Path, description = "Service account id")),
    security(("bearer" = [])),
    responses((status = 204, description = "Deleted"), Problems))]
async fn service_account_delete(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, account)): Path<(String, String)>,
) -> ApiResult {
    let account: ServiceAccountId = path_id(&account)?;
    app.service_account_delete(&ctx, path_id(&org)?, account).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Create a token (`moke_sat_…`) for a service account. The secret is in
/// this answer only (a replay of the same `Idempotency-Key` omits it).
#[utoipa::path(post, path = "/v1/orgs/{org}/service-accounts/{service_account}/tokens", operation_id = "service_account_token_create", tag = "service-accounts",
    params(("org" = String, Path, description = "Organization id"), ("service_account" = String, Path, description = "Service account id"),
           IdempotencyKeyHeader),
    request_body = ScopedTokenCreate, security(("bearer" = [])),
    responses((status = 201, body = TokenCreated), Problems))]
async fn service_account_token_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, account)): Path<(String, String)>,
    Json(input): Json<ScopedTokenCreate>,
) -> ApiResult {
    let org: OrgId = path_id(&org)?;
    let account: ServiceAccountId = path_id(&account)?;
    let token = app.service_account_token_create(&ctx, org, account, input).await?;
    Ok(created(format!("/v1/orgs/{org}/tokens/{}", token.view.id), "", token))
}

/// List a service account's CI trust policies.
#[utoipa::path(get, path = "/v1/orgs/{org}/service-accounts/{service_account}/trust-policies", operation_id = "trust_policy_list", tag = "service-accounts",
    params(("org" = String, Path, description = "Organization id"), ("service_account" = String, Path, description = "Service account id"),
           ListParams),
    security(("bearer" = [])),
    responses((status = 200, body = Page<TrustPolicyView>), Problems))]
async fn trust_policy_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, account)): Path<(String, String)>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    let account: ServiceAccountId = path_id(&account)?;
    Ok(axum::Json(app.trust_policy_list(&ctx, path_id(&org)?, account, list.page()?).await?).into_response())
}

/// Let CI jobs whose ID tokens match (issuer, audience, claims) act as the service account.
#[utoipa::path(post, path = "/v1/orgs/{org}/service-accounts/{service_account}/trust-policies", operation_id = "trust_policy_create", tag = "service-accounts",
    params(("org" = String, Path, description = "Organization id"), ("service_account" = String, Path, description = "Service account id"),
           IdempotencyKeyHeader),
    request_body = TrustPolicyCreate, security(("bearer" = [])),
    responses((status = 201, body = TrustPolicyView), Problems))]
async fn trust_policy_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, account)): Path<(String, String)>,
    Json(input): Json<TrustPolicyCreate>,
) -> ApiResult {
    let org: OrgId = path_id(&org)?;
    let account: ServiceAccountId = path_id(&account)?;
    let view = app.trust_policy_create(&ctx, org, account, input).await?;
    Ok(created(format!("/v1/orgs/{org}/service-accounts/{account}/trust-policies/{}", view.id), "", view))
}

/// Delete a trust policy.
#[utoipa::path(delete, path = "/v1/orgs/{org}/service-accounts/{service_account}/trust-policies/{policy}", operation_id = "trust_policy_delete", tag = "service-accounts",
    params(("org" = String, Path, description = "Organization id"), ("service_account" = String, Path, description = "Service account id"),
           ("policy" = String, Path, description = "Trust policy id (`tp_…`)")),
    security(("bearer" = [])),
    responses((status = 204, description = "Deleted"), Problems))]
async fn trust_policy_delete(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, account, policy)): Path<(String, String, String)>,
) -> ApiResult {
    let account: ServiceAccountId = path_id(&account)?;
    let policy: TrustPolicyId = path_id(&policy)?;
    app.trust_policy_delete(&ctx, path_id(&org)?, account, policy).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// View the organization's single sign-on settings (never the client secret).
#[utoipa::path(get, path = "/v1/orgs/{org}/sso", operation_id = "sso_config_view", tag = "sso",
    params(("org" = String, Path, description = "Organization id")), security(("bearer" = [])),
    responses((status = 200, body = SsoConfigView), Problems))]
async fn sso_config_view(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Path(org): Path<String>) -> ApiResult {
    let view = app.sso_config_view(&ctx, path_id(&org)?).await?;
    Ok(with_etag(&view.etag.clone(), view))
}

/// Configure single sign-on (owners). The client secret is encrypted by Vault.
#[utoipa::path(put, path = "/v1/orgs/{org}/sso", operation_id = "sso_config_update", tag = "sso",
    params(("org" = String, Path, description = "Organization id"),
           IfMatchHeader),
    request_body = SsoConfigSet, security(("bearer" = [])),
    responses((status = 200, body = SsoConfigView), Problems))]
async fn sso_config_set(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    IfMatch(if_match): IfMatch,
    Json(input): Json<SsoConfigSet>,
) -> ApiResult {
    let view = app.sso_config_set(&ctx, path_id(&org)?, if_match.as_deref(), input).await?;
    Ok(with_etag(&view.etag.clone(), view))
}

/// Turn single sign-on off.
#[utoipa::path(delete, path = "/v1/orgs/{org}/sso", operation_id = "sso_config_delete", tag = "sso",
    params(("org" = String, Path, description = "Organization id")), security(("bearer" = [])),
    responses((status = 204, description = "Deleted"), Problems))]
async fn sso_config_delete(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Path(org): Path<String>) -> ApiResult {
    app.sso_config_delete(&ctx, path_id(&org)?).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// List the domains the organization claims, with the DNS record that proves each.
#[utoipa::path(get, path = "/v1/orgs/{org}/domains", operation_id = "domain_list", tag = "sso",
    params(("org" = String, Path, description = "Organization id"), ListParams), security(("bearer" = [])),
    responses((status = 200, body = Page<DomainView>), Problems))]
async fn domain_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    Ok(axum::Json(app.domain_list(&ctx, path_id(&org)?, list.page()?).await?).into_response())
}

/// Claim a domain (owners): the answer names the DNS TXT record to publish
/// before verifying it.
#[utoipa::path(post, path = "/v1/orgs/{org}/domains", operation_id = "domain_create", tag = "sso",
    params(("org" = String, Path, description = "Organization id"), IdempotencyKeyHeader),
    request_body = DomainCreate, security(("bearer" = [])),
    responses((status = 201, body = DomainView), Problems))]
async fn domain_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    Json(input): Json<DomainCreate>,
) -> ApiResult {
    let org: OrgId = path_id(&org)?;
    let domain = app.domain_create(&ctx, org, input).await?;
    Ok(created(format!("/v1/orgs/{org}/domains/{}", domain.domain), "", domain))
}

/// Check the domain's DNS TXT record now: verified when it carries the token (owners).
#[utoipa::path(post, path = "/v1/orgs/{org}/domains/{domain}/verify", operation_id = "domain_verify", tag = "sso",
    params(("org" = String, Path, description = "Organization id"), ("domain" = String, Path, description = "Domain name")),
    security(("bearer" = [])),
    responses((status = 200, body = DomainView), Problems))]
async fn domain_verify(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, domain)): Path<(String, String)>,
) -> ApiResult {
    Ok(axum::Json(app.domain_verify(&ctx, path_id(&org)?, &domain).await?).into_response())
}

/// Give a domain up (owners): people at it no longer join through SSO.
#[utoipa::path(delete, path = "/v1/orgs/{org}/domains/{domain}", operation_id = "domain_delete", tag = "sso",
    params(("org" = String, Path, description = "Organization id"), ("domain" = String, Path, description = "Domain name")),
    security(("bearer" = [])),
    responses((status = 204, description = "Deleted"), Problems))]
async fn domain_delete(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((org, domain)): Path<(String, String)>,
) -> ApiResult {
    app.domain_delete(&ctx, path_id(&org)?, &domain).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// View what the organization demands of its members' credentials.
#[utoipa::path(get, path = "/v1/orgs/{org}/credential-policy", operation_id = "credential_policy_view", tag = "sso",
    params(("org" = String, Path, description = "Organization id")), security(("bearer" = [])),
    responses((status = 200, body = CredentialPolicyView), Problems))]
async fn credential_policy_view(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Path(org): Path<String>) -> ApiResult {
    let policy = app.credential_policy_view(&ctx, path_id(&org)?).await?;
    Ok(with_etag(&policy.etag.clone(), policy))
}

/// Set the longest token lifetime, and whether members must use SSO or a
/// verified address (owners). Credentials the new policy refuses stop
/// working at once.
#[utoipa::path(put, path = "/v1/orgs/{org}/credential-policy", operation_id = "credential_policy_update", tag = "sso",
    params(("org" = String, Path, description = "Organization id"),
           IfMatchHeader),
    request_body = CredentialPolicy, security(("bearer" = [])),
    responses((status = 200, body = CredentialPolicyView), Problems))]
async fn credential_policy_update(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(org): Path<String>,
    IfMatch(if_match): IfMatch,
    Json(input): Json<CredentialPolicy>,
) -> ApiResult {
    let policy = app.credential_policy_update(&ctx, path_id(&org)?, input, if_match.as_deref()).await?;
    Ok(with_etag(&policy.etag.clone(), policy))
}

/// List who holds a role in a project.
#[utoipa::path(get, path = "/v1/projects/{project}/members", operation_id = "project_member_list", tag = "members",
    params(("project" = String, Path, description = "Project id or name"), ListParams), security(("bearer" = [])),
    responses((status = 200, body = Page<ProjectMemberView>), Problems))]
async fn project_member_list(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path(project): Path<String>,
    Query(list): Query<ListParams>,
) -> ApiResult {
    Ok(axum::Json(app.project_member_list(&ctx, &ResourceRef::parse(&project), list.page()?).await?).into_response())
}

/// Give a member or service account a project role (`admin`, `developer`, `viewer`).
#[utoipa::path(put, path = "/v1/projects/{project}/members/{principal}", operation_id = "project_member_update", tag = "members",
    params(("project" = String, Path, description = "Project id or name"), ("principal" = String, Path, description = "`usr_…` or `sa_…`"),
           IfMatchHeader),
    request_body = ProjectMemberSet, security(("bearer" = [])),
    responses((status = 200, body = ProjectMemberView), Problems))]
async fn project_member_set(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, principal)): Path<(String, String)>,
    IfMatch(if_match): IfMatch,
    Json(input): Json<ProjectMemberSet>,
) -> ApiResult {
    let view =
        app.project_member_set(&ctx, &ResourceRef::parse(&project), &principal, if_match.as_deref(), input).await?;
    Ok(with_etag(&view.etag.clone(), view))
}

/// Take a project role away.
#[utoipa::path(delete, path = "/v1/projects/{project}/members/{principal}", operation_id = "project_member_delete", tag = "members",
    params(("project" = String, Path, description = "Project id or name"), ("principal" = String, Path, description = "`usr_…` or `sa_…`")),
    security(("bearer" = [])),
    responses((status = 204, description = "Removed"), Problems))]
async fn project_member_remove(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Path((project, principal)): Path<(String, String)>,
) -> ApiResult {
    app.project_member_remove(&ctx, &ResourceRef::parse(&project), &principal).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
