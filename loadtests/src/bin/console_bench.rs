//! `console-bench`: time to first byte of the web console's busiest pages
//! for an organization with 100 clusters (the project's cluster list and a
//! cluster's detail page), measured beside the REST calls those pages make,
//! in the same run against the same gateway. Pages render whole before
//! their first byte (`SsrMode::Async`), so their TTFB is their full cost:
//! target p95 <= 50 ms. Run through `cargo xtask bench console`.
//!
//! Environment: `DATABASE_URL`, the gateway's `MOKE_VAULT__*`; optional
//! `BENCH_SECONDS` (default 10) and `BENCH_CONNECTIONS` (default 8: a
//! console's users, not an API client's fan-out).

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use moke_api::app::{App, RequestContext, ResourceRef};
use moke_loadtests::{Stats, load};
use serde_json::json;

const PASSWORD: &str = "benchmark horse battery 1";
const CLUSTERS: usize = 100;

fn row(name: &str, stats: &Stats) {
    println!(
        "{name:<40} {:>8.0} req/s   p50 {:>6.2} ms   p95 {:>6.2} ms   p99 {:>6.2} ms   ({} requests, {} errors)",
        stats.throughput, stats.p50_ms, stats.p95_ms, stats.p99_ms, stats.requests, stats.errors
    );
}

#[tokio::main]
async fn main() -> Result<()> {
    moke_api::install_crypto_provider();
    let seconds: u64 = std::env::var("BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let connections: usize = std::env::var("BENCH_CONNECTIONS").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    let duration = Duration::from_secs(seconds);
    let mut config = moke_loadtests::bench_config();
    // An organization of 100 clusters is what is measured.
    config.quotas.max_clusters = CLUSTERS as i64 + 10;
    let pool = moke_api::server::connect(&config).await?;
    moke_api::server::migrate(&pool).await?;
    let vault = moke_api::vault::Vault::connect(&config).await?;
    let app = App::new(pool, Arc::new(config), vault);

    // A person owning an organization with one project of 100 clusters.
    let run = std::process::id();
    let made = app.bootstrap_org(&format!("console-bench-{run}"), "Console bench").await?;
    let org = made.org.id;
    let email = format!("console-bench-{run}@example.com");
    let user = uuid::Uuid::now_v7();
    sqlx::query("INSERT INTO users (id, email, display_name, password_hash, email_verified_at) VALUES ($1, $2, 'Bench', $3, now())")
        .bind(user)
        .bind(&email)
        .bind(moke_iam::password::hash(PASSWORD))
        .execute(app.db())
        .await?;
    sqlx::query("INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'owner')")
        .bind(org.uuid())
        .bind(user)
        .execute(app.db())
        .await?;
    let owner = RequestContext::system(org.uuid());
    let project = app.project_create(&owner, org, serde_json::from_value(json!({ "name": "bench" }))?).await?;
    for i in 0..CLUSTERS {
        app.cluster_create(
            &owner,
            &ResourceRef::parse(&project.id.to_string()),
            serde_json::from_value(json!({ "name": format!("c-{i:03}"), "spec": { "region": "eu-central-1" } }))?,
        )
        .await?;
    }

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(moke_api::server::serve(app.clone(), listener, std::future::pending()));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(connections)
        .build()?;

    // Sign in through the console's own form: the cookie every page request sends.
    let page = client.get(format!("{base}/signin")).header("accept", "text/html").send().await?;
    let cookie_of = |answer: &reqwest::Response| -> Result<String> {
        let set = answer.headers().get("set-cookie").context("no cookie")?.to_str()?;
        Ok(set.split(';').next().unwrap_or_default().to_string())
    };
    let cookie = cookie_of(&page)?;
    let html = page.text().await?;
    let start = html.find("name=\"csrf\" value=\"").context("no CSRF field")? + "name=\"csrf\" value=\"".len();
    let csrf: String = html[start..].chars().take_while(|c| *c != '"').collect();
    let signed_in = client
        .post(format!("{base}/console/fn/sign_in"))
        .header("accept", "text/html")
        .header("referer", format!("{base}/signin"))
        .header("cookie", &cookie)
        .form(&[("csrf", csrf.as_str()), ("email", email.as_str()), ("password", PASSWORD)])
        .send()
        .await?;
    anyhow::ensure!(signed_in.status() == 303, "console sign-in answered {}", signed_in.status());
    let cookie = cookie_of(&signed_in)?;
    let jwt = app
        .login(
            &RequestContext::anonymous(Default::default()),
            moke_api::model::LoginRequest { email: email.clone(), password: PASSWORD.into(), organization: None },
        )
        .await?
        .access_token;

    let page = |path: String| {
        let (client, cookie, url) = (client.clone(), cookie.clone(), format!("{base}{path}"));
        move |_: usize, _: usize| {
            let sent = client.get(&url).header("accept", "text/html").header("cookie", &cookie).send();
            async move { matches!(sent.await, Ok(r) if r.status() == 200) }
        }
    };
    let rest = |paths: Vec<String>| {
        let (client, jwt, base) = (client.clone(), jwt.clone(), base.clone());
        move |_: usize, _: usize| {
            let sent: Vec<_> =
                paths.iter().map(|path| client.get(format!("{base}{path}")).bearer_auth(&jwt).send()).collect();
            async move { futures_all(sent).await }
        }
    };

    println!(
        "moke console benchmark: {CLUSTERS} clusters, {connections} connections, {seconds} s per scenario, one process"
    );
    let list_rest =
        load(connections, duration, rest(vec!["/v1/me".into(), "/v1/projects/bench/clusters?limit=25".into()])).await;
    row("REST: me + clusters page (parallel)", &list_rest);
    let list_page = load(connections, duration, page("/projects/bench".into())).await;
    row("console: /projects/bench", &list_page);
    let detail_rest = load(
        connections,
        duration,
        rest(vec![
            "/v1/me".into(),
            "/v1/projects/bench/clusters/c-042".into(),
            "/v1/projects/bench/clusters/c-042/node-pools?limit=100".into(),
            "/v1/projects/bench/clusters/c-042/nodes?limit=100".into(),
            "/v1/projects/bench/clusters/c-042/metrics".into(),
            "/v1/projects/bench/clusters/c-042/operations?limit=10".into(),
        ]),
    )
    .await;
    row("REST: the detail page's 6 calls", &detail_rest);
    let detail_page = load(connections, duration, page("/projects/bench/clusters/c-042".into())).await;
    row("console: /projects/bench/clusters/c-042", &detail_page);
    println!();
    for (name, page, rest) in
        [("clusters list", &list_page, &list_rest), ("cluster detail", &detail_page, &detail_rest)]
    {
        println!(
            "{name:<15} TTFB p50 {:.2} ms, p95 {:.2} ms (target <= 50 ms: {}); page / its REST calls: p95 x{:.2}, throughput x{:.2}",
            page.p50_ms,
            page.p95_ms,
            if page.p95_ms <= 50.0 { "met" } else { "NOT met" },
            page.p95_ms / rest.p95_ms,
            page.throughput / rest.throughput,
        );
    }
    let errors = list_rest.errors + list_page.errors + detail_rest.errors + detail_page.errors;
    anyhow::ensure!(errors == 0, "{errors} requests failed");
    Ok(())
}

/// Awaits every request; true when all answered 200.
async fn futures_all(sent: Vec<impl std::future::Future<Output = reqwest::Result<reqwest::Response>>>) -> bool {
    let mut ok = true;
    for answer in futures::future::join_all(sent).await {
        ok &= matches!(answer, Ok(r) if r.status() == 200);
    }
    ok
}
