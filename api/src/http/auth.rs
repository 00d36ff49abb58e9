//! Identity routes: sign-up, sign-in, sessions, e-mail links, the public
//! signing keys, CI token exchange, SSO sign-in, and the caller's own
//! account and personal tokens.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{Ctx, IdempotencyKeyHeader, Json, ListParams, MaybeCtx, Meta, Query};
use super::orgs::path_id;
use super::problem::Problems;
use super::{ApiResult, created};
use crate::app::App;
use crate::ids::TokenId;
use crate::model::*;

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new()
        .routes(routes!(signup))
        .routes(routes!(signup_confirm))
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
        .routes(routes!(sso_link_confirm_mailed))
        .routes(routes!(sso_link_confirm))
        .routes(routes!(me))
        .routes(routes!(session_list, session_delete_others))
        .routes(routes!(security_event_list))
        .routes(routes!(session_delete))
        .routes(routes!(personal_token_list, personal_token_create))
        .routes(routes!(personal_token_delete))
        .routes(routes!(invitation_accept))
}

/// Sign up: mails the address a link that creates the account, an
/// organization it owns and a session. Answers the same whether or not the
/// address already has an account (its owner is mailed a note instead).
#[utoipa::path(post, path = "/v1/signup", operation_id = "account_create", tag = "auth",
    request_body = SignupRequest,
    responses((status = 202, body = SignupAccepted), Problems))]
async fn signup(State(app): State<Arc<App>>, Meta(meta): Meta, Json(input): Json<SignupRequest>) -> ApiResult {
    let accepted = app.signup(&meta, input).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(accepted)).into_response())
}

/// Finish signing up with the token from the sign-up e-mail: the account,
/// its organization, and a session.
#[utoipa::path(post, path = "/v1/signup/confirm", operation_id = "account_confirm", tag = "auth",
    request_body = SignupConfirm,
    responses((status = 201, body = SignupResponse), Problems))]
async fn signup_confirm(State(app): State<Arc<App>>, Meta(meta): Meta, Json(input): Json<SignupConfirm>) -> ApiResult {
    let made = app.signup_confirm(&meta, input).await?;
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
    // Binds the login to this browser (RFC 9700 §4.7): the callback must bring the cookie back.
    let binding = moke_iam::token::random_secret(32);
    let start = app.sso_login_start(&meta, &org, &binding).await?;
    let mut response = (StatusCode::SEE_OTHER, axum::Json(&start)).into_response();
    if let Ok(location) = HeaderValue::from_str(&start.authorization_url) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    let secure = if app.config().http.public_url.starts_with("https://") { "; Secure" } else { "" };
    let cookie = format!("{SSO_COOKIE}={binding}; Path=/v1/sso; HttpOnly; SameSite=Lax; Max-Age=600{secure}");
    if let Ok(cookie) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    Ok(response)
}

/// The cookie that binds an SSO login to the browser that started it.
const SSO_COOKIE: &str = "moke_sso_binding";

fn cookie<'a>(headers: &'a axum::http::HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// Where the identity provider sends you back.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct SsoCallbackParams {
    /// The authorization code (required unless the provider reports `error`).
    #[param(required = true)]
    code: Option<String>,
    /// The `state` of the sign-in this browser started (required unless the provider reports `error`).
    #[param(required = true)]
    state: Option<String>,
    /// The issuer of the response (RFC 9207).
    iss: Option<String>,
    /// An error the provider reports instead of a code; the sign-in is then
    /// refused (400).
    error: Option<String>,
}

/// Finish SSO sign-in, in the browser that started it: a session acting in
/// that organization only (joining it on first sign-in when the address is
/// in one of its verified domains), or, when the identity matches an
/// existing account by address, 202 and a link for the account's owner to
/// confirm.
#[utoipa::path(get, path = "/v1/sso/callback", operation_id = "sso_login_finish", tag = "auth",
    params(SsoCallbackParams),
    responses((status = 200, body = SessionTokens), (status = 202, body = SsoLinkPending), Problems))]
async fn sso_callback(
    State(app): State<Arc<App>>,
    Meta(meta): Meta,
    headers: axum::http::HeaderMap,
    Query(params): Query<SsoCallbackParams>,
) -> ApiResult {
    if let Some(error) = params.error {
        return Err(crate::app::Error::invalid_field("error", "provider_error", error).into());
    }
    let (Some(code), Some(state)) = (params.code, params.state) else {
        return Err(crate::app::Error::invalid_field("code", "required", "code and state are required").into());
    };
    let binding = cookie(&headers, SSO_COOKIE);
    let outcome = app.sso_callback(&meta, &code, &state, params.iss.as_deref(), binding).await?;
    let mut response = match outcome {
        SsoOutcome::SignedIn(tokens) => axum::Json(tokens).into_response(),
        SsoOutcome::LinkRequired(pending) => (StatusCode::ACCEPTED, axum::Json(pending)).into_response(),
    };
    response
        .headers_mut()
        .insert(header::SET_COOKIE, HeaderValue::from_static("moke_sso_binding=; Path=/v1/sso; Max-Age=0"));
    Ok(response)
}

/// Confirm, with the link mailed to your account's address, that an SSO
/// identity may sign you in to its organization; signs you in through it.
#[utoipa::path(post, path = "/v1/auth/sso-link/confirm", operation_id = "sso_link_mail_confirm", tag = "auth",
    request_body = LinkToken,
    responses((status = 200, body = SessionTokens), Problems))]
async fn sso_link_confirm_mailed(
    State(app): State<Arc<App>>,
    Meta(meta): Meta,
    Json(input): Json<LinkToken>,
) -> ApiResult {
    Ok(axum::Json(app.sso_link_confirm_mailed(&meta, input).await?).into_response())
}

/// Confirm, signed in with your password, that the SSO identity which
/// matched your account (the `link_token` of its sign-in) may sign you in.
#[utoipa::path(post, path = "/v1/me/sso-links/confirm", operation_id = "sso_link_confirm", tag = "auth",
    request_body = LinkToken, security(("bearer" = [])),
    responses((status = 200, body = SsoLinkView), Problems))]
async fn sso_link_confirm(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Json(input): Json<LinkToken>) -> ApiResult {
    Ok(axum::Json(app.sso_link_confirm(&ctx, input).await?).into_response())
}

/// Your sign-in sessions, newest first (a session from an identity provider
/// sees that provider's sessions only).
#[utoipa::path(get, path = "/v1/me/sessions", operation_id = "session_list", tag = "auth",
    params(ListParams), security(("bearer" = [])),
    responses((status = 200, body = Page<SessionView>), Problems))]
async fn session_list(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Query(list): Query<ListParams>) -> ApiResult {
    Ok(axum::Json(app.session_list(&ctx, list.page()?).await?).into_response())
}

/// Security events about your account (sign-ins, failed ones too, resets,
/// sessions, SSO links), in every organization and in none, newest first.
#[utoipa::path(get, path = "/v1/me/security-events", operation_id = "security_event_list", tag = "auth",
    params(ListParams), security(("bearer" = [])),
    responses((status = 200, body = Page<AuditEventView>), Problems))]
async fn security_event_list(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Query(list): Query<ListParams>) -> ApiResult {
    Ok(axum::Json(app.security_event_list(&ctx, list.page()?).await?).into_response())
}

/// End every session of yours but the one making this request.
#[utoipa::path(delete, path = "/v1/me/sessions", operation_id = "other_sessions_delete", tag = "auth",
    security(("bearer" = [])),
    responses((status = 200, body = SessionsEnded), Problems))]
async fn session_delete_others(State(app): State<Arc<App>>, Ctx(ctx): Ctx) -> ApiResult {
    Ok(axum::Json(app.session_delete_others(&ctx).await?).into_response())
}

/// End one of your sessions.
#[utoipa::path(delete, path = "/v1/me/sessions/{session}", operation_id = "session_revoke", tag = "auth",
    params(("session" = String, Path, description = "Session id (`ses_…`)")), security(("bearer" = [])),
    responses((status = 204, description = "Ended"), Problems))]
async fn session_delete(State(app): State<Arc<App>>, Ctx(ctx): Ctx, Path(session): Path<String>) -> ApiResult {
    let session: crate::ids::SessionId = path_id(&session)?;
    app.session_delete(&ctx, session).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
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
    params(IdempotencyKeyHeader),
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
