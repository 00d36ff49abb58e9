//! `auth-bench`: what authentication costs. One gateway in this process
//! serves the same cluster read three ways — with no authentication (a
//! route only this benchmark mounts, behind the same middleware, calling the
//! same app function as a fixed owner), with a service-account API token,
//! and with a signed-in person's JWT — and the ratios to the unauthenticated
//! read are printed (target >= 0.85). Then password sign-in throughput, which
//! argon2id bounds. Then what Vault bounds: kubeconfig credential issuance
//! over HTTP (a client certificate signed by the cluster's CA), reading an
//! encrypted secret (transit decrypt) and, as the baseline, Vault's transit
//! encrypt as the gateway calls it. Run through `cargo xtask bench auth`.
//!
//! Environment: `DATABASE_URL`, the gateway's `MOKE_VAULT__*`; optional
//! `BENCH_SECONDS` (default 10) and `BENCH_CONNECTIONS` (default 32).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use axum::extract::{Path, State};
use axum::response::IntoResponse;
use moke_api::app::{App, RequestContext, ResourceRef};
use moke_api::model::LoginRequest;
use moke_loadtests::{load, print_row};
use serde_json::json;

const PASSWORD: &str = "benchmark horse battery 1";

/// The cluster read with no credential: the bootstrap owner acts.
async fn unauthenticated_view(
    State(app): State<Arc<App>>,
    axum::Extension(owner): axum::Extension<Arc<RequestContext>>,
    Path((project, cluster)): Path<(String, String)>,
) -> axum::response::Response {
    match app.cluster_view(&owner, &ResourceRef::parse(&project), &ResourceRef::parse(&cluster)).await {
        Ok(view) => axum::Json(view).into_response(),
        Err(error) => moke_api::http::problem::ApiError(error).into_response(),
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    moke_api::install_crypto_provider();
    let seconds: u64 = std::env::var("BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let connections: usize = std::env::var("BENCH_CONNECTIONS").ok().and_then(|s| s.parse().ok()).unwrap_or(32);
    let duration = Duration::from_secs(seconds);
    let config = moke_loadtests::bench_config();
    let pool = moke_api::server::connect(&config).await?;
    moke_api::server::migrate(&pool).await?;
    let vault = moke_api::vault::Vault::connect(&config).await?;
    let app = App::new(pool, Arc::new(config), vault);
    tokio::spawn(moke_api::app::region::notifications::run(app.clone()));

    let run = std::process::id();
    let made = app.bootstrap_org(&format!("bench-{run}"), "Bench").await?;
    let owner = RequestContext::system(made.org.id.uuid());
    let project = app.project_create(&owner, made.org.id, serde_json::from_value(json!({ "name": "bench" }))?).await?;
    let op = app
        .cluster_create(
            &owner,
            &ResourceRef::parse(&project.id.to_string()),
            serde_json::from_value(json!({ "name": "target", "spec": { "region": "eu-central-1" } }))?,
        )
        .await?;
    let cluster = op.target.id.clone();
    // A person who owns an organization of their own (made as confirming a
    // sign-up would: the address verified), signed in with the password.
    let email = format!("bench-{run}@example.com");
    let people = app.bootstrap_org(&format!("bench-people-{run}"), "Bench people").await?;
    let people_org = people.org.id;
    let hash = moke_iam::password::hash(PASSWORD);
    let user = uuid::Uuid::now_v7();
    sqlx::query("INSERT INTO users (id, email, display_name, password_hash, email_verified_at) VALUES ($1, $2, 'Bench', $3, now())")
        .bind(user)
        .bind(&email)
        .bind(&hash)
        .execute(app.db())
        .await?;
    sqlx::query("INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'owner')")
        .bind(people_org.uuid())
        .bind(user)
        .execute(app.db())
        .await?;
    let login = LoginRequest { email: email.clone(), password: PASSWORD.into(), organization: None };
    let session = app.login(&RequestContext::anonymous(Default::default()), login).await?;
    let people_ctx = RequestContext::system(people_org.uuid());
    let their_project =
        app.project_create(&people_ctx, people_org, serde_json::from_value(json!({ "name": "bench" }))?).await?;
    let their_op = app
        .cluster_create(
            &people_ctx,
            &ResourceRef::parse(&their_project.id.to_string()),
            serde_json::from_value(json!({ "name": "target", "spec": { "region": "eu-central-1" } }))?,
        )
        .await?;
    let jwt = session.access_token.clone();

    let extra = axum::Router::new()
        .route("/bench/unauthenticated/{project}/{cluster}", axum::routing::get(unauthenticated_view))
        .layer(axum::Extension(Arc::new(owner.clone())));
    let router = moke_api::http::router_with(app.clone(), extra, None);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        axum::serve(listener, router.into_make_service_with_connect_info::<std::net::SocketAddr>()).await
    });
    let client = reqwest::Client::builder().pool_max_idle_per_host(connections).build()?;
    // Let the notification listener come up, so credentials are cached as in production.
    tokio::time::sleep(Duration::from_millis(500)).await;

    println!("moke auth benchmark: {connections} connections, {seconds} s per scenario, release build, one process");
    let get = |url: String, bearer: Option<String>| {
        let client = client.clone();
        move |_: usize, _: usize| {
            let mut request = client.get(&url);
            if let Some(bearer) = &bearer {
                request = request.bearer_auth(bearer);
            }
            let sent = request.send();
            async move { matches!(sent.await, Ok(r) if r.status() == 200) }
        }
    };
    let none_url = format!("{base}/bench/unauthenticated/{}/{cluster}", project.id);
    let rest_url = format!("{base}/v1/projects/{}/clusters/{cluster}", project.id);
    let jwt_url = format!("{base}/v1/projects/{}/clusters/{}", their_project.id, their_op.target.id);
    let anonymous = load(connections, duration, get(none_url, None)).await;
    print_row("GET cluster, no auth", &anonymous);
    let token = load(connections, duration, get(rest_url, Some(made.owner_token.token.clone()))).await;
    print_row("GET cluster, API token", &token);
    let session = load(connections, duration, get(jwt_url, Some(jwt))).await;
    print_row("GET cluster, JWT", &session);

    let login_url = format!("{base}/v1/auth/login");
    let c = client.clone();
    let login = load(connections, duration, move |_, _| {
        let sent = c.post(&login_url).json(&json!({ "email": email, "password": PASSWORD })).send();
        async move { matches!(sent.await, Ok(r) if r.status() == 200) }
    })
    .await;
    print_row("POST /v1/auth/login", &login);
    println!();
    for (name, stats) in [("API token / no auth", &token), ("JWT / no auth", &session)] {
        let ratio = stats.throughput / anonymous.throughput;
        println!(
            "{name:<22} = {ratio:.2}  (target >= 0.85; p99 {:.2} ms vs {:.2} ms)  {}",
            stats.p99_ms,
            anonymous.p99_ms,
            if ratio >= 0.85 { "met" } else { "NOT met" }
        );
    }
    println!(
        "login: {:.0} sign-ins/s, argon2id m={} KiB t={} p={} on {} cores",
        login.throughput,
        moke_iam::password::MEMORY_KIB,
        moke_iam::password::ITERATIONS,
        moke_iam::password::PARALLELISM,
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    );

    // Vault-bound work, at 8 connections (Vault serializes much of it).
    let vault_connections = 8;
    let issue_url = format!("{base}/v1/projects/{}/clusters/{cluster}/credentials?access=view", project.id);
    let (c, bearer) = (client.clone(), made.owner_token.token.clone());
    let issuance = load(vault_connections, duration, move |_, _| {
        let sent = c.post(&issue_url).bearer_auth(&bearer).send();
        async move { matches!(sent.await, Ok(r) if r.status() == 200) }
    })
    .await;
    print_row("POST .../credentials (issue)", &issuance);
    let org = made.org.id.uuid();
    let ciphertext = app.vault().encrypt(org, "a webhook or client secret").await?;
    let reader = app.clone();
    let read = load(vault_connections, duration, move |_, _| {
        let (app, ciphertext) = (reader.clone(), ciphertext.clone());
        async move { app.vault().decrypt(org, &ciphertext).await.is_ok() }
    })
    .await;
    print_row("secret read (decrypt)", &read);
    let writer = app.clone();
    let encrypt = load(vault_connections, duration, move |_, i| {
        let app = writer.clone();
        async move { app.vault().encrypt(org, &format!("secret {i}")).await.is_ok() }
    })
    .await;
    print_row("Vault transit encrypt", &encrypt);
    println!();
    println!(
        "credential issuance / transit encrypt = {:.2}  (p99 {:.2} ms); secret read / transit encrypt = {:.2}",
        issuance.throughput / encrypt.throughput,
        issuance.p99_ms,
        read.throughput / encrypt.throughput
    );
    let errors = anonymous.errors + token.errors + session.errors + login.errors + issuance.errors + read.errors;
    anyhow::ensure!(errors == 0, "{errors} requests failed");
    Ok(())
}
