//! One Postgres `LISTEN` connection per gateway process, fanning database
//! notifications out to in-process state: operation changes wake long-polls,
//! token, membership and role changes evict the principal cache, region
//! reports wake the ingest, heartbeats move the region clock. While the
//! connection is down the principal cache is bypassed, so a missed
//! revocation can never be served, and nothing is marked stale.

use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::PgListener;
use uuid::Uuid;

use crate::app::App;

const OPERATIONS: &str = "moke_operations";
const TOKENS: &str = "moke_tokens";
const STATUS: &str = "moke_status";
const OUTBOX: &str = "moke_outbox";
const PRINCIPALS: &str = "moke_principals";
const CSR: &str = "moke_csr";
const REGIONS: &str = "moke_regions";
const WEBHOOKS: &str = "moke_webhooks";

/// Listens until the app shuts down, reconnecting after errors.
pub async fn run(app: Arc<App>) {
    loop {
        if let Err(error) = listen(&app).await {
            tracing::warn!(%error, "notification listener failed; reconnecting");
        }
        app.principal_cache().set_live(false);
        app.region_clock().set_unknown();
        tokio::select! {
            _ = app.shutdown_token().cancelled() => return,
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    }
}

async fn listen(app: &App) -> Result<(), sqlx::Error> {
    let mut listener = PgListener::connect_with(app.db()).await?;
    listener.listen_all([OPERATIONS, TOKENS, STATUS, OUTBOX, PRINCIPALS, CSR, REGIONS, WEBHOOKS]).await?;
    // Anything cached before we listened may have missed an eviction.
    app.principal_cache().clear();
    app.principal_cache().set_live(true);
    if let Err(error) = app.reload_region_clock().await {
        tracing::warn!(%error, "could not load the region clock");
    }
    loop {
        let notification = tokio::select! {
            _ = app.shutdown_token().cancelled() => return Ok(()),
            n = listener.recv() => n?,
        };
        match notification.channel() {
            STATUS => {
                app.status_arrived().notify_one();
                continue;
            }
            OUTBOX => {
                app.outbox_arrived().notify_one();
                continue;
            }
            CSR => {
                app.csr_arrived().notify_one();
                continue;
            }
            WEBHOOKS => {
                app.webhooks_due().notify_one();
                continue;
            }
            REGIONS => {
                // "<region> <RFC 3339 time>"
                if let Some((region, at)) = notification.payload().split_once(' ')
                    && let Ok(at) = chrono::DateTime::parse_from_rfc3339(at)
                {
                    app.region_clock().heard(region, at.to_utc());
                }
                continue;
            }
            _ => {}
        }
        let Ok(id) = notification.payload().parse::<Uuid>() else { continue };
        match notification.channel() {
            OPERATIONS => app.operation_watch().changed(id),
            TOKENS | PRINCIPALS => app.principal_cache().evict(id),
            _ => {}
        }
    }
}
