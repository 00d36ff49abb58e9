//! The browser's one cookie and what it carries: the API session's tokens
//! and a CSRF seed, sealed (AES-256-GCM) under a key derived from the
//! Vault-held console key. Page scripts cannot read it (HttpOnly), other
//! sites cannot send it (SameSite=Strict), and nobody can forge or read it
//! without the key.
//!
//! Each request gets one [`RequestSession`] (in the Leptos context): it
//! opens the cookie once, hands out API clients acting as the person
//! ([`RequestSession::api`]), refreshes the access token shortly before it
//! expires (once per refresh token, however many requests need it at the
//! same moment: [`Refreshes`]) and writes the cookie back when it changed.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use http::header;
use http::request::Parts;
use leptos::prelude::*;
use leptos_axum::ResponseOptions;
use moke_sdk::types;
use ring::{aead, hkdf, hmac, rand::SecureRandom};
use serde::{Deserialize, Serialize};
use tokio::sync::OnceCell;

use crate::api::Api;
use crate::error::ConsoleError;
use crate::{Console, FORWARD_SECRET_HEADER};

/// Refresh this long before the access token expires, so that no API call
/// of a page meets an expired token.
const REFRESH_AHEAD: i64 = 60;
/// How long a signed-in cookie lives in the browser; the API session's own
/// expiry ends it sooner.
const SIGNED_IN_MAX_AGE: i64 = 30 * 24 * 3600;
/// A cookie larger than this is not ours.
const LONGEST_COOKIE: usize = 3800;

/// The keys of the console, derived (HKDF-SHA256) from the Vault-held key.
pub(crate) struct Keys {
    seal: aead::LessSafeKey,
    pub(crate) mac: hmac::Key,
    random: ring::rand::SystemRandom,
}

impl Keys {
    pub(crate) fn new(key: &[u8; 32]) -> Keys {
        let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, b"moke-console").extract(key);
        let seal = prk.expand(&[b"cookie seal v1"], &aead::AES_256_GCM).expect("an AES-256 key fits HKDF-SHA256");
        let mac = prk.expand(&[b"mac v1"], hmac::HMAC_SHA256).expect("an HMAC key fits HKDF-SHA256");
        Keys {
            seal: aead::LessSafeKey::new(aead::UnboundKey::from(seal)),
            mac: hmac::Key::from(mac),
            random: ring::rand::SystemRandom::new(),
        }
    }

    /// `n` random bytes, base64url.
    pub(crate) fn random(&self, n: usize) -> String {
        let mut bytes = vec![0u8; n];
        self.random.fill(&mut bytes).expect("the system's random source works");
        B64.encode(bytes)
    }

    fn seal(&self, name: &str, plain: &[u8]) -> String {
        let mut nonce = [0u8; 12];
        self.random.fill(&mut nonce).expect("the system's random source works");
        let mut data = plain.to_vec();
        self.seal
            .seal_in_place_append_tag(
                aead::Nonce::assume_unique_for_key(nonce),
                aead::Aad::from(name.as_bytes()),
                &mut data,
            )
            .expect("a cookie is far below AES-GCM's limit");
        let mut out = nonce.to_vec();
        out.extend(data);
        B64.encode(out)
    }

    fn open(&self, name: &str, sealed: &str) -> Option<Vec<u8>> {
        if sealed.len() > LONGEST_COOKIE {
            return None;
        }
        let bytes = B64.decode(sealed).ok()?;
        if bytes.len() < 12 + 16 {
            return None;
        }
        let (nonce, data) = bytes.split_at(12);
        let nonce = aead::Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut data = data.to_vec();
        let plain = self.seal.open_in_place(nonce, aead::Aad::from(name.as_bytes()), &mut data).ok()?;
        Some(plain.to_vec())
    }

    /// The CSRF token of a cookie's seed: forms carry it, the cookie proves it.
    fn csrf_token(&self, seed: &str) -> String {
        B64.encode(hmac::sign(&self.mac, format!("csrf\0{seed}").as_bytes()))
    }

    fn csrf_valid(&self, seed: &str, token: &str) -> bool {
        let Ok(tag) = B64.decode(token) else { return false };
        hmac::verify(&self.mac, format!("csrf\0{seed}").as_bytes(), &tag).is_ok()
    }
}

/// What the sealed cookie holds.
#[derive(Clone, Serialize, Deserialize)]
struct CookieState {
    /// Random per sign-in (and per anonymous visitor): the CSRF token is its MAC.
    csrf: String,
    #[serde(default)]
    tokens: Option<Tokens>,
}

/// The API session the browser acts in.
#[derive(Clone, Serialize, Deserialize)]
struct Tokens {
    access: String,
    refresh: String,
    /// Unix seconds.
    expires_at: i64,
    organization: String,
}

impl Tokens {
    fn from_api(tokens: types::SessionTokens) -> Tokens {
        Tokens {
            access: tokens.access_token,
            refresh: tokens.refresh_token,
            expires_at: chrono::Utc::now().timestamp() + tokens.expires_in,
            organization: tokens.organization.to_string(),
        }
    }
}

/// Refreshes in flight or just done, by refresh token: a page's parallel
/// requests (and two tabs) share one refresh, because the API ends a
/// session whose refresh token is used twice.
#[derive(Default)]
pub(crate) struct Refreshes(Mutex<HashMap<[u8; 32], Started>>);

/// When a refresh started, and the refresh.
type Started = (Instant, Arc<Flight>);

/// One refresh: its answer, once it has come.
type Flight = OnceCell<Result<Tokens, ConsoleError>>;

impl Refreshes {
    fn flight(&self, refresh_token: &str) -> Arc<Flight> {
        let key: [u8; 32] = ring::digest::digest(&ring::digest::SHA256, refresh_token.as_bytes())
            .as_ref()
            .try_into()
            .expect("SHA-256 is 32 bytes");
        let mut flights = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        // A refreshed cookie reaches the browser within seconds; keep each
        // answer for those the browser sent before it arrived.
        flights.retain(|_, (started, _)| started.elapsed() < Duration::from_secs(120));
        flights.entry(key).or_insert_with(|| (Instant::now(), Arc::new(OnceCell::new()))).1.clone()
    }
}

/// The cookie's name: `__Host-` (no Domain, Path=/, Secure) on HTTPS.
fn cookie_name(secure: bool) -> &'static str {
    if secure { "__Host-moke_console" } else { "moke_console" }
}

/// One request's view of the cookie, shared by every part of its page (or
/// server function) through the Leptos context.
#[derive(Clone)]
pub(crate) struct RequestSession(Arc<Inner>);

struct Inner {
    console: Arc<Console>,
    state: Mutex<Option<CookieState>>,
    /// Where the API should see the request come from.
    forwarded: Forwarded,
    /// The page's path and query, to come back to after signing in.
    path: String,
    response: Option<ResponseOptions>,
}

/// What the console tells the API about the browser's request.
#[derive(Clone, Default)]
struct Forwarded {
    ip: Option<String>,
    user_agent: Option<http::HeaderValue>,
    request_id: Option<http::HeaderValue>,
}

impl Forwarded {
    fn from_parts(parts: &Parts) -> Forwarded {
        Forwarded {
            ip: parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(addr)| addr.ip().to_string()),
            user_agent: parts.headers.get(header::USER_AGENT).cloned(),
            request_id: parts.headers.get("x-request-id").cloned(),
        }
    }
}

/// Opens the request's cookie into a [`RequestSession`] in the context
/// (called for every page and server function).
pub(crate) fn provide_request_session() {
    let console = expect_context::<Arc<Console>>();
    let parts = use_context::<Parts>();
    provide_context(RequestSession::open(console, parts.as_ref(), use_context::<ResponseOptions>()));
}

fn read_cookie(console: &Console, headers: &http::HeaderMap) -> Option<CookieState> {
    let name = cookie_name(console.secure);
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(key, _)| *key == name)
        .find_map(|(_, value)| console.keys.open(name, value))
        .and_then(|plain| serde_json::from_slice(&plain).ok())
}

/// The request's session (see [`provide_request_session`]).
pub(crate) fn request_session() -> RequestSession {
    expect_context::<RequestSession>()
}

impl RequestSession {
    fn open(console: Arc<Console>, parts: Option<&Parts>, response: Option<ResponseOptions>) -> RequestSession {
        let state = parts.and_then(|parts| read_cookie(&console, &parts.headers));
        let forwarded = parts.map(Forwarded::from_parts).unwrap_or_default();
        let path = parts.and_then(|parts| parts.uri.path_and_query()).map_or("/".into(), |p| p.to_string());
        RequestSession(Arc::new(Inner { console, state: Mutex::new(state), forwarded, path, response }))
    }

    /// The session of a plain axum handler (not a page): the cookie it
    /// writes lands in the returned options, for the handler to send.
    pub(crate) fn outside_leptos(console: Arc<Console>, parts: &Parts) -> (RequestSession, ResponseOptions) {
        let response = ResponseOptions::default();
        (RequestSession::open(console, Some(parts), Some(response.clone())), response)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<CookieState>> {
        self.0.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stores the new state and sends it to the browser.
    fn write(&self, state: Option<CookieState>) {
        let console = &self.0.console;
        let name = cookie_name(console.secure);
        let secure = if console.secure { "; Secure" } else { "" };
        let cookie = match &state {
            Some(state) => {
                let plain = serde_json::to_vec(state).expect("the cookie state serializes");
                let max_age =
                    if state.tokens.is_some() { format!("; Max-Age={SIGNED_IN_MAX_AGE}") } else { String::new() };
                format!(
                    "{name}={}; Path=/; HttpOnly; SameSite=Strict{secure}{max_age}",
                    console.keys.seal(name, &plain)
                )
            }
            None => format!("{name}=; Path=/; HttpOnly; SameSite=Strict{secure}; Max-Age=0"),
        };
        *self.lock() = state;
        if let (Some(response), Ok(value)) = (&self.0.response, http::HeaderValue::from_str(&cookie)) {
            response.insert_header(header::SET_COOKIE, value);
        }
    }

    /// The request's id (the gateway's `x-request-id`), for error pages.
    pub(crate) fn request_id(&self) -> Option<String> {
        self.0.forwarded.request_id.as_ref().and_then(|id| id.to_str().ok()).map(String::from)
    }

    /// Answers with `status` (a page's error).
    pub(crate) fn set_status(&self, status: u16) {
        if let (Some(response), Ok(status)) = (&self.0.response, http::StatusCode::from_u16(status)) {
            response.set_status(status);
        }
    }

    /// Answers `303 See Other` to `to` (a path on this site).
    pub(crate) fn redirect(&self, to: &str) {
        if let (Some(response), Ok(location)) = (&self.0.response, http::HeaderValue::from_str(to)) {
            response.set_status(http::StatusCode::SEE_OTHER);
            response.insert_header(header::LOCATION, location);
        }
    }

    /// Sends the browser to sign in, and back here afterwards.
    pub(crate) fn redirect_to_sign_in(&self) {
        let next: String = form_urlencoded::byte_serialize(self.0.path.as_bytes()).collect();
        self.redirect(&format!("/signin?next={next}"));
    }

    /// Whether the browser is signed in (its tokens may still turn out expired).
    pub(crate) fn signed_in(&self) -> bool {
        self.lock().as_ref().is_some_and(|state| state.tokens.is_some())
    }

    /// The organization the session acts in.
    pub(crate) fn organization(&self) -> Option<String> {
        self.lock().as_ref().and_then(|state| state.tokens.as_ref().map(|tokens| tokens.organization.clone()))
    }

    /// The token every form of this page carries (creating the cookie's seed
    /// for a first visit).
    pub(crate) fn csrf_token(&self) -> String {
        let existing = self.lock().as_ref().map(|state| state.csrf.clone());
        let seed = match existing {
            Some(seed) => seed,
            None => {
                let seed = self.0.console.keys.random(18);
                self.write(Some(CookieState { csrf: seed.clone(), tokens: None }));
                seed
            }
        };
        self.0.console.keys.csrf_token(&seed)
    }

    /// Refuses a form whose CSRF token is not this cookie's.
    pub(crate) fn check_csrf(&self, token: &str) -> Result<(), ConsoleError> {
        let valid = self.lock().as_ref().is_some_and(|state| self.0.console.keys.csrf_valid(&state.csrf, token));
        if valid { Ok(()) } else { Err(ConsoleError::csrf()) }
    }

    /// Signs the browser in with a new API session (a fresh CSRF seed too, so
    /// nothing planted before sign-in outlives it).
    pub(crate) fn sign_in(&self, tokens: types::SessionTokens) {
        let csrf = self.0.console.keys.random(18);
        self.write(Some(CookieState { csrf, tokens: Some(Tokens::from_api(tokens)) }));
    }

    /// Forgets the API session (the caller ends it at the API first).
    pub(crate) fn sign_out(&self) {
        let csrf = self.0.console.keys.random(18);
        self.write(Some(CookieState { csrf, tokens: None }));
    }

    /// The refresh token, for signing out.
    pub(crate) fn refresh_token(&self) -> Option<String> {
        self.lock().as_ref().and_then(|state| state.tokens.as_ref().map(|tokens| tokens.refresh.clone()))
    }

    /// A client without a credential (sign-up, sign-in), still naming the browser.
    pub(crate) fn anonymous_api(&self) -> Api {
        self.client(None)
    }

    fn client(&self, access_token: Option<&str>) -> Api {
        let console = &self.0.console;
        let forwarded = &self.0.forwarded;
        let mut headers = match access_token.map(moke_sdk::ClientHeaders::bearer) {
            Some(Ok(headers)) => headers,
            _ => moke_sdk::ClientHeaders::default(),
        };
        headers = headers.with(http::HeaderName::from_static(FORWARD_SECRET_HEADER), console.forward_secret.clone());
        if let Some(ip) = forwarded.ip.as_deref().and_then(|ip| http::HeaderValue::from_str(ip).ok()) {
            headers = headers.with(http::HeaderName::from_static("x-forwarded-for"), ip);
        }
        if let Some(agent) = &forwarded.user_agent {
            headers = headers.with(header::USER_AGENT, agent.clone());
        }
        if let Some(id) = &forwarded.request_id {
            headers = headers.with(http::HeaderName::from_static("x-request-id"), id.clone());
        }
        Api::new(moke_sdk::Client::on_pool(&console.api_url, console.http.clone(), headers))
    }

    /// A client acting as the signed-in person, refreshing the session
    /// first when its access token is about to expire. Not signed in (or the
    /// session ended elsewhere): [`ConsoleError::signed_out`].
    pub(crate) async fn api(&self) -> Result<Api, ConsoleError> {
        let tokens =
            self.lock().as_ref().and_then(|state| state.tokens.clone()).ok_or_else(ConsoleError::signed_out)?;
        if tokens.expires_at - chrono::Utc::now().timestamp() > REFRESH_AHEAD {
            return Ok(self.client(Some(&tokens.access)));
        }
        let flight = self.0.console.refreshes.flight(&tokens.refresh);
        let refreshed = flight.get_or_init(|| self.refresh(tokens.refresh.clone(), None)).await.clone();
        match refreshed {
            Ok(fresh) => {
                let csrf = self.lock().as_ref().map(|state| state.csrf.clone()).unwrap_or_default();
                let access = fresh.access.clone();
                self.write(Some(CookieState { csrf, tokens: Some(fresh) }));
                Ok(self.client(Some(&access)))
            }
            Err(error) => {
                if error.status == 401 || error.status == 400 {
                    self.sign_out();
                    return Err(ConsoleError::signed_out());
                }
                Err(error)
            }
        }
    }

    /// Moves the session to another of the person's organizations.
    pub(crate) async fn switch_organization(&self, organization: String) -> Result<(), ConsoleError> {
        let refresh = self.refresh_token().ok_or_else(ConsoleError::signed_out)?;
        let fresh = self.refresh(refresh, Some(organization)).await?;
        let csrf = self.lock().as_ref().map(|state| state.csrf.clone()).unwrap_or_default();
        self.write(Some(CookieState { csrf, tokens: Some(fresh) }));
        Ok(())
    }

    async fn refresh(&self, refresh_token: String, organization: Option<String>) -> Result<Tokens, ConsoleError> {
        let answer = self
            .anonymous_api()
            .session_refresh()
            .body(types::RefreshRequest { organization, refresh_token })
            .send()
            .await?;
        Ok(Tokens::from_api(answer.into_inner()))
    }
}

/// Refuses a state-changing request another site's page made the browser
/// send (Fetch Metadata, then `Origin` against `Host`), before any form is
/// read: defence in depth beside the CSRF token and SameSite=Strict.
pub(crate) async fn refuse_cross_site_posts(request: Request, next: Next) -> Response {
    if matches!(*request.method(), http::Method::GET | http::Method::HEAD) {
        return next.run(request).await;
    }
    let headers = request.headers();
    let site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
    let cross_site = site.is_some_and(|site| site != "same-origin" && site != "none");
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let other_origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()).is_some_and(|origin| {
        let authority = origin.split_once("://").map(|(_, rest)| rest);
        origin == "null" || authority != host
    });
    if cross_site || other_origin {
        return (http::StatusCode::FORBIDDEN, "This form was sent from another site; open Moke and try again.\n")
            .into_response();
    }
    next.run(request).await
}
