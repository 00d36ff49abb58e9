//! `Idempotency-Key`: replays, mismatches, in-flight duplicates, release on
//! failure, and a storm of concurrent retries.

use moke_api::model::{OperationView, ProjectView};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{Answer, Problem, TestApp};

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn replay_mismatch_and_release(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let projects = owner.org_path("/projects");
    let post = async |key: &str, body: Value| -> Answer<ProjectView> {
        owner.send(owner.request(Method::POST, &projects).header("idempotency-key", key).json(&body)).await
    };

    let first = post("k1", json!({ "name": "web" })).await;
    let project = first.expect(StatusCode::CREATED);
    let replay = post("k1", json!({ "name": "web" })).await;
    assert_eq!((replay.status, &replay.body), (first.status, &first.body), "same key and body: the stored answer");
    post("k1", json!({ "name": "api" })).await.refused_with(StatusCode::UNPROCESSABLE_ENTITY, "idempotency_key_reused");
    assert_eq!(t.count("projects").await, 1);

    // A failed request frees its key for a corrected one.
    post("k2", json!({ "name": "web" })).await.refused(StatusCode::CONFLICT);
    post("k2", json!({ "name": "web2" })).await.expect(StatusCode::CREATED);

    // Keys belong to their principal: another token may reuse the text.
    let other = owner.with_token(&owner.create_token("ci", "member").await.token);
    other
        .send::<ProjectView>(
            other.request(Method::POST, &projects).header("idempotency-key", "k1").json(&json!({ "name": "api" })),
        )
        .await
        .expect(StatusCode::CREATED);

    // Cluster creates replay the same Operation.
    let clusters = format!("/v1/projects/{}/clusters", project.id);
    let body = json!({ "name": "prod", "spec": { "region": "eu-central-1" } });
    let create = || owner.request(Method::POST, &clusters).header("idempotency-key", "c1").json(&body);
    let a = owner.send::<OperationView>(create()).await;
    let b = owner.send::<OperationView>(create()).await;
    a.expect(StatusCode::ACCEPTED);
    assert_eq!((a.status, &a.body), (b.status, &b.body));
    assert_eq!(t.count("clusters").await, 1);
    assert_eq!(t.count("outbox").await, 1);

    let problem = post(&"x".repeat(300), json!({ "name": "long" })).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.errors.first().map(|e| e.field.as_str()), Some("Idempotency-Key"), "{problem:?}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_duplicate_in_flight_is_refused(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id;
    let clusters = format!("/v1/projects/{project}/clusters");
    let body = json!({ "name": "prod", "spec": { "region": "eu-central-1" } });
    let create = || owner.request(Method::POST, &clusters).header("idempotency-key", "slow").json(&body);

    // Hold the organization's quota lock so the first request stalls mid-transaction.
    let org_id: moke_api::ids::OrgId = acme.org.parse().unwrap();
    let mut blocker = t.pool.begin().await.unwrap();
    sqlx::query("SELECT id FROM organizations WHERE id = $1 FOR UPDATE")
        .bind(org_id.uuid())
        .execute(&mut *blocker)
        .await
        .unwrap();
    let first = {
        let request = create();
        tokio::spawn(async move {
            let response = request.send().await.unwrap();
            (response.status(), response.json::<Value>().await.unwrap())
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    owner.send::<OperationView>(create()).await.refused_with(StatusCode::CONFLICT, "idempotency_key_in_flight");
    blocker.rollback().await.unwrap();
    let (status, op) = first.await.unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{op}");
    let replay = owner.send::<OperationView>(create()).await;
    replay.expect(StatusCode::ACCEPTED);
    assert_eq!(replay.body, op, "the stored answer");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn fifty_concurrent_retries_make_one_resource(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id;
    let clusters = format!("/v1/projects/{project}/clusters");
    let body = json!({ "name": "prod", "spec": { "region": "eu-central-1" } });

    let attempts: Vec<_> = (0..50)
        .map(|_| {
            let request = owner.request(Method::POST, &clusters).header("idempotency-key", "storm").json(&body);
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
                let op: OperationView =
                    serde_json::from_value(body.clone()).unwrap_or_else(|e| panic!("not an operation ({e}): {body}"));
                operations.insert(op.id);
            }
            StatusCode::CONFLICT => {
                let problem: Problem =
                    serde_json::from_value(body.clone()).unwrap_or_else(|e| panic!("not a problem ({e}): {body}"));
                assert_eq!(problem.code, "idempotency_key_in_flight", "{problem:?}");
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(operations.len(), 1, "every success is the same operation");
    assert_eq!(t.count("clusters").await, 1);
    assert_eq!(t.count("operations").await, 1);
    assert_eq!(t.count("outbox").await, 1);
}
