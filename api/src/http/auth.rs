//! Identity routes: sign-up, sign-in, sessions, e-mail links, the public
//! signing keys, CI token exchange, SSO sign-in, and the caller's own
//! account and personal tokens.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{Ctx, Json, ListParams, MaybeCtx, Meta, Query};
use super::orgs::path_id;
use super::problem::Problems;
use super::{ApiResult, created};
use crate::app::App;
use crate::ids::TokenId;
use crate::model::*;

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new()
        .routes(routes!(signup))
        .routes(routes!(login))
        .routes(routes!(token_refresh))
        .routes(routes!(logout))
        .routes(routes!(email_verify))
        .routes(routes!(password_reset_request))
        .routes(routes!(password_reset_confirm))
        .routes(routes!(token_exchange))
        .routes(routes!(jwks))
        .routes(routes!(sso_login_start))
        .routes(routes!(sso_callback))
        .routes(routes!(me))
        .routes(routes!(personal_token_list, personal_token_create))
        .routes(routes!(personal_token_delete))
        .routes(routes!(invitation_accept))
}

/// Sign up: a new account, a new organization you own, and a session.
#[utoipa::path(post, path = "/v1/signup", operation_id = "account_create", tag = "auth",
    request_body = SignupRequest,
    responses((status = 201, body = SignupResponse), Problems))]
async fn signup(State(app): State<Arc<App>>, Meta(meta): Meta, Json(input): Json<SignupRequest>) -> ApiResult {
    let made = app.signup(&meta, input).await?;
    Ok(created(format!("/v1/orgs/{}", made.organization.id), "", made))
}

/// Sign in with e-mail and password.
#[utoipa::path(post, path = "/v1/auth/login", operation_id = "session_create", tag = "auth",
    request_body = LoginRequest,
    responses((status = 200, body = SessionTokens), Problems))]
async fn login(State(app): State<Arc<App>>, Meta(meta): Meta, Json(input): Json<LoginRequest>) -> ApiResult {
    Ok(axum::Json(app.login(&meta, input).await?).into_response())
}

/// Exchange a refresh token for a new access and refresh token. A refresh
/// token used twice ends its session.
#[utoipa::path(post, path = "/v1/auth/refresh", operation_id = "session_refresh", tag = "auth",
    request_body = RefreshRequest,
    responses((status = 200, body = SessionTokens), Problems))]
async fn token_refresh(State(app): State<Arc<App>>, Meta(meta): Meta, Json(input): Json<RefreshRequest>) -> ApiResult {
    Ok(axum::Json(app.token_refresh(&meta, input).await?).into_response())
}

/// Sign out: ends the session (its refresh tokens and access tokens).
#[utoipa::path(post, path = "/v1/auth/logout", operation_id = "session_delete", tag = "auth",
    request_body = LogoutRequest,
    responses((status = 204, description = "Signed out"), Problems))]
async fn logout(State(app): State<Arc<App>>, MaybeCtx(ctx): MaybeCtx, Json(input): Json<LogoutRequest>) -> ApiResult {
    app.logout(&ctx, input).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Confirm an e-mail address with the token from the verification e-mail.
#[utoipa::path(post, path = "/v1/auth/verify-email", operation_id = "email_verify", tag = "auth",
    request_body = LinkToken,
    responses((status = 200, body = UserView), Problems))]
async fn email_verify(State(app): State<Arc<App>>, Meta(meta): Meta, Json(input): Json<LinkToken>) -> ApiResult {
    Ok(axum::Json(app.email_verify(&meta, input).await?).into_response())
}

/// Ask for a password-reset e-mail. Answers 202 whether or not the address has an account.
#[utoipa::path(post, path = "/v1/auth/password-reset", operation_id = "password_reset_request", tag = "auth",
    request_body = PasswordResetRequest,
    responses((status = 202, description = "If the address has an account, a link is on its way"), Problems))]
async fn password_reset_request(
    State(app): State<Arc<App>>,
    Meta(meta): Meta,
    Json(input): Json<PasswordResetRequest>,
) -> ApiResult {
    app.password_reset_request(&meta, input).await?;
    Ok(StatusCode::ACCEPTED.into_response())
}

/// Set a new password with the token from the reset e-mail; ends every session.
#[utoipa::path(post, path = "/v1/auth/password-reset/confirm", operation_id = "password_reset_confirm", tag = "auth",
    request_body = PasswordResetConfirm,
    responses((status = 204, description = "Password changed"), Problems))]
async fn password_reset_confirm(
    State(app): State<Arc<App>>,
    Meta(meta): Meta,
    Json(input): Json<PasswordResetConfirm>,
) -> ApiResult {
    app.password_reset_confirm(&meta, input).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Exchange a CI system's OIDC ID token for a short-lived service-account
/// token, when it matches one of the account's trust policies.
#[utoipa::path(post, path = "/v1/auth/token-exchange", operation_id = "token_exchange", tag = "auth",
    request_body = TokenExchangeRequest,
    responses((status = 200, body = ExchangedToken), Problems))]
async fn token_exchange(
    State(app): State<Arc<App>>,
    Meta(meta): Meta,
    Json(input): Json<TokenExchangeRequest>,
) -> ApiResult {
    Ok(axum::Json(app.token_exchange(&meta, input).await?).into_response())
}

/// The public keys access tokens are signed with (JWK Set).
#[utoipa::path(get, path = "/.well-known/jwks.json", operation_id = "signing_key_list", tag = "auth",
    responses((status = 200, description = "JWK Set", body = Object)))]
async fn jwks(State(app): State<Arc<App>>) -> ApiResult {
    let mut response = axum::Json(app.jwks()).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=300"));
    Ok(response)
}

/// Start signing in to an organization through its identity provider:
/// redirects (303) to the provider.
#[utoipa::path(get, path = "/v1/sso/{org}/login", operation_id = "sso_login_start", tag = "auth",
    params(("org" = String, Path, description = "Organization name or id")),
    responses((status = 303, description = "To the identity provider", body = SsoLoginStart), Problems))]
async fn sso_login_start(State(app): State<Arc<App>>, Meta(meta): Meta, Path(org): Path<String>) -> ApiResult {
    let start = app.sso_login_start(&meta, &org).await?;
    let mut response = (StatusCode::SEE_OTHER, axum::Json(&start)).into_response();
    if let Ok(location) = HeaderValue::from_str(&start.authorization_url) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    Ok(response)
}

/// Where the identity provider sends you back.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct SsoCallbackParams {
    code: Option<String>,
    state: Option<String>,
    /// The issuer of the response (RFC 9207).
    iss: Option<String>,
    /// An error the provider reports instead of a code.
    error: Option<String>,
}

/// Finish SSO sign-in: a session for the person (joining the organization
/// on first sign-in).
#[utoipa::path(get, path = "/v1/sso/callback", operation_id = "sso_login_finish", tag = "auth",
    params(SsoCallbackParams),
    responses((status = 200, body = SessionTokens), Problems))]
async fn sso_callback(
    State(app): State<Arc<App>>,
    Meta(meta): Meta,
    Query(params): Query<SsoCallbackParams>,
) -> ApiResult {
    if let Some(error) = params.error {
        return Err(crate::app::Error::invalid_field("error", "provider_error", error).into());
    }
    let (Some(code), Some(state)) = (params.code, params.state) else {
        return Err(crate::app::Error::invalid_field("code", "required", "code and state are required").into());
    };
    Ok(axum::Json(app.sso_callback(&meta, &code, &state, params.iss.as_deref()).await?).into_response())
}

/// Who you are, where you act, and your organizations.
#[utoipa::path(get, path = "/v1/me", operation_id = "me_view", tag = "auth",
    security(("bearer" = [])),
    responses((status = 200, body = MeView), Problems))]
async fn me(State(app): State<Arc<App>>, Ctx(ctx): Ctx) -> ApiResult {
    Ok(axum::Json(app.me(&ctx).await?).into_response())
}

/// List your personal tokens in the current organization.
#[utoipa::path(get, path = "/v1/me/tokens", operation_id = "personal_token_list", tag = "tokens",
    params(ListParams), security(("bearer" = [])),
    responses((status = 200, body = Page<TokenView>), Problems))]
async fn personal_token_list(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Query(list): Query<ListParams>) -> ApiResult {
    Ok(axum::Json(app.personal_token_list(&ctx, list.page()?).await?).into_response())
}

/// Create a personal token (`moke_pat_…`) acting as you in the current
/// organization, optionally limited to a project and some actions.
#[utoipa::path(post, path = "/v1/me/tokens", operation_id = "personal_token_create", tag = "tokens",
    request_body = ScopedTokenCreate, security(("bearer" = [])),
    responses((status = 201, body = TokenCreated), Problems))]
async fn personal_token_create(
    State(app): State<Arc<App>>,
    Ctx(ctx): Ctx,
    Json(input): Json<ScopedTokenCreate>,
) -> ApiResult {
    let token = app.personal_token_create(&ctx, input).await?;
    Ok(created(format!("/v1/me/tokens/{}", token.view.id), "", token))
}

/// Revoke one of your personal tokens.
#[utoipa::path(delete, path = "/v1/me/tokens/{token}", operation_id = "personal_token_delete", tag = "tokens",
    params(("token" = String, Path, description = "Token id (`tok_…`)")), security(("bearer" = [])),
    responses((status = 204, description = "Revoked"), Problems))]
async fn personal_token_delete(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Path(token): Path<String>) -> ApiResult {
    let token: TokenId = path_id(&token)?;
    app.personal_token_delete(&ctx, token).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Accept an invitation (signed in with the invited address).
#[utoipa::path(post, path = "/v1/invitations/accept", operation_id = "invitation_accept", tag = "members",
    request_body = LinkToken, security(("bearer" = [])),
    responses((status = 200, body = MembershipSummary), Problems))]
async fn invitation_accept(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Json(input): Json<LinkToken>) -> ApiResult {
    Ok(axum::Json(app.invitation_accept(&ctx, input).await?).into_response())
}
