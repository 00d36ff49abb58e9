//! `api-bench`: measures the gateway's authenticated read of a cluster and
//! create of a project at 32 concurrent connections over REST, gRPC and
//! GraphQL, and beside them pgbench select-only and one-row inserts against
//! the same Postgres, then prints the ratios. Run through `cargo xtask bench api`, which builds release binaries
//! and provides the database.
//!
//! Environment: `DATABASE_URL`, `BENCH_SERVER_BIN`, `PGBENCH`, `PGBENCH_URL`;
//! optional `BENCH_SECONDS` (default 10) and `BENCH_CONNECTIONS` (default 32).

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use moke_loadtests::{env, load, print_row, start_server};
use serde_json::{Value, json};

/// The gRPC clients one worker calls through.
type GrpcClients = (
    moke_proto::v1::cluster_service_client::ClusterServiceClient<tonic::transport::Channel>,
    moke_proto::v1::project_service_client::ProjectServiceClient<tonic::transport::Channel>,
);

/// Clients for `workers` workers over `channels` channels (connections),
/// worker `n` on channel `n % channels`.
async fn grpc_clients(base: &str, channels: usize, workers: usize) -> Result<Vec<GrpcClients>> {
    let mut opened = Vec::new();
    for _ in 0..channels {
        opened.push(tonic::transport::Channel::from_shared(base.to_string())?.connect().await?);
    }
    Ok((0..workers)
        .map(|worker| {
            let channel = opened[worker % channels].clone();
            (
                moke_proto::v1::cluster_service_client::ClusterServiceClient::new(channel.clone()),
                moke_proto::v1::project_service_client::ProjectServiceClient::new(channel),
            )
        })
        .collect())
}

fn run_pgbench(args: &[&str]) -> Result<String> {
    let output = Command::new(env("PGBENCH")?).args(args).arg(env("PGBENCH_URL")?).output()?;
    if !output.status.success() {
        bail!("pgbench failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Runs pgbench and returns its transactions per second and mean latency.
fn pgbench(args: &[&str]) -> Result<(f64, f64)> {
    let text = run_pgbench(args)?;
    let number_after = |prefix: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(prefix))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<f64>().ok())
    };
    let tps = number_after("tps = ").context("pgbench printed no tps")?;
    Ok((tps, number_after("latency average = ").unwrap_or(f64::NAN)))
}

#[tokio::main]
async fn main() -> Result<()> {
    moke_api::install_crypto_provider();
    let seconds: u64 = std::env::var("BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let connections: usize = std::env::var("BENCH_CONNECTIONS").ok().and_then(|s| s.parse().ok()).unwrap_or(32);
    let duration = Duration::from_secs(seconds);
    // The API alone: no region agents polling beside it.
    let server = start_server(&["--no-regions"], &[])?;
    let client = reqwest::Client::builder().pool_max_idle_per_host(connections).build()?;
    let deadline = Instant::now() + Duration::from_secs(20);
    while client.get(format!("{}/readyz", server.base)).send().await.is_err() {
        if Instant::now() > deadline {
            bail!("moke-server did not become ready");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let post = |path: &str, body: Value| {
        client.post(format!("{}{path}", server.base)).bearer_auth(&server.token).json(&body).send()
    };
    let project: Value =
        post(&format!("/v1/orgs/{}/projects", server.org), json!({ "name": "bench" })).await?.json().await?;
    let project_id = project["id"].as_str().context("project")?.to_string();
    let op: Value = post(
        &format!("/v1/projects/{project_id}/clusters"),
        json!({ "name": "target", "spec": { "region": "eu-central-1" } }),
    )
    .await?
    .json()
    .await?;
    let cluster_id = op["target"]["id"].as_str().context("cluster")?.to_string();

    println!("moke api benchmark: {connections} connections, {seconds} s per scenario, release build, one machine");
    let get_url = format!("{}/v1/projects/{project_id}/clusters/{cluster_id}", server.base);
    let (c, token) = (client.clone(), server.token.clone());
    let get = load(connections, duration, move |_, _| {
        let request = c.get(&get_url).bearer_auth(&token).send();
        async move { succeeded(request.await, 200).await }
    })
    .await;
    print_row("GET cluster (cluster_view)", &get);

    // The same two operations over gRPC, as gRPC clients call: the workers
    // share `BENCH_GRPC_CHANNELS` channels (default 2, one per core), each
    // one HTTP/2 connection carrying many calls at once. Then, to show what
    // multiplexing is worth, a connection per worker (one call at a time on
    // each, as HTTP/1.1 must).
    let channels: usize = std::env::var("BENCH_GRPC_CHANNELS").ok().and_then(|s| s.parse().ok()).unwrap_or(2);
    let shared = Arc::new(grpc_clients(&server.base, channels.clamp(1, connections), connections).await?);
    let per_worker = Arc::new(grpc_clients(&server.base, connections, connections).await?);
    let bearer: tonic::metadata::MetadataValue<_> = format!("Bearer {}", server.token).parse()?;
    let get_cluster = |clients: Arc<Vec<GrpcClients>>| {
        let (auth, project, cluster) = (bearer.clone(), project_id.clone(), cluster_id.clone());
        move |worker: usize, _| {
            let mut client = clients[worker].0.clone();
            let mut request = tonic::Request::new(moke_proto::v1::GetClusterRequest {
                project: project.clone(),
                cluster: cluster.clone(),
            });
            request.metadata_mut().insert("authorization", auth.clone());
            async move { client.get_cluster(request).await.is_ok() }
        }
    };
    let grpc_get = load(connections, duration, get_cluster(shared.clone())).await;
    print_row(&format!("gRPC GetCluster ({channels} channels)"), &grpc_get);
    let grpc_get_unshared = load(connections, duration, get_cluster(per_worker)).await;
    print_row("gRPC GetCluster (1 per worker)", &grpc_get_unshared);

    // And over GraphQL.
    let graphql_url = format!("{}/graphql", server.base);
    let cluster_query = json!({
        "query": "query($p: String!, $c: String!) { cluster(project: $p, cluster: $c) { id name labels spec { region kubernetesVersion controlPlane { replicas } deletionProtection } generation status { phase observedGeneration stale } etag createdAt updatedAt } }",
        "variables": { "p": project_id, "c": cluster_id },
    });
    let (c, token, url) = (client.clone(), server.token.clone(), graphql_url.clone());
    let graphql_get = load(connections, duration, move |_, _| {
        let request = c.post(&url).bearer_auth(&token).json(&cluster_query).send();
        async move { graphql_succeeded(request.await).await }
    })
    .await;
    print_row("GraphQL cluster", &graphql_get);
    // Creates after every read, so reads never pay for the inserts' aftermath.
    let post_url = format!("{}/v1/orgs/{}/projects", server.base, server.org);
    let (c, token) = (client.clone(), server.token.clone());
    let run = std::process::id();
    let create = load(connections, duration, move |worker, i| {
        let request =
            c.post(&post_url).bearer_auth(&token).json(&json!({ "name": format!("p{run}-{worker}-{i}") })).send();
        async move { succeeded(request.await, 201).await }
    })
    .await;
    print_row("POST project (project_create)", &create);
    let (clients, auth, org) = (shared.clone(), bearer.clone(), server.org.clone());
    let grpc_create = load(connections, duration, move |worker, i| {
        let mut client = clients[worker].1.clone();
        let mut request = tonic::Request::new(moke_proto::v1::CreateProjectRequest {
            org: org.clone(),
            name: format!("g{run}-{worker}-{i}"),
            ..Default::default()
        });
        request.metadata_mut().insert("authorization", auth.clone());
        async move { client.create_project(request).await.is_ok() }
    })
    .await;
    print_row("gRPC CreateProject", &grpc_create);
    let (c, token, url, org) = (client.clone(), server.token.clone(), graphql_url, server.org.clone());
    let graphql_create = load(connections, duration, move |worker, i| {
        let body = json!({
            "query": "mutation($org: ID!, $name: String!) { createProject(org: $org, input: { name: $name }) { id name etag } }",
            "variables": { "org": org, "name": format!("q{run}-{worker}-{i}") },
        });
        let request = c.post(&url).bearer_auth(&token).json(&body).send();
        async move { graphql_succeeded(request.await).await }
    })
    .await;
    print_row("GraphQL createProject", &graphql_create);
    drop(server);

    let clients = connections.to_string();
    let secs = seconds.to_string();
    run_pgbench(&["-i", "-q", "-s", "1"])?;
    let (select_tps, select_ms) = pgbench(&["-n", "-S", "-c", &clients, "-j", "2", "-T", &secs])?;
    println!("{:<28} {select_tps:>10.0} tps     mean {select_ms:.2} ms", "pgbench select-only");
    let script = std::env::temp_dir().join("moke-bench-insert.sql");
    std::fs::write(&script, "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, 1, 1, now());\n")?;
    let script_arg = format!("--file={}", script.display());
    let (insert_tps, insert_ms) = pgbench(&["-n", &script_arg, "-c", &clients, "-j", "2", "-T", &secs])?;
    println!("{:<28} {insert_tps:>10.0} tps     mean {insert_ms:.2} ms", "pgbench one-row insert");

    let get_ratio = get.throughput / select_tps;
    let post_ratio = create.throughput / insert_tps;
    println!();
    println!(
        "GET  / pgbench select-only = {get_ratio:.2}  (target >= 0.50; p99 {:.2} ms, target <= 10)  {}",
        get.p99_ms,
        verdict(get_ratio >= 0.5 && get.p99_ms <= 10.0)
    );
    println!(
        "POST / pgbench insert      = {post_ratio:.2}  (target >= 0.30; p99 {:.2} ms, target <= 25)  {}",
        create.p99_ms,
        verdict(post_ratio >= 0.3 && create.p99_ms <= 25.0)
    );
    println!();
    for (name, stats, baseline) in [
        ("gRPC GetCluster / REST GET", &grpc_get, &get),
        ("  with a connection per worker", &grpc_get_unshared, &get),
        ("GraphQL cluster / REST GET", &graphql_get, &get),
        ("gRPC CreateProject / REST POST", &grpc_create, &create),
        ("GraphQL createProject / REST POST", &graphql_create, &create),
    ] {
        println!(
            "{name:<34} = {:.2}  (p99 {:.2} ms vs {:.2} ms)",
            stats.throughput / baseline.throughput,
            stats.p99_ms,
            baseline.p99_ms
        );
    }
    let errors: usize = [&get, &create, &grpc_get, &grpc_get_unshared, &grpc_create, &graphql_get, &graphql_create]
        .iter()
        .map(|s| s.errors)
        .sum();
    if errors > 0 {
        bail!("{errors} requests failed");
    }
    Ok(())
}

/// True when the response has `status` and its body was read in full.
async fn succeeded(response: reqwest::Result<reqwest::Response>, status: u16) -> bool {
    match response {
        Ok(response) if response.status().as_u16() == status => response.bytes().await.is_ok(),
        _ => false,
    }
}

/// True when a GraphQL answer came back with data and no errors.
async fn graphql_succeeded(response: reqwest::Result<reqwest::Response>) -> bool {
    let Ok(response) = response else { return false };
    match response.json::<Value>().await {
        Ok(body) => body.get("errors").is_none() && !body["data"].is_null(),
        Err(_) => false,
    }
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}
