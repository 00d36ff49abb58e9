//! `kube-bench`: a hosted cluster's Kubernetes API with 1 000 pods, beside
//! Moke's REST API, in one run. One gateway and one simulated region agent
//! run in this process; a Moke deployment of `BENCH_PODS` (1 000) replicas
//! runs in a cluster, and then, interleaved so both see the same machine:
//!
//! - `kubectl get pods` (the real kubectl, as customers run it: Table output
//!   in pages of 500), beside `kubectl get --raw /version` (the cost of the
//!   process and its TLS handshake alone);
//! - the two Table pages `kubectl get pods` asks for, read directly (the
//!   server's share of it: the rest is kubectl reading and printing);
//! - the same list read directly (`GET /api/v1/namespaces/default/pods`,
//!   mutual TLS with the kubeconfig's certificate) beside the same pods read
//!   through Moke's REST API (`GET …/deployments/web`, which carries them);
//! - a watch event's latency: a ConfigMap patched, until its watch sees the
//!   change, beside the patch's own round trip.
//!
//! Run through `cargo xtask bench kube`. Environment: `DATABASE_URL`, the
//! gateway's `MOKE_VAULT__*`; optional `BENCH_PODS`, `BENCH_SAMPLES` (30).

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use moke_loadtests::{Gateway, percentile, start_gateway};
use serde_json::{Value, json};

/// What a kubeconfig holds that a client needs.
struct Credentials {
    server: String,
    ca: Vec<u8>,
    certificate: Vec<u8>,
    key: Vec<u8>,
}

/// Reads the one cluster, user and their data out of a kubeconfig Moke wrote.
fn credentials(kubeconfig: &str) -> Result<Credentials> {
    let field = |name: &str| -> Result<String> {
        kubeconfig
            .lines()
            .find_map(|line| {
                line.trim().strip_prefix(&format!("{name}:")).map(|v| v.trim().trim_matches('"').to_string())
            })
            .with_context(|| format!("{name} in the kubeconfig"))
    };
    let decode =
        |name: &str| -> Result<Vec<u8>> { Ok(base64::engine::general_purpose::STANDARD.decode(field(name)?)?) };
    Ok(Credentials {
        server: field("server")?,
        ca: decode("certificate-authority-data")?,
        certificate: decode("client-certificate-data")?,
        key: decode("client-key-data")?,
    })
}

/// Runs kubectl with the kubeconfig; its output, or an error with its stderr.
async fn kubectl(config: &std::path::Path, args: &[&str]) -> Result<String> {
    let output = tokio::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(config)
        .args(args)
        .output()
        .await
        .context("running kubectl")?;
    if !output.status.success() {
        bail!("kubectl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Reads the pods as `kubectl get pods` does (Table, pages of 500, each
/// page asking for the next by its `continue` token); how many rows.
async fn table_pages(cluster: &reqwest::Client, api: &str) -> Result<usize> {
    const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
    let (mut rows, mut next) = (0, String::new());
    loop {
        let page: Value = cluster
            .get(format!("{api}/api/v1/namespaces/default/pods?limit=500&continue={next}"))
            .header("accept", TABLE)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        rows += page["rows"].as_array().map_or(0, Vec::len);
        match page["metadata"]["continue"].as_str().filter(|token| !token.is_empty()) {
            Some(token) => next = token.to_string(),
            None => return Ok(rows),
        }
    }
}

/// Milliseconds `action` took.
async fn timed<F: std::future::Future<Output = Result<T>>, T>(action: F) -> Result<(f64, T)> {
    let started = Instant::now();
    let value = action.await?;
    Ok((started.elapsed().as_secs_f64() * 1000.0, value))
}

fn row(name: &str, samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    let p50 = percentile(samples, 0.5);
    println!("{name:<58} p50 {p50:8.1} ms   p95 {:8.1} ms", percentile(samples, 0.95));
    p50
}

#[tokio::main]
async fn main() -> Result<()> {
    moke_api::install_crypto_provider();
    let pods: i64 = std::env::var("BENCH_PODS").ok().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let samples: usize = std::env::var("BENCH_SAMPLES").ok().and_then(|s| s.parse().ok()).unwrap_or(30);

    let mut config = moke_loadtests::bench_config();
    config.workload_quotas.max_requested_cpu_millis_per_cluster = 100_000_000;
    let (app, pool, base) = start_gateway(config).await?;
    let _agent = moke_loadtests::start_region_agent(&pool, Duration::from_millis(200))?;

    let made = app.bootstrap_org(&format!("kube-{}", std::process::id()), "Bench").await?;
    let gateway = Gateway { base, token: made.owner_token.token.clone(), client: reqwest::Client::new() };
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
    let pool_spec = json!({ "name": "workers", "spec": { "machine_type": "bm.large", "count": 3 } });
    gateway
        .finished(&gateway.call(post.clone(), "/v1/projects/shop/clusters/prod/node-pools", pool_spec).await?)
        .await?;
    let deployment = json!({ "name": "web", "spec": {
        "image": "registry.example.com/shop/web:1", "replicas": pods, "pod_labels": { "app": "web" },
        "resources": { "cpu_millis": 10, "memory_mib": 16 } } });
    let op = gateway
        .call(post.clone(), "/v1/projects/shop/clusters/prod/namespaces/default/deployments", deployment)
        .await?;
    let read_path = format!(
        "/v1/projects/shop/clusters/prod/namespaces/default/deployments/{}",
        op["target"]["id"].as_str().context("target")?
    );
    let started = Instant::now();
    loop {
        let view = gateway.call(reqwest::Method::GET, &read_path, Value::Null).await?;
        if view["status"]["ready_replicas"] == pods {
            break;
        }
        if started.elapsed() > Duration::from_secs(600) {
            bail!("{pods} pods were not ready in 10 minutes: {}", view["status"]);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    println!("kube-bench: {pods} pods ready in {:.1} s", started.elapsed().as_secs_f64());

    let view = gateway.call(reqwest::Method::GET, "/v1/projects/shop/clusters/prod/kubeconfig", Value::Null).await?;
    let kubeconfig = view["kubeconfig"].as_str().context("kubeconfig")?.to_string();
    let config_file = std::env::temp_dir().join(format!("kube-bench-{}.yaml", std::process::id()));
    std::fs::write(&config_file, &kubeconfig)?;
    let credentials = credentials(&kubeconfig)?;
    let mut identity = credentials.certificate.clone();
    identity.push(b'\n');
    identity.extend_from_slice(&credentials.key);
    let cluster = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&credentials.ca)?])
        .identity(reqwest::Identity::from_pem(&identity)?)
        .build()?;
    let api = credentials.server.clone();
    loop {
        let listed = kubectl(&config_file, &["get", "pods", "-n", "default", "--no-headers"]).await?;
        if listed.lines().filter(|l| l.contains("Running")).count() as i64 >= pods {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    // Reads, interleaved.
    let (mut spawn, mut get_pods, mut list, mut rest) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut tables = Vec::new();
    let mut rest_pods = 0;
    for _ in 0..samples {
        spawn.push(timed(kubectl(&config_file, &["get", "--raw", "/version"])).await?.0);
        let (ms, out) = timed(kubectl(&config_file, &["get", "pods", "-n", "default"])).await?;
        if (out.lines().count() as i64) < pods {
            bail!("kubectl get pods listed {} lines", out.lines().count());
        }
        get_pods.push(ms);
        let (ms, rows) = timed(table_pages(&cluster, &api)).await?;
        if (rows as i64) < pods {
            bail!("the Table pages held {rows} rows");
        }
        tables.push(ms);
        let (ms, items) = timed(async {
            let answer: Value = cluster
                .get(format!("{api}/api/v1/namespaces/default/pods"))
                .send()
                .await?
                .error_for_status()?
                .json()
                .await?;
            Ok::<usize, anyhow::Error>(answer["items"].as_array().map_or(0, Vec::len))
        })
        .await?;
        if (items as i64) < pods {
            bail!("the pod list held {items} pods");
        }
        list.push(ms);
        let (ms, view) = timed(gateway.call(reqwest::Method::GET, &read_path, Value::Null)).await?;
        rest_pods = view["status"]["pods"].as_array().map_or(0, Vec::len);
        rest.push(ms);
    }
    println!("kube-bench: reads of {pods} pods, {samples} samples each, interleaved");
    let spawn = row("kubectl get --raw /version (process + TLS, baseline)", &mut spawn);
    let get_pods = row(&format!("kubectl get pods ({pods}, Table, pages of 500)"), &mut get_pods);
    let tables = row(&format!("the Table pages kubectl reads ({pods} rows, mutual TLS)"), &mut tables);
    let list = row(&format!("GET /api/v1/…/pods ({pods}, JSON, mutual TLS)"), &mut list);
    let rest = row(&format!("Moke REST GET deployment ({rest_pods} pods listed, baseline)"), &mut rest);
    println!("ratio kubectl get pods / kubectl baseline: {:.2}", get_pods / spawn);
    println!("ratio kubectl get pods minus baseline / Moke REST read: {:.2}", (get_pods - spawn).max(0.0) / rest);
    println!("ratio cluster API list / Moke REST read: {:.2}", list / rest);
    println!(
        "share of kubectl get pods above its baseline spent in the server's Table pages: {:.2}",
        tables / (get_pods - spawn).max(f64::EPSILON)
    );

    // Watch latency: a patched ConfigMap, until its watch says so.
    let configmaps = format!("{api}/api/v1/namespaces/default/configmaps");
    let made: Value = cluster
        .post(&configmaps)
        .json(
            &json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": "probe" }, "data": { "n": "0" } }),
        )
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let version = made["metadata"]["resourceVersion"].as_str().context("resourceVersion")?;
    let mut watch = cluster
        .get(format!("{configmaps}?watch=1&resourceVersion={version}&fieldSelector=metadata.name%3Dprobe"))
        .send()
        .await?
        .error_for_status()?;
    let (mut seen, mut written) = (Vec::new(), Vec::new());
    let mut pending = String::new();
    for n in 1..=samples {
        let expected = n.to_string();
        let started = Instant::now();
        let patch = json!({ "data": { "n": expected } });
        cluster
            .patch(format!("{configmaps}/probe"))
            .header("content-type", "application/merge-patch+json")
            .body(patch.to_string())
            .send()
            .await?
            .error_for_status()?;
        written.push(started.elapsed().as_secs_f64() * 1000.0);
        'event: loop {
            while let Some(end) = pending.find('\n') {
                let line: String = pending.drain(..=end).collect();
                let event: Value = serde_json::from_str(&line)?;
                if event["object"]["data"]["n"] == expected.as_str() {
                    break 'event;
                }
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), watch.chunk()).await?.context("watch chunk")?;
            pending.push_str(&String::from_utf8_lossy(&chunk.context("the watch ended")?));
        }
        seen.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    println!("kube-bench: watch events with {pods} pods in the cluster, {samples} changes");
    let seen = row("change → watch event (PATCH sent to event read)", &mut seen);
    let written = row("PATCH round trip (baseline)", &mut written);
    println!("ratio watch event latency / PATCH round trip: {:.2}", seen / written);
    let _ = std::fs::remove_file(config_file);
    Ok(())
}
