//! Shared pieces of the load tests: starting the gateway under test and
//! driving it with concurrent workers.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// A required environment variable, with a hint when it is missing.
pub fn env(name: &str) -> Result<String> {
    std::env::var(name).with_context(|| format!("{name} is not set; run through `cargo xtask bench api`"))
}

/// The server under test, stopped when dropped.
pub struct Server {
    child: Child,
    pub base: String,
    pub org: String,
    pub token: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `moke-server dev` on a free port with extra flags and environment,
/// and reads the organization and token it prints.
pub fn start_server(args: &[&str], envs: &[(&str, &str)]) -> Result<Server> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let mut child = Command::new(env("BENCH_SERVER_BIN")?)
        .args(["dev", "--org", "bench", "--listen", &format!("127.0.0.1:{port}")])
        .args(args)
        .envs(envs.iter().copied())
        .env("MOKE_TELEMETRY__LOG_FILTER", "warn")
        .env("MOKE_DATABASE__MAX_CONNECTIONS", "32")
        // The benchmarks measure the gateway, not its rate limits.
        .env("MOKE_RATE_LIMITS__PER_PRINCIPAL_PER_SECOND", "100000000")
        .env("MOKE_RATE_LIMITS__PER_PRINCIPAL_BURST", "100000000")
        .env("MOKE_RATE_LIMITS__PER_IP_PER_SECOND", "100000000")
        .env("MOKE_RATE_LIMITS__PER_IP_BURST", "100000000")
        .stdout(Stdio::piped())
        .spawn()
        .context("could not start moke-server")?;
    let (mut org, mut token) = (String::new(), String::new());
    let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    for line in lines.by_ref() {
        let line = line?;
        if let Some(rest) = line.trim().strip_prefix("organization:") {
            org = rest.split('(').nth(1).unwrap_or_default().trim_end_matches(')').to_string();
        }
        if let Some(rest) = line.trim().strip_prefix("owner token:") {
            token = rest.split_whitespace().next().unwrap_or_default().to_string();
            break;
        }
    }
    // Keep reading what it prints, so its writes never hit a closed pipe.
    std::thread::spawn(move || lines.for_each(drop));
    if token.is_empty() {
        bail!("moke-server dev did not print a token");
    }
    Ok(Server { child, base: format!("http://127.0.0.1:{port}"), org, token })
}

/// The gateway configuration the in-process benchmarks run: defaults, a
/// pool for 32 connections, rate limits lifted (they would otherwise be
/// what is measured), and the benchmark's own Vault key path.
pub fn bench_config() -> moke_api::config::Config {
    let mut config = moke_api::config::Config::defaults();
    config.database.max_connections = 32;
    let limits = &mut config.rate_limits;
    for limit in [
        &mut limits.per_principal_per_second,
        &mut limits.per_principal_burst,
        &mut limits.per_ip_per_second,
        &mut limits.per_ip_burst,
        &mut limits.login_per_ip_per_minute,
        &mut limits.login_burst,
    ] {
        *limit = 100_000_000;
    }
    config.vault.kv_path = "moke-bench".into();
    config
}

/// What one load scenario measured.
pub struct Stats {
    pub requests: usize,
    pub errors: usize,
    pub throughput: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
}

/// Runs `connections` workers for `duration`, each calling `request(worker, i)`.
pub async fn load<F, Fut>(connections: usize, duration: Duration, request: F) -> Stats
where
    F: Fn(usize, usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let request = Arc::new(request);
    let started = Instant::now();
    let deadline = started + duration;
    let workers: Vec<_> = (0..connections)
        .map(|worker| {
            let request = request.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut errors = 0;
                let mut i = 0;
                while Instant::now() < deadline {
                    let begin = Instant::now();
                    if !request(worker, i).await {
                        errors += 1;
                    }
                    latencies.push(begin.elapsed());
                    i += 1;
                }
                (latencies, errors)
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut errors = 0;
    for worker in workers {
        let (latencies, worker_errors) = worker.await.expect("worker");
        all.extend(latencies);
        errors += worker_errors;
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort();
    let at = |q: f64| all.get(((all.len() as f64 * q) as usize).min(all.len().saturating_sub(1)));
    let ms = |d: Option<&Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64() * 1000.0);
    Stats {
        requests: all.len(),
        errors,
        throughput: all.len() as f64 / elapsed,
        p50_ms: ms(at(0.5)),
        p95_ms: ms(at(0.95)),
        p99_ms: ms(at(0.99)),
    }
}

/// One line of results.
pub fn print_row(name: &str, stats: &Stats) {
    println!(
        "{name:<28} {:>10.0} req/s   p50 {:>6.2} ms   p99 {:>6.2} ms   ({} requests, {} errors)",
        stats.throughput, stats.p50_ms, stats.p99_ms, stats.requests, stats.errors
    );
}

/// A gateway under test as its REST clients see it.
pub struct Gateway {
    pub base: String,
    pub token: String,
    pub client: reqwest::Client,
}

impl Gateway {
    /// One authenticated call; a non-2xx answer is an error naming the path.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: serde_json::Value,
    ) -> Result<serde_json::Value> {
        let response = self
            .client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await?;
        let status = response.status();
        let body: serde_json::Value = response.json().await.unwrap_or(serde_json::Value::Null);
        if !status.is_success() {
            bail!("{path}: {status} {body}");
        }
        Ok(body)
    }

    /// Waits for an Operation the gateway answered with; it must succeed.
    pub async fn finished(&self, op: &serde_json::Value) -> Result<()> {
        let id = op["id"].as_str().context("operation id")?;
        let done =
            self.call(reqwest::Method::GET, &format!("/v1/operations/{id}?wait=25s"), serde_json::Value::Null).await?;
        if done["status"] != "succeeded" {
            bail!("operation did not succeed: {done}");
        }
        Ok(())
    }
}

/// Starts a gateway in this process on a free loopback port (migrating its
/// database first); returns it, its database pool and its base URL.
pub async fn start_gateway(
    config: moke_api::config::Config,
) -> Result<(Arc<moke_api::app::App>, sqlx::PgPool, String)> {
    let pool = moke_api::server::connect(&config).await?;
    moke_api::server::migrate(&pool).await?;
    let vault = moke_api::vault::Vault::connect(&config).await?;
    let app = moke_api::app::App::new(pool.clone(), Arc::new(config), vault);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let serving = app.clone();
    tokio::spawn(async move {
        if let Err(error) = moke_api::server::serve(serving, listener, std::future::pending()).await {
            eprintln!("gateway stopped: {error:#}");
        }
    });
    Ok((app, pool, base))
}

/// Starts a simulated `eu-central-1` region agent in this process on the
/// gateway's embedded queue, ticking every `tick`.
pub fn start_region_agent(pool: &sqlx::PgPool, tick: std::time::Duration) -> Result<Arc<moke_region::Agent>> {
    let mut config = moke_region::AgentConfig::new(
        "eu-central-1",
        vec!["eu-central-1a".into(), "eu-central-1b".into(), "eu-central-1c".into()],
    );
    config.tick_interval = tick;
    config.poll_interval = std::time::Duration::from_millis(20);
    let agent = Arc::new(moke_region::Agent::new(config, moke_region::Transport::Postgres(pool.clone()))?);
    let running = agent.clone();
    tokio::spawn(async move { running.run(Default::default()).await });
    Ok(agent)
}

/// Waits until every Operation in `ids` (`op_…` as the API shows them) has
/// finished; fails after `timeout`.
pub async fn wait_finished(db: &sqlx::PgPool, ids: &[String], timeout: Duration) -> Result<()> {
    let hex: Vec<String> = ids.iter().map(|id| id.trim_start_matches("op_").to_string()).collect();
    let deadline = Instant::now() + timeout;
    loop {
        let open: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM operations WHERE replace(id::text, '-', '') = ANY($1) AND finished_at IS NULL",
        )
        .bind(&hex)
        .fetch_one(db)
        .await?;
        if open == 0 {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("{open} operations did not finish within {} s", timeout.as_secs());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Commit → finished of Operations, from their own timestamps: p50, p99 and
/// how many did not succeed.
pub async fn operation_latency(db: &sqlx::PgPool, ids: &[String]) -> Result<(f64, f64, i64)> {
    let hex: Vec<String> = ids.iter().map(|id| id.trim_start_matches("op_").to_string()).collect();
    Ok(sqlx::query_as(
        "SELECT coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), 'NaN'),
                coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms), 'NaN'),
                count(*) FILTER (WHERE status <> 'succeeded')
         FROM (SELECT status, (EXTRACT(EPOCH FROM finished_at - created_at) * 1000)::float8 AS ms
               FROM operations WHERE replace(id::text, '-', '') = ANY($1)) latencies",
    )
    .bind(&hex)
    .fetch_one(db)
    .await?)
}

/// The `q` quantile of sorted samples (NaN when there are none).
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted.get(((sorted.len() as f64 * q) as usize).min(sorted.len().saturating_sub(1))).copied().unwrap_or(f64::NAN)
}

/// Requests/s that `wrk` (2 threads, 32 connections, 5 s) gets from `url`,
/// or `None` when `wrk` is not installed (`apt-get install wrk`).
pub fn wrk_requests_per_second(url: &str) -> Option<f64> {
    let output = Command::new("wrk").args(["-t2", "-c32", "-d5s", url]).output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines().find_map(|line| line.trim().strip_prefix("Requests/sec:")).and_then(|n| n.trim().parse().ok())
}
