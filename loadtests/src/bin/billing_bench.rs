//! `billing-bench`: what billing costs. Reading an invoice: a draft is
//! rated from its usage records on every read (a week of minute samples
//! of a 20-node pool and its control plane: 211 680 records), measured
//! beside the same invoice finalized (its lines stored), in the same run
//! against the same gateway. Recording usage: one region usage sample of
//! 20 nodes (its records, overlap checks and invoice lock, in one
//! transaction) beside a heartbeat report and a plain insert of the same
//! rows. Month close: 10 000 organizations' drafts of 10 clusters each
//! finalized, total time and per-organization percentiles. Run through
//! `cargo xtask bench billing`.
//!
//! Environment: `DATABASE_URL`, the gateway's `MOKE_VAULT__*`; optional
//! `BENCH_SECONDS` (default 10), `BENCH_CONNECTIONS` (default 8),
//! `BENCH_SAMPLES` (default 300) and `BENCH_CLOSE_ORGS` (default 10 000).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{Datelike, TimeZone, Utc};
use moke_api::app::{App, RequestContext, ResourceRef};
use moke_loadtests::{Stats, load};
use moke_proto::region as pb;
use serde_json::json;

const NODES: usize = 20;
const MINUTES: i64 = 7 * 24 * 60;

fn row(name: &str, stats: &Stats) {
    println!(
        "{name:<44} {:>8.0} req/s   p50 {:>7.2} ms   p95 {:>7.2} ms   p99 {:>7.2} ms   ({} requests, {} errors)",
        stats.throughput, stats.p50_ms, stats.p95_ms, stats.p99_ms, stats.requests, stats.errors
    );
}

/// An organization with a cluster of one `NODES`-node pool, made as its
/// owner: (org id, owner token, project id, cluster id, pool id).
async fn tenant(app: &App, name: &str) -> Result<(String, String, String, String, String)> {
    let made = app.bootstrap_org(name, name).await?;
    let owner = RequestContext::system(made.org.id.uuid());
    let project = app.project_create(&owner, made.org.id, serde_json::from_value(json!({ "name": "bench" }))?).await?;
    let project_ref = ResourceRef::parse(&project.id.to_string());
    let cluster = app
        .cluster_create(
            &owner,
            &project_ref,
            serde_json::from_value(json!({ "name": "prod", "spec": { "region": "eu-central-1" } }))?,
        )
        .await?;
    let cluster_id = cluster.target.id.clone();
    let pool = app
        .node_pool_create(
            &owner,
            &project_ref,
            &ResourceRef::parse(&cluster_id),
            serde_json::from_value(
                json!({ "name": "workers", "spec": { "machine_type": "bm.small", "count": NODES } }),
            )?,
        )
        .await?;
    Ok((made.org.id.to_string(), made.owner_token.token, project.id.to_string(), cluster_id, pool.target.id))
}

/// A week of minute usage of `cluster` and its pool's nodes from `start`,
/// written straight into `invoice` (as metering would have, without the
/// region round trips).
async fn week_of_usage(
    app: &App,
    org: &str,
    cluster: &str,
    pool: &str,
    invoice: uuid::Uuid,
    start: chrono::DateTime<Utc>,
) -> Result<()> {
    let org: moke_api::ids::OrgId = org.parse()?;
    let cluster: moke_api::ids::ClusterId = cluster.parse()?;
    let pool: moke_api::ids::NodePoolId = pool.parse()?;
    sqlx::query(
        "INSERT INTO usage_records (resource_id, instance, meter, period_start, period_end, org_id, project_id,
             project_name, cluster_id, region, resource_kind, resource_name, sku, seconds, sample_id, invoice_id)
         SELECT CASE WHEN n = 0 THEN $2 ELSE $3 END,
                CASE WHEN n = 0 THEN 'control-plane' ELSE 'node-' || n END,
                CASE WHEN n = 0 THEN 'control_plane' ELSE 'node' END,
                $5 + make_interval(mins => m), $5 + make_interval(mins => m + 1), $1,
                (SELECT project_id FROM clusters WHERE id = $2), 'bench', $2, 'eu-central-1',
                CASE WHEN n = 0 THEN 'cluster' ELSE 'node_pool' END,
                CASE WHEN n = 0 THEN 'prod' ELSE 'workers' END,
                CASE WHEN n = 0 THEN 'control-plane.ha.hour' ELSE 'bm.small.hour' END,
                60, 'bench/' || m, $4
         FROM generate_series(0, $6 - 1) AS m, generate_series(0, $7) AS n",
    )
    .bind(org.uuid())
    .bind(cluster.uuid())
    .bind(pool.uuid())
    .bind(invoice)
    .bind(start)
    .bind(MINUTES as i32)
    .bind(NODES as i32)
    .execute(app.db())
    .await?;
    Ok(())
}

/// Opens `org`'s invoice of the month starting `month` as a draft.
async fn draft(app: &App, org: &str, month: chrono::DateTime<Utc>) -> Result<uuid::Uuid> {
    let org: moke_api::ids::OrgId = org.parse()?;
    let id = moke_api::ids::InvoiceId::generate().uuid();
    let next = if month.month() == 12 {
        Utc.with_ymd_and_hms(month.year() + 1, 1, 1, 0, 0, 0).unwrap()
    } else {
        Utc.with_ymd_and_hms(month.year(), month.month() + 1, 1, 0, 0, 0).unwrap()
    };
    sqlx::query(
        "INSERT INTO invoices (id, org_id, period_start, period_end, status, currency)
         VALUES ($1, $2, $3, $4, 'draft', 'USD')",
    )
    .bind(id)
    .bind(org.uuid())
    .bind(month)
    .bind(next)
    .execute(app.db())
    .await?;
    Ok(id)
}

/// `orgs` organizations with last month's draft invoice each, holding a
/// month of daily usage of 10 clusters (an HA control plane and 3 nodes
/// each), written straight into the tables the month close reads.
async fn month_of_drafts(app: &App, run: u32, orgs: i64, month: chrono::DateTime<Utc>) -> Result<()> {
    let next = if month.month() == 12 {
        Utc.with_ymd_and_hms(month.year() + 1, 1, 1, 0, 0, 0).unwrap()
    } else {
        Utc.with_ymd_and_hms(month.year(), month.month() + 1, 1, 0, 0, 0).unwrap()
    };
    let prefix = format!("close-{run}-");
    sqlx::query(
        "INSERT INTO organizations (id, name, display_name)
         SELECT gen_random_uuid(), $1 || i, 'Close ' || i FROM generate_series(1, $2) AS i",
    )
    .bind(&prefix)
    .bind(orgs)
    .execute(app.db())
    .await?;
    sqlx::query(
        "INSERT INTO invoices (id, org_id, period_start, period_end, status, currency)
         SELECT gen_random_uuid(), id, $2, $3, 'draft', 'USD' FROM organizations WHERE starts_with(name, $1)",
    )
    .bind(&prefix)
    .bind(month)
    .bind(next)
    .execute(app.db())
    .await?;
    let days = (next - month).num_days() as i32;
    sqlx::query(
        "INSERT INTO usage_daily (invoice_id, day, resource_id, instance, sku, resource_kind, resource_name,
             project_name, seconds, period_start, period_end)
         SELECT i.id, ($2::timestamptz AT TIME ZONE 'UTC')::date + d,
                md5(i.id::text || k || CASE WHEN n = 0 THEN 'c' ELSE 'p' END)::uuid,
                CASE WHEN n = 0 THEN 'control-plane' ELSE 'node-' || n END,
                CASE WHEN n = 0 THEN 'control-plane.ha.hour' ELSE 'bm.small.hour' END,
                CASE WHEN n = 0 THEN 'cluster' ELSE 'node_pool' END,
                'cluster-' || k, 'bench', 86400,
                $2 + make_interval(days => d), $2 + make_interval(days => d + 1)
         FROM invoices i JOIN organizations o ON o.id = i.org_id AND starts_with(o.name, $1),
              generate_series(0, 9) AS k, generate_series(0, 3) AS n, generate_series(0, $3 - 1) AS d",
    )
    .bind(&prefix)
    .bind(month)
    .bind(days)
    .execute(app.db())
    .await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<()> {
    moke_api::install_crypto_provider();
    let env = |name: &str, default: u64| std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default);
    let (seconds, connections, samples) =
        (env("BENCH_SECONDS", 10), env("BENCH_CONNECTIONS", 8) as usize, env("BENCH_SAMPLES", 300) as i64);
    let duration = Duration::from_secs(seconds);
    let mut config = moke_loadtests::bench_config();
    config.quotas.max_nodes = 10_000;
    config.quotas.max_vcpus = 1_000_000;
    // The month close below is this benchmark's alone: the gateway's own periodic runs wait a year.
    (config.billing.finalize_every_seconds, config.billing.budget_every_seconds) = (31_536_000, 31_536_000);
    let pool = moke_api::server::connect(&config).await?;
    moke_api::server::migrate(&pool).await?;
    let vault = moke_api::vault::Vault::connect(&config).await?;
    let app = App::new(pool, Arc::new(config), vault);
    let run = std::process::id();

    // The same week of usage twice: a draft of this month, and last month's invoice finalized.
    let this_month = {
        let now = Utc::now();
        Utc.with_ymd_and_hms(now.year(), now.month(), 1, 0, 0, 0).unwrap()
    };
    let last_month = if this_month.month() == 1 {
        Utc.with_ymd_and_hms(this_month.year() - 1, 12, 1, 0, 0, 0).unwrap()
    } else {
        Utc.with_ymd_and_hms(this_month.year(), this_month.month() - 1, 1, 0, 0, 0).unwrap()
    };
    let (live_org, live_token, _, live_cluster, live_pool) = tenant(&app, &format!("billing-live-{run}")).await?;
    let (done_org, done_token, _, done_cluster, done_pool) = tenant(&app, &format!("billing-done-{run}")).await?;
    let started = Instant::now();
    let live_invoice = draft(&app, &live_org, this_month).await?;
    week_of_usage(&app, &live_org, &live_cluster, &live_pool, live_invoice, this_month).await?;
    let done_invoice = draft(&app, &done_org, last_month).await?;
    week_of_usage(&app, &done_org, &done_cluster, &done_pool, done_invoice, last_month).await?;
    let finalized = app.finalize_due_invoices(Some(this_month + chrono::Duration::hours(49))).await?;
    anyhow::ensure!(finalized == 1, "the finished invoice was not finalized ({finalized})");
    println!("set up {} usage records in {:.1} s", 2 * MINUTES * (NODES as i64 + 1), started.elapsed().as_secs_f64());

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(moke_api::server::serve(app.clone(), listener, std::future::pending()));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let client = reqwest::Client::builder().pool_max_idle_per_host(connections).build()?;
    let get = |token: String, path: String| {
        let (client, url) = (client.clone(), format!("{base}{path}"));
        move |_: usize, _: usize| {
            let sent = client.get(&url).bearer_auth(&token).send();
            async move { matches!(sent.await, Ok(r) if r.status() == 200) }
        }
    };
    let invoice = |org: &str, id: uuid::Uuid| {
        format!("/v1/orgs/{org}/billing/invoices/{}", moke_api::ids::InvoiceId::from_uuid(id))
    };

    println!(
        "moke billing benchmark: a week of minute usage of {NODES} nodes and a control plane, {connections} connections, {seconds} s per scenario, one process"
    );
    let stored = load(connections, duration, get(done_token.clone(), invoice(&done_org, done_invoice))).await;
    row("REST: a finalized invoice (stored lines)", &stored);
    let rated = load(connections, duration, get(live_token.clone(), invoice(&live_org, live_invoice))).await;
    row("REST: the same usage as a draft (rated)", &rated);
    let pdf =
        load(connections, duration, get(done_token.clone(), format!("{}/pdf", invoice(&done_org, done_invoice)))).await;
    row("REST: the finalized invoice as PDF", &pdf);
    let balance =
        load(connections, duration, get(live_token.clone(), format!("/v1/orgs/{live_org}/billing/balance"))).await;
    row("REST: this month's balance (rates the draft)", &balance);

    // Recording usage, one report at a time as the ingest loop applies them.
    let ingest = tenant(&app, &format!("billing-ingest-{run}")).await?;
    let (_, _, _, cluster, pool) = ingest;
    sqlx::query("UPDATE clusters SET created_at = now() - interval '1 day' WHERE id = $1")
        .bind(cluster.parse::<moke_api::ids::ClusterId>()?.uuid())
        .execute(app.db())
        .await?;
    let now = Utc::now();
    let time = async |make: &dyn Fn(i64) -> pb::Status| -> Result<f64> {
        let started = Instant::now();
        for i in 0..samples {
            app.apply_region_status(make(i)).await?;
        }
        Ok(started.elapsed().as_secs_f64() * 1000.0 / samples as f64)
    };
    let heartbeat = |_: i64| pb::Status {
        region: "eu-central-1".into(),
        message: Some(pb::status::Message::Heartbeat(pb::Heartbeat {
            region: "eu-central-1".into(),
            commands_applied: 0,
        })),
    };
    let usage = |i: i64| {
        let start = now - chrono::Duration::minutes(samples + 1 - i);
        let end = start + chrono::Duration::minutes(1);
        pb::Status {
            region: "eu-central-1".into(),
            message: Some(pb::status::Message::Usage(pb::UsageSample {
                id: format!("{cluster}/{}", end.timestamp_millis()),
                cluster_id: cluster.clone(),
                period_start: start.to_rfc3339(),
                period_end: end.to_rfc3339(),
                cluster_seconds: 60.0,
                node_seconds: Default::default(),
                control_plane_replicas: 3,
                nodes: (0..NODES)
                    .map(|n| pb::NodeUsage {
                        name: format!("node-{n}"),
                        node_pool_id: pool.clone(),
                        machine_type: "bm.small".into(),
                        milliseconds: 60_000,
                    })
                    .collect(),
            })),
        }
    };
    let heartbeat_ms = time(&heartbeat).await?;
    let usage_ms = time(&usage).await?;
    // The baseline for recording a sample: a plain insert of the same rows into a copy of the table
    // (its key, none of the checks, the rollup or the invoice).
    sqlx::query(&format!(
        "CREATE TABLE bench_plain_usage_{run} (LIKE usage_records INCLUDING DEFAULTS INCLUDING INDEXES)"
    ))
    .execute(app.db())
    .await?;
    let started = Instant::now();
    for i in 0..samples {
        let start = now - chrono::Duration::minutes(samples + 1 - i);
        sqlx::query(&format!(
            "INSERT INTO bench_plain_usage_{run} (resource_id, instance, meter, period_start, period_end, org_id,
                 project_id, project_name, cluster_id, region, resource_kind, resource_name, sku, seconds, sample_id,
                 invoice_id)
             SELECT gen_random_uuid(), CASE WHEN n = 0 THEN 'control-plane' ELSE 'node-' || n END,
                    CASE WHEN n = 0 THEN 'control_plane' ELSE 'node' END, $1, $1 + interval '1 minute',
                    gen_random_uuid(), gen_random_uuid(), 'bench', gen_random_uuid(), 'eu-central-1',
                    CASE WHEN n = 0 THEN 'cluster' ELSE 'node_pool' END, 'workers', 'bm.small.hour', 60, 'plain',
                    gen_random_uuid()
             FROM generate_series(0, $2) AS n"
        ))
        .bind(start)
        .bind(NODES as i32)
        .execute(app.db())
        .await?;
    }
    let plain_ms = started.elapsed().as_secs_f64() * 1000.0 / samples as f64;
    let recorded: i64 = sqlx::query_scalar("SELECT count(*) FROM usage_records WHERE cluster_id = $1")
        .bind(cluster.parse::<moke_api::ids::ClusterId>()?.uuid())
        .fetch_one(app.db())
        .await?;
    anyhow::ensure!(recorded == samples * (NODES as i64 + 1), "{recorded} records for {samples} samples");
    println!("{:<44} {heartbeat_ms:>7.2} ms a report ({samples} in a row)", "ingest: a heartbeat");
    println!("{:<44} {usage_ms:>7.2} ms a report ({recorded} records)", "ingest: a usage sample of 20 nodes");
    println!("{:<44} {plain_ms:>7.2} ms a sample's rows", "a plain insert of the same 21 rows");

    // Month close: every organization's draft of last month finalized, one transaction each.
    let orgs = env("BENCH_CLOSE_ORGS", 10_000) as i64;
    let started = Instant::now();
    month_of_drafts(&app, run, orgs, last_month).await?;
    println!("set up {orgs} organizations' drafts of 10 clusters each in {:.1} s", started.elapsed().as_secs_f64());
    let at = this_month + chrono::Duration::hours(49);
    let started = Instant::now();
    let mut took = Vec::new();
    loop {
        let batch = app.close_months(Some(at)).await?;
        anyhow::ensure!(batch.failed == 0, "{} invoices could not be finalized", batch.failed);
        if batch.took.is_empty() {
            break;
        }
        took.extend(batch.took);
    }
    let total = started.elapsed().as_secs_f64();
    anyhow::ensure!(took.len() as i64 == orgs, "{} of {orgs} invoices finalized", took.len());
    took.sort();
    let at_rank = |q: f64| took[((took.len() as f64 * q) as usize).min(took.len() - 1)].as_secs_f64() * 1000.0;
    println!(
        "month close: {orgs} organizations x 10 clusters in {total:.1} s ({:.0} invoices/s); per organization p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        orgs as f64 / total,
        at_rank(0.5),
        at_rank(0.99),
        at_rank(1.0),
    );
    println!();
    println!(
        "draft / finalized invoice: p50 x{:.2}, p95 x{:.2}, throughput x{:.2}; PDF / JSON of the finalized one: p95 x{:.2}",
        rated.p50_ms / stored.p50_ms,
        rated.p95_ms / stored.p95_ms,
        rated.throughput / stored.throughput,
        pdf.p95_ms / stored.p95_ms,
    );
    println!("usage sample / heartbeat: x{:.2} a report", usage_ms / heartbeat_ms);
    println!(
        "usage samples recorded: {:.0}/s, plain inserts of their rows: {:.0}/s (x{:.2} the cost)",
        1000.0 / usage_ms,
        1000.0 / plain_ms,
        usage_ms / plain_ms
    );
    let errors = stored.errors + rated.errors + pdf.errors + balance.errors;
    anyhow::ensure!(errors == 0, "{errors} requests failed");
    Ok(())
}
