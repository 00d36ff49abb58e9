//! The parity scenario every surface runs: create project → clusters → node
//! pool → list with pagination → update with a stale etag → a validation
//! error with two bad fields → delete, with an idempotent retry on the way.
//! REST runs it here; the gRPC and GraphQL tests run it their way and compare.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common::{Tenant, TestApp};

/// What the REST run saw, for the other surfaces to match.
pub struct RestRun {
    pub project: String,
    pub first_op: Value,
    pub stale: Value,
    pub invalid: Value,
}

pub async fn over_rest(t: &TestApp, rest: &Tenant) -> RestRun {
    let project = t.project(rest, "web").await;
    let clusters = format!("/v1/projects/{project}/clusters");
    let cluster_body = json!({ "name": "prod", "spec": { "region": "eu-central-1", "kubernetes_version": "1.32", "control_plane": { "replicas": 1 } } });
    let create =
        || t.request(Method::POST, &clusters, &rest.token).header("idempotency-key", "same").json(&cluster_body);
    let (status, first_op) = t.send(create()).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (_, retry) = t.send(create()).await;
    assert_eq!(retry["id"], first_op["id"]);
    t.cluster(rest, &project, "dev").await;
    t.node_pool(rest, &project, "prod", "workers", 2).await;
    let (_, page1) = t.get(&format!("{clusters}?limit=1"), &rest.token).await;
    let (_, page2) =
        t.get(&format!("{clusters}?limit=1&page_token={}", page1["next_page"].as_str().unwrap()), &rest.token).await;
    assert_eq!(page2["items"][0]["name"], "dev");
    let (_, view) = t.get(&format!("{clusters}/prod"), &rest.token).await;
    t.patch(&format!("{clusters}/prod"), &rest.token, json!({ "labels": { "tier": "gold" } })).await;
    let (status, stale) = t
        .send(
            t.request(Method::PATCH, &format!("{clusters}/prod"), &rest.token)
                .header("if-match", view["etag"].as_str().unwrap())
                .json(&json!({ "labels": { "tier": "lead" } })),
        )
        .await;
    assert_eq!(status, StatusCode::PRECONDITION_FAILED);
    let (status, invalid) = t
        .post(
            &clusters,
            &rest.token,
            json!({ "name": "bad", "spec": { "region": "mars-1", "control_plane": { "replicas": 2 } } }),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    t.delete(&format!("{clusters}/prod/node-pools/workers"), &rest.token).await;
    RestRun { project, first_op, stale, invalid }
}

/// The surface-independent part of each audit event.
fn audit_trail(events: &Value) -> Vec<(String, String, String, String)> {
    let text = |e: &Value, key: &str| e[key].as_str().unwrap_or_default().to_string();
    events["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (text(e, "action"), text(e, "outcome"), text(e, "resource_type"), text(&e["principal"], "kind")))
        .collect()
}

/// Both tenants ran the scenario: same resources (ids and times aside) and
/// the same audit trail.
pub async fn assert_same_outcome(t: &TestApp, rest: &Tenant, other: &Tenant) {
    let strip = |mut v: Value| {
        for key in ["id", "project_id", "cluster_id", "etag", "created_at", "updated_at", "deletion_requested_at"] {
            v.as_object_mut().unwrap().remove(key);
        }
        v
    };
    for path in ["/clusters/prod", "/clusters/dev", "/clusters/prod/node-pools/workers"] {
        let (_, a) = t.get(&format!("/v1/projects/web{path}"), &rest.token).await;
        let (_, b) = t.get(&format!("/v1/projects/web{path}"), &other.token).await;
        assert_eq!(strip(a), strip(b), "{path}");
    }
    let (_, rest_audit) = t.get(&format!("/v1/orgs/{}/audit-events", rest.org), &rest.token).await;
    let (_, other_audit) = t.get(&format!("/v1/orgs/{}/audit-events", other.org), &other.token).await;
    assert_eq!(audit_trail(&rest_audit), audit_trail(&other_audit));
}
