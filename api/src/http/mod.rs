//! The REST surface (`/v1`): thin handlers that extract, call one app-layer
//! function and map its result; plus the operational endpoints, the OpenAPI
//! document and the middleware stack.

mod auth;
mod billing;
mod catalog;
mod clusters;
mod device;
pub mod extract;
mod hooks;
mod iam;
mod objects_only;
mod operations;
pub mod ops;
mod orgs;
mod policy;
pub mod problem;
mod projects;
mod webhooks;
mod workloads;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa_axum::router::OpenApiRouter;

use crate::app::iam::rate_limit::Allowance;
use crate::app::{App, Error};
use crate::model::OperationView;
use problem::ApiError;

/// What every handler returns.
pub type ApiResult<T = Response> = Result<T, ApiError>;

static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Moke API",
        description = "Managed Kubernetes on bare metal: organizations, projects, clusters, node pools and the operations that build them.\n\nAuthenticate with `Authorization: Bearer …`: an access token from `/v1/auth/login` (ES256 JWT, keys at `/.well-known/jwks.json`) or an API token (`moke_sat_…`, `moke_pat_…`). Errors are RFC 9457 `application/problem+json`. Lists take `limit` and `page_token`. POSTs take `Idempotency-Key`; updates take `If-Match`.",
        version = "1.0.0",
        license(name = "Apache-2.0")
    ),
    modifiers(&BearerAuth),
    components(schemas(problem::Problem, problem::FieldErrorDoc, crate::model::ClusterAccess, crate::model::KubeconfigFormat, crate::model::DryRunView)),
    tags(
        (name = "auth", description = "Sign-up, sign-in, sessions, CI token exchange, single sign-on"),
        (name = "orgs", description = "Organizations, their quotas and audit log"),
        (name = "members", description = "Members, invitations and project roles"),
        (name = "service-accounts", description = "Service accounts, their tokens and CI trust policies"),
        (name = "sso", description = "Per-organization OpenID Connect single sign-on"),
        (name = "tokens", description = "API tokens: service-account (`moke_sat_`) and personal (`moke_pat_`)"),
        (name = "projects", description = "Projects group clusters"),
        (name = "clusters", description = "Hosted Kubernetes clusters"),
        (name = "node-pools", description = "Groups of worker nodes of a cluster"),
        (name = "workloads", description = "Namespaces and Deployments inside hosted clusters"),
        (name = "deploy-hooks", description = "CI/CD deploy webhooks and the policy they obey"),
        (name = "webhooks", description = "Event webhooks: endpoints, deliveries and their attempts"),
        (name = "operations", description = "Long-running work done by regions"),
        (name = "policy", description = "The organization's change policy: approvals and disruption limits"),
        (name = "catalog", description = "Regions, Kubernetes versions and machine types on offer"),
        (name = "billing", description = "Invoices, from usage regions report, at the catalog's prices"),
    )
)]
struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new().scheme(HttpAuthScheme::Bearer).bearer_format("JWT or moke_sat_…/moke_pat_…").build(),
            ),
        );
    }
}

fn api_router() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(auth::routes())
        .merge(device::routes())
        .merge(iam::routes())
        .merge(orgs::routes())
        .merge(projects::routes())
        .merge(clusters::routes())
        .merge(workloads::routes())
        .merge(hooks::routes())
        .merge(webhooks::routes())
        .merge(operations::routes())
        .merge(policy::routes())
        .merge(catalog::routes())
        .merge(billing::routes())
}

/// The OpenAPI document the code describes (checked in as `openapi/moke.json`).
pub fn openapi() -> utoipa::openapi::OpenApi {
    let (_, mut spec) = api_router().split_for_parts();
    refer_page_items(&mut spec);
    offer_dry_runs(&mut spec);
    spec
}

/// utoipa inlines a generic's argument, so `Page_ProjectView` would hold a
/// copy of `ProjectView`; generated clients then get a second type per
/// resource. Each page refers to its item's named schema instead.
fn refer_page_items(spec: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::schema::ArrayItems;
    use utoipa::openapi::{RefOr, Schema};
    let Some(components) = spec.components.as_mut() else { return };
    let named: Vec<String> = components.schemas.keys().cloned().collect();
    for (name, schema) in components.schemas.iter_mut() {
        let Some(item) = name.strip_prefix("Page_").filter(|item| named.iter().any(|n| n == item)) else { continue };
        let RefOr::T(Schema::Object(page)) = schema else { continue };
        if let Some(RefOr::T(Schema::Array(items))) = page.properties.get_mut("items") {
            items.items = ArrayItems::RefOrSchema(Box::new(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(item))));
        }
    }
}

/// Whether the document's operation `method path` takes `?dry_run=`:
/// every mutation a bearer token makes (sign-in, sign-up, their links and
/// the CI deploy hook, which act without one, have none).
fn offers_dry_run(method: &str, operation: &utoipa::openapi::path::Operation) -> bool {
    matches!(method, "post" | "put" | "patch" | "delete") && operation.security.as_ref().is_some_and(|s| !s.is_empty())
}

/// States the dry run on every operation that offers one: the `dry_run`
/// query parameter, and its `200` answer, a `DryRunView` (beside the
/// operation's own `200`, for the few that answer one, as `anyOf`).
fn offer_dry_runs(spec: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
    use utoipa::openapi::schema::{AnyOfBuilder, ObjectBuilder, Type};
    use utoipa::openapi::{ContentBuilder, Ref, RefOr, Required, ResponseBuilder};
    let dry_run = ParameterBuilder::new()
        .name("dry_run")
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(
            "`true`: do everything up to the commit (validation, authorization, quotas) and answer `200` with what \
             would change (`DryRunView`), writing nothing; refused the same way as the real call.",
        ))
        .schema(Some(ObjectBuilder::new().schema_type(Type::Boolean)))
        .build();
    let plan = || RefOr::Ref(Ref::from_schema_name("DryRunView"));
    for item in spec.paths.paths.values_mut() {
        let operations = [
            ("post", item.post.as_mut()),
            ("put", item.put.as_mut()),
            ("patch", item.patch.as_mut()),
            ("delete", item.delete.as_mut()),
        ];
        for (method, operation) in operations {
            let Some(operation) = operation.filter(|op| offers_dry_run(method, op)) else { continue };
            operation.parameters.get_or_insert_with(Vec::new).push(dry_run.clone());
            let answers = &mut operation.responses.responses;
            match answers.get_mut("200") {
                Some(RefOr::T(ok)) => {
                    for content in ok.content.values_mut() {
                        if let Some(own) = content.schema.take() {
                            content.schema = Some(AnyOfBuilder::new().item(own).item(plan()).into());
                        }
                    }
                    ok.description = format!("{} (or, for a dry run, what would change)", ok.description);
                }
                _ => {
                    let answer = ResponseBuilder::new()
                        .description("A dry run: what would change; nothing was written")
                        .content("application/json", ContentBuilder::new().schema(Some(plan())).build())
                        .build();
                    answers.insert("200".to_string(), RefOr::T(answer));
                }
            }
        }
    }
}

/// Every operation of the document, as method and path template, and
/// whether it offers a dry run.
struct DryRunRoutes(Vec<(axum::http::Method, Vec<String>, bool)>);

/// What the document says of a dry run of one request.
enum DryRunOffer {
    /// The operation has one.
    Offered,
    /// The operation has none (it would run for real), or the path is no
    /// operation's: refused.
    Refused,
    /// The path is an operation's, but not with this method: the router
    /// answers 405, and nothing runs.
    NoSuchMethod,
}

impl DryRunRoutes {
    fn of(spec: &utoipa::openapi::OpenApi) -> DryRunRoutes {
        use axum::http::Method;
        let mut routes = Vec::new();
        for (path, item) in &spec.paths.paths {
            let operations = [
                ("get", Method::GET, item.get.as_ref()),
                ("post", Method::POST, item.post.as_ref()),
                ("put", Method::PUT, item.put.as_ref()),
                ("patch", Method::PATCH, item.patch.as_ref()),
                ("delete", Method::DELETE, item.delete.as_ref()),
            ];
            let template: Vec<String> = path.split('/').map(str::to_string).collect();
            for (name, method, operation) in operations {
                if let Some(operation) = operation {
                    routes.push((method, template.clone(), offers_dry_run(name, operation)));
                }
            }
        }
        DryRunRoutes(routes)
    }

    /// What the document says of a dry run of `method path` (a `{…}` of a
    /// template matches any one segment).
    fn offer(&self, method: &axum::http::Method, path: &str) -> DryRunOffer {
        // The router answers HEAD with the GET operation.
        let method = if method == axum::http::Method::HEAD { &axum::http::Method::GET } else { method };
        let segments: Vec<&str> = path.split('/').collect();
        let at_path = |template: &Vec<String>| {
            template.len() == segments.len()
                && template.iter().zip(&segments).all(|(t, s)| t == s || (t.starts_with('{') && !s.is_empty()))
        };
        let mut documented_path = false;
        let mut same_method = false;
        for (m, template, offered) in &self.0 {
            if !at_path(template) {
                continue;
            }
            documented_path = true;
            if m == method {
                same_method = true;
                if *offered {
                    return DryRunOffer::Offered;
                }
            }
        }
        if documented_path && !same_method { DryRunOffer::NoSuchMethod } else { DryRunOffer::Refused }
    }
}

/// Dry runs (`?dry_run=true`), checked before any handler acts: refused
/// for an operation that offers none (it would run for real) and on a path
/// no operation has (a method a documented path lacks is left to the
/// router's 405). A mutation
/// that reaches its commit answers its plan itself (`kernel::dry_run`); one
/// that succeeds without reaching it had nothing to change (an estimate,
/// asking again for what is already under way), which is answered as an
/// empty plan rather than as if it had been done.
async fn dry_run_answers(State(routes): State<Arc<DryRunRoutes>>, request: Request, next: Next) -> Response {
    match extract::dry_run_asked(request.uri().query()) {
        Err(refusal) => return refusal.into_response(),
        Ok(false) => return next.run(request).await,
        Ok(true) => {}
    }
    match routes.offer(request.method(), request.uri().path()) {
        DryRunOffer::Offered | DryRunOffer::NoSuchMethod => {}
        DryRunOffer::Refused => {
            let refusal = Error::invalid_field("dry_run", "unsupported", "this operation has no dry run");
            return ApiError(refusal).into_response();
        }
    }
    let response = next.run(request).await;
    if !response.status().is_success() || response.headers().contains_key(problem::DRY_RUN_HEADER) {
        return response;
    }
    problem::dry_run_answer(crate::model::DryRunView {
        dry_run: true,
        changes: Vec::new(),
        operations: Vec::new(),
        approval: None,
    })
}

/// The whole HTTP application: API, docs, health, metrics, middleware.
pub fn router(app: Arc<App>) -> Router {
    router_with(app, Router::new(), None)
}

/// The web console as the gateway mounts it: its routes, and the secret
/// with which its API requests name the browser's address.
pub struct ConsoleMount {
    pub routes: Router,
    pub forward_secret: String,
    /// The address the console dials the API on (its requests come from it).
    pub api_ip: std::net::IpAddr,
}

/// [`router`] with `extra` routes behind the same middleware (the load tests
/// use it to measure a route without authentication beside the real ones),
/// and the web console at `/` when given.
pub fn router_with(app: Arc<App>, extra: Router<Arc<App>>, console: Option<ConsoleMount>) -> Router {
    let (api, mut spec) = api_router().split_for_parts();
    refer_page_items(&mut spec);
    offer_dry_runs(&mut spec);
    let dry_runs = Arc::new(DryRunRoutes::of(&spec));
    let spec = Arc::new(spec);
    let config = app.config().http.clone();
    let limiter = app.clone();
    let grpc = crate::grpc::router(app.clone());
    let graphql = crate::graphql::router(app.clone());
    // gRPC calls (told apart by their content type) go to the gRPC
    // services; anything else unknown is a REST 404.
    let has_console = console.is_some();
    let (console_routes, forwarding) = match console {
        Some(ConsoleMount { routes, forward_secret, api_ip }) => {
            (routes, Some(ConsoleForwarding { secret: forward_secret, api_ip }))
        }
        None => (Router::new(), None),
    };
    let rest = api.merge(ops::routes(spec)).merge(extra).with_state(app).merge(graphql).merge(console_routes).fallback(
        move |request: Request| async move {
            let (parts, _) = request.into_parts();
            if has_console && moke_console::wants_page(&parts) {
                return moke_console::not_found();
            }
            ApiError(Error::not_found("route", "requested")).into_response()
        },
    );
    let hsts = config.public_url.starts_with("https://");
    let rest = rest
        .layer(axum::middleware::from_fn_with_state(dry_runs, dry_run_answers))
        .layer(axum::middleware::from_fn_with_state(limiter.clone(), limit_by_ip))
        .layer(axum::middleware::from_fn_with_state(forwarding.map(Arc::new), trust_console_forwarding))
        .layer(axum::middleware::from_fn(problem_request_id))
        .layer(axum::middleware::from_fn(record_metrics))
        .layer(axum::middleware::from_fn_with_state(hsts, security_headers))
        .layer(axum::extract::DefaultBodyLimit::max(config.max_body_bytes));
    // gRPC calls skip what only REST and browsers need (problem+json,
    // security headers for pages, the console's forwarding, `?dry_run`): a
    // call is a few hundred bytes, and every header and layer shows.
    let grpc = grpc
        .layer(axum::middleware::from_fn_with_state(limiter, crate::grpc::limit_by_ip))
        .layer(axum::middleware::from_fn(record_metrics))
        .layer(axum::middleware::map_response(no_store));
    let surfaces = tower::service_fn(move |request: Request| {
        use tower::ServiceExt;
        let surface = if crate::grpc::is_grpc(&request) { grpc.clone() } else { rest.clone() };
        surface.oneshot(request)
    });
    Router::new().fallback_service(surfaces).layer(
        tower::ServiceBuilder::new()
            .layer(SetRequestIdLayer::new(REQUEST_ID.clone(), MakeRequestUuid))
            .layer(
                TraceLayer::new_for_http()
                    .make_span_with(|request: &Request| {
                        let request_id =
                            request.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("");
                        tracing::info_span!("request", method = %request.method(), path = %request.uri().path(), request_id)
                    })
                    // One line per answered request, inside the span, so it carries the request id.
                    .on_response(DefaultOnResponse::new().level(tracing::Level::INFO)),
            )
            .layer(PropagateRequestIdLayer::new(REQUEST_ID.clone()))
            .layer(tower_http::timeout::TimeoutLayer::with_status_code(
                StatusCode::REQUEST_TIMEOUT,
                Duration::from_secs(config.request_timeout_seconds),
            )),
    )
    // Outermost: a client's request id is kept only when it is short and
    // plain (it reaches logs and the audit log); otherwise one is made.
    .layer(axum::middleware::from_fn(plain_request_id))
}

/// Answers carry tokens and private data: no cache keeps them (gRPC's; REST's
/// get it from [`security_headers`]).
async fn no_store(mut response: Response) -> Response {
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Adds the request's id to every problem+json answer (`request_id`), so a
/// customer can quote it and an operator can find the request's log lines.
async fn problem_request_id(request: Request, next: Next) -> Response {
    let request_id = request.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).map(str::to_string);
    let response = next.run(request).await;
    let is_problem =
        response.headers().get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes() == problem::PROBLEM_JSON.as_bytes());
    let Some(request_id) = request_id.filter(|_| is_problem) else { return response };
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 1 << 20).await else {
        // Too large to amend (or unreadable): a short problem that still names the request.
        parts.headers.remove(header::CONTENT_LENGTH);
        let problem = serde_json::json!({
            "type": "https://docs.moke.dev/problems/problem_too_large",
            "title": parts.status.canonical_reason().unwrap_or("Error"),
            "status": parts.status.as_u16(),
            "detail": "the error is too large to show; send fewer fields at once",
            "code": "problem_too_large",
            "request_id": request_id,
        });
        return Response::from_parts(parts, axum::body::Body::from(problem.to_string()));
    };
    let mut problem: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(problem) => problem,
        Err(_) => return Response::from_parts(parts, axum::body::Body::from(bytes)),
    };
    if let Some(fields) = problem.as_object_mut() {
        fields.insert("request_id".into(), serde_json::Value::String(request_id));
    }
    let body = serde_json::to_vec(&problem).unwrap_or_else(|_| bytes.to_vec());
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(body))
}

/// Drops an `x-request-id` that is longer than 128 characters or holds
/// anything but letters, digits and `-_.:`.
async fn plain_request_id(mut request: Request, next: Next) -> Response {
    let plain = request.headers().get(&REQUEST_ID).is_none_or(|value| {
        let bytes = value.as_bytes();
        !bytes.is_empty()
            && bytes.len() <= 128
            && bytes.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
    });
    if !plain {
        request.headers_mut().remove(&REQUEST_ID);
    }
    next.run(request).await
}

/// What proves an API request came from this process's console.
struct ConsoleForwarding {
    secret: String,
    api_ip: std::net::IpAddr,
}

/// Takes the browser's address from `x-forwarded-for` on an API request the
/// web console of this process made on a browser's behalf (over loopback,
/// proving it with the per-process secret), so that per-IP limits and audit
/// events see the person, not the console. Everyone else's
/// `x-moke-console` and `x-forwarded-for` are dropped unread.
async fn trust_console_forwarding(
    axum::extract::State(console): axum::extract::State<Option<Arc<ConsoleForwarding>>>,
    mut request: Request,
    next: Next,
) -> Response {
    use std::net::SocketAddr;
    let proof = request.headers_mut().remove(moke_console::FORWARD_SECRET_HEADER);
    let forwarded = request.headers_mut().remove("x-forwarded-for");
    let peer = request.extensions().get::<axum::extract::ConnectInfo<SocketAddr>>().map(|info| info.0);
    let trusted = match (&console, &proof, peer) {
        (Some(console), Some(proof), Some(peer)) => {
            // Digests compared: the time taken tells nothing about the secret.
            use sha2::Digest;
            let own = peer.ip().is_loopback() || peer.ip() == console.api_ip;
            own && sha2::Sha256::digest(console.secret.as_bytes()) == sha2::Sha256::digest(proof.as_bytes())
        }
        _ => false,
    };
    if trusted
        && let Some(ip) =
            forwarded.as_ref().and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<std::net::IpAddr>().ok())
    {
        request.extensions_mut().insert(axum::extract::ConnectInfo(SocketAddr::new(ip, 0)));
    }
    next.run(request).await
}

/// Writes the `RateLimit-*` headers (IETF draft) of a limit of `limit`
/// requests per `window` seconds with `remaining` left, refilled in `reset` s.
pub fn rate_limit_headers(headers: &mut axum::http::HeaderMap, limit: u32, window: u64, remaining: u32, reset: u64) {
    headers.insert("ratelimit-limit", HeaderValue::from(limit));
    headers.insert("ratelimit-remaining", HeaderValue::from(remaining));
    headers.insert("ratelimit-reset", HeaderValue::from(reset));
    if let Ok(policy) = HeaderValue::from_str(&format!("{limit};w={window}")) {
        headers.insert("ratelimit-policy", policy);
    }
}

/// The rate limit a request was counted against, for its answer's
/// `RateLimit-*` headers: the caller's own once it is authenticated, else
/// its address's.
#[derive(Clone, Default)]
pub(crate) struct RateLimitSeen(Arc<std::sync::Mutex<Option<Allowance>>>);

impl RateLimitSeen {
    /// Records the authenticated caller's allowance (it overrides the address's).
    pub(crate) fn principal(&self, allowance: Allowance) {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(allowance);
    }

    fn get(&self) -> Option<Allowance> {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Refuses clients over the per-IP rate limit with 429 before any work, and
/// tells every answer how much of its limit is left (`RateLimit-*`).
async fn limit_by_ip(
    axum::extract::State(app): axum::extract::State<Arc<App>>,
    mut request: Request,
    next: Next,
) -> Response {
    let ip = request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|axum::extract::ConnectInfo(addr)| addr.ip());
    let by_address = match ip.map(|ip| app.rate_limits().check_ip(ip)) {
        Some(Err(error)) => return ApiError(error).into_response(),
        Some(Ok(allowance)) => Some(allowance),
        None => None,
    };
    let seen = RateLimitSeen::default();
    request.extensions_mut().insert(seen.clone());
    let mut response = next.run(request).await;
    if !response.headers().contains_key("ratelimit-limit")
        && let Some(allowance) = seen.get().or(by_address)
    {
        let window = allowance.window_seconds;
        rate_limit_headers(response.headers_mut(), allowance.limit, window, allowance.remaining, window);
    }
    response
}

/// The Content-Security-Policy of an HTML page that may load scripts and
/// styles from `origins` and run exactly its own inline scripts (allowed by
/// hash, never by 'unsafe-inline'), and may be framed by nobody.
pub fn html_csp(html: &str, origins: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    let mut hashes = String::new();
    let mut rest = html;
    while let Some(start) = rest.find("<script") {
        let tag_end = match rest[start..].find('>') {
            Some(end) => start + end,
            None => break,
        };
        let tag = &rest[start..tag_end];
        let body_end = match rest[tag_end..].find("</script>") {
            Some(end) => tag_end + end,
            None => break,
        };
        if !tag.contains("src=") && !tag.contains("application/json") {
            let digest = sha2::Sha256::digest(&rest.as_bytes()[tag_end + 1..body_end]);
            hashes.push_str(&format!(" 'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(digest)));
        }
        rest = &rest[body_end..];
    }
    format!(
        "default-src 'none'; script-src {origins}{hashes}; style-src 'self' 'unsafe-inline' {origins}; \
         font-src {origins} data:; img-src 'self' data: {origins}; connect-src 'self'; worker-src blob:; \
         frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    )
}

/// Security headers: `nosniff` on every answer; on HTML a strict CSP (unless
/// the page set its own), no framing, no referrer, and HSTS when the public
/// URL is https.
async fn security_headers(
    axum::extract::State(hsts): axum::extract::State<bool>,
    request: Request,
    next: Next,
) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    let html =
        headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("text/html"));
    // Answers carry tokens and private data: no cache keeps them, unless a
    // route says otherwise (the public signing keys).
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    if html {
        if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
            headers.insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(
                    "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
                ),
            );
        }
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        // The console's pages send their own (`same-origin`: a form without
        // JavaScript comes back to its page with its error through `Referer`).
        if !headers.contains_key(header::REFERRER_POLICY) {
            headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
        }
        if hsts {
            headers.insert(
                header::STRICT_TRANSPORT_SECURITY,
                HeaderValue::from_static("max-age=31536000; includeSubDomains"),
            );
        }
    }
    response
}

/// Counts requests by route and status, and their latency.
async fn record_metrics(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let route =
        request.extensions().get::<MatchedPath>().map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let method = request.method().to_string();
    let response = next.run(request).await;
    let labels = [("method", method), ("route", route), ("status", response.status().as_u16().to_string())];
    metrics::counter!("http_requests_total", &labels).increment(1);
    metrics::histogram!("http_request_duration_seconds", &labels[..2]).record(started.elapsed().as_secs_f64());
    response
}

/// 200 with the resource and its `ETag`.
fn with_etag<T: Serialize>(etag: &str, body: T) -> Response {
    let mut response = axum::Json(body).into_response();
    if let (false, Ok(value)) = (etag.is_empty(), HeaderValue::from_str(etag)) {
        response.headers_mut().insert(header::ETAG, value);
    }
    response
}

/// 201 with the new resource, its `ETag` and `Location`.
fn created<T: Serialize>(location: String, etag: &str, body: T) -> Response {
    let mut response = with_etag(etag, body);
    *response.status_mut() = StatusCode::CREATED;
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// 202 with the Operation and its `Location`.
fn accepted(op: OperationView) -> Response {
    let location = format!("/v1/operations/{}", op.id);
    let mut response = (StatusCode::ACCEPTED, axum::Json(op)).into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}
