//! `region-bench`: how fast committed changes reach a region and come back,
//! on each transport. For the embedded Postgres queue and for NATS
//! JetStream in turn, it starts `moke-server dev` (with its in-process
//! simulated regions), sends node-pool changes at a steady rate, and
//! measures commit → operation finished (agent applied the command and its
//! report was ingested) from the operations' own timestamps, plus the p95 of
//! status reads made during the wave. Run through `cargo xtask bench region`.
//!
//! Environment: `DATABASE_URL`, `NATS_URL`, `BENCH_SERVER_BIN`; optional
//! `BENCH_RATE` (commands/s, default 500) and `BENCH_SECONDS` (default 10).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use moke_loadtests::{Server, env, start_server};
use serde_json::{Value, json};
use tokio::sync::Mutex;

async fn ready(client: &reqwest::Client, server: &Server) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while client.get(format!("{}/readyz", server.base)).send().await.is_err() {
        if Instant::now() > deadline {
            bail!("moke-server did not become ready");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

async fn call(
    client: &reqwest::Client,
    server: &Server,
    method: reqwest::Method,
    path: &str,
    body: Value,
) -> Result<Value> {
    let response =
        client.request(method, format!("{}{path}", server.base)).bearer_auth(&server.token).json(&body).send().await?;
    let status = response.status();
    let body: Value = response.json().await?;
    if !status.is_success() {
        bail!("{path}: {status} {body}");
    }
    Ok(body)
}

async fn wait_for(client: &reqwest::Client, server: &Server, op: &Value) -> Result<()> {
    let id = op["id"].as_str().context("operation id")?;
    let done =
        call(client, server, reqwest::Method::GET, &format!("/v1/operations/{id}?wait=30s"), Value::Null).await?;
    if done["status"] != "succeeded" {
        bail!("operation did not succeed: {done}");
    }
    Ok(())
}

struct Outcome {
    sent: usize,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    read_p95_ms: f64,
}

async fn wave(backend: &str, db: &sqlx::PgPool, rate: u64, seconds: u64) -> Result<Outcome> {
    let prefix = format!("bench{}", std::process::id());
    let nats_url = std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".into());
    let server = start_server(
        &[],
        &[("MOKE_QUEUE__BACKEND", backend), ("MOKE_QUEUE__NATS_URL", &nats_url), ("MOKE_QUEUE__NATS_PREFIX", &prefix)],
    )?;
    let client = reqwest::Client::builder().pool_max_idle_per_host(64).build()?;
    ready(&client, &server).await?;
    let project = format!("wave-{backend}-{}", std::process::id());
    call(
        &client,
        &server,
        reqwest::Method::POST,
        &format!("/v1/orgs/{}/projects", server.org),
        json!({ "name": project }),
    )
    .await?;
    let op = call(
        &client,
        &server,
        reqwest::Method::POST,
        &format!("/v1/projects/{project}/clusters"),
        json!({ "name": "target", "spec": { "region": "eu-central-1" } }),
    )
    .await?;
    wait_for(&client, &server, &op).await?;
    let pools = format!("/v1/projects/{project}/clusters/target/node-pools");
    let op = call(
        &client,
        &server,
        reqwest::Method::POST,
        &pools,
        json!({ "name": "workers", "spec": { "machine_type": "bm.small", "count": 1 } }),
    )
    .await?;
    wait_for(&client, &server, &op).await?;

    // Status reads during the wave.
    let reads = Arc::new(Mutex::new(Vec::new()));
    let stop = Instant::now() + Duration::from_secs(seconds);
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (client, reads) = (client.clone(), reads.clone());
            let url = format!("{}/v1/projects/{project}/clusters/target", server.base);
            let token = server.token.clone();
            tokio::spawn(async move {
                while Instant::now() < stop {
                    let began = Instant::now();
                    if client.get(&url).bearer_auth(&token).send().await.is_ok_and(|r| r.status().is_success()) {
                        reads.lock().await.push(began.elapsed());
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            })
        })
        .collect();

    // The wave: node-pool scale changes at a steady rate, each a command.
    let mut ticker = tokio::time::interval(Duration::from_micros(1_000_000 / rate));
    let mut sends = Vec::new();
    let pool_path = format!("{pools}/workers");
    for i in 0..(rate * seconds) {
        ticker.tick().await;
        let (client, url, token) = (client.clone(), format!("{}{pool_path}", server.base), server.token.clone());
        sends.push(tokio::spawn(async move {
            let body = json!({ "spec": { "count": 1 + (i % 3) } });
            let response = client.patch(&url).bearer_auth(&token).json(&body).send().await.ok()?;
            let op: Value = response.json().await.ok()?;
            op["id"].as_str().map(str::to_string)
        }));
    }
    let mut ids = Vec::new();
    for send in sends {
        if let Some(id) = send.await? {
            ids.push(id);
        }
    }
    for reader in readers {
        reader.await?;
    }
    let uuids: Vec<uuid_text::Uuid> = ids.iter().filter_map(|id| uuid_text::from_prefixed(id)).collect();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let open: i64 =
            sqlx::query_scalar("SELECT count(*) FROM operations WHERE id::text = ANY($1) AND finished_at IS NULL")
                .bind(&uuids)
                .fetch_one(db)
                .await?;
        if open == 0 {
            break;
        }
        if Instant::now() > deadline {
            bail!("{open} operations did not finish within 120 s");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (p50, p99, max): (f64, f64, f64) = sqlx::query_as(
        "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), percentile_cont(0.99) WITHIN GROUP (ORDER BY ms), max(ms)
         FROM (SELECT (EXTRACT(EPOCH FROM finished_at - created_at) * 1000)::float8 AS ms
               FROM operations WHERE id::text = ANY($1)) latencies",
    )
    .bind(&uuids)
    .fetch_one(db)
    .await?;
    let mut reads = reads.lock().await.clone();
    reads.sort();
    let read_p95_ms = reads.get(reads.len() * 95 / 100).map_or(f64::NAN, |d| d.as_secs_f64() * 1000.0);
    Ok(Outcome { sent: ids.len(), p50_ms: p50, p99_ms: p99, max_ms: max, read_p95_ms })
}

/// Operation ids travel as `op_<32 hex>`; the database keeps the UUID.
mod uuid_text {
    pub type Uuid = String;
    pub fn from_prefixed(id: &str) -> Option<Uuid> {
        let hex = id.strip_prefix("op_")?;
        (hex.len() == 32)
            .then(|| format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32]))
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let rate: u64 = std::env::var("BENCH_RATE").ok().and_then(|s| s.parse().ok()).unwrap_or(500);
    let seconds: u64 = std::env::var("BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let db = sqlx::postgres::PgPoolOptions::new().max_connections(2).connect(&env("DATABASE_URL")?).await?;
    println!("moke region benchmark: node-pool changes at {rate}/s for {seconds} s, in-process simulated regions");
    for backend in ["postgres", "nats"] {
        let outcome = wave(backend, &db, rate, seconds).await?;
        println!(
            "{backend:<9} {:>6} commands   commit → finished p50 {:>7.1} ms   p99 {:>7.1} ms   max {:>7.1} ms   status read p95 {:>6.1} ms (target ≤ 50)",
            outcome.sent, outcome.p50_ms, outcome.p99_ms, outcome.max_ms, outcome.read_p95_ms
        );
    }
    Ok(())
}
