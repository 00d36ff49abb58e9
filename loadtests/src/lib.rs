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
