//! The GraphQL surface at `/graphql` (queries and mutations over HTTP POST,
//! subscriptions over WebSocket at `/graphql/ws`, a GraphiQL page on GET).
//!
//! Resolvers call the same app-layer functions as REST and gRPC; errors carry
//! the same stable `code` (and bad `fields`) in their extensions. Nested lists
//! go through per-request DataLoaders, so a page of clusters with their node
//! pools and operations costs a fixed number of queries. Depth and complexity
//! are limited; the schema is checked in as `graphql/schema.graphql`.

mod catalog;
mod iam;
mod integrations;
mod limits;
mod loaders;
mod persisted;
mod types;
mod workloads;

use std::net::SocketAddr;
use std::sync::Arc;

use async_graphql::http::{ALL_WEBSOCKET_PROTOCOLS, GraphiQLSource};
use async_graphql::{Data, ErrorExtensions, Schema};
use async_graphql_axum::{GraphQLProtocol, GraphQLRequest, GraphQLResponse, GraphQLWebSocket};
use axum::Router;
use axum::extract::{ConnectInfo, State, WebSocketUpgrade};
use axum::http::HeaderMap;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

use crate::app::{App, Error, RequestContext, RequestMeta};
pub use types::Subscription;

/// Every query field: each resource family's resolvers are an object of
/// their own, merged here.
#[derive(async_graphql::MergedObject, Default)]
pub struct Query(
    types::CoreQuery,
    catalog::CatalogQuery,
    workloads::WorkloadsQuery,
    integrations::IntegrationsQuery,
    iam::IamQuery,
);

/// Every mutation, merged from each family's object as [`Query`] is.
#[derive(async_graphql::MergedObject, Default)]
pub struct Mutation(
    types::CoreMutation,
    workloads::WorkloadsMutation,
    integrations::IntegrationsMutation,
    iam::IamMutation,
);

/// The Moke GraphQL schema.
pub type MokeSchema = Schema<Query, Mutation, Subscription>;

/// Deepest query accepted.
pub const MAX_DEPTH: usize = 10;
/// Largest query complexity accepted (a list counts its `first` times its items).
pub const MAX_COMPLEXITY: usize = 10_000;

/// Builds the schema with its limits; `app` is absent only when printing
/// SDL. Over HTTP, the limits of [`limits`] are checked before a request
/// reaches it (see [`limits::Documents`]); `over_socket` adds them as an
/// extension for the WebSocket.
pub fn schema(app: Option<Arc<App>>, over_socket: bool) -> MokeSchema {
    let mut builder = Schema::build(Query::default(), Mutation::default(), Subscription)
        .limit_depth(MAX_DEPTH)
        .limit_complexity(MAX_COMPLEXITY)
        .limit_recursive_depth(64)
        .limit_directives(16);
    if over_socket {
        builder = builder.extension(limits::OverSocket);
    }
    if let Some(app) = app {
        builder = builder.data(app);
    }
    builder.finish()
}

/// The schema in SDL, as checked in.
pub fn sdl() -> String {
    schema(None, false).sdl()
}

/// Maps an app-layer error to a GraphQL error with the REST `code` (and the
/// bad `fields`, for invalid input) in its extensions.
pub fn error(error: Error) -> async_graphql::Error {
    if let Error::Internal(source) = &error {
        tracing::error!(error = format!("{source:#}"), "internal error");
    }
    let code = error.code();
    let message = match &error {
        Error::Invalid(fields) => {
            let names: Vec<&str> = fields.iter().map(|f| f.field.as_str()).collect();
            format!("invalid fields: {}", names.join(", "))
        }
        Error::Internal(_) => "an internal error occurred; it has been logged".to_string(),
        other => other.to_string(),
    };
    let fields = match &error {
        Error::Invalid(fields) => Some(
            fields
                .iter()
                .map(|f| serde_json::json!({ "field": graphql_field(&f.field), "code": f.code, "message": f.message }))
                .collect::<Vec<_>>(),
        ),
        _ => None,
    };
    let plan = match &error {
        Error::DryRun(plan) => serde_json::to_value(plan).ok().and_then(|p| async_graphql::Value::from_json(p).ok()),
        _ => None,
    };
    async_graphql::Error::new(message).extend_with(|_, extensions| {
        extensions.set("code", code);
        if let Some(plan) = plan {
            extensions.set("plan", plan);
        }
        if let Some(Ok(value)) =
            fields.as_ref().map(|f| async_graphql::Value::from_json(serde_json::Value::Array(f.clone())))
        {
            extensions.set("fields", value);
        }
    })
}

/// Names a REST field as the GraphQL arguments name it.
fn graphql_field(field: &str) -> String {
    match field {
        "limit" => "first".to_string(),
        "page_token" => "after".to_string(),
        "Idempotency-Key" => "idempotencyKey".to_string(),
        other => other.to_string(),
    }
}

/// The request's metadata without its caller, for a mutation that takes no
/// bearer (a CI ID token exchanged for an access token), as REST's routes
/// without one read it.
pub(crate) struct Origin(pub RequestContext);

#[derive(Clone)]
struct GraphqlState {
    app: Arc<App>,
    schema: MokeSchema,
    socket_schema: MokeSchema,
    documents: Arc<limits::Documents>,
    persisted: Arc<persisted::PersistedQueries>,
}

/// `/graphql` and `/graphql/ws`.
pub fn router(app: Arc<App>) -> Router {
    let max_body = app.config().http.max_body_bytes;
    let state = GraphqlState {
        schema: schema(Some(app.clone()), false),
        socket_schema: schema(Some(app.clone()), true),
        app,
        documents: Arc::default(),
        persisted: Arc::default(),
    };
    Router::new()
        .route("/graphql", get(graphiql).post(execute))
        .route("/graphql/ws", get(subscribe))
        .with_state(state)
        // The size limit: a document larger than any request body is refused unread.
        .layer(tower_http::limit::RequestBodyLimitLayer::new(max_body))
}

async fn graphiql() -> axum::response::Response {
    use axum::response::IntoResponse;
    let page = GraphiQLSource::build().endpoint("/graphql").subscription_endpoint("/graphql/ws").finish();
    let csp = crate::http::html_csp(&page, "https://unpkg.com");
    ([(axum::http::header::CONTENT_SECURITY_POLICY, csp)], Html(page)).into_response()
}

/// Per-request data: the caller (when authenticated) and its DataLoaders,
/// each made when a field first asks for it.
fn request_data(app: &Arc<App>, caller: Option<RequestContext>) -> Data {
    let mut data = Data::default();
    if let Some(caller) = caller {
        data.insert(loaders::Batches::new(app.clone(), caller.clone()));
        data.insert(caller);
    }
    data
}

async fn authenticate(
    app: &App,
    authorization: Option<&str>,
    meta: RequestContext,
) -> Result<Option<RequestContext>, Error> {
    let Some(value) = authorization else { return Ok(None) };
    Ok(Some(app.authenticate_request(value, meta).await?))
}

async fn execute(
    State(state): State<GraphqlState>,
    headers: HeaderMap,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: GraphQLRequest,
) -> Response {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    let meta = RequestContext::anonymous(RequestMeta {
        request_id: text("x-request-id"),
        user_agent: text("user-agent"),
        source_ip: Some(peer.ip().to_string()),
        idempotency_key: None,
    });
    let origin = Origin(meta.clone());
    let caller = match authenticate(&state.app, text("authorization").as_deref(), meta).await {
        Ok(caller) => caller,
        Err(e) => {
            let response = async_graphql::Response::from_errors(vec![error(e).into_server_error(Default::default())]);
            return GraphQLResponse::from(response).into_response();
        }
    };
    let mut request = request.into_inner();
    let prepared = state.persisted.resolve(&mut request, caller.as_ref()).and_then(|sent| {
        let document = state.documents.prepare(&request.query, caller.is_some())?;
        request.set_parsed_query(document);
        if let Some(sent) = sent {
            state.persisted.keep(sent, &request.query);
        }
        Ok(())
    });
    if let Err(refused) = prepared {
        return GraphQLResponse::from(async_graphql::Response::from_errors(vec![refused])).into_response();
    }
    request.data = request_data(&state.app, caller);
    request.data.insert(origin);
    GraphQLResponse::from(state.schema.execute(request).await).into_response()
}

/// The most subscriptions one WebSocket may hold at once.
pub const MAX_SUBSCRIPTIONS_PER_SOCKET: usize = 20;
/// The largest message a client may send over the WebSocket.
pub const MAX_WS_MESSAGE_BYTES: usize = 64 * 1024;

/// What a WebSocket connection authenticated with: re-checked at every
/// subscription and while streams run, so a revoked credential ends them.
#[derive(Clone)]
pub struct WsSession {
    bearer: String,
    meta: RequestContext,
    active: Arc<std::sync::atomic::AtomicUsize>,
    /// Subscriptions accepted since the idle check last looked.
    started: Arc<std::sync::atomic::AtomicUsize>,
}

impl WsSession {
    /// The socket's credential, to check again as a watch goes on.
    pub fn bearer(&self) -> &str {
        &self.bearer
    }

    /// The caller as its credential stands now (and within its rate limit).
    pub async fn caller(&self, app: &App) -> Result<RequestContext, Error> {
        let principal = app.authenticate(&self.bearer, &self.meta).await?;
        app.rate_limits().check_principal(principal.id)?;
        Ok(RequestContext { principal, ..self.meta.clone() })
    }

    /// Notes that a subscription was accepted (its caller authenticated and
    /// its watch started): only that keeps an otherwise idle socket open.
    pub fn mark_started(&self) {
        self.started.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// Takes one of the socket's subscription slots, given back when the guard drops.
    pub fn take_slot(&self) -> Result<SubscriptionSlot, Error> {
        use std::sync::atomic::Ordering;
        let taken = self.active.fetch_add(1, Ordering::AcqRel);
        let slot = SubscriptionSlot(self.active.clone());
        if taken >= MAX_SUBSCRIPTIONS_PER_SOCKET {
            return Err(Error::RateLimited {
                limit: MAX_SUBSCRIPTIONS_PER_SOCKET as u32,
                window_seconds: 0,
                retry_after_seconds: 1,
            });
        }
        Ok(slot)
    }
}

/// One running subscription of a socket.
pub struct SubscriptionSlot(Arc<std::sync::atomic::AtomicUsize>);

impl Drop for SubscriptionSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// Subscriptions over WebSocket; the token travels in the `connection_init`
/// payload as `{"authorization": "Bearer moke_…"}`. Messages are bounded,
/// subscriptions per socket are capped, and the credential is checked again
/// for every subscription and while it streams.
async fn subscribe(
    State(state): State<GraphqlState>,
    protocol: GraphQLProtocol,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    upgrade: WebSocketUpgrade,
) -> Response {
    let source_ip = Some(peer.ip().to_string());
    upgrade
        .protocols(ALL_WEBSOCKET_PROTOCOLS)
        .max_message_size(MAX_WS_MESSAGE_BYTES)
        .max_frame_size(MAX_WS_MESSAGE_BYTES)
        .on_upgrade(move |socket| async move {
            let app = state.app.clone();
            let active = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let started = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let initialized = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let (socket_active, socket_started, socket_initialized) =
                (active.clone(), started.clone(), initialized.clone());
            let serve = GraphQLWebSocket::new(socket, state.socket_schema.clone(), protocol)
                .on_connection_init(move |payload| async move {
                    let meta = RequestContext::anonymous(RequestMeta { source_ip, ..RequestMeta::default() });
                    let authorization = payload.get("authorization").and_then(|v| v.as_str());
                    // A socket only carries subscriptions, and every one needs a caller.
                    let Some(authorization) = authorization else {
                        return Err(error(Error::Unauthenticated));
                    };
                    let authorization = Some(authorization);
                    // Checked now to refuse a bad credential at once, but not
                    // kept: the socket holds only the bearer, so queries and
                    // mutations find no caller here (they belong on HTTP) and
                    // each subscription authenticates again.
                    authenticate(&app, authorization, meta.clone()).await.map_err(error)?;
                    let bearer = authorization
                        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
                        .map(|v| v.trim().to_string());
                    let mut data = request_data(&app, None);
                    if let Some(bearer) = bearer {
                        data.insert(WsSession { bearer, meta, active: socket_active, started: socket_started });
                    }
                    socket_initialized.store(true, std::sync::atomic::Ordering::Release);
                    Ok(data)
                })
                .serve();
            tokio::select! {
                () = serve => {}
                () = socket_unused(&initialized, &active, &started) => {}
                // Every watch ends within its hour; a socket whose client
                // stopped reading would otherwise hold them past it.
                () = tokio::time::sleep(WS_MAX_LIFETIME) => {}
            }
        })
        .into_response()
}

/// How long a socket has to send its `connection_init`.
pub const WS_INIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// How long a socket stays open with no subscription running.
pub const WS_IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);
/// The longest a socket lives: a watch's hour and a little more; clients
/// of the graphql-ws protocol connect again.
pub const WS_MAX_LIFETIME: std::time::Duration =
    std::time::Duration::from_secs(crate::app::kernel::watch::MAX_WATCH.as_secs() + 300);

/// Ends when a socket is of no use and should close: no `connection_init`
/// within [`WS_INIT_TIMEOUT`], or no subscription for [`WS_IDLE_TIMEOUT`].
/// Without it, a client could hold sockets open for nothing, unsigned-in.
async fn socket_unused(
    initialized: &std::sync::atomic::AtomicBool,
    active: &std::sync::atomic::AtomicUsize,
    started: &std::sync::atomic::AtomicUsize,
) {
    use std::sync::atomic::Ordering;
    tokio::time::sleep(WS_INIT_TIMEOUT).await;
    if !initialized.load(Ordering::Acquire) {
        return;
    }
    let check = WS_IDLE_TIMEOUT / 10;
    let mut idle = std::time::Duration::ZERO;
    while idle < WS_IDLE_TIMEOUT {
        tokio::time::sleep(check).await;
        // None running now and none started since the last look: idle.
        let used = active.load(Ordering::Acquire) > 0 || started.swap(0, Ordering::AcqRel) > 0;
        idle = if used { std::time::Duration::ZERO } else { idle + check };
    }
}
