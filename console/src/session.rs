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
use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use http::header;
use http::request::Parts;
use leptos::prelude::*;
use leptos_axum::ResponseOptions;
use moke_sdk::types;
use ring::{aead, hkdf, hmac, rand::SecureRandom};
use serde::{Deserialize, Serialize};

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

    /// The CSRF token of a cookie's seed and the organization the page was
    /// drawn for: forms carry it, the cookie proves it. A form from before an
    /// organization switch (in another tab) is refused rather than sent to
    /// the other organization.
    fn csrf_token(&self, seed: &str, organization: &str) -> String {
        B64.encode(hmac::sign(&self.mac, format!("csrf\0{seed}\0{organization}").as_bytes()))
    }

    fn csrf_valid(&self, seed: &str, organization: &str, token: &str) -> bool {
        let Ok(tag) = B64.decode(token) else { return false };
        hmac::verify(&self.mac, format!("csrf\0{seed}\0{organization}").as_bytes(), &tag).is_ok()
    }

    /// The token with which the page's script makes requests that are not
    /// navigations (see [`navigations_only`]): `<expiry>.<MAC>` of the
    /// cookie's seed, the organization the page was drawn for and the
    /// expiry, so only someone who could read a console page has it, it
    /// lapses, and a page of another organization's session is refused.
    fn page_token(&self, seed: &str, organization: &str, now: i64) -> String {
        let expires = now + PAGE_TOKEN_SECONDS;
        let tag = hmac::sign(&self.mac, format!("page\0{seed}\0{organization}\0{expires}").as_bytes());
        format!("{expires}.{}", B64.encode(tag))
    }

    fn page_token_valid(&self, seed: &str, organization: &str, token: &str, now: i64) -> bool {
        let Some((expires, tag)) = token.split_once('.') else { return false };
        let (Ok(expires), Ok(tag)) = (expires.parse::<i64>(), B64.decode(tag)) else { return false };
        (now..=now + PAGE_TOKEN_SECONDS).contains(&expires)
            && hmac::verify(&self.mac, format!("page\0{seed}\0{organization}\0{expires}").as_bytes(), &tag).is_ok()
    }
}

/// What the sealed cookie holds.
#[derive(Clone, Serialize, Deserialize)]
struct CookieState {
    /// Random per sign-in (and per anonymous visitor): the CSRF token is its MAC.
    csrf: String,
    #[serde(default)]
    tokens: Option<Tokens>,
    /// A secret to show once, on the page it is for.
    #[serde(default)]
    flash: Option<Flash>,
    /// The single sign-on this browser started, until the provider sends it back.
    #[serde(default)]
    sso: Option<SsoStarted>,
}

/// A single sign-on this browser started: the binding the API's callback
/// must see again (RFC 9700 §4.7), and when it began.
#[derive(Clone, Serialize, Deserialize)]
struct SsoStarted {
    binding: String,
    started: i64,
    /// The provider's sign-in page, where the browser goes next.
    destination: String,
}

/// How long a started single sign-on waits for the provider (the API's own limit).
const SSO_SECONDS: i64 = 600;

/// A secret the API showed once (a new deploy hook's, an endpoint's), kept
/// sealed in the cookie between a form's post and the page after it, and
/// dropped the moment that page shows it.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Flash {
    /// Random; a flash is shown once per process even from an old copy of
    /// the cookie.
    #[serde(default)]
    pub id: String,
    /// Unix seconds; a flash older than [`FLASH_SHOWN_SECONDS`] is dropped.
    #[serde(default)]
    pub issued: i64,
    /// The page (path) that shows it.
    pub for_path: String,
    /// What it belongs to, e.g. `deploy hook web`.
    pub what: String,
    pub secret: String,
    /// Where deliveries go (a hook's URL), when there is one.
    pub url: Option<String>,
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
/// session whose refresh token is used twice. Each refresh runs as a task
/// of its own, so that a request dropped half-way (a closed tab) cannot
/// leave a spent token behind for the next request to spend again; its
/// answer is kept for ten minutes, for requests the browser sent with the
/// old cookie before the new one arrived.
#[derive(Default)]
pub(crate) struct Refreshes(Mutex<HashMap<[u8; 32], Started>>);

/// When a refresh started, and the refresh.
type Started = (Instant, Flight);

/// One refresh: its answer, shared by every request that waits for it.
type Flight = Shared<BoxFuture<'static, Result<Tokens, ConsoleError>>>;

/// How long a refresh's answer is kept: long enough for the requests a
/// page makes at once and a browser still sending the old cookie, short
/// enough that an old cookie cannot ride on it.
const FLIGHT_KEPT: Duration = Duration::from_secs(60);

/// How long after its form a secret can still be shown.
const FLASH_SHOWN_SECONDS: i64 = 300;

impl Refreshes {
    /// The refresh of `refresh_token`: the one in flight (or just done), or
    /// `start`ed now.
    fn flight<F>(&self, refresh_token: &str, organization: Option<&str>, start: impl FnOnce() -> F) -> Flight
    where
        F: std::future::Future<Output = Result<Tokens, ConsoleError>> + Send + 'static,
    {
        let key = Self::key(refresh_token, organization);
        let mut flights = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        flights.retain(|_, (started, _)| started.elapsed() < FLIGHT_KEPT);
        flights
            .entry(key)
            .or_insert_with(|| {
                let task = tokio::spawn(start());
                let answer = async move {
                    task.await.unwrap_or_else(|_| {
                        Err(ConsoleError::new(503, "Moke is unavailable", "Signing in again failed; try again."))
                    })
                };
                (Instant::now(), answer.boxed().shared())
            })
            .1
            .clone()
    }

    /// Forgets a refresh that failed, so that the next request tries again.
    fn forget(&self, refresh_token: &str, organization: Option<&str>) {
        let key = Self::key(refresh_token, organization);
        self.0.lock().unwrap_or_else(PoisonError::into_inner).remove(&key);
    }

    fn key(refresh_token: &str, organization: Option<&str>) -> [u8; 32] {
        let keyed = format!("{refresh_token}\0{}", organization.unwrap_or_default());
        ring::digest::digest(&ring::digest::SHA256, keyed.as_bytes()).as_ref().try_into().expect("SHA-256 is 32 bytes")
    }
}

/// Flashes shown by this process in the last [`FLASH_SHOWN_SECONDS`], by id.
#[derive(Default)]
pub(crate) struct ShownFlashes(Mutex<HashMap<String, Instant>>);

impl ShownFlashes {
    /// True the first time `id` is shown.
    fn first_showing(&self, id: &str) -> bool {
        let mut shown = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let window = Duration::from_secs(FLASH_SHOWN_SECONDS as u64);
        shown.retain(|_, at| at.elapsed() < window);
        shown.insert(id.to_string(), Instant::now()).is_none()
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
    /// Sent by the console's own script (with the page token).
    scripted: bool,
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
        let scripted = parts.is_some_and(|parts| parts.headers.contains_key(PAGE_TOKEN_HEADER));
        RequestSession(Arc::new(Inner { console, state: Mutex::new(state), forwarded, path, response, scripted }))
    }

    /// The session of a plain axum handler (not a page): the cookie it
    /// writes lands in the returned options, for the handler to send.
    pub(crate) fn outside_leptos(console: Arc<Console>, parts: &Parts) -> (RequestSession, ResponseOptions) {
        let response = ResponseOptions::default();
        (RequestSession::open(console, Some(parts), Some(response.clone())), response)
    }

    /// `answer` with the cookie a plain handler's session wrote (see
    /// [`RequestSession::outside_leptos`]).
    pub(crate) fn with_cookie(response: &ResponseOptions, mut answer: Response) -> Response {
        let set = response.0.read().unwrap_or_else(PoisonError::into_inner);
        for (name, value) in set.headers.iter().filter(|(name, _)| *name == header::SET_COOKIE) {
            answer.headers_mut().append(name, value.clone());
        }
        answer
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<CookieState>> {
        self.0.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stores the new state and sends it to the browser.
    fn write(&self, state: Option<CookieState>) {
        let console = &self.0.console;
        let name = cookie_name(console.secure);
        let secure = if console.secure { "; Secure" } else { "" };
        let mut state = state;
        if let Some(with_flash) = state.as_mut() {
            // A cookie the browser would refuse would sign the person out: a
            // secret too large to carry is dropped instead.
            let size = serde_json::to_vec(with_flash).map_or(0, |plain| plain.len());
            if size * 4 / 3 + 64 > LONGEST_COOKIE {
                with_flash.flash = None;
            }
        }
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

    /// `path` as a full URL on the public address (the API answers some
    /// links, such as a hook's delivery URL, as paths).
    pub(crate) fn public_link(&self, path: &str) -> String {
        if path.starts_with('/') { format!("{}{path}", self.0.console.public_url) } else { path.to_string() }
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

    /// The organization the session acts in, or [`ConsoleError::signed_out`].
    pub(crate) fn acting_organization(&self) -> Result<String, ConsoleError> {
        self.organization().ok_or_else(ConsoleError::signed_out)
    }

    /// The organization the session acts in.
    pub(crate) fn organization(&self) -> Option<String> {
        self.lock().as_ref().and_then(|state| state.tokens.as_ref().map(|tokens| tokens.organization.clone()))
    }

    /// The token every form of this page carries (creating the cookie's seed
    /// for a first visit).
    pub(crate) fn csrf_token(&self) -> String {
        let seed = self.seed();
        self.0.console.keys.csrf_token(&seed, &self.organization().unwrap_or_default())
    }

    /// The token the page's script sends on its own requests.
    pub(crate) fn page_token(&self) -> String {
        let now = chrono::Utc::now().timestamp();
        self.0.console.keys.page_token(&self.seed(), &self.organization().unwrap_or_default(), now)
    }

    /// The cookie's seed, made now for a first visit.
    fn seed(&self) -> String {
        let existing = self.lock().as_ref().map(|state| state.csrf.clone());
        match existing {
            Some(seed) => seed,
            None => {
                let seed = self.0.console.keys.random(18);
                self.write(Some(CookieState { csrf: seed.clone(), tokens: None, flash: None, sso: None }));
                seed
            }
        }
    }

    /// Whether the console's own script sent the request (it may only
    /// read pages and price the cluster form, see [`navigations_only`]).
    pub(crate) fn scripted(&self) -> bool {
        self.0.scripted
    }

    /// Refuses a form whose CSRF token is not this cookie's.
    pub(crate) fn check_csrf(&self, token: &str) -> Result<(), ConsoleError> {
        let organization = self.organization().unwrap_or_default();
        let valid =
            self.lock().as_ref().is_some_and(|state| self.0.console.keys.csrf_valid(&state.csrf, &organization, token));
        if valid { Ok(()) } else { Err(ConsoleError::csrf()) }
    }

    /// Signs the browser in with a new API session (a fresh CSRF seed too, so
    /// nothing planted before sign-in outlives it).
    pub(crate) fn sign_in(&self, tokens: types::SessionTokens) {
        let csrf = self.0.console.keys.random(18);
        self.write(Some(CookieState { csrf, tokens: Some(Tokens::from_api(tokens)), flash: None, sso: None }));
    }

    /// Remembers the binding of a single sign-on this browser started, and
    /// the provider's page it continues on.
    pub(crate) fn start_sso(&self, binding: String, destination: String) {
        let started = SsoStarted { binding, started: chrono::Utc::now().timestamp(), destination };
        let mut state = self.lock().clone().unwrap_or_else(|| CookieState {
            csrf: self.0.console.keys.random(18),
            tokens: None,
            flash: None,
            sso: None,
        });
        state.sso = Some(started);
        self.write(Some(state));
    }

    /// The provider's page of the single sign-on this browser started.
    pub(crate) fn sso_destination(&self) -> Option<String> {
        let state = self.lock();
        let started = state.as_ref()?.sso.as_ref()?;
        (chrono::Utc::now().timestamp() - started.started <= SSO_SECONDS).then(|| started.destination.clone())
    }

    /// Whether the console is served over HTTPS.
    pub(crate) fn secure(&self) -> bool {
        self.0.console.secure
    }

    /// A client acting with `access_token` (one the API just handed out,
    /// not this browser's session).
    pub(crate) fn api_with_token(&self, access_token: &str) -> Api {
        self.client(Some(access_token))
    }

    /// The binding of the single sign-on this browser started (at most
    /// 10 minutes ago), taken out of the cookie: each is used once.
    pub(crate) fn take_sso_binding(&self) -> Option<String> {
        let mut state = self.lock().clone()?;
        let started = state.sso.take()?;
        self.write(Some(state));
        (chrono::Utc::now().timestamp() - started.started <= SSO_SECONDS).then_some(started.binding)
    }

    /// Forgets the API session (the caller ends it at the API first).
    pub(crate) fn sign_out(&self) {
        let csrf = self.0.console.keys.random(18);
        self.write(Some(CookieState { csrf, tokens: None, flash: None, sso: None }));
    }

    /// Keeps a secret for the next page (see [`Flash`]).
    pub(crate) fn show_once(&self, mut flash: Flash) {
        flash.id = self.0.console.keys.random(12);
        flash.issued = chrono::Utc::now().timestamp();
        let state = self.lock().clone();
        if let Some(mut state) = state {
            state.flash = Some(flash);
            self.write(Some(state));
        }
    }

    /// The secret kept for this page, removed from the cookie as it is
    /// taken; none if it is old, or was shown already (an old copy of the
    /// cookie sent again).
    pub(crate) fn take_flash(&self) -> Option<Flash> {
        let path = self.0.path.split('?').next().unwrap_or_default().to_string();
        let mut state = self.lock().clone()?;
        if state.flash.as_ref().is_none_or(|flash| flash.for_path != path) {
            return None;
        }
        let flash = state.flash.take()?;
        self.write(Some(state));
        let fresh = (0..=FLASH_SHOWN_SECONDS).contains(&(chrono::Utc::now().timestamp() - flash.issued));
        let first = self.0.console.flashes_shown.first_showing(&flash.id);
        (fresh && first).then_some(flash)
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
        Api::new(moke_sdk::Client::on_pool(&console.api_url, console.http.clone(), headers), &console.api_url)
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
        let refreshed = self.refreshed(&tokens.refresh, None).await;
        match refreshed {
            Ok(fresh) => {
                let mut state = self.lock().clone().unwrap_or_else(|| CookieState {
                    csrf: String::new(),
                    tokens: None,
                    flash: None,
                    sso: None,
                });
                let access = fresh.access.clone();
                state.tokens = Some(fresh);
                self.write(Some(state));
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

    /// Moves the session to another of the person's organizations (through
    /// the same single flight: the switch spends the refresh token too).
    pub(crate) async fn switch_organization(&self, organization: String) -> Result<(), ConsoleError> {
        self.api().await?;
        let refresh = self.refresh_token().ok_or_else(ConsoleError::signed_out)?;
        let fresh = self.refreshed(&refresh, Some(organization)).await?;
        let csrf = self.lock().as_ref().map(|state| state.csrf.clone()).unwrap_or_default();
        self.write(Some(CookieState { csrf, tokens: Some(fresh), flash: None, sso: None }));
        Ok(())
    }

    /// The answer of the one refresh of `refresh_token` (see [`Refreshes`]).
    async fn refreshed(&self, refresh_token: &str, organization: Option<String>) -> Result<Tokens, ConsoleError> {
        let api = self.anonymous_api();
        let body = types::RefreshRequest { organization, refresh_token: refresh_token.to_string() };
        let refreshes = &self.0.console.refreshes;
        let organization_key = body.organization.clone();
        let answer = refreshes
            .flight(refresh_token, organization_key.as_deref(), move || async move {
                let answer = api.session_refresh().body(body).send().await?;
                Ok(Tokens::from_api(answer.into_inner()))
            })
            .await;
        if answer.is_err() {
            refreshes.forget(refresh_token, organization_key.as_deref());
        }
        answer
    }

    /// The cookie's CSRF seed (binds a form's error to this browser).
    pub(crate) fn csrf_seed(&self) -> String {
        self.lock().as_ref().map(|state| state.csrf.clone()).unwrap_or_default()
    }
}

/// Pages that act with the person's session merely by being opened: a
/// link from elsewhere (directly, or as sign-in's `next`) must not take the
/// person there without their click.
/// Decided on the path and query as the pages read them (percent-decoded),
/// so that no encoding of `show` or of the path gets past it.
pub(crate) fn acts_with_session(path: &str, query: &str) -> bool {
    let path = percent_decoded(path);
    let shows = form_urlencoded::parse(query.as_bytes()).any(|(key, _)| key == "show");
    path.ends_with("/kubeconfig.yaml")
        || path == "/device"
        || (path.ends_with("/kubeconfig") && shows)
        || (path.starts_with("/org/billing/invoices/") && (path.ends_with("/csv") || path.ends_with("/pdf")))
}

/// `path` with its `%XX` escapes decoded (bytes that are not UTF-8 replaced).
fn percent_decoded(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(high), Some(low)) => {
                decoded.push((high * 16 + low) as u8);
                i += 3;
            }
            (byte, _, _) => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

/// The header with which the console's own script proves that it read a
/// console page (`moke-console-enhance`).
pub(crate) const PAGE_TOKEN_HEADER: &str = "x-moke-page-token";

/// How long a page token lasts; the script takes the newer one from each
/// page it fetches.
const PAGE_TOKEN_SECONDS: i64 = 3600;

/// The one form the script sends (to price the cluster form as it is filled in).
const SCRIPT_POSTS_TO: &str = "/console/fn/cluster_create";

/// Lets only what a person's browser does reach the console: navigations
/// (pages, form posts) and its assets, never another script's `fetch`
/// (Fetch Metadata). Another page on this origin (the API docs, GraphiQL)
/// cannot read a console page, and so never learns a CSRF token or the page
/// token with which the console's own script fetches from this origin.
pub(crate) async fn navigations_only(
    axum::Extension(console): axum::Extension<Arc<Console>>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let mode = headers.get("sec-fetch-mode").and_then(|v| v.to_str().ok());
    let path = request.uri().path();
    let asset = path.starts_with("/assets/") || path == "/favicon.ico";
    // Every browser that can reach the console over HTTPS sends Fetch
    // Metadata; without it a request is no browser's navigation.
    let navigation = match mode {
        Some(mode) => mode == "navigate",
        None => !console.secure,
    };
    let same_origin = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()).is_none_or(|s| s == "same-origin");
    let fetched = headers.get("sec-fetch-dest").and_then(|v| v.to_str().ok()).is_none_or(|d| d == "empty");
    // Only what the script does: read pages, and price the cluster form;
    // never a page that acts merely by being opened.
    let scripted = match *request.method() {
        http::Method::GET | http::Method::HEAD => !acts_with_session(path, request.uri().query().unwrap_or_default()),
        http::Method::POST => path == SCRIPT_POSTS_TO,
        _ => false,
    };
    let page_script = same_origin
        && fetched
        && scripted
        && headers.get(PAGE_TOKEN_HEADER).and_then(|v| v.to_str().ok()).is_some_and(|token| {
            read_cookie(&console, headers).is_some_and(|state| {
                let organization = state.tokens.as_ref().map(|t| t.organization.as_str()).unwrap_or_default();
                console.keys.page_token_valid(&state.csrf, organization, token, chrono::Utc::now().timestamp())
            })
        });
    if !navigation && !asset && !page_script {
        return (http::StatusCode::FORBIDDEN, "Open this page in the browser.\n").into_response();
    }
    // A link from another site arrives without the SameSite=Strict cookie:
    // answer with a page that reloads itself (now same-site, cookie and
    // all) instead of treating the person as signed out and replacing it.
    let cross_site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) == Some("cross-site");
    // Not for a download or the device page: a link from elsewhere must not
    // make those act with the person's session.
    let acts = acts_with_session(path, request.uri().query().unwrap_or_default());
    if cross_site && request.method() == http::Method::GET && !asset && read_cookie(&console, headers).is_none() {
        let here = request.uri().path_and_query().map_or("/".to_string(), |p| p.to_string());
        let here = here.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('>', "&gt;");
        // A page that acts with the session (a download that mints a
        // certificate, the device approval) waits for the person's click.
        let refresh = if acts { "" } else { "<meta http-equiv=\"refresh\" content=\"0\">" };
        let page = format!(
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">{refresh}\
             <title>Moke</title><link rel=\"stylesheet\" href=\"/assets/console.css\"></head><body><main class=\"narrow\">\
             <p><a href=\"{here}\">Continue to Moke</a></p></main></body></html>"
        );
        return (
            [(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CONTENT_SECURITY_POLICY, crate::app::CSP)],
            page,
        )
            .into_response();
    }
    next.run(request).await
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_that_act_are_recognized_however_their_address_is_encoded() {
        let kubeconfig = "/projects/p/clusters/c/kubeconfig";
        for (path, query) in [
            (kubeconfig, "show=1"),
            (kubeconfig, "sho%77=1"),
            (kubeconfig, "a=b&show"),
            ("/projects/p/clusters/c/kubeconfi%67", "show=1"),
            ("/projects/p/clusters/c/kubeconfig%2Eyaml", ""),
            ("/devic%65", ""),
            ("/org/billing/invoices/inv_1/%70df", ""),
        ] {
            assert!(acts_with_session(path, query), "{path}?{query}");
        }
        for (path, query) in [(kubeconfig, ""), (kubeconfig, "shown=1"), ("/projects/p/clusters/c", "show=1")] {
            assert!(!acts_with_session(path, query), "{path}?{query}");
        }
    }

    #[test]
    fn page_tokens_are_bound_to_the_seed_the_organization_and_an_hour() {
        let keys = Keys::new(&[7; 32]);
        let now = 1_800_000_000;
        let token = keys.page_token("seed", "org_a", now);
        assert!(keys.page_token_valid("seed", "org_a", &token, now + 60));
        assert!(!keys.page_token_valid("other seed", "org_a", &token, now + 60), "another browser's");
        assert!(!keys.page_token_valid("seed", "org_b", &token, now + 60), "after switching organization");
        assert!(!keys.page_token_valid("seed", "org_a", &token, now + PAGE_TOKEN_SECONDS + 1), "lapsed");
        let (_, tag) = token.split_once('.').unwrap();
        let later = format!("{}.{tag}", now + PAGE_TOKEN_SECONDS + 100);
        assert!(!keys.page_token_valid("seed", "org_a", &later, now + PAGE_TOKEN_SECONDS + 50), "expiry changed");
        assert!(!keys.page_token_valid("seed", "org_a", "garbage", now));
    }
}
