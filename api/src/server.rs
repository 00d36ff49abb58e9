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
    let console = console_mount(&app, &listener).await?;
    let router = crate::http::router_with(app.clone(), axum::Router::new(), Some(console));
    let token = app.shutdown_token().clone();
    let stop = async move {
        shutdown.await;
        tracing::info!("shutting down: finishing in-flight requests");
        token.cancel();
    };
    // Answers go out as soon as they are written: an HTTP/2 answer is
    // several small writes, which Nagle's algorithm would hold back.
    let listener = axum::serve::ListenerExt::tap_io(listener, |connection| {
        if let Err(error) = connection.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
    });
    axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(stop)
        .await
        .context("HTTP server failed")?;
    app.shutdown_token().cancel();
    background.abort_all();
    Ok(())
}

/// The web console for this process: it calls the API on this very
/// listener (loopback when the listener is on every address), with its
/// cookie key from Vault and a fresh forwarding secret.
async fn console_mount(app: &App, listener: &TcpListener) -> anyhow::Result<crate::http::ConsoleMount> {
    let mut local = listener.local_addr().context("the listener has no address")?;
    if local.ip().is_unspecified() {
        local.set_ip(if local.is_ipv4() {
            std::net::Ipv4Addr::LOCALHOST.into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        });
    }
    let session_key = app.vault().console_key().await.context("could not read the console's key from Vault")?;
    let mut secret = [0u8; 32];
    rand::RngCore::fill_bytes(&mut rand::rng(), &mut secret);
    let forward_secret = hex::encode(secret);
    let script_dir = &app.config().http.console_script_dir;
    let script = if script_dir.is_empty() {
        None
    } else {
        Some(moke_console::ConsoleScript::load(std::path::Path::new(script_dir))?)
    };
    let routes = moke_console::router(moke_console::ConsoleConfig {
        api_url: format!("http://{local}"),
        public_url: app.config().http.public_url.clone(),
        session_key,
        forward_secret: forward_secret.clone(),
        script,
    })?;
    Ok(crate::http::ConsoleMount { routes, forward_secret, api_ip: local.ip() })
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
