//! Tenant isolation on every route: another organization's resources are a
//! 404 with nothing of theirs in the answer. The route list comes from the
//! OpenAPI document, so a new route without a case here fails the test.

use std::collections::BTreeMap;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::TestApp;

/// Routes that serve no tenant data.
const PUBLIC: [&str; 3] = ["GET /v1/regions", "GET /v1/kubernetes-versions", "GET /v1/machine-types"];

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn another_orgs_resources_are_not_found_on_every_route(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let victim = t.tenant("victim").await;
    let intruder = t.tenant("intruder").await;
    let project = t.project(&victim, "secret-web").await;
    let (cluster, op) = t.cluster(&victim, &project, "secret-prod").await;
    let (pool, _) = t.node_pool(&victim, &project, &cluster, "secret-pool", 1).await;
    let (_, token) = t
        .post(
            &format!("/v1/orgs/{}/tokens", victim.org),
            &victim.token,
            json!({ "name": "secret-token", "role": "viewer" }),
        )
        .await;
    let token = token["id"].as_str().unwrap().to_string();
    let org = victim.org.clone();
    let op = op["id"].as_str().unwrap().to_string();

    let cluster_body = json!({ "name": "x", "spec": { "region": "eu-central-1" } });
    let pool_body = json!({ "name": "x", "spec": { "machine_type": "bm.small", "count": 1 } });
    let mut cases: BTreeMap<&str, Vec<(String, Option<Value>)>> = BTreeMap::new();
    let mut case = |route: &'static str, path: String, body: Option<Value>| {
        cases.entry(route).or_default().push((path, body));
    };
    case("GET /v1/orgs/{org}", format!("/v1/orgs/{org}"), None);
    case("GET /v1/orgs/{org}/quotas", format!("/v1/orgs/{org}/quotas"), None);
    case("GET /v1/orgs/{org}/audit-events", format!("/v1/orgs/{org}/audit-events"), None);
    case("GET /v1/orgs/{org}/tokens", format!("/v1/orgs/{org}/tokens"), None);
    case(
        "POST /v1/orgs/{org}/tokens",
        format!("/v1/orgs/{org}/tokens"),
        Some(json!({ "name": "x", "role": "viewer" })),
    );
    case("GET /v1/orgs/{org}/tokens/{token}", format!("/v1/orgs/{org}/tokens/{token}"), None);
    case("DELETE /v1/orgs/{org}/tokens/{token}", format!("/v1/orgs/{org}/tokens/{token}"), None);
    case("GET /v1/orgs/{org}/projects", format!("/v1/orgs/{org}/projects"), None);
    case("POST /v1/orgs/{org}/projects", format!("/v1/orgs/{org}/projects"), Some(json!({ "name": "x" })));
    for p in [project.clone(), "secret-web".to_string()] {
        case("GET /v1/projects/{project}", format!("/v1/projects/{p}"), None);
        case("PATCH /v1/projects/{project}", format!("/v1/projects/{p}"), Some(json!({ "labels": { "a": "b" } })));
        case("DELETE /v1/projects/{project}", format!("/v1/projects/{p}"), None);
        case("GET /v1/projects/{project}/clusters", format!("/v1/projects/{p}/clusters"), None);
        case("POST /v1/projects/{project}/clusters", format!("/v1/projects/{p}/clusters"), Some(cluster_body.clone()));
        for c in [cluster.clone(), "secret-prod".to_string()] {
            let cp = format!("/v1/projects/{p}/clusters/{c}");
            case("GET /v1/projects/{project}/clusters/{cluster}", cp.clone(), None);
            case(
                "PATCH /v1/projects/{project}/clusters/{cluster}",
                cp.clone(),
                Some(json!({ "labels": { "a": "b" } })),
            );
            case("DELETE /v1/projects/{project}/clusters/{cluster}", cp.clone(), None);
            case("GET /v1/projects/{project}/clusters/{cluster}/node-pools", format!("{cp}/node-pools"), None);
            case(
                "POST /v1/projects/{project}/clusters/{cluster}/node-pools",
                format!("{cp}/node-pools"),
                Some(pool_body.clone()),
            );
            let pp = format!("{cp}/node-pools/{pool}");
            case("GET /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}", pp.clone(), None);
            case(
                "PATCH /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}",
                pp.clone(),
                Some(json!({ "spec": { "count": 2 } })),
            );
            case("DELETE /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}", pp, None);
        }
    }
    case("GET /v1/operations/{operation}", format!("/v1/operations/{op}"), None);
    case("GET /v1/operations/{operation}", format!("/v1/operations/{op}?wait=1s"), None);

    // Every route in the OpenAPI document has a case (or is public, or is org_list below).
    let spec = serde_json::to_value(moke_api::http::openapi()).unwrap();
    let mut routes: Vec<String> = Vec::new();
    for (path, item) in spec["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            routes.push(format!("{} {path}", method.to_uppercase()));
        }
    }
    for route in &routes {
        if PUBLIC.contains(&route.as_str()) || route == "GET /v1/orgs" {
            continue;
        }
        assert!(cases.contains_key(route.as_str()), "route {route} has no tenant-isolation case: add one");
    }

    for (route, requests) in &cases {
        for (path, body) in requests {
            let method = Method::from_bytes(route.split(' ').next().unwrap().as_bytes()).unwrap();
            let mut request = t.request(method, path, &intruder.token);
            if let Some(body) = body {
                request = request.json(body);
            }
            let (status, answer) = t.send(request).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{route} at {path} answered {status}: {answer}");
            // Nothing of the victim's beyond what the intruder itself sent.
            let text = answer.to_string();
            for secret in ["secret-web", "secret-prod", "secret-pool", "secret-token", &project, &cluster, &pool, &op] {
                if !path.contains(secret) {
                    assert!(!text.contains(secret), "{route} leaked {secret}: {text}");
                }
            }
        }
    }

    // org_list shows only the caller's organization.
    let (_, orgs) = t.get("/v1/orgs", &intruder.token).await;
    let ids: Vec<&str> = orgs["items"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [intruder.org.as_str()]);

    // Nothing of the victim's changed.
    let (status, view) = t.get(&format!("/v1/projects/{project}/clusters/{cluster}"), &victim.token).await;
    assert_eq!(status, StatusCode::OK);
    assert!(view["labels"].as_object().unwrap().is_empty());
    assert!(view["deletion_requested_at"].is_null());
    let (status, token_view) = t.get(&format!("/v1/orgs/{org}/tokens/{token}"), &victim.token).await;
    assert_eq!(status, StatusCode::OK);
    assert!(token_view["revoked_at"].is_null());
    assert_eq!(t.count("projects").await, 1);
}
