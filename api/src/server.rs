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
    let mut nats_tasks = Vec::new();
    if app.config().queue.is_nats() {
        let nats = crate::queue::Nats::connect(app.config()).await?;
        nats_tasks.push(tokio::spawn(crate::queue::relay(app.clone(), nats.clone())));
        nats_tasks.push(tokio::spawn(crate::queue::ingest(app.clone(), nats)));
    }
    let background = tokio::spawn(background_tasks(app.clone()));
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
    background.abort();
    nats_tasks.iter().for_each(|task| task.abort());
    Ok(())
}

/// Work each gateway process does beside answering requests.
async fn background_tasks(app: Arc<App>) {
    let listener = tokio::spawn(crate::app::region::notifications::run(app.clone()));
    let ingest = tokio::spawn(ingest_region_status(app.clone()));
    let mail = tokio::spawn(crate::app::kernel::mail::run_relay(app.clone()));
    let signer = tokio::spawn(sign_serving_certificates(app.clone()));
    let webhooks = tokio::spawn(deliver_webhooks(app.clone()));
    let vault = tokio::spawn(app.vault_handle().maintain(app.shutdown_token().clone()));
    let mut every_minute = tokio::time::interval(Duration::from_secs(60));
    let mut hourly = tokio::time::interval(Duration::from_secs(3600));
    let repair_every = Duration::from_secs((app.config().outbox.repair_after_seconds as u64 / 4).max(1));
    let mut repair = tokio::time::interval(repair_every);
    let mut rollout_deadlines = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = app.shutdown_token().cancelled() => break,
            _ = rollout_deadlines.tick() => {
                if let Err(error) = app.enforce_rollout_deadlines_once().await {
                    tracing::warn!(%error, "could not enforce rollout deadlines");
                }
            }
            _ = repair.tick() => {
                if let Err(error) = app.repair_drift_once().await {
                    tracing::warn!(%error, "anti-entropy pass failed");
                }
            }
            _ = every_minute.tick() => {
                app.rate_limits().retain_recent();
                if let Err(error) = app.destroy_orphaned_cluster_cas_once().await {
                    tracing::warn!(%error, "could not destroy the CAs of deleted clusters");
                }
            }
            _ = hourly.tick() => {
                // Secrets left on an old key version (a rotation by another gateway or the CLI).
                if let Err(error) = app.rewrap_secrets().await {
                    tracing::warn!(%error, "could not rewrap secrets");
                }
                match app.purge_idempotency_keys().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(purged = n, "expired idempotency keys removed"),
                Err(error) => tracing::warn!(%error, "could not purge idempotency keys"),
                }
                if let Err(error) = app.purge_sign_in_leftovers().await {
                    tracing::warn!(%error, "could not purge expired sign-ins and links");
                }
            }
        }
    }
    listener.abort();
    ingest.abort();
    mail.abort();
    signer.abort();
    webhooks.abort();
    vault.abort();
}

/// Delivers customer event webhooks as they fall due (woken by `NOTIFY
/// moke_webhooks`, with a quarter-second poll for retries).
async fn deliver_webhooks(app: Arc<App>) {
    loop {
        match app.dispatch_webhooks_once().await {
            Ok(n) if n > 0 => continue,
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "webhook dispatch failed"),
        }
        tokio::select! {
            _ = app.shutdown_token().cancelled() => return,
            _ = app.webhooks_due().notified() => {}
            _ = tokio::time::sleep(Duration::from_millis(250)) => {}
        }
    }
}

/// Applies region reports as they arrive (woken by `NOTIFY moke_status`,
/// with a one-second poll as the fallback).
async fn ingest_region_status(app: Arc<App>) {
    loop {
        match app.ingest_region_status_once().await {
            Ok(n) if n > 0 => continue,
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "could not ingest region status"),
        }
        tokio::select! {
            _ = app.shutdown_token().cancelled() => return,
            _ = app.status_arrived().notified() => {}
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    }
}

/// Signs control planes' certificate requests as they arrive (woken by
/// `NOTIFY moke_csr`, with a poll as the fallback). Each request that fails
/// is retried on its own backoff and set aside after its attempts.
async fn sign_serving_certificates(app: Arc<App>) {
    loop {
        match app.sign_serving_certificates_once().await {
            Ok(n) if n > 0 => continue,
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "could not sign control-plane certificates"),
        }
        tokio::select! {
            _ = app.shutdown_token().cancelled() => return,
            _ = app.csr_arrived().notified() => {}
            _ = tokio::time::sleep(Duration::from_secs(2)) => {}
        }
    }
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
