//! Running the gateway: connecting and migrating the database, serving HTTP
//! with graceful shutdown, and the background tasks of one process.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;
use tokio::net::TcpListener;

use crate::app::App;
use crate::config::Config;

/// Connects to Postgres with the configured pool limits.
pub async fn connect(config: &Config) -> anyhow::Result<PgPool> {
    PgPoolOptions::new()
        .max_connections(config.database.max_connections)
        // A ping before every checkout doubles the round trips of a read; a
        // dead connection instead fails its one query and is replaced.
        .test_before_acquire(false)
        .acquire_timeout(Duration::from_secs(config.database.acquire_timeout_seconds))
        .connect(config.database.url.expose())
        .await
        .context("could not connect to the database (database.url)")
}

/// Applies pending migrations.
pub async fn migrate(pool: &PgPool) -> anyhow::Result<()> {
    crate::MIGRATOR.run(pool).await.context("could not migrate the database")
}

/// Serves until `shutdown` completes, then stops accepting, lets in-flight
/// requests finish (long-polls answer at once) and returns.
pub async fn serve(
    app: Arc<App>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    crate::http::ops::prometheus();
    crate::app::kernel::mail::warn_if_development_sender(&app.config().mail);
    let mut background = crate::background::start(app.clone());
    if app.config().queue.is_nats() {
        let nats = crate::queue::Nats::connect(app.config()).await?;
        crate::background::start_nats(app.clone(), nats, &mut background);
    }
    let router = crate::http::router(app.clone());
    let token = app.shutdown_token().clone();
    let stop = async move {
        shutdown.await;
        tracing::info!("shutting down: finishing in-flight requests");
        token.cancel();
    };
    axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(stop)
        .await
        .context("HTTP server failed")?;
    app.shutdown_token().cancel();
    background.abort_all();
    Ok(())
}

/// Resolves on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = terminate => {}
    }
}
