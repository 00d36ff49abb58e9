//! `webhook-bench`: deploy webhooks in, event webhooks out. One gateway and
//! one simulated region agent (on the embedded Postgres queue) run in this
//! process. Signed Standard Webhooks deliveries go to per-deployment hooks
//! at a steady `BENCH_RATE` (100/s) for `BENCH_SECONDS` (10 s); the latency
//! is delivery accepted → rollout observed (the Operation's own
//! `created_at`/`finished_at`). Meanwhile a local receiver subscribed to
//! `deployment.rollout.*` counts the gateway's outbound deliveries; beside
//! it, `wrk` against the same receiver is the baseline. Run through `cargo
//! xtask bench webhooks`.
//!
//! Environment: `DATABASE_URL`, the gateway's `MOKE_VAULT__*`; optional
//! `BENCH_RATE`, `BENCH_SECONDS`, `BENCH_DEPLOYMENTS` (default 100).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use moke_api::app::integrations::signing::sign;
use moke_loadtests::{Gateway, operation_latency, percentile, start_gateway, wait_finished, wrk_requests_per_second};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<()> {
    moke_api::install_crypto_provider();
    let rate: u64 = std::env::var("BENCH_RATE").ok().and_then(|s| s.parse().ok()).unwrap_or(100);
    let seconds: u64 = std::env::var("BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let deployments: usize = std::env::var("BENCH_DEPLOYMENTS").ok().and_then(|s| s.parse().ok()).unwrap_or(100);

    let mut config = moke_loadtests::bench_config();
    config.outbound.allow_private_targets = vec!["127.0.0.1/32".into()];
    config.workload_quotas.max_deployments_per_cluster = 100_000;
    config.workload_quotas.max_requested_cpu_millis_per_cluster = 100_000_000;
    let (app, pool, base) = start_gateway(config).await?;
    let _agent = moke_loadtests::start_region_agent(&pool, Duration::from_millis(100))?;

    let run = std::process::id();
    let made = app.bootstrap_org(&format!("hooks-{run}"), "Bench").await?;
    let gateway = Gateway {
        base: base.clone(),
        token: made.owner_token.token.clone(),
        client: reqwest::Client::builder().pool_max_idle_per_host(64).build()?,
    };
    let post = reqwest::Method::POST;
    gateway.call(post.clone(), &format!("/v1/orgs/{}/projects", made.org.id), json!({ "name": "shop" })).await?;
    let op = gateway
        .call(
            post.clone(),
            "/v1/projects/shop/clusters",
            json!({ "name": "prod", "spec": { "region": "eu-central-1" } }),
        )
        .await?;
    gateway.finished(&op).await?;
    let op = gateway
        .call(
            post.clone(),
            "/v1/projects/shop/clusters/prod/node-pools",
            json!({ "name": "workers", "spec": { "machine_type": "bm.large", "count": 3 } }),
        )
        .await?;
    gateway.finished(&op).await?;
    gateway
        .call(
            reqwest::Method::PUT,
            "/v1/projects/shop/deploy-policy",
            json!({ "allowed_image_prefixes": ["registry.example.com/shop/"], "allowed_branches": ["main"] }),
        )
        .await?;
    let mut hooks = Vec::new();
    for i in 0..deployments {
        let op = gateway
            .call(
                post.clone(),
                "/v1/projects/shop/clusters/prod/namespaces/default/deployments",
                json!({ "name": format!("app-{i}"), "spec": {
                    "image": "registry.example.com/shop/app:0", "replicas": 2,
                    "strategy": { "max_surge": "1", "max_unavailable": "0" } } }),
            )
            .await?;
        gateway.finished(&op).await?;
        let hook = gateway
            .call(
                post.clone(),
                "/v1/projects/shop/hooks",
                json!({ "name": format!("ci-{i}"), "target": { "cluster": "prod", "deployment": format!("app-{i}") } }),
            )
            .await?;
        hooks.push((
            hook["url"].as_str().context("url")?.to_string(),
            hook["secret"].as_str().context("secret")?.to_string(),
        ));
    }

    // The customer's receiver: records when each rollout event arrives.
    let arrivals: Arc<Mutex<Vec<(Instant, f64)>>> = Arc::default();
    let log = arrivals.clone();
    let receiver = axum::Router::new().fallback(move |body: axum::body::Bytes| {
        let log = log.clone();
        async move {
            let event: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            if let Some(created) =
                event["timestamp"].as_str().and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            {
                let lag = (chrono::Utc::now() - created.to_utc()).num_microseconds().unwrap_or(0) as f64 / 1000.0;
                log.lock().unwrap().push((Instant::now(), lag));
            }
            axum::http::StatusCode::NO_CONTENT
        }
    });
    let receiver_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let receiver_url = format!("http://{}/events", receiver_listener.local_addr()?);
    tokio::spawn(axum::serve(receiver_listener, receiver).into_future());
    gateway
        .call(
            post.clone(),
            &format!("/v1/orgs/{}/webhooks", made.org.id),
            json!({ "url": receiver_url, "event_types": ["deployment.rollout.*"] }),
        )
        .await?;

    println!(
        "moke webhook benchmark: {rate} signed deploy webhooks/s for {seconds} s over {deployments} deployments \
         (2 pods each, simulated region ticking every 100 ms)"
    );
    let hooks = Arc::new(hooks);
    let mut ticker = tokio::time::interval(Duration::from_micros(1_000_000 / rate));
    let mut sends = Vec::new();
    let started = Instant::now();
    for n in 0..(rate * seconds) as usize {
        ticker.tick().await;
        let (hooks, client, base) = (hooks.clone(), gateway.client.clone(), base.clone());
        sends.push(tokio::spawn(async move {
            let (url, secret) = &hooks[n % hooks.len()];
            let body = json!({ "image": format!("registry.example.com/shop/app:{}", n + 1) }).to_string();
            let id = format!("msg_bench_{n}");
            let timestamp = chrono::Utc::now().timestamp();
            let response = client
                .post(format!("{base}{url}"))
                .header("webhook-id", &id)
                .header("webhook-timestamp", timestamp.to_string())
                .header("webhook-signature", sign(secret, &id, timestamp, body.as_bytes()))
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .ok()?;
            if response.status() != reqwest::StatusCode::ACCEPTED {
                return None;
            }
            let op: Value = response.json().await.ok()?;
            op["id"].as_str().map(str::to_string)
        }));
    }
    let mut accepted = Vec::new();
    for send in sends {
        if let Some(id) = send.await? {
            accepted.push(id);
        }
    }
    wait_finished(&pool, &accepted, Duration::from_secs(180)).await?;
    let wave = started.elapsed();
    let (p50, p99, failed) = operation_latency(&pool, &accepted).await?;
    println!(
        "deploy webhooks  {:>5} of {:>5} accepted   webhook → rollout observed p50 {:>7.1} ms   p99 {:>7.1} ms   ({failed} not succeeded, wave {:.1} s)",
        accepted.len(),
        rate * seconds,
        p50,
        p99,
        wave.as_secs_f64()
    );

    // Outbound: every rollout event, delivered and signed.
    let expected: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
         WHERE e.event_type LIKE 'deployment.rollout.%'",
    )
    .fetch_one(&pool)
    .await?;
    let deadline = Instant::now() + Duration::from_secs(60);
    while (arrivals.lock().unwrap().len() as i64) < expected && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let got = arrivals.lock().unwrap().clone();
    let span = match (got.first(), got.last()) {
        (Some(first), Some(last)) => (last.0 - first.0).as_secs_f64().max(0.001),
        _ => f64::NAN,
    };
    let mut lags: Vec<f64> = got.iter().map(|(_, lag)| *lag).collect();
    lags.sort_by(f64::total_cmp);
    let outbound_rate = got.len() as f64 / span;
    println!(
        "event webhooks   {:>5} of {:>5} delivered   {:>7.0} deliveries/s over the wave   event → received p50 {:>7.1} ms   p99 {:>7.1} ms",
        got.len(),
        expected,
        outbound_rate,
        percentile(&lags, 0.5),
        percentile(&lags, 0.99)
    );

    // Capacity: a burst of events written at once, delivered as fast as the dispatcher goes.
    let burst: i64 = std::env::var("BENCH_BURST").ok().and_then(|s| s.parse().ok()).unwrap_or(5000);
    arrivals.lock().unwrap().clear();
    let org = made.org.id.uuid();
    let burst_started = Instant::now();
    sqlx::query(
        "SELECT emit_event($1, 'deployment.rollout.succeeded', jsonb_build_object('burst', n))
         FROM generate_series(1, $2) AS n",
    )
    .bind(org)
    .bind(burst)
    .execute(&pool)
    .await?;
    let deadline = Instant::now() + Duration::from_secs(300);
    while (arrivals.lock().unwrap().len() as i64) < burst && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let got = arrivals.lock().unwrap().clone();
    let burst_seconds = got.last().map_or(f64::NAN, |last| (last.0 - burst_started).as_secs_f64());
    let mut lags: Vec<f64> = got.iter().map(|(_, lag)| *lag).collect();
    lags.sort_by(f64::total_cmp);
    let capacity = got.len() as f64 / burst_seconds;
    println!(
        "event burst      {:>5} of {:>5} delivered   {:>7.0} deliveries/s   event → received p50 {:>7.1} ms   p99 {:>7.1} ms",
        got.len(),
        burst,
        capacity,
        percentile(&lags, 0.5),
        percentile(&lags, 0.99)
    );

    // Baseline: wrk against the same receiver.
    let url = receiver_url.clone();
    match tokio::task::spawn_blocking(move || wrk_requests_per_second(&url)).await? {
        Some(plain) => {
            println!("receiver, plain wrk load    {plain:>10.0} req/s   (wrk -t2 -c32 -d5s)");
            println!(
                "burst deliveries/s / wrk req/s on the same receiver: {:.3}   (during the wave: {:.0}/s, all it offered)",
                capacity / plain,
                outbound_rate
            );
        }
        None => println!("wrk is not installed (apt-get install wrk): no baseline against the receiver"),
    }
    Ok(())
}
