//! Operational endpoints outside `/v1`: health, readiness, Prometheus
//! metrics, the OpenAPI document and its browsable docs page.

use std::sync::{Arc, OnceLock};

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

use crate::app::App;

pub fn routes(spec: Arc<utoipa::openapi::OpenApi>) -> Router<Arc<App>> {
    let docs = utoipa_scalar::Scalar::new(spec.as_ref().clone()).to_html();
    let docs_csp = super::html_csp(&docs, "https://cdn.jsdelivr.net https://fonts.scalar.com");
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(move || async move { Json(spec.as_ref().clone()) }))
        .route(
            "/docs",
            get(move || async move { ([(header::CONTENT_SECURITY_POLICY, docs_csp.clone())], Html(docs.clone())) }),
        )
}

/// 200 when the database answers and is fully migrated, else 503. The
/// reason goes to the log, never to the (unauthenticated) caller.
async fn readyz(State(app): State<Arc<App>>) -> Response {
    match app.ready().await {
        Ok(()) => "ready".into_response(),
        Err(reason) => {
            tracing::warn!(%reason, "not ready");
            (StatusCode::SERVICE_UNAVAILABLE, "not ready").into_response()
        }
    }
}

/// The process-wide Prometheus recorder (installed once, shared by every router).
pub fn prometheus() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new()
            .set_buckets(&[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0])
            .expect("static buckets are valid");
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        // Another recorder may already be installed (e.g. in tests); then ours renders empty.
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}

async fn metrics(State(app): State<Arc<App>>) -> Response {
    let pool = app.db();
    metrics::gauge!("db_pool_connections").set(f64::from(pool.size()));
    metrics::gauge!("db_pool_idle_connections").set(pool.num_idle() as f64);
    match app.outbox_backlog().await {
        Ok(backlog) => {
            metrics::gauge!("outbox_backlog").set(backlog.pending as f64);
            metrics::gauge!("outbox_oldest_age_seconds").set(backlog.oldest_age_seconds);
        }
        Err(error) => tracing::warn!(error = %error, "could not read the outbox backlog"),
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], prometheus().render()).into_response()
}
