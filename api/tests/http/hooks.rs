//! Inbound deploy webhooks: a signed delivery becomes a revision that the
//! simulated region rolls out, and CI can wait for it; forged, stale,
//! replayed, malformed and disallowed deliveries change nothing.

use moke_api::app::integrations::signing::{github_signature, sign};
use moke_api::model::{
    DeployHookCreated, DeployHookView, DeployPolicyView, DeploymentView, HookAnswer, OperationStatus, OperationView,
    Page, RevisionView, WebhookEndpointCreated,
};
use moke_region::{AgentConfig, Transport};
use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{Answer, BackgroundAgent, Client, Receiver, TestApp, zones};

struct Setup<'a> {
    owner: Client<'a>,
    project: String,
    deployment_path: String,
    _region: BackgroundAgent,
}

impl Setup<'_> {
    /// The deployment `web` as it stands now.
    async fn web(&self) -> DeploymentView {
        self.owner.get(&self.deployment_path).await.expect(StatusCode::OK)
    }
}

/// A running deployment `web` on `registry.example.com/shop/web:1`, and a
/// policy allowing that registry path and the `main` branch.
async fn setup(t: &TestApp) -> Setup<'_> {
    let region = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("shop").await.id.to_string();
    let (cluster, _) = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    let cluster = cluster.id.to_string();
    let (_, op) = owner.create_node_pool(&project, &cluster, "workers", 3).await;
    wait(&owner, &op).await;
    let spec = json!({ "image": "registry.example.com/shop/web:1", "replicas": 2 });
    let (_, op) = owner.create_deployment(&project, &cluster, "web", spec).await;
    assert_eq!(wait(&owner, &op).await.status, OperationStatus::Succeeded);
    let policy = json!({ "allowed_image_prefixes": ["registry.example.com/shop/"], "allowed_branches": ["main"] });
    owner
        .put::<DeployPolicyView>(&format!("/v1/projects/{project}/deploy-policy"), policy)
        .await
        .expect(StatusCode::OK);
    let deployment_path = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/deployments/web");
    Setup { owner, project, deployment_path, _region: region }
}

/// `op` once it has finished (waiting up to 60 s on the server).
async fn wait(owner: &Client<'_>, op: &OperationView) -> OperationView {
    owner.get(&format!("/v1/operations/{}?wait=60s", op.id)).await.expect(StatusCode::OK)
}

/// A new deploy hook: its delivery URL and signing secret.
async fn hook(s: &Setup<'_>, body: Value) -> (String, String) {
    let created: DeployHookCreated =
        s.owner.post(&format!("/v1/projects/{}/hooks", s.project), body).await.expect(StatusCode::CREATED);
    (created.hook.url, created.secret)
}

/// A delivery to a hook's `url` (no bearer credential: the signature is one).
fn delivery(t: &TestApp, url: &str) -> RequestBuilder {
    t.anonymous().request(Method::POST, url)
}

/// A Standard Webhooks delivery, signed at `timestamp` with `secret`: the
/// rollout's operation (202), a [`HookAnswer`] (200), or a refusal.
pub async fn standard<T>(t: &TestApp, url: &str, secret: &str, id: &str, timestamp: i64, body: &str) -> Answer<T> {
    let request = delivery(t, url)
        .header("webhook-id", id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", sign(secret, id, timestamp, body.as_bytes()))
        .header("content-type", "application/json")
        .body(body.to_string());
    t.anonymous().send(request).await
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_signed_delivery_rolls_out_and_ci_waits_for_it(options: PgPoolOptions, connect: PgConnectOptions) {
    // The test harness lets the outbound guard reach the local receiver.
    let t = TestApp::start(options, connect).await;
    let s = setup(&t).await;
    // The customer listens for rollouts.
    let receiver = Receiver::start(vec![]).await;
    let listener: WebhookEndpointCreated = s
        .owner
        .post(&s.owner.org_path("/webhooks"), json!({ "url": receiver.url, "event_types": ["deployment.rollout.*"] }))
        .await
        .expect(StatusCode::CREATED);
    let listener_secret = listener.secret;
    let (url, secret) = hook(&s, json!({ "name": "ci", "target": { "cluster": "prod", "deployment": "web" } })).await;
    assert!(secret.starts_with("whsec_"));
    let stored: String = sqlx::query_scalar("SELECT secret_enc FROM deploy_hooks").fetch_one(&t.pool).await.unwrap();
    assert!(stored.starts_with("vault:v") && !stored.contains(&secret), "only Vault ciphertext is stored");
    let listed = s.owner.get::<Page<DeployHookView>>(&format!("/v1/projects/{}/hooks", s.project)).await;
    assert_eq!(listed.expect(StatusCode::OK).items.len(), 1);
    assert!(listed.body["items"][0].get("secret").is_none(), "the secret is shown once: {listed:?}");

    let op: OperationView =
        standard(&t, &url, &secret, "msg_1", now(), r#"{"image": "registry.example.com/shop/web:2"}"#)
            .await
            .expect(StatusCode::ACCEPTED);
    // What a CI step does: block until the rollout is done.
    assert_eq!(wait(&s.owner, &op).await.status, OperationStatus::Succeeded);
    let web = s.web().await;
    assert_eq!(web.spec.image, "registry.example.com/shop/web:2");
    assert!(web.status.pods.iter().all(|p| p.revision == 2), "{web:?}");
    let revisions: Page<RevisionView> =
        s.owner.get(&format!("{}/revisions", s.deployment_path)).await.expect(StatusCode::OK);
    assert_eq!(revisions.items[0].cause, "webhook ci (standard deploy)");
    // ... and the customer's receiver hears that the rollout succeeded, signed.
    let heard = receiver.event("deployment.rollout.succeeded").await;
    assert!(heard.signed_with(&listener_secret));
    let heard_op = receiver
        .requests()
        .into_iter()
        .find(|r| r.json()["data"]["operation"]["id"] == op.id.to_string().as_str())
        .unwrap_or_else(|| panic!("no rollout event for {op:?}"));
    assert_eq!(heard_op.json()["type"], "deployment.rollout.succeeded");

    // The same delivery again is refused and changes nothing.
    standard::<OperationView>(&t, &url, &secret, "msg_1", now(), r#"{"image": "registry.example.com/shop/web:2"}"#)
        .await
        .refused_with(StatusCode::CONFLICT, "duplicate_delivery");

    // A tag, or a digest, applies to the deployment's repository.
    let op = standard(&t, &url, &secret, "msg_2", now(), r#"{"tag": "3"}"#).await.expect(StatusCode::ACCEPTED);
    wait(&s.owner, &op).await;
    let op = standard(&t, &url, &secret, "msg_3", now(), r#"{"digest": "sha256:0123abcd"}"#)
        .await
        .expect(StatusCode::ACCEPTED);
    wait(&s.owner, &op).await;
    assert_eq!(s.web().await.spec.image, "registry.example.com/shop/web@sha256:0123abcd");

    // A ping answers 200 and deploys nothing.
    let pong: HookAnswer =
        standard(&t, &url, &secret, "msg_4", now(), r#"{"type": "ping"}"#).await.expect(StatusCode::OK);
    assert_eq!(pong.outcome, "pong");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn forged_stale_malformed_and_disallowed_deliveries_change_nothing(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let s = setup(&t).await;
    let (url, secret) = hook(&s, json!({ "name": "ci", "target": { "cluster": "prod", "deployment": "web" } })).await;
    let revisions = async || t.count("deployment_revisions").await;
    let before = revisions().await;
    let body = r#"{"image": "registry.example.com/shop/web:2"}"#;

    let forged = "whsec_c29tZW9uZSBlbHNlJ3Mgc2VjcmV0IGtleSEhIQ==";
    let answer = standard::<OperationView>(&t, &url, forged, "m1", now(), body).await;
    answer.refused(StatusCode::UNAUTHORIZED);
    // The raw answer, every field of it.
    assert!(!answer.body.to_string().contains("signature"), "no detail that helps an attacker: {answer:?}");
    standard::<OperationView>(&t, &url, &secret, "m2", now() - 301, body)
        .await
        .about("older than the 5-minute tolerance")
        .refused(StatusCode::UNAUTHORIZED);
    standard::<OperationView>(&t, &url, &secret, "m3", now() + 301, body)
        .await
        .about("newer than the 5-minute tolerance")
        .refused(StatusCode::UNAUTHORIZED);
    let unsigned = delivery(&t, &url).body(body.to_string());
    t.anonymous().send::<OperationView>(unsigned).await.refused(StatusCode::UNAUTHORIZED);

    standard::<OperationView>(&t, "/v1/hooks/hk_01a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6", &secret, "m4", now(), body)
        .await
        .refused(StatusCode::NOT_FOUND);
    standard::<OperationView>(&t, "/v1/hooks/nonsense", &secret, "m4", now(), body)
        .await
        .refused(StatusCode::NOT_FOUND);

    standard::<OperationView>(&t, &url, &secret, "m5", now(), "{not json").await.refused(StatusCode::BAD_REQUEST);
    let problem = standard::<OperationView>(&t, &url, &secret, "m6", now(), r#"{"image": "docker.io/evil/miner:1"}"#)
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["image"], "{problem:?}");
    let problem = standard::<OperationView>(&t, &url, &secret, "m7", now(), r#"{"tag": "1", "digest": "sha256:00"}"#)
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["image"]);
    assert_eq!(revisions().await, before, "nothing was half-applied");
    assert_eq!(t.count("hook_deliveries").await, 0, "refused deliveries are not recorded as received");

    // A deleted hook is gone.
    let hook_id = url.rsplit('/').next().unwrap();
    s.owner.delete::<()>(&format!("/v1/projects/{}/hooks/{hook_id}", s.project)).await.expect(StatusCode::NO_CONTENT);
    standard::<OperationView>(&t, &url, &secret, "m8", now(), body).await.refused(StatusCode::NOT_FOUND);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_rotated_secret_works_at_once_and_the_old_one_until_it_expires(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let s = setup(&t).await;
    let (url, old) = hook(&s, json!({ "name": "ci", "target": { "cluster": "prod", "deployment": "web" } })).await;
    let hook_id = url.rsplit('/').next().unwrap();
    let rotate = format!("/v1/projects/{}/hooks/{hook_id}/rotate-secret", s.project);
    let image = |n: u32| format!(r#"{{"image": "registry.example.com/shop/web:{n}"}}"#);

    let problem = s
        .owner
        .post::<DeployHookCreated>(&rotate, json!({ "previous_secret_valid_seconds": 604_801 }))
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["previous_secret_valid_seconds"]);

    let rotated: DeployHookCreated = s.owner.post(&rotate, json!({})).await.expect(StatusCode::OK);
    let new = rotated.secret.clone();
    assert_ne!(new, old);
    let until = rotated.hook.previous_secret_expires_at.unwrap_or_else(|| panic!("{rotated:?}"));
    let hours = (until - chrono::Utc::now()).num_minutes() as f64 / 60.0;
    assert!((23.9..=24.0).contains(&hours), "the old secret stays valid for 24 h by default: {hours}");
    // During the switch-over both are accepted: CI updates its secret without a refused deploy.
    standard::<OperationView>(&t, &url, &new, "r1", now(), &image(2)).await.expect(StatusCode::ACCEPTED);
    standard::<OperationView>(&t, &url, &old, "r2", now(), &image(3)).await.expect(StatusCode::ACCEPTED);
    let listed = s.owner.get::<Page<DeployHookView>>(&format!("/v1/projects/{}/hooks", s.project)).await;
    let first = &listed.expect(StatusCode::OK).items[0];
    assert_eq!(first.previous_secret_expires_at, rotated.hook.previous_secret_expires_at);
    assert!(listed.body["items"][0].get("secret").is_none(), "secrets are shown only when made: {listed:?}");

    // A leaked secret is revoked at once; the one before it is gone too.
    let revoked: DeployHookCreated =
        s.owner.post(&rotate, json!({ "previous_secret_valid_seconds": 0 })).await.expect(StatusCode::OK);
    let newest = revoked.secret.as_str();
    assert!(revoked.hook.previous_secret_expires_at.is_none(), "{revoked:?}");
    for (id, secret) in [("r3", &old), ("r4", &new)] {
        standard::<OperationView>(&t, &url, secret, id, now(), &image(4)).await.refused(StatusCode::UNAUTHORIZED);
    }
    standard::<OperationView>(&t, &url, newest, "r5", now(), &image(4)).await.expect(StatusCode::ACCEPTED);
    let stored: Vec<Option<String>> =
        sqlx::query_scalar("SELECT previous_secret_enc FROM deploy_hooks").fetch_all(&t.pool).await.unwrap();
    assert_eq!(stored, [None]);
    let audited: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_events WHERE action = 'deploy_hook.rotate_secret'")
            .fetch_one(&t.pool)
            .await
            .unwrap();
    assert_eq!(audited, 2);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn github_and_gitlab_deliveries(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let s = setup(&t).await;
    let (url, secret) = hook(
        &s,
        json!({
            "name": "repos",
            "rules": [{ "repository": "acme/web", "target": { "cluster": "prod", "deployment": "web" } }],
            "image_template": "registry.example.com/shop/web:{sha}",
        }),
    )
    .await;
    let ci = t.anonymous();
    let github = |event: &str, id: &str, body: Value, key: &str| {
        let body = body.to_string();
        delivery(&t, &url)
            .header("x-github-event", event)
            .header("x-github-delivery", id)
            .header("x-hub-signature-256", github_signature(key, body.as_bytes()))
            .body(body)
    };
    let repository = json!({ "full_name": "acme/web" });

    let pong: HookAnswer =
        ci.send(github("ping", "d0", json!({ "zen": "Design for failure." }), &secret)).await.expect(StatusCode::OK);
    assert_eq!(pong.outcome, "pong");
    let package = json!({
        "action": "published",
        "repository": repository,
        "registry_package": { "package_version": { "package_url": "registry.example.com/shop/web:gh-1" } },
    });
    ci.send::<OperationView>(github("registry_package", "d1", package.clone(), "not the secret"))
        .await
        .refused(StatusCode::UNAUTHORIZED);
    let op = ci.send(github("registry_package", "d1", package.clone(), &secret)).await.expect(StatusCode::ACCEPTED);
    assert_eq!(wait(&s.owner, &op).await.status, OperationStatus::Succeeded);
    ci.send::<OperationView>(github("registry_package", "d1", package.clone(), &secret))
        .await
        .about("de-duplicated by X-GitHub-Delivery")
        .refused(StatusCode::CONFLICT);
    // GitHub's signature does not cover the delivery id: a captured body
    // replayed under a fresh id is refused too.
    ci.send::<OperationView>(github("registry_package", "d1-replayed", package, &secret))
        .await
        .refused_with(StatusCode::CONFLICT, "duplicate_delivery");

    let run = |branch: &str| {
        json!({ "action": "completed", "repository": repository,
                "workflow_run": { "conclusion": "success", "head_branch": branch, "head_sha": "abc123" } })
    };
    let ignored: HookAnswer =
        ci.send(github("workflow_run", "d2", run("feature/x"), &secret)).await.expect(StatusCode::OK);
    assert_eq!(ignored.outcome, "ignored", "{ignored:?}");
    let op = ci.send(github("workflow_run", "d3", run("main"), &secret)).await.expect(StatusCode::ACCEPTED);
    wait(&s.owner, &op).await;
    assert_eq!(s.web().await.spec.image, "registry.example.com/shop/web:abc123");
    let other_repo = json!({ "action": "completed", "repository": { "full_name": "acme/other" },
        "workflow_run": { "conclusion": "success", "head_branch": "main", "head_sha": "abc" } });
    let problem = ci
        .send::<OperationView>(github("workflow_run", "d4", other_repo, &secret))
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["repository"]);

    // GitLab: the secret token, and the signed form.
    let pipeline = json!({ "object_kind": "pipeline", "project": { "path_with_namespace": "acme/web" },
        "object_attributes": { "status": "success", "ref": "main", "sha": "def456", "tag": false } });
    let gitlab = |token: &str| {
        delivery(&t, &url)
            .header("x-gitlab-event", "Pipeline Hook")
            .header("x-gitlab-event-uuid", format!("uuid-{token}"))
            .header("x-gitlab-token", token)
            .body(pipeline.to_string())
    };
    ci.send::<OperationView>(gitlab("wrong")).await.refused(StatusCode::UNAUTHORIZED);
    let op = ci.send(gitlab(&secret)).await.expect(StatusCode::ACCEPTED);
    wait(&s.owner, &op).await;
    assert_eq!(s.web().await.spec.image, "registry.example.com/shop/web:def456");
    let tag_push = json!({ "object_kind": "tag_push", "ref": "refs/tags/v2.0.0", "checkout_sha": "0ff1ce",
        "project": { "path_with_namespace": "acme/web" } })
    .to_string();
    let timestamp = now();
    let signed = delivery(&t, &url)
        .header("x-gitlab-event", "Tag Push Hook")
        .header("webhook-id", "gl-1")
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", sign(&secret, "gl-1", timestamp, tag_push.as_bytes()))
        .body(tag_push);
    let op = ci.send(signed).await.expect(StatusCode::ACCEPTED);
    wait(&s.owner, &op).await;
    assert_eq!(s.web().await.spec.image, "registry.example.com/shop/web:0ff1ce");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_retried_rotation_rotates_once_and_never_shows_the_secret_again(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let s = setup(&t).await;
    let (url, old) = hook(&s, json!({ "name": "ci", "target": { "cluster": "prod", "deployment": "web" } })).await;
    let hook_id = url.rsplit('/').next().unwrap();
    let rotate = format!("/v1/projects/{}/hooks/{hook_id}/rotate-secret", s.project);
    let send = || {
        s.owner
            .request(Method::POST, &rotate)
            .header("idempotency-key", "rotate-1")
            .json(&json!({ "previous_secret_valid_seconds": 0 }))
    };
    let first: DeployHookCreated = s.owner.send(send()).await.expect(StatusCode::OK);
    let again: DeployHookCreated = s.owner.send(send()).await.expect(StatusCode::OK);
    assert!(again.secret.is_empty(), "the stored answer never held the secret");
    assert_eq!(again.hook.id, first.hook.id);
    // The key is answered only under the hook's own project: replayed under
    // another project's path (one the caller manages, or none at all) it is
    // refused, not answered.
    let other = s.owner.create_project("other").await.id.to_string();
    for (project, status, code) in [
        (other.as_str(), StatusCode::UNPROCESSABLE_ENTITY, "idempotency_key_reused"),
        ("nowhere", StatusCode::NOT_FOUND, "not_found"),
    ] {
        let elsewhere = s
            .owner
            .request(Method::POST, &format!("/v1/projects/{project}/hooks/{hook_id}/rotate-secret"))
            .header("idempotency-key", "rotate-1")
            .json(&json!({ "previous_secret_valid_seconds": 0 }));
        s.owner.send::<Value>(elsewhere).await.refused_with(status, code);
    }
    // One rotation, not two: the first answer's secret is the one in force.
    let image = r#"{"image": "registry.example.com/shop/web:2"}"#;
    standard::<OperationView>(&t, &url, &first.secret, "r1", now(), image).await.expect(StatusCode::ACCEPTED);
    standard::<Value>(&t, &url, &old, "r2", now(), image).await.refused(StatusCode::UNAUTHORIZED);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_deploy_policy_is_guarded_by_if_match(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let owner = t.client(&t.tenant("acme").await);
    let project = owner.create_project("shop").await.id.to_string();
    let path = format!("/v1/projects/{project}/deploy-policy");
    let policy = |branch: &str| json!({ "allowed_image_prefixes": ["registry.example.com/shop/"], "allowed_branches": [branch] });
    let put =
        |etag: &str, branch: &str| owner.request(Method::PUT, &path).header("if-match", etag).json(&policy(branch));
    let stale = |answer: Answer<Value>, current: &str| {
        let problem = answer.refused_with(StatusCode::PRECONDITION_FAILED, "precondition_failed");
        assert!(problem.detail.contains(current), "the refusal names the current ETag {current}: {problem:?}");
    };

    // Never set: the default policy, with an ETag a first update can match.
    let view = owner.get::<DeployPolicyView>(&path).await;
    let unset = view.expect(StatusCode::OK);
    assert_eq!((unset.allowed_branches.as_slice(), unset.updated_at), (["main".to_string()].as_slice(), None));
    assert_eq!(view.headers["etag"].to_str().unwrap(), unset.etag, "a GET sends the ETag");
    stale(owner.send(put("\"stale\"", "main")).await, &unset.etag);
    let answer = owner.send::<DeployPolicyView>(put(&unset.etag, "main")).await;
    let first = answer.expect(StatusCode::OK);
    assert_eq!(answer.headers["etag"].to_str().unwrap(), first.etag, "the ETag header is the body's etag");
    assert_ne!(first.etag, unset.etag);

    // A stale ETag is refused naming the current one and changes nothing; the current one is taken.
    stale(owner.send(put(&unset.etag, "release")).await, &first.etag);
    let answer = owner.send::<DeployPolicyView>(put(&first.etag, "release")).await;
    let second = answer.expect(StatusCode::OK);
    assert_ne!(second.etag, first.etag, "every update moves the ETag");
    assert_eq!(second.allowed_branches, ["release"]);
    stale(owner.send(put(&first.etag, "main")).await, &second.etag);
    let view = owner.get::<DeployPolicyView>(&path).await;
    assert_eq!(view.expect(StatusCode::OK), second, "the refused updates changed nothing");
    assert_eq!(view.headers["etag"].to_str().unwrap(), second.etag);

    // Without If-Match an update is unconditional.
    let third: DeployPolicyView = owner.put(&path, policy("main")).await.expect(StatusCode::OK);
    assert_ne!(third.etag, second.etag);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn deploy_hooks_page(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let owner = t.client(&t.tenant("acme").await);
    let project = owner.create_project("shop").await.id.to_string();
    let cluster = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await.0.id.to_string();
    owner.create_deployment(&project, &cluster, "web", json!({ "image": "registry.example/web:1" })).await;
    let hooks = format!("/v1/projects/{project}/hooks");
    for name in ["ci-b", "ci-a", "ci-c"] {
        let body = json!({ "name": name, "target": { "cluster": "prod", "deployment": "web" } });
        owner.post::<DeployHookCreated>(&hooks, body).await.expect(StatusCode::CREATED);
    }
    let names: Vec<String> =
        owner.walk_pages(&hooks).await.iter().map(|h| h["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(names, ["ci-b", "ci-a", "ci-c"], "in creation order");
}

/// The organization's policy narrows what may be deployed on every path:
/// images from its registries only (a create, an update, a CI delivery),
/// CI deliveries from its branches only; a rollback goes back as it was; the
/// change's audit event names the version that allowed it.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_organization_policy_narrows_images_and_branches(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let s = setup(&t).await;
    let tenant = crate::common::Tenant { org: s.owner.org.clone(), token: s.owner.token.clone() };
    let (_, ada) = t.member(&tenant, "ada@acme.test", "owner").await;
    let ada = s.owner.with_token(&ada);
    let policy = ada.org_path("/policy");

    // Bad rules are refused by field: a bare host would allow "host.evil.example".
    let bad = json!({ "deploy": { "allowed_image_prefixes": ["registry.example.com"], "allowed_branches": ["main", "main"] } });
    let problem = ada.put::<Value>(&policy, bad).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["deploy.allowed_image_prefixes[0]", "deploy.allowed_branches[1]"]);

    // A prefix must name a registry host: `acme/` would mean Docker Hub's acme.
    let hub = json!({ "deploy": { "allowed_image_prefixes": ["acme/", "Registry.example.com/"] } });
    let problem = ada.put::<Value>(&policy, hub).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["deploy.allowed_image_prefixes[0]", "deploy.allowed_image_prefixes[1]"]);

    // Before any rule, web moves to a second revision.
    let second = json!({ "spec": { "image": "registry.example.com/shop/web:1b", "replicas": 2 } });
    let op: OperationView = s.owner.patch(&s.deployment_path, second).await.expect(StatusCode::ACCEPTED);
    wait(&s.owner, &op).await;

    // Version 1: only the organization's own registry (and Docker Hub's official images).
    let v1 = json!({ "deploy": { "allowed_image_prefixes": ["registry.acme.internal/", "docker.io/library/"] } });
    ada.put::<Value>(&policy, v1).await.expect(StatusCode::OK);
    // A person's rollback to an image the rule refuses is refused too.
    let back =
        s.owner.post::<OperationView>(&format!("{}/rollback", s.deployment_path), json!({ "revision": 1 })).await;
    assert_eq!(back.refused(StatusCode::BAD_REQUEST).fields(), ["spec.image"]);
    let update = json!({ "spec": { "image": "registry.example.com/shop/web:2", "replicas": 2 } });
    let problem =
        s.owner.patch::<OperationView>(&s.deployment_path, update.clone()).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["spec.image"]);
    assert!(problem.errors[0].message.contains("(version 1)"), "{problem:?}");
    let deployments = s.deployment_path.trim_end_matches("/web").to_string();
    for image in ["docker.io/acme/api:1", "acme/api:1", "registry.acme.internal/../other/api:1"] {
        let elsewhere = json!({ "name": "api", "spec": { "image": image, "replicas": 1 } });
        let refused = s.owner.post::<OperationView>(&deployments, elsewhere).await.refused(StatusCode::BAD_REQUEST);
        assert_eq!(refused.fields(), ["spec.image"], "{image}");
    }
    // `nginx` is docker.io/library/nginx, which the rule allows.
    let official = json!({ "name": "api", "spec": { "image": "nginx:1", "replicas": 1 } });
    s.owner.post::<OperationView>(&deployments, official).await.expect(StatusCode::ACCEPTED);
    let (url, secret) = hook(
        &s,
        json!({ "name": "ci", "rules": [{ "repository": "acme/web", "target": { "cluster": "prod", "deployment": "web" } }],
                "image_template": "registry.example.com/shop/web:{sha}" }),
    )
    .await;
    let body = json!({ "image": "registry.example.com/shop/web:3", "repository": "acme/web" }).to_string();
    let refused =
        standard::<OperationView>(&t, &url, &secret, "p1", now(), &body).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(refused.fields(), ["spec.image"], "{refused:?}");
    assert_eq!(s.web().await.spec.image, "registry.example.com/shop/web:1b", "nothing changed");

    // Version 2: the registry again, but CI deploys only from release branches.
    let v2 = json!({ "deploy": { "allowed_image_prefixes": ["registry.example.com/shop/"], "allowed_branches": ["release"] } });
    ada.put::<Value>(&policy, v2).await.expect(StatusCode::OK);
    let op: OperationView = s.owner.patch(&s.deployment_path, update).await.expect(StatusCode::ACCEPTED);
    wait(&s.owner, &op).await;
    let (_, details): (uuid::Uuid, Value) = sqlx::query_as(
        "SELECT principal_id, details FROM audit_events WHERE action = 'deployment.update' ORDER BY id DESC LIMIT 1",
    )
    .fetch_one(&t.pool)
    .await
    .unwrap();
    assert_eq!(details["policy_version"], 2, "{details}");
    let run = json!({ "action": "completed", "repository": { "full_name": "acme/web" },
                      "workflow_run": { "conclusion": "success", "head_branch": "main", "head_sha": "abc123" } })
    .to_string();
    let github = delivery(&t, &url)
        .header("x-github-event", "workflow_run")
        .header("x-github-delivery", "g1")
        .header("x-hub-signature-256", github_signature(&secret, run.as_bytes()))
        .body(run);
    let ignored: HookAnswer = t.anonymous().send(github).await.expect(StatusCode::OK);
    assert_eq!(ignored.outcome, "ignored", "main is the project's, not the organization's: {ignored:?}");
    // A delivery that names no branch (a plain Standard Webhooks one) deploys nothing under a branch rule.
    let plain = json!({ "image": "registry.example.com/shop/web:4", "repository": "acme/web" }).to_string();
    let ignored: HookAnswer = standard(&t, &url, &secret, "p2", now(), &plain).await.expect(StatusCode::OK);
    assert_eq!(ignored.outcome, "ignored", "{ignored:?}");
    assert_eq!(s.web().await.spec.image, "registry.example.com/shop/web:2");
}

/// A pull request's workflow run, or a fork's, names a head branch its
/// author chose: it never deploys, whatever the branch is called.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn pull_request_runs_never_deploy(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let s = setup(&t).await;
    let (url, secret) = hook(
        &s,
        json!({ "name": "ci", "rules": [{ "repository": "acme/web", "target": { "cluster": "prod", "deployment": "web" } }],
                "image_template": "registry.example.com/shop/web:{sha}" }),
    )
    .await;
    let runs = [
        json!({ "event": "pull_request", "head_repository": { "full_name": "acme/web" } }),
        json!({ "event": "push", "head_repository": { "full_name": "mallory/web" } }),
    ];
    for (n, run) in runs.into_iter().enumerate() {
        let mut workflow_run = json!({ "conclusion": "success", "head_branch": "main", "head_sha": "evil" });
        workflow_run.as_object_mut().unwrap().extend(run.as_object().unwrap().clone());
        let body =
            json!({ "action": "completed", "repository": { "full_name": "acme/web" }, "workflow_run": workflow_run })
                .to_string();
        let github = delivery(&t, &url)
            .header("x-github-event", "workflow_run")
            .header("x-github-delivery", format!("pr-{n}"))
            .header("x-hub-signature-256", github_signature(&secret, body.as_bytes()))
            .body(body);
        let ignored: HookAnswer = t.anonymous().send(github).await.expect(StatusCode::OK);
        assert_eq!(ignored.outcome, "ignored", "{ignored:?}");
    }
    assert_eq!(s.web().await.spec.image, "registry.example.com/shop/web:1");
}
