//! Outbound event webhooks against local receivers: signed deliveries,
//! retries on the schedule, Retry-After, 410, disabling after days of
//! failure, redelivery, refusal of private targets, and an endpoint moved,
//! turned back on and its secret rotated.

use std::time::Duration;

use moke_api::config::Config;
use moke_api::model::{OperationView, Page, WebhookDeliveryView, WebhookEndpointCreated, WebhookEndpointView};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{Client, Receiver, TestApp, eventually};

/// Fast retries (the harness lets the outbound guard reach local receivers).
fn fast(config: &mut Config) {
    config.webhooks.retry_schedule_seconds = vec![0.0, 0.2, 0.2, 0.2, 0.2];
}

/// A new endpoint for `types` at `url`: its id and signing secret.
async fn endpoint(owner: &Client<'_>, url: &str, types: Value) -> (String, String) {
    let body = json!({ "url": url, "event_types": types });
    let created: WebhookEndpointCreated =
        owner.post(&owner.org_path("/webhooks"), body).await.expect(StatusCode::CREATED);
    (created.endpoint.id.to_string(), created.secret)
}

/// A project with a cluster `prod`: (project id, cluster id).
async fn cluster(owner: &Client<'_>) -> (String, String) {
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, _) = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    (project, cluster.id.to_string())
}

/// A finished Operation (a label change completes at once), hence events.
async fn some_event(owner: &Client<'_>, project: &str, cluster: &str) {
    let path = format!("/v1/projects/{project}/clusters/{cluster}");
    owner.patch::<OperationView>(&path, json!({ "labels": { "n": "1" } })).await.expect(StatusCode::ACCEPTED);
}

/// The first page of an endpoint's deliveries, newest first.
async fn deliveries(owner: &Client<'_>, endpoint: &str) -> Vec<WebhookDeliveryView> {
    let page: Page<WebhookDeliveryView> =
        owner.get(&owner.org_path(&format!("/webhooks/{endpoint}/deliveries"))).await.expect(StatusCode::OK);
    page.items
}

/// The first page of the organization's endpoints.
async fn endpoints(owner: &Client<'_>) -> Vec<WebhookEndpointView> {
    let page: Page<WebhookEndpointView> = owner.get(&owner.org_path("/webhooks")).await.expect(StatusCode::OK);
    page.items
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn deliveries_are_signed_and_retried_until_the_receiver_recovers(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start_with(options, connect, fast).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (project, cluster) = cluster(&owner).await;
    let receiver = Receiver::start(vec![(500, None), (500, None), (503, None)]).await;
    let (id, secret) = endpoint(&owner, &receiver.url, json!(["operation.*"])).await;
    let stored: String =
        sqlx::query_scalar("SELECT secret_enc FROM webhook_endpoints").fetch_one(&t.pool).await.unwrap();
    assert!(stored.starts_with("vault:v") && !stored.contains(&secret));

    some_event(&owner, &project, &cluster).await;
    eventually(20, "four attempts", async || receiver.requests().len() >= 4).await;
    let requests = receiver.requests();
    assert!(requests.iter().all(|r| r.signed_with(&secret)), "every attempt is signed");
    assert!(requests.iter().all(|r| r.header("webhook-id") == requests[0].header("webhook-id")), "one message id");
    assert_eq!(requests[0].json()["type"], "operation.succeeded");
    assert_eq!(requests[0].json()["data"]["operation"]["kind"], "cluster_update");

    eventually(10, "the delivery to be recorded as succeeded", async || {
        deliveries(&owner, &id).await.first().is_some_and(|d| d.status == "succeeded")
    })
    .await;
    let list = deliveries(&owner, &id).await;
    let codes: Vec<Option<i32>> = list[0].attempts.iter().map(|a| a.status_code).collect();
    assert_eq!(codes, [Some(500), Some(500), Some(503), Some(200)]);
    assert!(list[0].attempts.iter().all(|a| a.latency_ms >= 0));
    assert_eq!(Some(list[0].event_id.to_string().as_str()), requests[0].header("webhook-id"));

    // Any message can be sent again.
    let redeliver = json!({ "event_id": list[0].event_id });
    owner
        .post::<Value>(&owner.org_path(&format!("/webhooks/{id}/redeliveries")), redeliver)
        .await
        .expect(StatusCode::ACCEPTED);
    eventually(10, "the redelivery", async || receiver.requests().len() == 5).await;
    assert_eq!(receiver.requests()[4].header("webhook-id"), requests[0].header("webhook-id"));
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn retry_after_is_honoured_and_gone_disables_the_endpoint(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, fast).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (project, cluster) = cluster(&owner).await;
    let receiver = Receiver::start(vec![(429, Some("2")), (410, None)]).await;
    let watcher = Receiver::start(vec![]).await;
    let (id, _) = endpoint(&owner, &receiver.url, json!(["operation.succeeded"])).await;
    let (_, watcher_secret) = endpoint(&owner, &watcher.url, json!(["webhook_endpoint.*"])).await;

    some_event(&owner, &project, &cluster).await;
    eventually(20, "two attempts", async || receiver.requests().len() >= 2).await;
    let requests = receiver.requests();
    let gap = requests[1].at - requests[0].at;
    assert!(gap >= Duration::from_millis(1900), "Retry-After: 2 was honoured over a 0.2 s schedule: {gap:?}");

    // 410: the endpoint is disabled, and the organization is told.
    let told = watcher.event("webhook_endpoint.disabled").await;
    assert!(told.signed_with(&watcher_secret));
    assert_eq!(told.json()["data"]["endpoint"]["id"], id);
    let disabled = endpoints(&owner).await.into_iter().find(|e| e.id.to_string() == id).unwrap();
    assert!(disabled.disabled_at.is_some(), "{disabled:?}");
    assert_eq!(disabled.disabled_reason.as_deref(), Some("the endpoint answered 410 Gone"));

    // A disabled endpoint gets nothing more.
    some_event(&owner, &project, &cluster).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(receiver.requests().len(), 2);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn an_endpoint_failing_for_five_days_is_disabled(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, fast).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (project, cluster) = cluster(&owner).await;
    let broken = Receiver::start(vec![(500, None); 10]).await;
    let (id, _) = endpoint(&owner, &broken.url, json!(["operation.*"])).await;
    sqlx::query("UPDATE webhook_endpoints SET failing_since = now() - interval '121 hours'")
        .execute(&t.pool)
        .await
        .unwrap();
    some_event(&owner, &project, &cluster).await;
    eventually(20, "the endpoint to be disabled", async || {
        let reason = endpoints(&owner).await.first().and_then(|e| e.disabled_reason.clone());
        reason.as_deref() == Some("deliveries failed for 120 hours")
    })
    .await;
    assert_eq!(broken.requests().len(), 1, "no retries after disabling");
    let events: Vec<String> =
        sqlx::query_scalar("SELECT event_type FROM events WHERE event_type LIKE 'webhook_endpoint.%'")
            .fetch_all(&t.pool)
            .await
            .unwrap();
    assert_eq!(events, ["webhook_endpoint.disabled"]);
    assert_eq!(deliveries(&owner, &id).await[0].status, "failed");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn private_targets_are_refused(options: PgPoolOptions, connect: PgConnectOptions) {
    // No allow-list: the default.
    let t = TestApp::start_with(options, connect, |c| c.outbound.allow_private_targets.clear()).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (project, cluster) = cluster(&owner).await;
    let hooks = owner.org_path("/webhooks");
    for url in [
        "http://127.0.0.1:8080/hook",
        "https://10.1.2.3/hook",
        "https://169.254.169.254/latest/meta-data/",
        "https://[::1]/hook",
        "https://localhost/hook",
    ] {
        let refused = owner.post::<WebhookEndpointCreated>(&hooks, json!({ "url": url, "event_types": ["*"] })).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{url}: {refused:?}");
        assert_eq!(refused.refused(StatusCode::BAD_REQUEST).fields(), ["url"], "{url}");
    }
    owner
        .post::<WebhookEndpointCreated>(&hooks, json!({ "url": "ftp://example.com/", "event_types": ["*"] }))
        .await
        .refused(StatusCode::BAD_REQUEST);
    let refused = owner
        .post::<WebhookEndpointCreated>(&hooks, json!({ "url": "https://example.com/", "event_types": ["payment.*"] }))
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "payments do not exist: {refused:?}");

    // A name that turns private after it was accepted is refused when resolved.
    let (id, _) = endpoint(&owner, "https://hooks.example.invalid/x", json!(["operation.*"])).await;
    sqlx::query("UPDATE webhook_endpoints SET url = 'https://localhost:9/x'").execute(&t.pool).await.unwrap();
    some_event(&owner, &project, &cluster).await;
    eventually(20, "a refused attempt", async || {
        deliveries(&owner, &id).await.first().is_some_and(|d| !d.attempts.is_empty())
    })
    .await;
    let attempt = deliveries(&owner, &id).await[0].attempts[0].clone();
    assert!(attempt.status_code.is_none(), "{attempt:?}");
    assert_eq!(attempt.error.as_deref(), Some("could not connect to a public address"), "{attempt:?}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn endpoints_and_deliveries_page(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, fast).await;
    let owner = t.client(&t.tenant("acme").await);
    let (project, cluster) = cluster(&owner).await;
    let receiver = Receiver::start(vec![]).await;
    let (id, _) = endpoint(&owner, &receiver.url, json!(["*"])).await;
    let (quiet, _) = endpoint(&owner, "https://hooks.example.invalid/quiet", json!(["webhook_endpoint.*"])).await;
    let ids: Vec<String> =
        owner.walk_pages(&owner.org_path("/webhooks")).await.iter().map(|e| e["id"].as_str().unwrap().into()).collect();
    assert_eq!(ids, [id.clone(), quiet], "in creation order");

    // Each change finishes an Operation: two events (operation.succeeded and
    // cluster.update.succeeded) made in one transaction, so at one instant.
    for n in ["1", "2"] {
        let path = format!("/v1/projects/{project}/clusters/{cluster}");
        owner.patch::<OperationView>(&path, json!({ "labels": { "n": n } })).await.expect(StatusCode::ACCEPTED);
    }
    eventually(20, "four deliveries, delivered", async || {
        let list = deliveries(&owner, &id).await;
        list.len() == 4 && list.iter().all(|d| d.status == "succeeded")
    })
    .await;
    let paged = owner.walk_pages(&owner.org_path(&format!("/webhooks/{id}/deliveries"))).await;
    let made: Vec<chrono::DateTime<chrono::Utc>> =
        paged.iter().map(|d| d["created_at"].as_str().unwrap().parse().unwrap()).collect();
    assert!(made.windows(2).all(|w| w[0] >= w[1]), "newest first: {made:?}");
    assert_eq!(made[0], made[1], "two deliveries made at one instant page apart: {made:?}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn an_endpoint_is_moved_turned_back_on_and_its_secret_rotated(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, fast).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (project, cluster) = cluster(&owner).await;
    let gone = Receiver::start(vec![(410, None)]).await;
    let moved = Receiver::start(vec![]).await;
    let (id, first_secret) = endpoint(&owner, &gone.url, json!(["operation.succeeded"])).await;
    let path = owner.org_path(&format!("/webhooks/{id}"));

    // 410 disables it.
    some_event(&owner, &project, &cluster).await;
    eventually(20, "the endpoint to be disabled", async || {
        owner.get::<WebhookEndpointView>(&path).await.expect(StatusCode::OK).disabled_at.is_some()
    })
    .await;

    // A URL is checked as on create; moved and turned back on, it has no failure behind it.
    let refused = owner.patch::<WebhookEndpointView>(&path, json!({ "url": "ftp://example.com/" })).await;
    assert_eq!(refused.refused(StatusCode::BAD_REQUEST).fields(), ["url"]);
    let changed: WebhookEndpointView = owner
        .patch(&path, json!({ "url": moved.url, "enabled": true, "description": "moved" }))
        .await
        .expect(StatusCode::OK);
    assert_eq!((changed.url.as_str(), changed.description.as_str()), (moved.url.as_str(), "moved"));
    assert_eq!(changed.event_types, ["operation.succeeded"], "what was not given stays");
    assert!(changed.disabled_at.is_none() && changed.disabled_reason.is_none(), "{changed:?}");
    assert!(changed.failing_since.is_none(), "{changed:?}");

    // Rotated: deliveries are signed with the new secret and, for the grace period, the previous one.
    let rotated: WebhookEndpointCreated =
        owner.post(&format!("{path}/rotate-secret"), json!({})).await.expect(StatusCode::OK);
    assert!(rotated.secret.starts_with("whsec_") && rotated.secret != first_secret);
    assert!(rotated.endpoint.previous_secret_expires_at.is_some(), "{rotated:?}");
    some_event(&owner, &project, &cluster).await;
    let first = moved.event("operation.succeeded").await;
    assert!(first.signed_with(&rotated.secret) && first.signed_with(&first_secret), "both secrets sign");

    // Rotated with no grace period: only the newest secret signs.
    let body = json!({ "previous_secret_valid_seconds": 0 });
    let again: WebhookEndpointCreated = owner.post(&format!("{path}/rotate-secret"), body).await.expect(StatusCode::OK);
    assert!(again.endpoint.previous_secret_expires_at.is_none(), "{again:?}");
    some_event(&owner, &project, &cluster).await;
    eventually(20, "a second delivery", async || moved.requests().len() >= 2).await;
    let second = moved.requests()[1].clone();
    assert!(second.signed_with(&again.secret) && !second.signed_with(&rotated.secret));
    assert_eq!(gone.requests().len(), 1, "nothing more to the old URL");
    let stored: Vec<String> =
        sqlx::query_scalar("SELECT secret_enc FROM webhook_endpoints").fetch_all(&t.pool).await.unwrap();
    assert!(stored.iter().all(|s| s.starts_with("vault:v") && !s.contains(&again.secret)));
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn narrowed_event_types_stop_what_is_queued_and_old_secrets_are_forgotten(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    // A failed attempt is tried again only after an hour: what is queued stays queued.
    let t = TestApp::start_with(options, connect, |c| c.webhooks.retry_schedule_seconds = vec![0.0, 3600.0]).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (project, cluster) = cluster(&owner).await;
    let receiver = Receiver::start(vec![(500, None); 8]).await;
    let (id, _) = endpoint(&owner, &receiver.url, json!(["operation.*", "cluster.*"])).await;
    some_event(&owner, &project, &cluster).await;
    eventually(20, "a first attempt of each event", async || {
        let queued = deliveries(&owner, &id).await;
        queued.len() >= 2 && queued.iter().all(|d| d.status == "pending" && !d.attempts.is_empty())
    })
    .await;

    // Narrowed to cluster events: the queued operation events fail, the rest wait on.
    let path = owner.org_path(&format!("/webhooks/{id}"));
    owner.patch::<WebhookEndpointView>(&path, json!({ "event_types": ["cluster.*"] })).await.expect(StatusCode::OK);
    let after = deliveries(&owner, &id).await;
    for delivery in &after {
        let expected = if delivery.event_type.starts_with("operation.") { "failed" } else { "pending" };
        assert_eq!(delivery.status, expected, "{delivery:?}");
    }
    assert!(after.iter().any(|d| d.status == "pending"), "{after:?}");

    // A previous secret whose grace period is over is forgotten by the hourly sweep.
    owner.post::<WebhookEndpointCreated>(&format!("{path}/rotate-secret"), json!({})).await.expect(StatusCode::OK);
    sqlx::query("UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second'")
        .execute(&t.pool)
        .await
        .unwrap();
    assert_eq!(t.app.purge_expired_previous_secrets().await.unwrap(), 1);
    let kept: Option<String> =
        sqlx::query_scalar("SELECT previous_secret_enc FROM webhook_endpoints").fetch_one(&t.pool).await.unwrap();
    assert_eq!(kept, None);
}
