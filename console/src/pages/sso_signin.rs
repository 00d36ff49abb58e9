//! Signing in through an organization's identity provider: the form that
//! starts it, the page that continues to the provider, the landing the
//! provider sends the browser back to
//! (`/signin/sso/callback`, the redirect URI to register), and the page of
//! the link mailed when the identity matches an existing account.
//!
//! The API binds each sign-in to the browser that started it; the console
//! is that browser's agent, so it keeps the binding sealed in its cookie and
//! shows it to the API's callback.

use std::sync::Arc;

use axum::response::{IntoResponse, Response};
use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use moke_sdk::types;

use super::query;
use crate::Console;
use crate::api::Api;
use crate::error::{ConsoleError, FieldProblem};
use crate::session::{RequestSession, request_session};
use crate::ui::{Csrf, Field, FormAlert, FormErrors, action_error};

/// The API's cookie that carries the browser binding.
const BINDING_COOKIE: &str = "moke_sso_binding";

fn binding_of(answer: &reqwest::Response) -> Option<String> {
    answer
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter_map(|value| value.split(';').next()?.trim().split_once('='))
        .find(|(name, value)| *name == BINDING_COOKIE && !value.is_empty())
        .map(|(_, value)| value.to_string())
}

#[server(prefix = "/console/fn", endpoint = "sso_start")]
pub async fn sso_start(csrf: String, organization: String) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let kept = [("organization", organization.as_str())];
    let started = async {
        let organization = organization.trim();
        let valid = !organization.is_empty()
            && organization.len() <= 63
            && organization.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !valid {
            return Err(ConsoleError::invalid(vec![FieldProblem {
                field: "organization".into(),
                message: "Enter your organization's name, as your administrator gave it.".into(),
            }]));
        }
        let path = format!("/v1/sso/{}/login", moke_sdk::encode_path(organization));
        let api = session.anonymous_api();
        let answer = api.get_raw(&path, None).await?;
        if answer.status() == http::StatusCode::NOT_FOUND {
            return Err(ConsoleError::invalid(vec![FieldProblem {
                field: "organization".into(),
                message: "No organization of that name signs in with single sign-on.".into(),
            }]));
        }
        if answer.status() != http::StatusCode::SEE_OTHER {
            return Err(Api::problem(answer).await);
        }
        let binding = binding_of(&answer);
        let start = answer.json::<types::SsoLoginStart>().await.ok();
        let (Some(binding), Some(start)) = (binding, start) else {
            return Err(ConsoleError::new(502, "Unexpected answer", "Single sign-on could not be started."));
        };
        // Only ever to the provider: over HTTPS, or plain HTTP only while
        // the console itself is (a provider on loopback in development).
        let https = start.authorization_url.starts_with("https://");
        if !(https || (!session.secure() && start.authorization_url.starts_with("http://"))) {
            return Err(ConsoleError::new(502, "Unexpected answer", "Single sign-on could not be started."));
        }
        session.start_sso(binding, start.authorization_url);
        // Through a page of the console's own: the pages' CSP lets forms
        // lead only to this site (`form-action 'self'`, redirects included).
        session.redirect("/signin/sso/continue");
        Ok(())
    };
    started.await.map_err(|e: ConsoleError| e.keep(&kept))
}

/// `/signin/sso/continue`: on to the identity provider of the sign-in this
/// browser started (at once; the link is for a browser that waits).
#[component]
pub fn SsoContinue() -> impl IntoView {
    let session = request_session();
    let Some(destination) = session.sso_destination() else {
        session.redirect("/signin/sso?outcome=expired");
        return ().into_any();
    };
    view! {
        <Title text="Continue to your identity provider"/>
        <Meta http_equiv="refresh" content=format!("0;url={destination}")/>
        <main class="narrow" id="main">
            <h1>"Continue to your identity provider"</h1>
            <p><a href=destination>"Continue"</a></p>
        </main>
    }
    .into_any()
}

/// `/signin/sso`: sign in through your organization's identity provider.
#[component]
pub fn SsoSignIn() -> impl IntoView {
    let action = ServerAction::<SsoStart>::new();
    let errors = FormErrors::new(action_error(action.value().get_untracked()), &["organization"]);
    let session = request_session();
    // Signed in already: a second sign-in would leave the first session behind.
    if session.signed_in() && errors.is_empty() && query("outcome").is_none() {
        session.redirect("/projects");
    }
    let outcome = match query("outcome").as_deref() {
        Some("expired") => Some(("alert", "The sign-in took too long or was started in another browser. Start again.")),
        Some("failed") => Some(("alert", "Single sign-on did not complete. Try again, or sign in with your password.")),
        Some("confirm") => Some((
            "alert ok",
            "An account with your address already exists. We have mailed it a link: open it to let single sign-on \
             sign you in to that account.",
        )),
        Some("linked") => Some(("alert ok", "Confirmed. Now sign in with single sign-on.")),
        _ => None,
    };
    view! {
        <Title text="Sign in with single sign-on"/>
        <main class="narrow" id="main">
            <h1>"Sign in with single sign-on"</h1>
            <div class="live" role="status" aria-live="polite">
                {outcome.map(|(class, text)| view! { <div class=class>{text}</div> })}
            </div>
            <FormAlert errors=errors.clone()/>
            <ActionForm action=action>
                <Csrf/>
                <Field label="Organization" name="organization" autocomplete="organization" required=true
                    hint="Its name in Moke, e.g. acme. Your organization's identity provider signs you in." errors=errors.clone()/>
                <button type="submit">"Continue"</button>
            </ActionForm>
            <p><a href="/signin">"Sign in with your password instead"</a></p>
        </main>
    }
}

/// `GET /signin/sso/callback`: where the identity provider sends the
/// browser back. Hands the answer to the API with this browser's binding;
/// signs in, or says what to do next.
pub(crate) async fn sso_callback(
    axum::Extension(console): axum::Extension<Arc<Console>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let (session, response) = RequestSession::outside_leptos(console, &parts);
    let to = match session.take_sso_binding() {
        None => "/signin/sso?outcome=expired".to_string(),
        Some(binding) => finish(&session, parts.uri.query().unwrap_or_default(), &binding).await,
    };
    let answer = (http::StatusCode::SEE_OTHER, [(http::header::LOCATION, to)]).into_response();
    RequestSession::with_cookie(&response, answer)
}

/// Finishes the sign-in at the API; where the browser goes next.
async fn finish(session: &RequestSession, query: &str, binding: &str) -> String {
    let cookie = format!("{BINDING_COOKIE}={binding}");
    let path = format!("/v1/sso/callback?{query}");
    let answer = match session.anonymous_api().get_raw(&path, Some(&cookie)).await {
        Ok(answer) => answer,
        Err(_) => return "/signin/sso?outcome=failed".into(),
    };
    match answer.status() {
        http::StatusCode::OK => match answer.json::<types::SessionTokens>().await {
            Ok(tokens) => {
                session.sign_in(tokens);
                "/projects".into()
            }
            Err(_) => "/signin/sso?outcome=failed".into(),
        },
        http::StatusCode::ACCEPTED => "/signin/sso?outcome=confirm".into(),
        status => {
            tracing::info!(status = status.as_u16(), "single sign-on was refused");
            "/signin/sso?outcome=failed".into()
        }
    }
}

#[server(prefix = "/console/fn", endpoint = "sso_link_confirm")]
pub async fn sso_link_confirm(csrf: String, token: String) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let body = types::LinkToken { token };
    let tokens = session.anonymous_api().sso_link_mail_confirm().body(body).send().await?.into_inner();
    // Linked, but not signed in here: a link someone else mailed to
    // themselves must not sign this browser in to their account. The
    // session the API opened ends; the person signs in through the provider.
    let ended = session
        .api_with_token(&tokens.access_token)
        .session_delete()
        .body(types::LogoutRequest { refresh_token: Some(tokens.refresh_token) })
        .send()
        .await;
    if let Err(error) = ended {
        tracing::warn!(status = ?error.status(), "confirming an SSO link: its session could not be ended");
    }
    session.redirect("/signin/sso?outcome=linked");
    Ok(())
}

/// `/sso/link?token=…`: the mailed link that lets an organization's
/// identity provider sign in to an existing account. Acts only on the click.
#[component]
pub fn SsoLink() -> impl IntoView {
    let action = ServerAction::<SsoLinkConfirm>::new();
    let errors = FormErrors::new(action_error(action.value().get_untracked()), &["token"]);
    let token = query("token").unwrap_or_default();
    view! {
        <Title text="Confirm single sign-on"/>
        <main class="narrow" id="main">
            <h1>"Let single sign-on sign you in"</h1>
            <p>"Someone signed in through an organization's identity provider with this account's address. Confirm only if that was you: from then on that provider signs you in to this account, in that organization. You then sign in through it."</p>
            <FormAlert errors=errors.clone()/>
            <ActionForm action=action>
                <Csrf/>
                <input type="hidden" name="token" value=token/>
                <button type="submit">"It was me: confirm"</button>
            </ActionForm>
            <p><a href="/signin">"It was not me"</a></p>
        </main>
    }
}
