//! What every answer has in common, which generated clients rely on:
//! `RateLimit-*` headers, problems that name their request and the quota
//! they hit, idempotent creates and actions, and control headers that are
//! refused rather than ignored when they are not text.

use moke_api::model::{
    DomainView, MemberView, NamespaceView, OperationView, Page, ServiceAccountView, SsoConfigView, TrustPolicyView,
    WebhookEndpointCreated,
};
use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{Client, OidcProvider, TestApp};

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

/// Walks an update guarded by `If-Match` from the ETag `first`, where
/// `update(etag, n)` makes the request that sets the `n`th of two values: a
/// stale ETag is refused with 412 naming the current one, the current one is
/// taken, the answer sends the new ETag (in the header and the body), and the
/// old one is stale from then on. Returns the ETag the resource ends at.
async fn walk_if_match(client: &Client<'_>, update: impl Fn(&str, usize) -> RequestBuilder, first: &str) -> String {
    let stale = |answer: crate::common::Answer<Value>, current: &str| {
        let problem = answer.refused_with(StatusCode::PRECONDITION_FAILED, "precondition_failed");
        assert!(problem.detail.contains(current), "the refusal names the current ETag {current}: {problem:?}");
    };
    stale(client.send(update("\"stale\"", 0)).await, first);
    let answer = client.send::<Value>(update(first, 0)).await;
    let second = answer.expect(StatusCode::OK)["etag"].as_str().unwrap().to_string();
    assert_eq!(answer.headers["etag"].to_str().unwrap(), second, "the ETag header is the body's etag");
    assert_ne!(second, first, "an update moves the ETag");
    stale(client.send(update(first, 1)).await, &second);
    let answer = client.send::<Value>(update(&second, 1)).await;
    let third = answer.expect(StatusCode::OK)["etag"].as_str().unwrap().to_string();
    assert_ne!(third, second, "every update moves the ETag");
    third
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn iam_updates_are_guarded_by_if_match(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let t = TestApp::start_with(options, connect, |c| c.auth.allow_insecure_issuers = true).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (dev, _) = t.member(&acme, "dev@acme.test", "viewer").await;

    // member_update: the list shows each member's ETag.
    let member_etag = async || -> String {
        let members: Page<MemberView> = owner.get(&owner.org_path("/members")).await.expect(StatusCode::OK);
        members.items.into_iter().find(|m| m.user.to_string() == dev).expect("dev is a member").etag
    };
    let first = member_etag().await;
    let path = owner.org_path(&format!("/members/{dev}"));
    let roles = ["member", "billing"];
    let update = |etag: &str, n: usize| {
        owner.request(Method::PATCH, &path).header("if-match", etag).json(&json!({ "role": roles[n] }))
    };
    let last = walk_if_match(&owner, update, &first).await;
    assert_eq!(member_etag().await, last, "the list shows the ETag the last update answered");

    // project_member_update: a grant answers its ETag; changes are guarded.
    let project = owner.create_project("web").await.id.to_string();
    let granted = owner
        .send::<Value>(
            owner
                .request(Method::PUT, &format!("/v1/projects/{project}/members/{dev}"))
                .json(&json!({ "role": "viewer" })),
        )
        .await;
    let first = granted.expect(StatusCode::OK)["etag"].as_str().unwrap().to_string();
    assert_eq!(granted.headers["etag"].to_str().unwrap(), first);
    let path = format!("/v1/projects/{project}/members/{dev}");
    let roles = ["developer", "admin"];
    let update = |etag: &str, n: usize| {
        owner.request(Method::PUT, &path).header("if-match", etag).json(&json!({ "role": roles[n] }))
    };
    let last = walk_if_match(&owner, update, &first).await;
    let members: Page<Value> = owner.get(&format!("/v1/projects/{project}/members")).await.expect(StatusCode::OK);
    assert_eq!(members.items[0]["etag"], last.as_str(), "the list shows the ETag the last update answered");
    assert_eq!(members.items[0]["role"], "admin");
    // Removed and granted again: the old ETag does not pass against the new grant.
    owner.delete::<Value>(&path).await.expect(StatusCode::NO_CONTENT);
    owner.send::<Value>(update("*", 0)).await.refused_with(StatusCode::PRECONDITION_FAILED, "precondition_failed");
    let regranted = owner.put::<Value>(&path, json!({ "role": "developer" })).await.expect(StatusCode::OK);
    assert_ne!(regranted["etag"], last.as_str(), "a new grant has a new ETag");
    owner.send::<Value>(update(&last, 1)).await.refused_with(StatusCode::PRECONDITION_FAILED, "precondition_failed");

    // sso_config_update: the view sends its ETag.
    let sso = |role: &str| {
        json!({ "issuer": idp.issuer, "client_id": "moke-sso", "client_secret": "moke-sso-secret",
                "allowed_domains": [], "default_role": role })
    };
    owner.put::<SsoConfigView>(&owner.org_path("/sso"), sso("viewer")).await.expect(StatusCode::OK);
    let view = owner.get::<SsoConfigView>(&owner.org_path("/sso")).await;
    let first = view.expect(StatusCode::OK).etag;
    assert_eq!(view.headers["etag"].to_str().unwrap(), first, "a GET sends the ETag");
    let path = owner.org_path("/sso");
    let roles = ["member", "viewer"];
    let update = |etag: &str, n: usize| owner.request(Method::PUT, &path).header("if-match", etag).json(&sso(roles[n]));
    let last = walk_if_match(&owner, update, &first).await;
    let view: SsoConfigView = owner.get(&owner.org_path("/sso")).await.expect(StatusCode::OK);
    assert_eq!((view.etag, view.default_role), (last, moke_iam::OrgRole::Viewer));
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn iam_lists_page(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    for name in ["b", "a", "c"] {
        let domain = json!({ "domain": format!("{name}.example.com") });
        owner.post::<DomainView>(&owner.org_path("/domains"), domain).await.expect(StatusCode::CREATED);
    }
    let account = owner.create_service_account("deployer", "member").await.id.to_string();
    let policies = owner.org_path(&format!("/service-accounts/{account}/trust-policies"));
    for repository in ["acme/web", "acme/api", "acme/cli"] {
        let policy =
            json!({ "issuer": "https://ci.example", "audience": "moke", "claims": { "repository": repository } });
        owner.post::<TrustPolicyView>(&policies, policy).await.expect(StatusCode::CREATED);
    }
    let project = owner.create_project("web").await.id.to_string();
    for i in 0..2 {
        let (user, _) = t.member(&acme, &format!("dev{i}@acme.test"), "member").await;
        owner.grant_project_role(&project, &user, "viewer").await;
    }
    owner.grant_project_role(&project, &account, "developer").await;

    for path in [owner.org_path("/domains"), policies, format!("/v1/projects/{project}/members")] {
        assert_eq!(owner.walk_pages(&path).await.len(), 3, "{path}");
        let problem = owner
            .get::<Value>(&format!("{path}?limit=0"))
            .await
            .refused_with(StatusCode::BAD_REQUEST, "invalid_request");
        assert_eq!(problem.fields(), ["limit"], "{path}");
    }
}
