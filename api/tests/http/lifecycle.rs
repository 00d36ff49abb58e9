//! Credentials and process lifecycle: revocation takes effect on the next
//! request; the real binary validates its config and shuts down gracefully,
//! finishing an in-flight request.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use moke_api::model::{AuditEventView, OrgView, Page, TokenCreated, TokenView};
use reqwest::StatusCode;
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::TestApp;

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn token_revocation_takes_effect_on_the_next_request(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let created: TokenCreated = owner
        .post(&owner.org_path("/tokens"), json!({ "name": "ci", "role": "member", "expires_in_seconds": 3600 }))
        .await
        .expect(StatusCode::CREATED);
    let secret = created.token.as_str();
    let id = created.view.id;
    assert!(created.view.expires_at.is_some());
    let ci = owner.with_token(secret);

    ci.get::<OrgView>(&ci.org_path("")).await.expect(StatusCode::OK);
    let listed = owner.get::<TokenView>(&owner.org_path(&format!("/tokens/{id}"))).await;
    assert!(listed.expect(StatusCode::OK).last_used_at.is_some(), "use is recorded");
    assert!(listed.body.get("token").is_none(), "the secret is never shown again");
    let stored: Vec<u8> = sqlx::query_scalar("SELECT token_hash FROM api_tokens WHERE token_hint = $1")
        .bind(&secret[..13])
        .fetch_one(&t.pool)
        .await
        .unwrap();
    assert_ne!(stored, secret.as_bytes(), "only a hash is stored");

    owner.delete::<()>(&owner.org_path(&format!("/tokens/{id}"))).await.expect(StatusCode::NO_CONTENT);
    ci.get::<OrgView>(&ci.org_path("")).await.refused_with(StatusCode::UNAUTHORIZED, "unauthenticated");

    let events: Page<AuditEventView> = owner.get(&owner.org_path("/audit-events")).await.expect(StatusCode::OK);
    let last = events.items.last().unwrap();
    assert_eq!(last.action, "auth.token_rejected");
    assert_eq!(last.outcome, "failure");
    assert_eq!(last.details["reason"], "revoked");

    // Expired tokens are refused too.
    sqlx::query("UPDATE api_tokens SET revoked_at = NULL, expires_at = now() - interval '1 second'")
        .execute(&t.pool)
        .await
        .unwrap();
    ci.get::<OrgView>(&ci.org_path("")).await.refused(StatusCode::UNAUTHORIZED);
    owner.with_token("moke_not-a-real-token").get::<OrgView>(&ci.org_path("")).await.refused(StatusCode::UNAUTHORIZED);
}

fn database_url(connect: &PgConnectOptions) -> String {
    format!(
        "postgres://{}@{}:{}/{}",
        connect.get_username(),
        connect.get_host(),
        connect.get_port(),
        connect.get_database().unwrap_or("postgres")
    )
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn a_bad_config_value_stops_the_server_naming_the_key() {
    let output = Command::new(env!("CARGO_BIN_EXE_moke-server"))
        .arg("serve")
        .env("MOKE_HTTP__LISTEN", "not-an-address")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("http.listen"), "{stderr}");

    let output = Command::new(env!("CARGO_BIN_EXE_moke-server"))
        .arg("serve")
        .env("MOKE_QUOTAS__MAX_CLUSTERS", "lots")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains("quotas.max_clusters"));
}

/// The real binary in `dev` mode without region agents (operations stay
/// pending), once it answers; with the organization and owner token it printed.
struct Gateway {
    child: std::process::Child,
    base: String,
    org: String,
    token: String,
}

async fn start_gateway(connect: &PgConnectOptions, org_name: &str) -> Gateway {
    let port = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_moke-server"))
        .args(["dev", "--no-regions", "--org", org_name, "--listen", &format!("127.0.0.1:{port}")])
        .arg("--database-url")
        .arg(database_url(connect))
        .env("MOKE_TELEMETRY__LOG_FILTER", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // `dev` prints the organization and a token.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut org, mut token) = (String::new(), String::new());
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(rest) = line.trim().strip_prefix("organization:") {
            org = rest.split('(').nth(1).unwrap().trim_end_matches(')').to_string();
        }
        if let Some(rest) = line.trim().strip_prefix("owner token:") {
            token = rest.split_whitespace().next().unwrap().to_string();
            break;
        }
    }
    assert!(org.starts_with("org_") && token.starts_with("moke_"), "dev printed {org} {token}");
    let base = format!("http://127.0.0.1:{port}");
    moke_api::install_crypto_provider();
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while client.get(format!("{base}/readyz")).send().await.is_err() {
        assert!(Instant::now() < deadline, "server did not come up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Gateway { child, base, org, token }
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn sigterm_finishes_the_request_in_flight(_options: PgPoolOptions, connect: PgConnectOptions) {
    let mut gateway = start_gateway(&connect, "shutdown-test").await;
    let (base, org, token) = (gateway.base.clone(), gateway.org.clone(), gateway.token.clone());
    let child = &mut gateway.child;
    moke_api::install_crypto_provider();
    let client = reqwest::Client::new();
    let project: serde_json::Value = client
        .post(format!("{base}/v1/orgs/{org}/projects"))
        .bearer_auth(&token)
        .json(&json!({ "name": "web" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let op: serde_json::Value = client
        .post(format!("{base}/v1/projects/{}/clusters", project["id"].as_str().unwrap()))
        .bearer_auth(&token)
        .json(&json!({ "name": "prod", "spec": { "region": "eu-central-1" } }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();

    // A long-poll is in flight when SIGTERM arrives.
    let in_flight =
        client.get(format!("{base}/v1/operations/{}?wait=30s", op["id"].as_str().unwrap())).bearer_auth(&token).send();
    let in_flight = tokio::spawn(in_flight);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let signalled = Instant::now();
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);

    let response = in_flight.await.unwrap().expect("the in-flight request got an answer");
    assert_eq!(response.status(), StatusCode::OK);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["status"], "pending");
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(signalled.elapsed() < Duration::from_secs(10), "server did not exit");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "clean exit: {status}");
    assert!(signalled.elapsed() < Duration::from_secs(5), "the long-poll did not hold up shutdown");
    // New connections are refused after shutdown.
    assert!(client.get(format!("{base}/healthz")).send().await.is_err());
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn revocation_reaches_every_gateway(options: PgPoolOptions, connect: PgConnectOptions) {
    // Two gateway processes over one database, each with its token cache.
    let a = TestApp::start(options.clone(), connect.clone()).await;
    let b = TestApp::start(options, connect).await;
    let acme = a.tenant("acme").await;
    let (_, created) =
        a.post(&format!("/v1/orgs/{}/tokens", acme.org), &acme.token, json!({ "name": "ci", "role": "member" })).await;
    let (secret, id) = (created["token"].as_str().unwrap(), created["id"].as_str().unwrap());
    // Give both listeners time to come up, then warm b's cache.
    tokio::time::sleep(Duration::from_millis(300)).await;
    for _ in 0..3 {
        assert_eq!(b.get(&format!("/v1/orgs/{}", acme.org), secret).await.0, StatusCode::OK);
    }
    assert!(!b.app.principal_cache().is_empty(), "gateway b serves the token from its cache");

    let (status, _) = a.delete(&format!("/v1/orgs/{}/tokens/{id}", acme.org), &acme.token).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let revoked = Instant::now();
    loop {
        let (status, _) = b.get(&format!("/v1/orgs/{}", acme.org), secret).await;
        if status == StatusCode::UNAUTHORIZED {
            break;
        }
        assert!(revoked.elapsed() < Duration::from_secs(1), "gateway b still accepts a revoked token");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    println!("revocation reached the other gateway after {:?}", revoked.elapsed());
}

/// A gateway killed (SIGKILL) while an idempotent create is in its
/// transaction neither loses nor duplicates it, and the key it held is free
/// at once: the retry proceeds, not `409 idempotency_key_in_flight`.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_killed_gateway_leaves_no_idempotency_key_held(options: PgPoolOptions, connect: PgConnectOptions) {
    let pool = options.connect_with(connect.clone()).await.unwrap();
    let mut first = start_gateway(&connect, "crash-test").await;
    moke_api::install_crypto_provider();
    let client = reqwest::Client::new();
    let project: serde_json::Value = client
        .post(format!("{}/v1/orgs/{}/projects", first.base, first.org))
        .bearer_auth(&first.token)
        .json(&json!({ "name": "web" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let clusters = format!("/v1/projects/{}/clusters", project["id"].as_str().unwrap());
    let body = json!({ "name": "prod", "spec": { "region": "eu-central-1" } });
    // The organization's row held elsewhere: the create stops inside its transaction.
    let org: moke_api::ids::OrgId = first.org.parse().unwrap();
    let mut blocker = pool.begin().await.unwrap();
    sqlx::query("SELECT id FROM organizations WHERE id = $1 FOR UPDATE")
        .bind(org.uuid())
        .execute(&mut *blocker)
        .await
        .unwrap();
    let stalled = client
        .post(format!("{}{clusters}", first.base))
        .bearer_auth(&first.token)
        .header("idempotency-key", "crash-1")
        .json(&body)
        .send();
    let stalled = tokio::spawn(stalled);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        if waiting > 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the create never took its key");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    assert!(stalled.await.unwrap().is_err(), "the killed gateway answered nothing");
    blocker.rollback().await.unwrap();

    let second = start_gateway(&connect, "crash-test").await;
    let retried = Instant::now();
    let retry = |key: &'static str| {
        client
            .post(format!("{}{clusters}", second.base))
            .bearer_auth(&first.token)
            .header("idempotency-key", key)
            .json(&body)
            .send()
    };
    let response = retry("crash-1").await.unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED, "{}", response.text().await.unwrap());
    assert!(retried.elapsed() < Duration::from_secs(5), "no wait for a dead claim: {:?}", retried.elapsed());
    let op: serde_json::Value = response.json().await.unwrap();
    let again: serde_json::Value = retry("crash-1").await.unwrap().json().await.unwrap();
    assert_eq!(again["id"], op["id"], "the answer is replayed");
    let clusters: i64 = sqlx::query_scalar("SELECT count(*) FROM clusters").fetch_one(&pool).await.unwrap();
    assert_eq!(clusters, 1, "nothing lost, nothing doubled");
    drop(second);
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
