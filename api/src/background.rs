//! Everything a gateway process does beside answering requests, started from
//! one place ([`start`]) in one of two shapes:
//!
//! - a **drain** works through due items in rounds: it runs rounds back to
//!   back while they find work, then sleeps until its wake-up (a Postgres
//!   `NOTIFY`) or its poll interval. A round handles each item on its own:
//!   an item that fails waits on its own backoff and, where retrying cannot
//!   help, is dead-lettered visibly (a log line at error level and
//!   `dead_letters_total{queue}`); it never holds up the items behind it.
//!   An error that ends a round (the database is gone) is logged and
//!   counted in `background_round_failures_total{worker}`, and the next
//!   round starts after the poll interval.
//! - a **periodic** job runs on a fixed interval, each on its own task, so
//!   a slow hourly sweep never delays a one-second deadline check.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinSet;

use crate::app::{App, Result};

/// Work that runs in rounds; a round returns how many items it handled.
struct Drain {
    name: &'static str,
    /// Woken early when this returns a notified `Notify`.
    wake: fn(&App) -> Option<&Notify>,
    poll: Duration,
}

/// Runs `round` until shutdown in the drain shape described above.
async fn drain<F, Fut>(app: Arc<App>, worker: Drain, round: F)
where
    F: Fn(Arc<App>) -> Fut,
    Fut: Future<Output = Result<usize>>,
{
    loop {
        match round(app.clone()).await {
            Ok(n) if n > 0 => continue,
            Ok(_) => {}
            Err(error) => round_failed(worker.name, &error),
        }
        let wake = async {
            match (worker.wake)(&app) {
                Some(notify) => notify.notified().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = app.shutdown_token().cancelled() => return,
            _ = wake => {}
            _ = tokio::time::sleep(worker.poll) => {}
        }
    }
}

/// Runs `job` every `period` until shutdown; the first run is at once.
async fn periodic<F, Fut>(app: Arc<App>, name: &'static str, period: Duration, job: F)
where
    F: Fn(Arc<App>) -> Fut,
    Fut: Future<Output = Result<()>>,
{
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = app.shutdown_token().cancelled() => return,
            _ = ticks.tick() => {}
        }
        if let Err(error) = job(app.clone()).await {
            round_failed(name, &error);
        }
    }
}

fn round_failed(worker: &'static str, error: &crate::app::Error) {
    metrics::counter!("background_round_failures_total", "worker" => worker).increment(1);
    tracing::warn!(worker, error = %error, "background round failed; retrying");
}

/// Records an item a queue gave up on: logged at error level (it needs a
/// person) and counted in `dead_letters_total{queue}`.
pub(crate) fn dead_lettered(queue: &'static str, item: &str, reason: &str) {
    metrics::counter!("dead_letters_total", "queue" => queue).increment(1);
    tracing::error!(queue, item, reason, "dead-lettered after its attempts; it will not be retried");
}

/// Starts every background worker of this process; they stop at the app's
/// shutdown (or when the returned set is dropped).
pub fn start(app: Arc<App>) -> JoinSet<()> {
    let mut tasks = JoinSet::new();
    // Region reports, certificate requests, customer webhooks and mail.
    let drains: [(Drain, RoundFn); 3] = [
        (Drain { name: "region_status_ingest", wake: |app| Some(app.status_arrived()), poll: secs(1) }, |app| {
            Box::pin(async move { app.ingest_region_status_once().await })
        }),
        (Drain { name: "serving_certificate_signer", wake: |app| Some(app.csr_arrived()), poll: secs(2) }, |app| {
            Box::pin(async move { app.sign_serving_certificates_once().await })
        }),
        (
            Drain {
                name: "webhook_dispatcher",
                wake: |app| Some(app.webhooks_due()),
                poll: Duration::from_millis(250),
            },
            |app| Box::pin(async move { app.dispatch_webhooks_once().await }),
        ),
    ];
    for (worker, round) in drains {
        tasks.spawn(drain(app.clone(), worker, round));
    }
    tasks.spawn(relay_mail(app.clone()));
    tasks.spawn(crate::app::region::notifications::run(app.clone()));
    tasks.spawn(app.vault_handle().maintain(app.shutdown_token().clone()));

    let repair_every = secs((app.config().outbox.repair_after_seconds as u64 / 4).max(1));
    let finalize_every = secs(app.config().billing.finalize_every_seconds);
    let budgets_every = secs(app.config().billing.budget_every_seconds);
    let auto_upgrades_every = secs(app.config().lifecycle.auto_upgrade_every_seconds);
    let periodics: [(&'static str, Duration, JobFn); 12] = [
        ("rollout_deadlines", secs(1), |app| {
            Box::pin(async move { app.enforce_rollout_deadlines_once().await.map(drop) })
        }),
        ("etcd_deadlines", secs(30), |app| Box::pin(async move { app.enforce_etcd_deadlines_once().await.map(drop) })),
        ("approval_expiry", secs(30), |app| Box::pin(async move { app.expire_approvals_once().await.map(drop) })),
        ("anti_entropy_repair", repair_every, |app| Box::pin(async move { app.repair_drift_once().await.map(drop) })),
        ("cluster_object_backfill", repair_every, |app| {
            Box::pin(async move { app.backfill_cluster_objects_once().await.map(drop) })
        }),
        ("rate_limit_windows", secs(60), |app| {
            Box::pin(async move {
                app.rate_limits().retain_recent();
                Ok(())
            })
        }),
        ("orphaned_cluster_cas", secs(60), |app| {
            Box::pin(async move { app.destroy_orphaned_cluster_cas_once().await.map(drop) })
        }),
        ("invoice_finalizer", finalize_every, |app| {
            Box::pin(async move { app.finalize_due_invoices(None).await.map(drop) })
        }),
        ("automatic_upgrades", auto_upgrades_every, |app| {
            Box::pin(async move { app.run_automatic_upgrades(None).await.map(drop) })
        }),
        ("budget_alerts", budgets_every, |app| Box::pin(async move { app.evaluate_budgets(None).await.map(drop) })),
        // Secrets left on an old key version (a rotation by another gateway or the CLI).
        ("secret_rewrap", secs(3600), |app| Box::pin(async move { app.rewrap_secrets().await.map(drop) })),
        ("expired_records", secs(3600), |app| {
            Box::pin(async move {
                // Each sweep on its own: one failing does not stop the other.
                match app.purge_idempotency_keys().await {
                    Ok(0) => {}
                    Ok(purged) => tracing::info!(purged, "expired idempotency keys removed"),
                    Err(error) => round_failed("expired_idempotency_keys", &error),
                }
                match app.purge_expired_previous_secrets().await {
                    Ok(0) => {}
                    Ok(purged) => tracing::info!(purged, "expired previous signing secrets forgotten"),
                    Err(error) => round_failed("expired_previous_secrets", &error),
                }
                match app.purge_old_dead_letter_reports().await {
                    Ok(0) => {}
                    Ok(purged) => tracing::info!(purged, "region reports set aside over 30 days ago removed"),
                    Err(error) => round_failed("old_dead_letter_reports", &error),
                }
                app.purge_sign_in_leftovers().await.map(drop)
            })
        }),
    ];
    for (name, period, job) in periodics {
        tasks.spawn(periodic(app.clone(), name, period, job));
    }
    tasks
}

/// One round of a drain, as the table in [`start`] lists it.
type RoundFn = fn(Arc<App>) -> std::pin::Pin<Box<dyn Future<Output = Result<usize>> + Send>>;
/// One run of a periodic job, as the table in [`start`] lists it.
type JobFn = fn(Arc<App>) -> std::pin::Pin<Box<dyn Future<Output = Result<()>> + Send>>;

fn secs(seconds: u64) -> Duration {
    Duration::from_secs(seconds)
}

/// The mail relay, a drain whose round needs the configured sender.
async fn relay_mail(app: Arc<App>) {
    use crate::app::kernel::mail::{FileMailSender, LogMailSender, SmtpMailSender};
    let config = app.config().mail.clone();
    let worker = Drain { name: "mail_relay", wake: |_| None, poll: secs(1) };
    match config.sender.as_str() {
        "smtp" => match SmtpMailSender::new(config.smtp_url.expose()) {
            Ok(sender) => {
                let sender = Arc::new(sender);
                drain(app, worker, move |app| {
                    let sender = sender.clone();
                    async move { app.relay_mail_once(sender.as_ref()).await }
                })
                .await
            }
            Err(error) => tracing::error!(%error, "mail.smtp_url is not usable; no mail will be sent"),
        },
        "file" => {
            let sender = Arc::new(FileMailSender::new(&config.file_dir));
            drain(app, worker, move |app| {
                let sender = sender.clone();
                async move { app.relay_mail_once(sender.as_ref()).await }
            })
            .await
        }
        _ => drain(app, worker, |app| async move { app.relay_mail_once(&LogMailSender).await }).await,
    }
}

/// The NATS relay and status ingest, when `queue.backend = "nats"`.
pub fn start_nats(app: Arc<App>, nats: crate::queue::Nats, tasks: &mut JoinSet<()>) {
    let relay = nats.clone();
    tasks.spawn(drain(
        app.clone(),
        Drain { name: "outbox_relay", wake: |app| Some(app.outbox_arrived()), poll: secs(1) },
        move |app| {
            let nats = relay.clone();
            async move { app.relay_outbox_once(&nats).await }
        },
    ));
    tasks.spawn(crate::queue::ingest(app, nats));
}
