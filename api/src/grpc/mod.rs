//! The gRPC surface (`moke.v1`), served on the REST port (gRPC requests are
//! told apart by their `application/grpc` content type, and skip the REST
//! middleware: see `http::router_with`). Like the REST handlers, each method
//! builds a [`RequestContext`], calls one app-layer function and maps the
//! result; [`status`] is the one mapping from app errors to gRPC status codes
//! with `google.rpc` error details. Server reflection and the standard health
//! service are included so `grpcurl` and load balancers work out of the box.

mod catalog;
mod convert;
mod iam;
mod integrations;
mod services;
mod workloads;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::ConnectInfo;
use tonic::{Code, Status};
use tonic_types::{BadRequest, ErrorDetail, ErrorInfo, QuotaFailure, QuotaViolation, RetryInfo, StatusExt};

use crate::app::kernel::watch::Watcher;
use crate::app::{App, Error, PageRequest, RequestContext, RequestMeta};

/// The domain named in every `google.rpc.ErrorInfo`.
pub(crate) const ERROR_DOMAIN: &str = "moke.dev";

/// The gRPC services as an axum router, to merge with the REST routes.
pub fn router(app: Arc<App>) -> axum::Router {
    use moke_proto::v1::{
        audit_service_server::AuditServiceServer, auth_service_server::AuthServiceServer,
        me_service_server::MeServiceServer, member_service_server::MemberServiceServer,
        service_account_service_server::ServiceAccountServiceServer, sso_service_server::SsoServiceServer,
    };
    use moke_proto::v1::{
        billing_service_server::BillingServiceServer, catalog_service_server::CatalogServiceServer,
        cluster_service_server::ClusterServiceServer, deploy_hook_service_server::DeployHookServiceServer,
        node_pool_service_server::NodePoolServiceServer, operation_service_server::OperationServiceServer,
        org_service_server::OrgServiceServer, project_service_server::ProjectServiceServer,
        token_service_server::TokenServiceServer, webhook_service_server::WebhookServiceServer,
    };
    use moke_proto::v1::{
        cluster_access_service_server::ClusterAccessServiceServer, deployment_service_server::DeploymentServiceServer,
        namespace_service_server::NamespaceServiceServer, network_service_server::NetworkServiceServer,
    };
    // The same bound as a REST body (tonic's own default is 4 MiB).
    let max = app.config().http.max_body_bytes;
    let api = services::Api { app };
    // Reflection in both versions: v1, and v1alpha, which grpcurl before
    // 1.9 and many other clients still ask for.
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(moke_proto::PUBLIC_FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let reflection_v1 = reflection().build_v1().expect("the embedded descriptor sets are valid");
    let reflection_v1alpha = reflection().build_v1alpha().expect("the embedded descriptor sets are valid");
    let (health, health_service) = tonic_health::server::health_reporter();
    for name in [
        "moke.v1.OrgService",
        "moke.v1.ProjectService",
        "moke.v1.ClusterService",
        "moke.v1.NodePoolService",
        "moke.v1.OperationService",
        "moke.v1.TokenService",
        "moke.v1.BillingService",
        "moke.v1.CatalogService",
        "moke.v1.NamespaceService",
        "moke.v1.DeploymentService",
        "moke.v1.NetworkService",
        "moke.v1.ClusterAccessService",
        "moke.v1.DeployHookService",
        "moke.v1.WebhookService",
        "moke.v1.MeService",
        "moke.v1.AuthService",
        "moke.v1.MemberService",
        "moke.v1.ServiceAccountService",
        "moke.v1.AuditService",
        "moke.v1.SsoService",
    ] {
        let health = health.clone();
        tokio::spawn(async move { health.set_service_status(name, tonic_health::ServingStatus::Serving).await });
    }
    tonic::service::Routes::new(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(OrgServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(ProjectServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(ClusterServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(NodePoolServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(OperationServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(TokenServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(BillingServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(CatalogServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(NamespaceServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(DeploymentServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(NetworkServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(ClusterAccessServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(DeployHookServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(WebhookServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(MeServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(AuthServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(MemberServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(ServiceAccountServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(AuditServiceServer::new(api.clone()).max_decoding_message_size(max))
        .add_service(SsoServiceServer::new(api.clone()).max_decoding_message_size(max))
        .into_axum_router()
        .layer(axum::middleware::map_response(dry_run_answers))
}

/// Whether a request is a gRPC call (`application/grpc`, `+proto` and the like).
pub fn is_grpc(request: &axum::extract::Request) -> bool {
    request
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/grpc"))
}

/// The per-address rate limit REST applies, answered as a gRPC status
/// (`RESOURCE_EXHAUSTED` with `RetryInfo`), not as an HTTP 429 that gRPC
/// clients would read as `UNAVAILABLE`.
pub async fn limit_by_ip(
    axum::extract::State(app): axum::extract::State<Arc<App>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(addr)| addr.ip());
    if let Some(Err(refused)) = peer.map(|ip| app.rate_limits().check_ip(ip)) {
        return status(refused).into_http();
    }
    next.run(request).await
}

/// The metadata that asks for a dry run (AIP-163's `validate_only`, for
/// every method at once): `moke-validate-only: true`.
pub const VALIDATE_ONLY: &str = "moke-validate-only";
/// The trailer holding a dry run's plan (a `DryRunView` as JSON).
pub const DRY_RUN_PLAN: &str = "moke-dry-run-bin";

/// A dry run's answer, made from the status [`status`] gives it: the
/// method's response message with every field at its default (an empty
/// message is a valid encoding of any message type), and the plan in the
/// trailer [`DRY_RUN_PLAN`], so every client library reads it as a success.
async fn dry_run_answers(response: axum::response::Response) -> axum::response::Response {
    use axum::body::{Body, Bytes};
    use http_body::Frame;
    use http_body_util::StreamBody;
    let Some(plan) = response.headers().get(DRY_RUN_PLAN).cloned() else { return response };
    let (mut parts, _) = response.into_parts();
    for name in ["grpc-status", "grpc-message", "grpc-status-details-bin", DRY_RUN_PLAN] {
        parts.headers.remove(name);
    }
    let mut trailers = axum::http::HeaderMap::new();
    trailers.insert("grpc-status", axum::http::HeaderValue::from_static("0"));
    trailers.insert(DRY_RUN_PLAN, plan);
    // One length-prefixed message of no bytes: not compressed, length 0.
    let frames: [Result<Frame<Bytes>, std::convert::Infallible>; 2] =
        [Ok(Frame::data(Bytes::from_static(&[0, 0, 0, 0, 0]))), Ok(Frame::trailers(trailers))];
    axum::response::Response::from_parts(parts, Body::new(StreamBody::new(futures::stream::iter(frames))))
}

/// Maps an app-layer error to a gRPC status with `ErrorInfo` (reason = the
/// REST problem `code`) and, for invalid input, `BadRequest` violations.
pub fn status(error: Error) -> Status {
    let code = match &error {
        Error::Invalid(_) | Error::Malformed(_) | Error::Grant { .. } => Code::InvalidArgument,
        Error::CodeUnusable { gone: false, .. } => Code::NotFound,
        Error::CodeUnusable { gone: true, .. } => Code::FailedPrecondition,
        Error::Unauthenticated => Code::Unauthenticated,
        Error::Forbidden | Error::Refused { .. } => Code::PermissionDenied,
        Error::NotFound { .. } => Code::NotFound,
        Error::Conflict { .. } | Error::IdempotencyInFlight => Code::Aborted,
        Error::QuotaExceeded { .. } => Code::ResourceExhausted,
        Error::PreconditionFailed { .. } | Error::IdempotencyMismatch => Code::FailedPrecondition,
        Error::Unavailable { .. } | Error::VaultUnavailable(_) => Code::Unavailable,
        Error::RateLimited { .. } => Code::ResourceExhausted,
        Error::Internal(_) | Error::Held(_) => Code::Internal,
        Error::DryRun(plan) => return dry_run_status(plan),
    };
    if let Error::Internal(source) = &error {
        tracing::error!(error = format!("{source:#}"), "internal error");
    }
    let reason = error.code().to_string();
    let mut details = vec![ErrorDetail::ErrorInfo(ErrorInfo::new(reason, ERROR_DOMAIN, HashMap::new()))];
    let message = match error {
        Error::Invalid(fields) => {
            let names: Vec<&str> = fields.iter().map(|f| f.field.as_str()).collect();
            let message = format!("invalid fields: {}", names.join(", "));
            let mut bad_request = BadRequest::new(Vec::new());
            for field in &fields {
                bad_request.add_violation(grpc_field(&field.field), field.message.clone());
            }
            details.push(ErrorDetail::BadRequest(bad_request));
            message
        }
        Error::RateLimited { limit, window_seconds, retry_after_seconds } => {
            details.push(ErrorDetail::RetryInfo(RetryInfo::new(Some(std::time::Duration::from_secs(
                retry_after_seconds,
            )))));
            format!("too many requests: the limit is {limit} per {window_seconds} s")
        }
        Error::Unavailable { detail, retry_after_seconds } => {
            details.push(ErrorDetail::RetryInfo(RetryInfo::new(Some(std::time::Duration::from_secs(
                retry_after_seconds,
            )))));
            detail
        }
        Error::QuotaExceeded { quota, limit, usage, requested } => {
            let message = error.to_string();
            let violation = QuotaViolation {
                subject: "organization".into(),
                description: format!("{usage} in use of {limit}; the request asks for {requested} more"),
                quota_metric: quota.to_string(),
                quota_id: quota.to_string(),
                quota_dimensions: HashMap::from([("requested".to_string(), requested.to_string())]),
                quota_value: limit,
                ..QuotaViolation::default()
            };
            details.push(ErrorDetail::QuotaFailure(QuotaFailure::new(vec![violation])));
            message
        }
        Error::Internal(_) => "an internal error occurred; it has been logged".to_string(),
        other => other.to_string(),
    };
    Status::with_error_details_vec(code, message, details)
}

/// A dry run's plan, on its way to [`dry_run_answers`], which makes it the
/// call's successful answer.
fn dry_run_status(plan: &crate::model::DryRunView) -> Status {
    let mut status = Status::new(Code::Ok, "");
    let json = serde_json::to_vec(plan).unwrap_or_default();
    status.metadata_mut().insert_bin(DRY_RUN_PLAN, tonic::metadata::MetadataValue::from_bytes(&json));
    status
}

/// [`status`] for a method whose request names some fields otherwise than
/// REST does (`renames`: the REST name, then the request's), so that a
/// violation names a field the caller sent.
fn status_renaming(mut error: Error, renames: &[(&str, &str)]) -> Status {
    if let Error::Invalid(fields) = &mut error {
        for field in fields.iter_mut() {
            if let Some((_, name)) = renames.iter().find(|(rest, _)| *rest == field.field) {
                field.field = (*name).to_string();
            }
        }
    }
    status(error)
}

/// Names a REST field as the gRPC request names it.
fn grpc_field(field: &str) -> String {
    match field {
        "limit" => "page_size".to_string(),
        "Idempotency-Key" => "request_id".to_string(),
        "spec.control_plane.replicas" => "spec.control_plane_replicas".to_string(),
        "previous_secret_valid_seconds" => "previous_secret_validity".to_string(),
        other => other.to_string(),
    }
}

/// What the audit log records of a call, before anyone is authenticated.
fn request_meta<T>(request: &tonic::Request<T>, request_id: &str) -> RequestContext {
    let metadata = request.metadata();
    let text = |name: &str| metadata.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    RequestContext::anonymous(RequestMeta {
        request_id: text("x-request-id"),
        user_agent: text("user-agent"),
        source_ip: request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| addr.ip().to_string())
            .or_else(|| request.remote_addr().map(|addr| addr.ip().to_string())),
        idempotency_key: (!request_id.is_empty()).then(|| request_id.to_string()),
    })
}

/// Authenticates the call and collects what the audit log records.
async fn context<T>(app: &App, request: &tonic::Request<T>, request_id: &str) -> Result<RequestContext, Status> {
    let metadata = request.metadata();
    let text = |name: &str| metadata.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    let ctx = request_meta(request, request_id);
    let dry_run = match text(VALIDATE_ONLY).as_deref() {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => return Err(status(Error::invalid_field(VALIDATE_ONLY, "invalid", "must be true or false"))),
    };
    let authorization = text("authorization").ok_or_else(|| status(Error::Unauthenticated))?;
    let ctx = app.authenticate_request(&authorization, ctx).await.map_err(status)?;
    Ok(if dry_run { ctx.dry_run() } else { ctx })
}

/// A server stream of a watch's updates.
pub type Updates<T> = std::pin::Pin<Box<dyn futures::Stream<Item = Result<T, Status>> + Send>>;

/// A watch for the call's caller, whose credential is checked again before
/// every message (see [`crate::app::kernel::watch`]).
async fn watcher<T>(app: &Arc<App>, request: &tonic::Request<T>) -> Result<Watcher, Status> {
    let ctx = context(app, request, "").await?;
    let authorization = request.metadata().get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default();
    let bearer = crate::app::iam::principals::bearer_of(authorization).map_err(status)?;
    Watcher::start(app, bearer.to_string(), ctx).map_err(status)
}

/// A watch's updates as a server stream: the first read's error is the
/// call's own (an unknown id is NOT_FOUND, not an empty stream), and a later
/// one (a revoked credential) ends the stream with its status. The rest is
/// [`delivered`](crate::app::kernel::watch::delivered), so a client that
/// stops reading ends the watch.
async fn follow<V: Send + 'static, T: Send + 'static>(
    updates: impl futures::Stream<Item = Result<V, Error>> + Send + 'static,
    convert: fn(V) -> T,
) -> Result<tonic::Response<Updates<T>>, Status> {
    use futures::StreamExt;
    let mut updates = Box::pin(updates);
    let Some(first) = updates.next().await else {
        return Err(Status::unavailable("the server is shutting down"));
    };
    let first = convert(first.map_err(status)?);
    let rest = crate::app::kernel::watch::delivered(updates.map(move |update| update.map(convert).map_err(status)));
    Ok(tonic::Response::new(Box::pin(futures::stream::once(async move { Ok(first) }).chain(rest))))
}

/// For a method the caller proves itself to in its request (a CI ID token
/// exchanged for an access token), as REST's routes without a bearer do:
/// what the audit log records, no credential, and no dry run.
fn anonymous_context<T>(request: &tonic::Request<T>) -> Result<RequestContext, Status> {
    let validate_only = request.metadata().get(VALIDATE_ONLY).map(|v| v.to_str().unwrap_or_default());
    match validate_only {
        None | Some("false") => Ok(request_meta(request, "")),
        Some("true") => {
            Err(status(Error::invalid_field(VALIDATE_ONLY, "unsupported", "this operation has no dry run")))
        }
        Some(_) => Err(status(Error::invalid_field(VALIDATE_ONLY, "invalid", "must be true or false"))),
    }
}

/// `page_size` (0 = default) and `page_token` as a page request.
fn page(page_size: i32, page_token: &str) -> Result<PageRequest, Status> {
    let size = (page_size != 0).then_some(i64::from(page_size));
    PageRequest::parse(size, Some(page_token)).map_err(status)
}
