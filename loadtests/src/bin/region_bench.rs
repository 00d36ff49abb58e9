//! `region-bench`: how fast committed changes reach a region, and how fast
//! a release wave is fully observed, on one queue transport
//! (`region-bench postgres` or `region-bench nats`; `cargo xtask bench
//! region` runs both on fresh databases).
//!
//! A gateway and the simulated region's agent run in this process. The
//! setup spreads `BENCH_DEPLOYMENTS` (10 000) one-pod deployments over
//! `BENCH_CLUSTERS` (10) clusters, so no single row or cluster is what is
//! measured. Then:
//! - **steady**: scale commands at `BENCH_RATE` (500/s), then at 200/s
//!   (below what two cores accept), each for `BENCH_SECONDS` (10 s) and each
//!   to another deployment. Queue lag is measured by the agent (the
//!   command's written-at stamp → taken off the queue); commit → finished
//!   comes from the Operations' own timestamps. The agent has its own small
//!   database pool, as the separate process it is in production.
//! - **release wave**: a new image for every deployment, sent by 64
//!   concurrent clients as fast as the gateway accepts them (a 503 is
//!   retried after its `Retry-After`); measured until every rollout is
//!   observed (its Operation finished and `observed_generation` caught up).
//!
//! Both phases read deployment status in the background (4 readers, 50
//! reads/s each) and report its p95: the target is ≤ 50 ms.
//!
//! Environment: `DATABASE_URL`, the gateway's `MOKE_VAULT__*`, `NATS_URL`
//! (for `nats`); the optional `BENCH_*` above.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use moke_loadtests::{Gateway, operation_latency, percentile, start_gateway, wait_finished};
use serde_json::{Value, json};

const REGION: &str = "eu-central-1";

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn deployment_path(clusters: usize, i: usize) -> String {
    format!("/v1/projects/wave/clusters/c{}/namespaces/default/deployments/app-{i}", i % clusters)
}

/// Milliseconds, sorted.
fn sorted_ms(durations: impl IntoIterator<Item = Duration>) -> Vec<f64> {
    let mut ms: Vec<f64> = durations.into_iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    ms
}

/// Background status reads until `stop` is set; their latencies.
struct Readers {
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<Vec<Duration>>>,
}

impl Readers {
    fn start(gateway: &Arc<Gateway>, clusters: usize, deployments: usize) -> Readers {
        let stop = Arc::new(AtomicBool::new(false));
        let tasks = (0..4)
            .map(|reader| {
                let (gateway, stop) = (gateway.clone(), stop.clone());
                tokio::spawn(async move {
                    let mut latencies = Vec::new();
                    let mut i = reader * 7919;
                    while !stop.load(Ordering::Relaxed) {
                        i = (i + 104_729) % deployments;
                        let url = format!("{}{}", gateway.base, deployment_path(clusters, i));
                        let began = Instant::now();
                        let answer = gateway.client.get(&url).bearer_auth(&gateway.token).send().await;
                        if answer.is_ok_and(|r| r.status().is_success()) {
                            latencies.push(began.elapsed());
                        }
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    latencies
                })
            })
            .collect();
        Readers { stop, tasks }
    }

    /// Stops them; the read p95 in ms and how many reads.
    async fn p95(self) -> Result<(f64, usize)> {
        self.stop.store(true, Ordering::Relaxed);
        let mut all = Vec::new();
        for task in self.tasks {
            all.extend(task.await?);
        }
        let ms = sorted_ms(all);
        Ok((percentile(&ms, 0.95), ms.len()))
    }
}

/// Sends one mutation, waiting out 503s as a CI client would; the
/// Operation id and how many 503s it met.
async fn send_change(gateway: &Gateway, method: reqwest::Method, path: &str, body: &Value) -> Result<(String, u32)> {
    let mut refused = 0;
    loop {
        let response = gateway
            .client
            .request(method.clone(), format!("{}{path}", gateway.base))
            .bearer_auth(&gateway.token)
            .json(body)
            .send()
            .await?;
        if response.status() == reqwest::StatusCode::SERVICE_UNAVAILABLE {
            refused += 1;
            let wait =
                response.headers().get("retry-after").and_then(|v| v.to_str().ok()?.parse::<u64>().ok()).unwrap_or(1);
            tokio::time::sleep(Duration::from_secs(wait)).await;
            continue;
        }
        let status = response.status();
        let op: Value = response.json().await?;
        if !status.is_success() {
            bail!("{path}: {status} {op}");
        }
        return Ok((op["id"].as_str().context("operation id")?.to_string(), refused));
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    moke_api::install_crypto_provider();
    let backend = std::env::args().nth(1).unwrap_or_else(|| "postgres".into());
    let clusters = setting("BENCH_CLUSTERS", 10);
    let deployments = setting("BENCH_DEPLOYMENTS", 10_000);
    let rate = setting("BENCH_RATE", 500);
    let seconds = setting("BENCH_SECONDS", 10);

    let mut config = moke_loadtests::bench_config();
    config.workload_quotas.max_deployments_per_cluster = 1_000_000;
    config.workload_quotas.max_requested_cpu_millis_per_cluster = 1_000_000_000;
    config.quotas.max_clusters = 1_000;
    config.quotas.max_nodes = 100_000;
    config.quotas.max_vcpus = 10_000_000;
    let prefix = format!("bench{}", std::process::id());
    let nats_url = std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".into());
    match backend.as_str() {
        "postgres" => {}
        "nats" => {
            config.queue.backend = "nats".into();
            config.queue.nats_url = moke_api::config::Secret::new(nats_url.clone());
            config.queue.nats_prefix = prefix.clone();
        }
        other => bail!("unknown backend {other:?}: postgres or nats"),
    }
    let (app, db, base) = start_gateway(config).await?;
    let zones = ["a", "b", "c"].iter().map(|z| format!("{REGION}{z}")).collect();
    let mut agent_config = moke_region::AgentConfig::new(REGION, zones);
    agent_config.tick_interval = Duration::from_millis(100);
    agent_config.poll_interval = Duration::from_millis(20);
    agent_config.batch = 200;
    let transport = if backend == "nats" {
        moke_region::Transport::Nats(Box::new(moke_region::NatsLink::connect(&nats_url, &prefix, REGION).await?))
    } else {
        // Its own pool, as the separate process it is in production.
        let url = std::env::var("DATABASE_URL").context("DATABASE_URL")?;
        moke_region::Transport::Postgres(sqlx::postgres::PgPoolOptions::new().max_connections(4).connect(&url).await?)
    };
    let agent = Arc::new(moke_region::Agent::new(agent_config, transport)?);
    let running = agent.clone();
    tokio::spawn(async move { running.run(Default::default()).await });

    let made = app.bootstrap_org(&format!("wave-{}", std::process::id()), "Bench").await?;
    let gateway = Arc::new(Gateway {
        base,
        token: made.owner_token.token.clone(),
        client: reqwest::Client::builder().pool_max_idle_per_host(128).build()?,
    });
    let post = reqwest::Method::POST;
    gateway.call(post.clone(), &format!("/v1/orgs/{}/projects", made.org.id), json!({ "name": "wave" })).await?;

    println!(
        "moke region benchmark ({backend}): {deployments} one-pod deployments over {clusters} clusters, \
         simulated region ticking every 100 ms"
    );
    let setup = Instant::now();
    let mut ops = Vec::new();
    for c in 0..clusters {
        ops.push(
            gateway
                .call(
                    post.clone(),
                    "/v1/projects/wave/clusters",
                    json!({ "name": format!("c{c}"), "spec": { "region": REGION } }),
                )
                .await?,
        );
    }
    for op in &ops {
        gateway.finished(op).await?;
    }
    // Room for every pod twice over (the wave surges one pod per deployment).
    let nodes = (deployments / clusters * 2 * 10).div_ceil(32_000).max(1) * 3;
    let mut ops = Vec::new();
    for c in 0..clusters {
        ops.push(
            gateway
                .call(
                    post.clone(),
                    &format!("/v1/projects/wave/clusters/c{c}/node-pools"),
                    json!({ "name": "workers", "spec": { "machine_type": "bm.medium", "count": nodes } }),
                )
                .await?,
        );
    }
    for op in &ops {
        gateway.finished(op).await?;
    }
    let created = run_changes(&gateway, deployments, 32, move |i| {
        (
            reqwest::Method::POST,
            format!("/v1/projects/wave/clusters/c{}/namespaces/default/deployments", i % clusters),
            json!({ "name": format!("app-{i}"), "spec": {
                "image": "registry.example.com/wave/app:1", "replicas": 1,
                "resources": { "cpu_millis": 10, "memory_mib": 16 },
                "strategy": { "max_surge": "1", "max_unavailable": "0" } } }),
        )
    })
    .await?;
    wait_finished(&db, &created.ids, Duration::from_secs(600)).await?;
    println!("setup: {} deployments running after {:.1} s", created.ids.len(), setup.elapsed().as_secs_f64());

    // Steady: one scale command every 1/rate s, each to another deployment;
    // at the rate asked, then at 200/s (below what two cores accept).
    let mut first = 0;
    for rate in [rate, 200] {
        steady(&gateway, &agent, &db, clusters, deployments, first, rate, seconds).await?;
        first += rate * seconds;
    }

    // Release wave: a new image everywhere, as fast as it is accepted.
    agent.take_command_lags();
    let readers = Readers::start(&gateway, clusters, deployments);
    let began = Instant::now();
    let wave = run_changes(&gateway, deployments, 64, move |i| {
        (
            reqwest::Method::PATCH,
            deployment_path(clusters, i),
            json!({ "spec": { "image": "registry.example.com/wave/app:2" } }),
        )
    })
    .await?;
    let accepted_in = began.elapsed().as_secs_f64();
    wait_finished(&db, &wave.ids, Duration::from_secs(1200)).await?;
    let behind: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM deployments d JOIN clusters c ON c.id = d.cluster_id
         WHERE c.org_id = $1 AND d.observed_generation < d.generation",
    )
    .bind(made.org.id.uuid())
    .fetch_one(&db)
    .await?;
    let observed_in = began.elapsed().as_secs_f64();
    let (read_p95, reads) = readers.p95().await?;
    let lags = sorted_ms(agent.take_command_lags());
    let (p50, p99, failed) = operation_latency(&db, &wave.ids).await?;
    println!(
        "wave      {:>6} updates accepted in {accepted_in:.1} s ({:.0}/s, {} × 503)   fully observed after {observed_in:.1} s   \
         write → agent p50 {:>7.1} ms   p99 {:>7.1} ms   commit → finished p50 {p50:>7.1} ms   p99 {p99:>7.1} ms   \
         ({failed} not succeeded, {behind} behind)   status read p95 {read_p95:>5.1} ms ({reads} reads; target ≤ 50)",
        wave.ids.len(),
        wave.ids.len() as f64 / accepted_in,
        wave.refused,
        percentile(&lags, 0.5),
        percentile(&lags, 0.99),
    );
    if backend == "nats" {
        let js = async_nats::jetstream::new(async_nats::connect(&nats_url).await?);
        let _ = js.delete_stream(moke_proto::subjects::command_stream(&prefix, REGION)).await;
        let _ = js.delete_stream(moke_proto::subjects::status_stream(&prefix)).await;
    }
    Ok(())
}

/// One steady phase: `rate` scale commands/s for `seconds`, each to another
/// deployment starting at `first`.
#[allow(clippy::too_many_arguments)]
async fn steady(
    gateway: &Arc<Gateway>,
    agent: &moke_region::Agent,
    db: &sqlx::PgPool,
    clusters: usize,
    deployments: usize,
    first: usize,
    rate: usize,
    seconds: usize,
) -> Result<()> {
    agent.take_command_lags();
    let readers = Readers::start(gateway, clusters, deployments);
    let mut ticker = tokio::time::interval(Duration::from_micros(1_000_000 / rate as u64));
    let mut sends = Vec::new();
    let began = Instant::now();
    for i in first..first + rate * seconds {
        ticker.tick().await;
        let gateway = gateway.clone();
        sends.push(tokio::spawn(async move {
            let path = format!("{}/scale", deployment_path(clusters, i % deployments));
            send_change(&gateway, reqwest::Method::POST, &path, &json!({ "replicas": 2 })).await
        }));
    }
    let mut ids = Vec::new();
    let mut refused = 0;
    for send in sends {
        let (id, r) = send.await??;
        ids.push(id);
        refused += r;
    }
    let accepted = ids.len() as f64 / began.elapsed().as_secs_f64();
    wait_finished(db, &ids, Duration::from_secs(600)).await?;
    let (read_p95, reads) = readers.p95().await?;
    let lags = sorted_ms(agent.take_command_lags());
    let (p50, p99, failed) = operation_latency(db, &ids).await?;
    println!(
        "steady {rate:>3}/s {:>6} commands, accepted at {accepted:.0}/s ({refused} × 503)   write → agent p50 {:>7.1} ms   p99 {:>7.1} ms   \
         commit → finished p50 {p50:>7.1} ms   p99 {p99:>7.1} ms   ({failed} not succeeded)   status read p95 {read_p95:>5.1} ms ({reads} reads)",
        ids.len(),
        percentile(&lags, 0.5),
        percentile(&lags, 0.99),
    );
    Ok(())
}

/// What a batch of changes left behind.
struct Changes {
    ids: Vec<String>,
    refused: u32,
}

/// Sends `count` changes (`change(i)` is the i-th) over `workers`
/// concurrent clients, as fast as they are accepted.
async fn run_changes(
    gateway: &Arc<Gateway>,
    count: usize,
    workers: usize,
    change: impl Fn(usize) -> (reqwest::Method, String, Value) + Send + Sync + 'static,
) -> Result<Changes> {
    let next = Arc::new(AtomicUsize::new(0));
    let change = Arc::new(change);
    let results = Arc::new(Mutex::new(Changes { ids: Vec::with_capacity(count), refused: 0 }));
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            let (gateway, next, change, results) = (gateway.clone(), next.clone(), change.clone(), results.clone());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        return anyhow::Ok(());
                    }
                    let (method, path, body) = change(i);
                    let (id, refused) = send_change(&gateway, method, &path, &body).await?;
                    let mut results = results.lock().expect("results lock");
                    results.ids.push(id);
                    results.refused += refused;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await??;
    }
    let mut results = results.lock().expect("results lock");
    Ok(Changes { ids: std::mem::take(&mut results.ids), refused: results.refused })
}
