//! Outbound event webhooks against local receivers: signed deliveries,
//! retries on the schedule, Retry-After, 410, disabling after days of
//! failure, redelivery, and refusal of private targets.

use std::time::Duration;

use moke_api::config::Config;
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{Receiver, Tenant, TestApp, bad_fields, eventually};

/// Fast retries (the harness lets the outbound guard reach local receivers).
fn fast(config: &mut Config) {
    config.webhooks.retry_schedule_seconds = vec![0.0, 0.2, 0.2, 0.2, 0.2];
}

async fn endpoint(t: &TestApp, tenant: &Tenant, url: &str, types: Value) -> (String, String) {
    let (status, created) = t
        .post(&format!("/v1/orgs/{}/webhooks", tenant.org), &tenant.token, json!({ "url": url, "event_types": types }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    (created["id"].as_str().unwrap().to_string(), created["secret"].as_str().unwrap().to_string())
}

/// A finished Operation (a label change completes at once), hence events.
async fn some_event(t: &TestApp, tenant: &Tenant, project: &str, cluster: &str) {
    let (status, _) = t
        .patch(&format!("/v1/projects/{project}/clusters/{cluster}"), &tenant.token, json!({ "labels": { "n": "1" } }))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
}

async fn deliveries(t: &TestApp, tenant: &Tenant, endpoint: &str) -> Value {
    t.get(&format!("/v1/orgs/{}/webhooks/{endpoint}/deliveries", tenant.org), &tenant.token).await.1
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn deliveries_are_signed_and_retried_until_the_receiver_recovers(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start_with(options, connect, fast).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let (cluster, _) = t.cluster(&acme, &project, "prod").await;
    let receiver = Receiver::start(vec![(500, None), (500, None), (503, None)]).await;
    let (id, secret) = endpoint(&t, &acme, &receiver.url, json!(["operation.*"])).await;
    let stored: String =
        sqlx::query_scalar("SELECT secret_enc FROM webhook_endpoints").fetch_one(&t.pool).await.unwrap();
    assert!(stored.starts_with("vault:v") && !stored.contains(&secret));

    some_event(&t, &acme, &project, &cluster).await;
    eventually(20, "four attempts", async || receiver.requests().len() >= 4).await;
    let requests = receiver.requests();
    assert!(requests.iter().all(|r| r.signed_with(&secret)), "every attempt is signed");
    assert!(requests.iter().all(|r| r.header("webhook-id") == requests[0].header("webhook-id")), "one message id");
    assert_eq!(requests[0].json()["type"], "operation.succeeded");
    assert_eq!(requests[0].json()["data"]["operation"]["kind"], "cluster_update");

    eventually(10, "the delivery to be recorded as succeeded", async || {
        deliveries(&t, &acme, &id).await[0]["status"] == "succeeded"
    })
    .await;
    let list = deliveries(&t, &acme, &id).await;
    let codes: Vec<i64> =
        list[0]["attempts"].as_array().unwrap().iter().map(|a| a["status_code"].as_i64().unwrap()).collect();
    assert_eq!(codes, [500, 500, 503, 200]);
    assert!(list[0]["attempts"].as_array().unwrap().iter().all(|a| a["latency_ms"].as_i64().unwrap() >= 0));
    assert_eq!(list[0]["event_id"], requests[0].header("webhook-id").unwrap());

    // Any message can be sent again.
    let (status, again) = t
        .post(
            &format!("/v1/orgs/{}/webhooks/{id}/redeliveries", acme.org),
            &acme.token,
            json!({ "event_id": list[0]["event_id"] }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{again}");
    eventually(10, "the redelivery", async || receiver.requests().len() == 5).await;
    assert_eq!(receiver.requests()[4].header("webhook-id"), requests[0].header("webhook-id"));
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn retry_after_is_honoured_and_gone_disables_the_endpoint(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, fast).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let (cluster, _) = t.cluster(&acme, &project, "prod").await;
    let receiver = Receiver::start(vec![(429, Some("2")), (410, None)]).await;
    let watcher = Receiver::start(vec![]).await;
    let (id, _) = endpoint(&t, &acme, &receiver.url, json!(["operation.succeeded"])).await;
    let (_, watcher_secret) = endpoint(&t, &acme, &watcher.url, json!(["webhook_endpoint.*"])).await;

    some_event(&t, &acme, &project, &cluster).await;
    eventually(20, "two attempts", async || receiver.requests().len() >= 2).await;
    let requests = receiver.requests();
    let gap = requests[1].at - requests[0].at;
    assert!(gap >= Duration::from_millis(1900), "Retry-After: 2 was honoured over a 0.2 s schedule: {gap:?}");

    // 410: the endpoint is disabled, and the organization is told.
    let told = watcher.event("webhook_endpoint.disabled").await;
    assert!(told.signed_with(&watcher_secret));
    assert_eq!(told.json()["data"]["endpoint"]["id"], id);
    let (_, endpoints) = t.get(&format!("/v1/orgs/{}/webhooks", acme.org), &acme.token).await;
    let disabled = endpoints.as_array().unwrap().iter().find(|e| e["id"] == id).unwrap().clone();
    assert!(disabled["disabled_at"].is_string(), "{disabled}");
    assert_eq!(disabled["disabled_reason"], "the endpoint answered 410 Gone");

    // A disabled endpoint gets nothing more.
    some_event(&t, &acme, &project, &cluster).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(receiver.requests().len(), 2);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn an_endpoint_failing_for_five_days_is_disabled(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, fast).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let (cluster, _) = t.cluster(&acme, &project, "prod").await;
    let broken = Receiver::start(vec![(500, None); 10]).await;
    let (id, _) = endpoint(&t, &acme, &broken.url, json!(["operation.*"])).await;
    sqlx::query("UPDATE webhook_endpoints SET failing_since = now() - interval '121 hours'")
        .execute(&t.pool)
        .await
        .unwrap();
    some_event(&t, &acme, &project, &cluster).await;
    eventually(20, "the endpoint to be disabled", async || {
        let (_, endpoints) = t.get(&format!("/v1/orgs/{}/webhooks", acme.org), &acme.token).await;
        endpoints[0]["disabled_reason"] == "deliveries failed for 120 hours"
    })
    .await;
    assert_eq!(broken.requests().len(), 1, "no retries after disabling");
    let events: Vec<String> =
        sqlx::query_scalar("SELECT event_type FROM events WHERE event_type LIKE 'webhook_endpoint.%'")
            .fetch_all(&t.pool)
            .await
            .unwrap();
    assert_eq!(events, ["webhook_endpoint.disabled"]);
    assert_eq!(deliveries(&t, &acme, &id).await[0]["status"], "failed");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn private_targets_are_refused(options: PgPoolOptions, connect: PgConnectOptions) {
    // No allow-list: the default.
    let t = TestApp::start_with(options, connect, |c| c.outbound.allow_private_targets.clear()).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let (cluster, _) = t.cluster(&acme, &project, "prod").await;
    let hooks = format!("/v1/orgs/{}/webhooks", acme.org);
    for url in [
        "http://127.0.0.1:8080/hook",
        "https://10.1.2.3/hook",
        "https://169.254.169.254/latest/meta-data/",
        "https://[::1]/hook",
        "https://localhost/hook",
    ] {
        let (status, problem) = t.post(&hooks, &acme.token, json!({ "url": url, "event_types": ["*"] })).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {problem}");
        assert_eq!(bad_fields(&problem), ["url"], "{url}");
    }
    let (status, _) = t.post(&hooks, &acme.token, json!({ "url": "ftp://example.com/", "event_types": ["*"] })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) =
        t.post(&hooks, &acme.token, json!({ "url": "https://example.com/", "event_types": ["invoice.*"] })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "invoices do not exist yet");

    // A name that turns private after it was accepted is refused when resolved.
    let (id, _) = endpoint(&t, &acme, "https://hooks.example.invalid/x", json!(["operation.*"])).await;
    sqlx::query("UPDATE webhook_endpoints SET url = 'https://localhost:9/x'").execute(&t.pool).await.unwrap();
    some_event(&t, &acme, &project, &cluster).await;
    eventually(20, "a refused attempt", async || {
        let list = deliveries(&t, &acme, &id).await;
        list[0]["attempts"].as_array().is_some_and(|a| !a.is_empty())
    })
    .await;
    let attempt = deliveries(&t, &acme, &id).await[0]["attempts"][0].clone();
    assert!(attempt["status_code"].is_null(), "{attempt}");
    assert_eq!(attempt["error"], "could not connect to a public address", "{attempt}");
}
