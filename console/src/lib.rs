//! The Moke web console: server-rendered Leptos pages that are a client of
//! the public API through [`moke_sdk`], and nothing else (no database, no
//! app layer). `moke-server` mounts [`router`] on its own port at `/`.
//!
//! - Every page works without JavaScript (the optional script of
//!   `moke-console-enhance` only saves clicks): pages render with
//!   `SsrMode::Async` (all data before the first byte), forms are
//!   `<ActionForm>` posts to server functions under `/console/fn/` that end in
//!   a redirect, and an error comes back to the form's page (sealed, see
//!   [`error`]).
//! - The browser holds one cookie: the API session's tokens and a CSRF seed,
//!   sealed with AES-256-GCM under a key from Vault ([`session`]); page
//!   scripts can neither read nor forge it.
//! - Every request to the API names the browser's address and user agent
//!   (trusted by the gateway only with the per-process [`FORWARD_SECRET_HEADER`]),
//!   so rate limits, audit events and session lists see the person, not the
//!   console.

// A page's error travels by value through server functions and views; it
// happens once per failed request, so its size does not matter.
#![allow(clippy::result_large_err)]

mod api;
mod app;
mod error;
mod pages;
mod session;
mod ui;

use std::sync::Arc;

use axum::Router;
use axum::response::{IntoResponse, Response};
use leptos::config::LeptosOptions;
use leptos::prelude::*;
use leptos_axum::{LeptosRoutes, generate_route_list};

pub use error::ConsoleError;

/// The header with which the console's API requests prove they come from
/// the console of this process, so that the gateway takes their
/// `x-forwarded-for` and `user-agent` as the browser's.
pub const FORWARD_SECRET_HEADER: &str = "x-moke-console";

/// What the console needs from the process that mounts it.
pub struct ConsoleConfig {
    /// Where the console reaches the API: the gateway's own listener.
    pub api_url: String,
    /// The public URL; `https://` makes cookies `Secure` and `__Host-` prefixed.
    pub public_url: String,
    /// 32 random bytes kept in Vault: seal session cookies, sign CSRF tokens
    /// and the errors a form carries back to its page.
    pub session_key: [u8; 32],
    /// Random per process, shared with the gateway (see [`FORWARD_SECRET_HEADER`]).
    pub forward_secret: String,
    /// The pages' optional script; without it they run none.
    pub script: Option<ConsoleScript>,
}

/// The pages' optional script (`console/enhance`, built for wasm32 by
/// `cargo xtask`): wasm-bindgen's loader, which starts the module when
/// loaded, and the WebAssembly module.
pub struct ConsoleScript {
    pub loader: String,
    pub module: Vec<u8>,
}

impl ConsoleScript {
    /// The loader's and the module's file names, as served under `/assets/`.
    pub const FILES: [&str; 2] = ["console.js", "console_bg.wasm"];

    /// Reads the script from the folder `cargo xtask` builds it into.
    pub fn load(dir: &std::path::Path) -> anyhow::Result<ConsoleScript> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|e| anyhow::anyhow!("the console's script: {}: {e}", path.display()))
        };
        let loader = String::from_utf8(read(Self::FILES[0])?)?;
        Ok(ConsoleScript { loader, module: read(Self::FILES[1])? })
    }
}

/// The console's shared state: the API's address and connection pool, the
/// cookie keys and the refreshes in flight.
pub(crate) struct Console {
    pub api_url: String,
    /// Where people reach Moke (for links the API answers as paths).
    pub public_url: String,
    pub http: reqwest::Client,
    pub keys: session::Keys,
    pub secure: bool,
    pub forward_secret: http::HeaderValue,
    pub refreshes: session::Refreshes,
    pub flashes_shown: session::ShownFlashes,
    pub script: Option<ConsoleScript>,
}

/// The console's routes: its pages, its server functions (`/console/fn/…`),
/// the kubeconfig download and the stylesheet. It has no fallback: the
/// gateway's fallback calls [`not_found`] for paths that are no page.
pub fn router(config: ConsoleConfig) -> anyhow::Result<Router> {
    let http = moke_sdk::Client::http_client().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut forward_secret = http::HeaderValue::from_str(&config.forward_secret)?;
    forward_secret.set_sensitive(true);
    let console = Arc::new(Console {
        api_url: config.api_url.trim_end_matches('/').to_string(),
        public_url: config.public_url.trim_end_matches('/').to_string(),
        http,
        keys: session::Keys::new(&config.session_key),
        secure: config.public_url.starts_with("https://"),
        forward_secret,
        refreshes: session::Refreshes::default(),
        flashes_shown: session::ShownFlashes::default(),
        script: config.script,
    });
    let options = LeptosOptions::builder().output_name("console").build();
    let routes = generate_route_list(app::App);
    let context = {
        let console = console.clone();
        move || {
            provide_context(console.clone());
            session::provide_request_session();
        }
    };
    let shell = {
        let options = options.clone();
        move || app::shell(options.clone())
    };
    let router = Router::new()
        .leptos_routes_with_context(&options, routes, context, shell)
        .route("/assets/console.css", axum::routing::get(stylesheet))
        .route("/assets/favicon.svg", axum::routing::get(favicon))
        .route("/assets/console.js", axum::routing::get(script_loader))
        .route("/assets/console_bg.wasm", axum::routing::get(script_module))
        .route("/favicon.ico", axum::routing::get(favicon))
        .route("/signin/sso/callback", axum::routing::get(pages::sso_signin::sso_callback))
        // Two fixed paths, not a `{format}` segment: `acts_with_session` sees
        // the path as sent, and an encoded `%70df` must not be a download.
        .route("/org/billing/invoices/{invoice}/csv", axum::routing::get(pages::billing::invoice_csv_download))
        .route("/org/billing/invoices/{invoice}/pdf", axum::routing::get(pages::billing::invoice_pdf_download))
        .route(
            "/projects/{project}/clusters/{cluster}/kubeconfig.yaml",
            axum::routing::get(pages::clusters::kubeconfig_download),
        )
        .layer(axum::middleware::from_fn(session::refuse_cross_site_posts))
        .layer(axum::middleware::from_fn(session::navigations_only))
        .layer(axum::middleware::map_response(without_hydration_scripts))
        .layer(axum::Extension(console))
        .with_state(options);
    Ok(router)
}

/// Pages end at `</html>`: Leptos appends inline scripts for hydration,
/// which the console does not use and its CSP would refuse,
/// each refusal an error in the browser's console.
async fn without_hydration_scripts(response: Response) -> Response {
    let html = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    if !html {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 8 << 20).await else {
        return (http::StatusCode::INTERNAL_SERVER_ERROR, "The page was too large to send.").into_response();
    };
    const END: &[u8] = b"</html>";
    let end = bytes.windows(END.len()).position(|w| w == END).map_or(bytes.len(), |at| at + END.len());
    parts.headers.remove(http::header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(bytes.slice(..end)))
}

/// The stylesheet, compiled in: every asset is served by Moke itself.
async fn stylesheet() -> Response {
    (
        [(http::header::CONTENT_TYPE, "text/css; charset=utf-8"), (http::header::CACHE_CONTROL, "public, max-age=300")],
        include_str!("../assets/console.css"),
    )
        .into_response()
}

/// The script's loader (a JavaScript module), when the console has a script.
async fn script_loader(axum::Extension(console): axum::Extension<Arc<Console>>) -> Response {
    match &console.script {
        Some(script) => (
            [(http::header::CONTENT_TYPE, "text/javascript; charset=utf-8"), (http::header::CACHE_CONTROL, "no-cache")],
            script.loader.clone(),
        )
            .into_response(),
        None => not_found(),
    }
}

/// The script's WebAssembly module, when the console has a script.
async fn script_module(axum::Extension(console): axum::Extension<Arc<Console>>) -> Response {
    match &console.script {
        Some(script) => (
            [(http::header::CONTENT_TYPE, "application/wasm"), (http::header::CACHE_CONTROL, "no-cache")],
            script.module.clone(),
        )
            .into_response(),
        None => not_found(),
    }
}

/// The console's icon (SVG; also answers `/favicon.ico`, which browsers ask for).
async fn favicon() -> Response {
    (
        [(http::header::CONTENT_TYPE, "image/svg+xml"), (http::header::CACHE_CONTROL, "public, max-age=86400")],
        include_str!("../assets/favicon.svg"),
    )
        .into_response()
}

/// The answer for a path that is no page: an HTML 404 for a browser, or
/// `None` when the caller should answer as the API does.
pub fn wants_page(request: &http::request::Parts) -> bool {
    let path = request.uri.path();
    let api = ["/v1/", "/moke.", "/graphql", "/grpc", "/.well-known/"].iter().any(|prefix| path.starts_with(prefix));
    let html = request
        .headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    html && !api && matches!(request.method, http::Method::GET | http::Method::HEAD)
}

/// The console's "not found" page, for a browser's request of a path that
/// is no page (see [`wants_page`]).
pub fn not_found() -> Response {
    (
        http::StatusCode::NOT_FOUND,
        [(http::header::CONTENT_TYPE, "text/html; charset=utf-8"), (http::header::CONTENT_SECURITY_POLICY, app::CSP)],
        app::NOT_FOUND_PAGE,
    )
        .into_response()
}
