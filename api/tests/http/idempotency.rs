//! `Idempotency-Key`: replays, mismatches, in-flight duplicates, release on
//! failure, and a storm of concurrent retries.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::TestApp;

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn replay_mismatch_and_release(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let projects = format!("/v1/orgs/{}/projects", acme.org);
    let post = |key: &str, body: Value| {
        t.send(t.request(Method::POST, &projects, &acme.token).header("idempotency-key", key).json(&body))
    };

    let first = post("k1", json!({ "name": "web" })).await;
    assert_eq!(first.0, StatusCode::CREATED);
    let replay = post("k1", json!({ "name": "web" })).await;
    assert_eq!(replay, first, "same key and body: the stored answer");
    let other = post("k1", json!({ "name": "api" })).await;
    assert_eq!((other.0, other.1["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("idempotency_key_reused")));
    assert_eq!(t.count("projects").await, 1);

    // A failed request frees its key for a corrected one.
    let clash = post("k2", json!({ "name": "web" })).await;
    assert_eq!(clash.0, StatusCode::CONFLICT);
    let fixed = post("k2", json!({ "name": "web2" })).await;
    assert_eq!(fixed.0, StatusCode::CREATED);

    // Keys belong to their principal: another token may reuse the text.
    let (_, other_token) =
        t.post(&format!("/v1/orgs/{}/tokens", acme.org), &acme.token, json!({ "name": "ci", "role": "member" })).await;
    let other_token = other_token["token"].as_str().unwrap();
    let (status, _) = t
        .send(
            t.request(Method::POST, &projects, other_token)
                .header("idempotency-key", "k1")
                .json(&json!({ "name": "api" })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);

    // Cluster creates replay the same Operation.
    let clusters = format!("/v1/projects/{}/clusters", first.1["id"].as_str().unwrap());
    let body = json!({ "name": "prod", "spec": { "region": "eu-central-1" } });
    let a = t.send(t.request(Method::POST, &clusters, &acme.token).header("idempotency-key", "c1").json(&body)).await;
    let b = t.send(t.request(Method::POST, &clusters, &acme.token).header("idempotency-key", "c1").json(&body)).await;
    assert_eq!(a.0, StatusCode::ACCEPTED);
    assert_eq!(a, b);
    assert_eq!(t.count("clusters").await, 1);
    assert_eq!(t.count("outbox").await, 1);

    let (status, problem) = t
        .send(
            t.request(Method::POST, &projects, &acme.token)
                .header("idempotency-key", "x".repeat(300))
                .json(&json!({ "name": "long" })),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(problem["errors"][0]["field"], "Idempotency-Key");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_duplicate_in_flight_is_refused(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let clusters = format!("/v1/projects/{project}/clusters");
    let body = json!({ "name": "prod", "spec": { "region": "eu-central-1" } });

    // Hold the organization's quota lock so the first request stalls mid-transaction.
    let org_id: moke_api::ids::OrgId = acme.org.parse().unwrap();
    let mut blocker = t.pool.begin().await.unwrap();
    sqlx::query("SELECT id FROM organizations WHERE id = $1 FOR UPDATE")
        .bind(org_id.uuid())
        .execute(&mut *blocker)
        .await
        .unwrap();
    let first = {
        let request = t.request(Method::POST, &clusters, &acme.token).header("idempotency-key", "slow").json(&body);
        tokio::spawn(async move {
            let response = request.send().await.unwrap();
            (response.status(), response.json::<Value>().await.unwrap())
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let (status, problem) =
        t.send(t.request(Method::POST, &clusters, &acme.token).header("idempotency-key", "slow").json(&body)).await;
    assert_eq!((status, problem["code"].as_str()), (StatusCode::CONFLICT, Some("idempotency_key_in_flight")));
    blocker.rollback().await.unwrap();
    let (status, op) = first.await.unwrap();
    assert_eq!(status, StatusCode::ACCEPTED);
    let replay =
        t.send(t.request(Method::POST, &clusters, &acme.token).header("idempotency-key", "slow").json(&body)).await;
    assert_eq!(replay, (StatusCode::ACCEPTED, op));
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn fifty_concurrent_retries_make_one_resource(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let clusters = format!("/v1/projects/{project}/clusters");
    let body = json!({ "name": "prod", "spec": { "region": "eu-central-1" } });

    let attempts: Vec<_> = (0..50)
        .map(|_| {
            let request =
                t.request(Method::POST, &clusters, &acme.token).header("idempotency-key", "storm").json(&body);
            tokio::spawn(async move {
                let response = request.send().await.unwrap();
                (response.status(), response.json::<Value>().await.unwrap())
            })
        })
        .collect();
    let mut operations = std::collections::HashSet::new();
    for attempt in attempts {
        let (status, body) = attempt.await.unwrap();
        match status {
            StatusCode::ACCEPTED => {
                operations.insert(body["id"].as_str().unwrap().to_string());
            }
            StatusCode::CONFLICT => assert_eq!(body["code"], "idempotency_key_in_flight"),
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(operations.len(), 1, "every success is the same operation");
    assert_eq!(t.count("clusters").await, 1);
    assert_eq!(t.count("operations").await, 1);
    assert_eq!(t.count("outbox").await, 1);
}
