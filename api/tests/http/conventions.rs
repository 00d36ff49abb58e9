//! What every answer has in common, which generated clients rely on:
//! `RateLimit-*` headers, problems that name their request and the quota
//! they hit, idempotent creates and actions, and control headers that are
//! refused rather than ignored when they are not text.

use moke_api::model::{NamespaceView, OperationView, ServiceAccountView, WebhookEndpointCreated};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::TestApp;

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn every_answer_tells_the_rate_limit_left(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, |c| {
        (c.rate_limits.per_principal_per_second, c.rate_limits.per_principal_burst) = (1, 100);
    })
    .await;
    let owner = t.client(&t.tenant("acme").await);
    let first = owner.get::<Value>(&owner.org_path("")).await;
    let second = owner.get::<Value>(&owner.org_path("")).await;
    for answer in [&first, &second] {
        answer.ok();
        for name in ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "ratelimit-policy"] {
            assert!(answer.headers.contains_key(name), "{name} missing: {:?}", answer.headers);
        }
    }
    let remaining = |a: &crate::common::Answer<Value>| -> u64 {
        a.headers["ratelimit-remaining"].to_str().unwrap().parse().unwrap()
    };
    assert!(remaining(&second) < remaining(&first), "the second request counts against the caller");
    // Refusals and anonymous requests are counted too (against the address).
    let anonymous = t.client.get(format!("{}/v1/orgs", t.base)).send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    assert!(anonymous.headers().contains_key("ratelimit-remaining"));
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_problem_names_its_request_and_the_quota_it_hit(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, |c| c.quotas.max_service_accounts = 2).await;
    let owner = t.client(&t.tenant("acme").await);
    // The bootstrap owner is one account; one more fits.
    owner.create_service_account("robot", "viewer").await;
    let request = owner
        .request(reqwest::Method::POST, &owner.org_path("/service-accounts"))
        .header("x-request-id", "support-ticket-42")
        .json(&json!({ "name": "one-too-many", "role": "viewer" }));
    let answer = owner.send::<ServiceAccountView>(request).await;
    answer.refused_with(StatusCode::CONFLICT, "quota_exceeded");
    assert_eq!(answer.body["request_id"], "support-ticket-42", "{}", answer.body);
    assert_eq!(answer.body["quota"], json!({ "resource": "service_accounts", "limit": 2, "usage": 2, "requested": 1 }));
    // Without a request id of its own, the answer names the one the gateway made.
    let answer = owner.get::<Value>("/v1/projects/nowhere").await;
    let problem = answer.refused_with(StatusCode::NOT_FOUND, "not_found");
    let made = answer.headers["x-request-id"].to_str().unwrap();
    assert_eq!(answer.body["request_id"], made, "{problem:?}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn namespace_creates_and_deployment_actions_are_idempotent(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let owner = t.client(&t.tenant("acme").await);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, _) = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    let namespaces = format!("/v1/projects/{project}/clusters/{}/namespaces", cluster.id);
    let create = |key: &str, name: &str| {
        owner.request(reqwest::Method::POST, &namespaces).header("idempotency-key", key).json(&json!({ "name": name }))
    };
    let first: NamespaceView = owner.send(create("ns-1", "shop")).await.expect(StatusCode::CREATED);
    let again: NamespaceView = owner.send(create("ns-1", "shop")).await.expect(StatusCode::CREATED);
    assert_eq!(
        (first.name.as_str(), first.created_at),
        (again.name.as_str(), again.created_at),
        "the first answer again"
    );
    owner
        .send::<NamespaceView>(create("ns-1", "other"))
        .await
        .refused_with(StatusCode::UNPROCESSABLE_ENTITY, "idempotency_key_reused");

    let (deployment, _) = owner
        .create_deployment(&project, &cluster.id.to_string(), "app", json!({ "image": "registry.example/app:1" }))
        .await;
    let restart = format!(
        "/v1/projects/{project}/clusters/{}/namespaces/default/deployments/{}/restart",
        cluster.id, deployment.id
    );
    let send = || owner.request(reqwest::Method::POST, &restart).header("idempotency-key", "restart-1");
    let first: OperationView = owner.send(send()).await.expect(StatusCode::ACCEPTED);
    let again: OperationView = owner.send(send()).await.expect(StatusCode::ACCEPTED);
    assert_eq!(first.id, again.id, "a retried restart is the same restart");
    let revisions: Value = owner.get(&restart.replace("/restart", "/revisions")).await.expect(StatusCode::OK);
    let items = revisions.get("items").unwrap_or(&revisions);
    let restarts = items.as_array().unwrap().iter().filter(|r| r["cause"] == "restart").count();
    assert_eq!(restarts, 1, "{revisions}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn control_headers_that_are_not_text_are_refused(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let owner = t.client(&t.tenant("acme").await);
    let not_text = reqwest::header::HeaderValue::from_bytes(b"caf\xe9").unwrap();
    let request = owner
        .request(reqwest::Method::POST, &owner.org_path("/projects"))
        .header("idempotency-key", not_text.clone())
        .json(&json!({ "name": "web" }));
    let problem = owner.send::<Value>(request).await.refused_with(StatusCode::BAD_REQUEST, "invalid_request");
    assert_eq!(problem.fields(), ["Idempotency-Key"]);
    let project = owner.create_project("web").await;
    let request = owner
        .request(reqwest::Method::PATCH, &format!("/v1/projects/{}", project.id))
        .header("if-match", not_text)
        .json(&json!({ "labels": { "a": "b" } }));
    owner.send::<Value>(request).await.refused_with(StatusCode::PRECONDITION_FAILED, "precondition_failed");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_retried_secret_bearing_create_never_shows_the_secret_again(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let owner = t.client(&t.tenant("acme").await);
    let body = json!({ "url": "https://hooks.example.invalid/", "event_types": ["*"] });
    let send = || {
        owner
            .request(reqwest::Method::POST, &owner.org_path("/webhooks"))
            .header("idempotency-key", "endpoint-1")
            .json(&body)
    };
    let first: WebhookEndpointCreated = owner.send(send()).await.expect(StatusCode::CREATED);
    let again: WebhookEndpointCreated = owner.send(send()).await.expect(StatusCode::CREATED);
    assert!(first.secret.starts_with("whsec_"), "the first answer holds the secret");
    assert_eq!(again.endpoint.id, first.endpoint.id, "the retry names the same endpoint");
    assert!(again.secret.is_empty(), "the stored answer never held the secret");
    assert_eq!(t.count("webhook_endpoints").await, 1);
}

#[test]
fn a_body_naming_a_key_twice_is_refused() {
    // (The extractor's unit test covers the parser; this pins the behaviour
    // a proxy in front of the gateway relies on.)
    let twice = br#"{"name":"web","name":"other"}"#;
    let parsed = moke_api::http::extract::parse_json::<moke_api::model::ProjectCreate>(twice);
    assert!(parsed.is_err());
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_retried_credentials_revoke_is_the_same_revoke(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let owner = t.client(&t.tenant("acme").await);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, _) = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    let revoke = format!("/v1/projects/{project}/clusters/{}/credentials/revoke", cluster.id);
    let send = || owner.request(reqwest::Method::POST, &revoke).header("idempotency-key", "revoke-1");
    let first: OperationView = owner.send(send()).await.expect(StatusCode::ACCEPTED);
    let again: OperationView = owner.send(send()).await.expect(StatusCode::ACCEPTED);
    assert_eq!(first.id, again.id, "a retried revoke is the same revoke");
    let other: OperationView =
        owner.send(owner.request(reqwest::Method::POST, &revoke)).await.expect(StatusCode::ACCEPTED);
    assert_ne!(other.id, first.id, "without the key, a second revoke is a new one");
}
