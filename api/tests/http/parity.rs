//! The parity suite: one scenario per resource family, run over REST, gRPC
//! and GraphQL in turn. On each surface the same bad input is refused by
//! the same field, the same stale precondition by the same code, and the
//! scenario leaves the same state and writes the same audit trail.
//!
//! The families: IAM (service account → token → use → delete), workloads
//! (deployment → scale → new image → rollback), deploy hooks (create →
//! rotate → deliver) and event webhooks (endpoint → event → delivery →
//! redelivery).

use chrono::{DateTime, Utc};
use moke_api::model::{AuditEventView, OperationStatus, OperationView, Page};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use tonic::transport::Channel;

use crate::common::{Client, Tenant, TestApp};
use crate::grpc::{Bearer, reason, violations};

/// The surfaces a parity scenario runs over.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Surface {
    Rest,
    Grpc,
    Graphql,
}

const SURFACES: [Surface; 3] = [Surface::Rest, Surface::Grpc, Surface::Graphql];

impl Surface {
    /// What this surface's turn names its resources: `web-grpc`.
    fn named(self, prefix: &str) -> String {
        format!("{prefix}-{self:?}").to_lowercase()
    }
}

/// One tenant's owner on all three surfaces.
struct Surfaces<'a> {
    t: &'a TestApp,
    tenant: Tenant,
    rest: Client<'a>,
    channel: Channel,
    bearer: Bearer,
}

impl<'a> Surfaces<'a> {
    async fn of(t: &'a TestApp, name: &str) -> Surfaces<'a> {
        let tenant = t.tenant(name).await;
        let channel = Channel::from_shared(t.base.clone()).unwrap().connect().await.unwrap();
        let bearer = Bearer(format!("Bearer {}", tenant.token).parse().unwrap());
        Surfaces { t, rest: t.client(&tenant), tenant, channel, bearer }
    }

    /// A GraphQL request's whole answer (always 200 over HTTP).
    async fn graphql(&self, query: &str, variables: Value) -> Value {
        let request = self.t.request(Method::POST, "/graphql", &self.tenant.token);
        let (status, body) = self.t.send(request.json(&json!({ "query": query, "variables": variables }))).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }

    /// The `data` of a GraphQL request that must succeed.
    async fn graphql_data(&self, query: &str, variables: Value) -> Value {
        let answer = self.graphql(query, variables).await;
        assert!(answer.get("errors").is_none(), "{answer}");
        answer["data"].clone()
    }

    /// An Operation once it has finished successfully (waiting on the server).
    async fn succeeded(&self, operation: &str) -> OperationView {
        let done: OperationView =
            self.rest.get(&format!("/v1/operations/{operation}?wait=60s")).await.expect(StatusCode::OK);
        assert_eq!(done.status, OperationStatus::Succeeded, "{done:?}");
        done
    }
}

/// The first GraphQL error's stable code and the fields it names.
fn graphql_refusal(answer: &Value) -> (String, String) {
    let error = &answer["errors"][0];
    assert!(error.is_object(), "refused: {answer}");
    let fields: Vec<&str> = error["extensions"]["fields"]
        .as_array()
        .map(|f| f.iter().filter_map(|f| f["field"].as_str()).collect())
        .unwrap_or_default();
    (error["extensions"]["code"].as_str().unwrap_or_default().to_string(), fields.join(","))
}

/// A gRPC refusal's reason (the REST code) and the fields it names.
fn grpc_refusal(status: &tonic::Status) -> (String, String) {
    (reason(status), violations(status).join(","))
}

/// A REST refusal's code and the fields it names.
fn rest_refusal(answer: crate::common::Answer<Value>) -> (String, String) {
    assert!(answer.status.is_client_error(), "refused: {answer:?}");
    let problem = answer.refused(answer.status);
    (problem.code.clone(), problem.fields().join(","))
}

/// When each surface's turn began, to tell their audit events apart.
#[derive(Default)]
struct Turns(Vec<(Surface, DateTime<Utc>)>);

impl Turns {
    fn begin(&mut self, surface: Surface) {
        self.0.push((surface, Utc::now()));
    }

    /// Checks every surface's turn wrote the same audit actions (of the
    /// `families` given, oldest first), at least `expected` of them.
    async fn assert_same_audit_trail(&self, owner: &Client<'_>, families: &[&str], expected: &[&str]) {
        let events: Page<AuditEventView> =
            owner.get(&owner.org_path("/audit-events?limit=500")).await.expect(StatusCode::OK);
        let mut events = events.items;
        events.sort_by_key(|e| e.occurred_at);
        let mut trails = Vec::new();
        for (n, (surface, from)) in self.0.iter().enumerate() {
            let until = self.0.get(n + 1).map(|(_, at)| *at);
            let trail: Vec<&str> = events
                .iter()
                .filter(|e| e.occurred_at >= *from && until.is_none_or(|until| e.occurred_at < until))
                .map(|e| e.action.as_str())
                .filter(|action| families.iter().any(|family| action.starts_with(family)))
                .collect();
            trails.push((*surface, trail));
        }
        let (_, first) = &trails[0];
        for action in expected {
            assert!(first.contains(action), "{action} in {trails:?}");
        }
        for (surface, trail) in &trails[1..] {
            assert_eq!(trail, first, "{surface:?} writes REST's audit trail: {trails:?}");
        }
    }
}

/// Checks every surface refused alike: the same code and the same fields.
fn assert_same_refusals(refusals: &[(Surface, (String, String))], code: &str, fields: &str) {
    for (surface, (got_code, got_fields)) in refusals {
        assert_eq!((got_code.as_str(), got_fields.as_str()), (code, fields), "{surface:?}: {refusals:?}");
    }
}

/// IAM: a service account made (a bad name refused first), given a token
/// that works, then deleted, after which the token is refused.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_service_account_lives_and_dies_alike_on_every_surface(options: PgPoolOptions, connect: PgConnectOptions) {
    use moke_api::model::{ServiceAccountView, TokenCreated};
    use moke_proto::v1::service_account_service_client::ServiceAccountServiceClient;
    use moke_proto::v1::{CreateServiceAccountRequest, CreateServiceAccountTokenRequest, DeleteServiceAccountRequest};

    let t = TestApp::start(options, connect).await;
    let s = Surfaces::of(&t, "acme").await;
    let (owner, org) = (&s.rest, s.tenant.org.clone());
    let mut grpc = ServiceAccountServiceClient::with_interceptor(s.channel.clone(), s.bearer.clone());
    let (mut turns, mut refusals) = (Turns::default(), Vec::new());
    for surface in SURFACES {
        turns.begin(surface);
        let name = surface.named("ci");
        // (the refusal of a bad name, the account's id, the token's secret)
        let (refused, account, secret) = match surface {
            Surface::Rest => {
                let path = owner.org_path("/service-accounts");
                let bad = owner.post::<Value>(&path, json!({ "name": "Bad Name", "role": "viewer" })).await;
                let made: ServiceAccountView =
                    owner.post(&path, json!({ "name": name, "role": "viewer" })).await.expect(StatusCode::CREATED);
                let token: TokenCreated = owner
                    .post(&format!("{path}/{}/tokens", made.id), json!({ "name": "ci" }))
                    .await
                    .expect(StatusCode::CREATED);
                (rest_refusal(bad), made.id.to_string(), token.token)
            }
            Surface::Grpc => {
                let create = |name: &str| CreateServiceAccountRequest {
                    org: org.clone(),
                    name: name.into(),
                    role: "viewer".into(),
                    ..Default::default()
                };
                let bad = grpc.create_service_account(create("Bad Name")).await.unwrap_err();
                assert_eq!(bad.code(), tonic::Code::InvalidArgument);
                let made = grpc.create_service_account(create(&name)).await.unwrap().into_inner();
                let token = CreateServiceAccountTokenRequest {
                    org: org.clone(),
                    service_account: made.id.clone(),
                    name: "ci".into(),
                    ..Default::default()
                };
                let token = grpc.create_service_account_token(token).await.unwrap().into_inner();
                (grpc_refusal(&bad), made.id, token.secret)
            }
            Surface::Graphql => {
                let create = "mutation($org: ID!, $name: String!) { createServiceAccount(org: $org, \
                              input: { name: $name, role: \"viewer\" }) { id } }";
                let bad = s.graphql(create, json!({ "org": org, "name": "Bad Name" })).await;
                let made = s.graphql_data(create, json!({ "org": org, "name": name })).await;
                let id = made["createServiceAccount"]["id"].as_str().expect("made").to_string();
                let token = s
                    .graphql_data(
                        "mutation($org: ID!, $sa: ID!) { createServiceAccountToken(org: $org, \
                         serviceAccount: $sa, input: { name: \"ci\" }) { secret } }",
                        json!({ "org": org, "sa": id }),
                    )
                    .await;
                let secret = token["createServiceAccountToken"]["secret"].as_str().expect("a secret");
                (graphql_refusal(&bad), id, secret.to_string())
            }
        };
        refusals.push((surface, refused));
        let robot = owner.with_token(&secret);
        robot.get::<Value>("/v1/me").await.expect(StatusCode::OK);
        match surface {
            Surface::Rest => {
                let path = owner.org_path(&format!("/service-accounts/{account}"));
                owner.delete::<Value>(&path).await.expect(StatusCode::NO_CONTENT);
            }
            Surface::Grpc => {
                let delete = DeleteServiceAccountRequest { org: org.clone(), service_account: account.clone() };
                grpc.delete_service_account(delete).await.unwrap();
            }
            Surface::Graphql => {
                let deleted = s
                    .graphql_data(
                        "mutation($org: ID!, $sa: ID!) { deleteServiceAccount(org: $org, serviceAccount: $sa) }",
                        json!({ "org": org, "sa": account }),
                    )
                    .await;
                assert_eq!(deleted["deleteServiceAccount"], json!(true), "{deleted}");
            }
        }
        robot.get::<Value>("/v1/me").await.refused(StatusCode::UNAUTHORIZED);
    }

    assert_same_refusals(&refusals, "invalid_request", "name");
    // The same state: none of the three accounts is left.
    let left: Page<ServiceAccountView> = owner.get(&owner.org_path("/service-accounts")).await.expect(StatusCode::OK);
    assert!(left.items.iter().all(|a| !a.name.starts_with("ci-")), "{left:?}");
    let made = ["service_account.create", "service_account.delete"];
    turns.assert_same_audit_trail(owner, &["service_account", "token"], &made).await;
}

/// Workloads: a deployment made (a bad name refused first), scaled, given a
/// new image, refused a rollback on a stale ETag, then rolled back to its
/// first revision.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_deployment_scales_and_rolls_back_alike_on_every_surface(options: PgPoolOptions, connect: PgConnectOptions) {
    use moke_api::model::{DeploymentView, Page, RevisionView};
    use moke_proto::v1::deployment_service_client::DeploymentServiceClient;
    use moke_proto::v1::{self as pb, create_deployment_request::Source, update_deployment_request::Change};

    let t = TestApp::start(options, connect).await;
    let s = Surfaces::of(&t, "acme").await;
    let owner = &s.rest;
    let _region = crate::workloads::region(&t);
    let (project, cluster) = crate::workloads::running_cluster(owner).await;
    let mut grpc = DeploymentServiceClient::with_interceptor(s.channel.clone(), s.bearer.clone());
    let deployments = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/deployments");
    let view = async |name: &str| -> DeploymentView {
        owner.get(&format!("{deployments}/{name}")).await.expect(StatusCode::OK)
    };
    let image = |n: u32| format!("registry.example/web:{n}");
    let (mut turns, mut bad_names, mut stale) = (Turns::default(), Vec::new(), Vec::new());
    for surface in SURFACES {
        turns.begin(surface);
        let name = surface.named("web");
        let path = format!("{deployments}/{name}");
        match surface {
            Surface::Rest => {
                let create = |name: &str| json!({ "name": name, "spec": { "image": image(1), "replicas": 2 } });
                bad_names.push((surface, rest_refusal(owner.post::<Value>(&deployments, create("Bad Name")).await)));
                let op: OperationView = owner.post(&deployments, create(&name)).await.expect(StatusCode::ACCEPTED);
                s.succeeded(&op.id.to_string()).await;
                let first_etag = view(&name).await.etag;
                let op: OperationView =
                    owner.post(&format!("{path}/scale"), json!({ "replicas": 3 })).await.expect(StatusCode::ACCEPTED);
                s.succeeded(&op.id.to_string()).await;
                let op: OperationView =
                    owner.patch(&path, json!({ "spec": { "image": image(2) } })).await.expect(StatusCode::ACCEPTED);
                s.succeeded(&op.id.to_string()).await;
                let rollback = |etag: &str| {
                    owner
                        .request(Method::POST, &format!("{path}/rollback"))
                        .header("if-match", etag)
                        .json(&json!({ "revision": 1 }))
                };
                stale.push((surface, rest_refusal(owner.send(rollback(&first_etag)).await)));
                let etag = view(&name).await.etag;
                let op: OperationView = owner.send(rollback(&etag)).await.expect(StatusCode::ACCEPTED);
                s.succeeded(&op.id.to_string()).await;
            }
            Surface::Grpc => {
                let create = |name: &str| pb::CreateDeploymentRequest {
                    project: project.clone(),
                    cluster: cluster.clone(),
                    namespace: "default".into(),
                    name: name.into(),
                    source: Some(Source::Spec(pb::DeploymentSpec {
                        image: image(1),
                        replicas: Some(2),
                        ..Default::default()
                    })),
                    ..Default::default()
                };
                let bad = grpc.create_deployment(create("Bad Name")).await.unwrap_err();
                bad_names.push((surface, grpc_refusal(&bad)));
                let op = grpc.create_deployment(create(&name)).await.unwrap().into_inner();
                s.succeeded(&op.name).await;
                let first_etag = view(&name).await.etag;
                let scale = pb::ScaleDeploymentRequest {
                    project: project.clone(),
                    cluster: cluster.clone(),
                    namespace: "default".into(),
                    deployment: name.clone(),
                    replicas: 3,
                    ..Default::default()
                };
                s.succeeded(&grpc.scale_deployment(scale).await.unwrap().into_inner().name).await;
                let update = pb::UpdateDeploymentRequest {
                    project: project.clone(),
                    cluster: cluster.clone(),
                    namespace: "default".into(),
                    deployment: name.clone(),
                    change: Some(Change::Spec(pb::DeploymentSpec { image: image(2), ..Default::default() })),
                    update_mask: Some(prost_types::FieldMask { paths: vec!["spec.image".into()] }),
                    ..Default::default()
                };
                s.succeeded(&grpc.update_deployment(update).await.unwrap().into_inner().name).await;
                let rollback = |etag: String| pb::RollbackDeploymentRequest {
                    project: project.clone(),
                    cluster: cluster.clone(),
                    namespace: "default".into(),
                    deployment: name.clone(),
                    revision: Some(1),
                    etag,
                    ..Default::default()
                };
                let refused = grpc.rollback_deployment(rollback(first_etag)).await.unwrap_err();
                assert_eq!(refused.code(), tonic::Code::FailedPrecondition, "{refused:?}");
                stale.push((surface, grpc_refusal(&refused)));
                let etag = view(&name).await.etag;
                s.succeeded(&grpc.rollback_deployment(rollback(etag)).await.unwrap().into_inner().name).await;
            }
            Surface::Graphql => {
                let at = json!({ "p": project, "c": cluster, "d": name });
                let create = "mutation($p: String!, $c: String!, $d: String!, $image: String!) { \
                              createDeployment(project: $p, cluster: $c, namespace: \"default\", \
                              input: { name: $d, spec: { image: $image, replicas: 2 } }) { id } }";
                let bad =
                    s.graphql(create, json!({ "p": project, "c": cluster, "d": "Bad Name", "image": image(1) })).await;
                bad_names.push((surface, graphql_refusal(&bad)));
                let made =
                    s.graphql_data(create, json!({ "p": project, "c": cluster, "d": name, "image": image(1) })).await;
                s.succeeded(made["createDeployment"]["id"].as_str().unwrap()).await;
                let first_etag = view(&name).await.etag;
                let scaled = s
                    .graphql_data(
                        "mutation($p: String!, $c: String!, $d: String!) { scaleDeployment(project: $p, \
                         cluster: $c, namespace: \"default\", deployment: $d, replicas: 3) { id } }",
                        at.clone(),
                    )
                    .await;
                s.succeeded(scaled["scaleDeployment"]["id"].as_str().unwrap()).await;
                let updated = s
                    .graphql_data(
                        "mutation($p: String!, $c: String!, $d: String!, $image: String!) { \
                         updateDeployment(project: $p, cluster: $c, namespace: \"default\", deployment: $d, \
                         patch: { spec: { image: $image } }) { id } }",
                        json!({ "p": project, "c": cluster, "d": name, "image": image(2) }),
                    )
                    .await;
                s.succeeded(updated["updateDeployment"]["id"].as_str().unwrap()).await;
                let rollback = "mutation($p: String!, $c: String!, $d: String!, $etag: String!) { \
                                rollbackDeployment(project: $p, cluster: $c, namespace: \"default\", \
                                deployment: $d, revision: 1, ifMatch: $etag) { id } }";
                let with = |etag: &str| json!({ "p": project, "c": cluster, "d": name, "etag": etag });
                stale.push((surface, graphql_refusal(&s.graphql(rollback, with(&first_etag)).await)));
                let etag = view(&name).await.etag;
                let rolled = s.graphql_data(rollback, with(&etag)).await;
                s.succeeded(rolled["rollbackDeployment"]["id"].as_str().unwrap()).await;
            }
        }
    }

    // A bad name is also a bad default `app` pod label, named alike everywhere.
    assert_same_refusals(&bad_names, "invalid_request", "name,spec.pod_labels.app");
    assert_same_refusals(&stale, "precondition_failed", "");
    // The same state: three deployments of three pods on the first image,
    // each with the same history of revisions.
    let mut histories = Vec::new();
    for surface in SURFACES {
        let name = surface.named("web");
        let web = view(&name).await;
        assert_eq!((web.spec.replicas, web.spec.image.as_str()), (3, image(1).as_str()), "{surface:?}: {web:?}");
        let revisions: Page<RevisionView> =
            owner.get(&format!("{deployments}/{name}/revisions")).await.expect(StatusCode::OK);
        let history: Vec<(i64, String, String)> =
            revisions.items.iter().map(|r| (r.revision, r.spec.image.clone(), r.cause.clone())).collect();
        histories.push((surface, history));
    }
    assert!(histories[0].1.len() >= 3, "made, new image, rolled back: {histories:?}");
    assert!(histories.iter().all(|(_, h)| *h == histories[0].1), "{histories:?}");
    let actions = ["deployment.create", "deployment.scale", "deployment.update", "deployment.rollback"];
    turns.assert_same_audit_trail(owner, &["deployment."], &actions).await;
}

/// Deploy hooks: a hook made for a deployment (a bad name refused first),
/// its secret rotated with the old one revoked at once, and a delivery
/// signed with the new secret rolling out while one with the old is refused.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_deploy_hook_is_rotated_and_delivers_alike_on_every_surface(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    use moke_api::model::{DeployHookCreated, DeployHookView, DeployPolicyView, DeploymentView};
    use moke_proto::v1::deploy_hook_service_client::DeployHookServiceClient;
    use moke_proto::v1::{self as pb};

    let t = TestApp::start(options, connect).await;
    let s = Surfaces::of(&t, "acme").await;
    let owner = &s.rest;
    let _region = crate::workloads::region(&t);
    let (project, cluster) = crate::workloads::running_cluster(owner).await;
    let (_, op) =
        owner.create_deployment(&project, &cluster, "web", json!({ "image": "registry.example.com/shop/web:1" })).await;
    s.succeeded(&op.id.to_string()).await;
    let policy = json!({ "allowed_image_prefixes": ["registry.example.com/shop/"], "allowed_branches": ["main"] });
    owner
        .put::<DeployPolicyView>(&format!("/v1/projects/{project}/deploy-policy"), policy)
        .await
        .expect(StatusCode::OK);
    let hooks = format!("/v1/projects/{project}/hooks");
    let mut grpc = DeployHookServiceClient::with_interceptor(s.channel.clone(), s.bearer.clone());
    let (mut turns, mut bad_names) = (Turns::default(), Vec::new());
    for (n, surface) in SURFACES.into_iter().enumerate() {
        turns.begin(surface);
        let name = surface.named("ci");
        // (the delivery URL, the first secret, the rotated secret)
        let (url, old, new) = match surface {
            Surface::Rest => {
                let create = |name: &str| json!({ "name": name, "target": { "cluster": "prod", "deployment": "web" } });
                bad_names.push((surface, rest_refusal(owner.post::<Value>(&hooks, create("Bad Name")).await)));
                let made: DeployHookCreated = owner.post(&hooks, create(&name)).await.expect(StatusCode::CREATED);
                let rotate = format!("{hooks}/{}/rotate-secret", made.hook.id);
                let rotated: DeployHookCreated =
                    owner.post(&rotate, json!({ "previous_secret_valid_seconds": 0 })).await.expect(StatusCode::OK);
                (made.hook.url, made.secret, rotated.secret)
            }
            Surface::Grpc => {
                let create = |name: &str| pb::CreateDeployHookRequest {
                    project: project.clone(),
                    name: name.into(),
                    target: Some(pb::DeployHookTarget {
                        cluster: "prod".into(),
                        deployment: "web".into(),
                        ..Default::default()
                    }),
                    ..Default::default()
                };
                let bad = grpc.create_deploy_hook(create("Bad Name")).await.unwrap_err();
                bad_names.push((surface, grpc_refusal(&bad)));
                let made = grpc.create_deploy_hook(create(&name)).await.unwrap().into_inner();
                let hook = made.deploy_hook.expect("the hook");
                let rotate = pb::RotateDeployHookSecretRequest {
                    project: project.clone(),
                    deploy_hook: hook.id.clone(),
                    previous_secret_validity: Some(prost_types::Duration { seconds: 0, nanos: 0 }),
                    ..Default::default()
                };
                let rotated = grpc.rotate_deploy_hook_secret(rotate).await.unwrap().into_inner();
                (hook.url, made.secret, rotated.secret)
            }
            Surface::Graphql => {
                let create = "mutation($p: String!, $name: String!) { createDeployHook(project: $p, \
                              input: { name: $name, target: { cluster: \"prod\", deployment: \"web\" } }) \
                              { hook { id url } secret } }";
                let bad = s.graphql(create, json!({ "p": project, "name": "Bad Name" })).await;
                bad_names.push((surface, graphql_refusal(&bad)));
                let made = s.graphql_data(create, json!({ "p": project, "name": name })).await;
                let made = &made["createDeployHook"];
                let rotated = s
                    .graphql_data(
                        "mutation($p: String!, $hook: ID!) { rotateDeployHookSecret(project: $p, hook: $hook, \
                         input: { previousSecretValidSeconds: 0 }) { secret } }",
                        json!({ "p": project, "hook": made["hook"]["id"] }),
                    )
                    .await;
                let text = |v: &Value| v.as_str().expect("a string").to_string();
                (text(&made["hook"]["url"]), text(&made["secret"]), text(&rotated["rotateDeployHookSecret"]["secret"]))
            }
        };
        assert!(new.starts_with("whsec_") && new != old, "{surface:?}");
        // CI delivers: the revoked secret is refused, the new one rolls out.
        let body = format!(r#"{{"image": "registry.example.com/shop/web:{}"}}"#, n + 2);
        let now = Utc::now().timestamp();
        let revoked = crate::hooks::standard::<Value>(&t, &url, &old, &format!("old-{n}"), now, &body).await;
        assert_eq!(revoked.status, StatusCode::UNAUTHORIZED, "{surface:?}: {revoked:?}");
        let op: OperationView =
            crate::hooks::standard(&t, &url, &new, &format!("new-{n}"), now, &body).await.expect(StatusCode::ACCEPTED);
        s.succeeded(&op.id.to_string()).await;
        let web: DeploymentView = owner
            .get(&format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/deployments/web"))
            .await
            .expect(StatusCode::OK);
        assert_eq!(web.spec.image, format!("registry.example.com/shop/web:{}", n + 2), "{surface:?}");
    }

    assert_same_refusals(&bad_names, "invalid_request", "name");
    // The same state: three hooks, none with a previous secret still valid.
    let listed: Page<DeployHookView> = owner.get(&hooks).await.expect(StatusCode::OK);
    let names: Vec<&str> = listed.items.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["ci-rest", "ci-grpc", "ci-graphql"]);
    assert!(listed.items.iter().all(|h| h.previous_secret_expires_at.is_none()), "{listed:?}");
    assert!(listed.items.iter().all(|h| h.last_delivery_at.is_some()), "{listed:?}");
    let actions = ["deploy_hook.create", "deploy_hook.rotate_secret"];
    turns.assert_same_audit_trail(owner, &["deploy_hook.", "deployment."], &actions).await;
}

/// Event webhooks: an endpoint made (a bad URL refused first), an event
/// delivered to it and seen in its deliveries, sent again on request with
/// the same message id, then the endpoint deleted.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_webhook_endpoint_delivers_and_redelivers_alike_on_every_surface(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    use moke_api::model::{WebhookDeliveryView, WebhookEndpointCreated, WebhookEndpointView};
    use moke_proto::v1::webhook_service_client::WebhookServiceClient;
    use moke_proto::v1::{self as pb};

    use crate::common::{Receiver, eventually};

    let fast = |c: &mut moke_api::config::Config| c.webhooks.retry_schedule_seconds = vec![0.0, 0.2, 0.2];
    let t = TestApp::start_with(options, connect, fast).await;
    let s = Surfaces::of(&t, "acme").await;
    let (owner, org) = (&s.rest, s.tenant.org.clone());
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, _) = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    let cluster_path = format!("/v1/projects/{project}/clusters/{}", cluster.id);
    let endpoints = owner.org_path("/webhooks");
    let mut grpc = WebhookServiceClient::with_interceptor(s.channel.clone(), s.bearer.clone());
    let (mut turns, mut bad_urls) = (Turns::default(), Vec::new());
    for (n, surface) in SURFACES.into_iter().enumerate() {
        turns.begin(surface);
        let receiver = Receiver::start(vec![]).await;
        let types = ["operation.succeeded"];
        let (endpoint, secret) = match surface {
            Surface::Rest => {
                let create = |url: &str| json!({ "url": url, "event_types": types });
                bad_urls
                    .push((surface, rest_refusal(owner.post::<Value>(&endpoints, create("ftp://example.com/")).await)));
                let made: WebhookEndpointCreated =
                    owner.post(&endpoints, create(&receiver.url)).await.expect(StatusCode::CREATED);
                (made.endpoint.id.to_string(), made.secret)
            }
            Surface::Grpc => {
                let create = |url: &str| pb::CreateWebhookEndpointRequest {
                    org: org.clone(),
                    url: url.into(),
                    event_types: types.map(String::from).to_vec(),
                    ..Default::default()
                };
                let bad = grpc.create_webhook_endpoint(create("ftp://example.com/")).await.unwrap_err();
                bad_urls.push((surface, grpc_refusal(&bad)));
                let made = grpc.create_webhook_endpoint(create(&receiver.url)).await.unwrap().into_inner();
                (made.webhook_endpoint.expect("the endpoint").id, made.secret)
            }
            Surface::Graphql => {
                let create = "mutation($org: ID!, $url: String!, $types: [String!]!) { createWebhookEndpoint(\
                              org: $org, input: { url: $url, eventTypes: $types }) { endpoint { id } secret } }";
                let with = |url: &str| json!({ "org": org, "url": url, "types": types });
                bad_urls.push((surface, graphql_refusal(&s.graphql(create, with("ftp://example.com/")).await)));
                let made = s.graphql_data(create, with(&receiver.url)).await;
                let made = &made["createWebhookEndpoint"];
                (made["endpoint"]["id"].as_str().unwrap().to_string(), made["secret"].as_str().unwrap().to_string())
            }
        };

        // An event: a label change is an Operation that succeeds at once.
        let label = json!({ "labels": { "turn": n.to_string() } });
        owner.patch::<OperationView>(&cluster_path, label).await.expect(StatusCode::ACCEPTED);
        let first = receiver.event("operation.succeeded").await;
        assert!(first.signed_with(&secret), "{surface:?}");
        let message = first.header("webhook-id").expect("a message id").to_string();

        // The delivery as the surface lists it, then sent again through it.
        let delivered = async || -> Option<String> {
            match surface {
                Surface::Rest => {
                    let page: Page<WebhookDeliveryView> = owner
                        .get(&owner.org_path(&format!("/webhooks/{endpoint}/deliveries")))
                        .await
                        .expect(StatusCode::OK);
                    page.items.first().filter(|d| d.status == "succeeded").map(|d| d.event_id.to_string())
                }
                Surface::Grpc => {
                    let list = pb::ListWebhookDeliveriesRequest {
                        org: org.clone(),
                        webhook_endpoint: endpoint.clone(),
                        ..Default::default()
                    };
                    let page = grpc.clone().list_webhook_deliveries(list).await.unwrap().into_inner();
                    page.deliveries.first().filter(|d| d.status == "succeeded").map(|d| d.event_id.clone())
                }
                Surface::Graphql => {
                    let page = s
                        .graphql_data(
                            "query($org: ID!, $e: ID!) { webhookDeliveries(org: $org, endpoint: $e) \
                             { nodes { eventId status } } }",
                            json!({ "org": org, "e": endpoint }),
                        )
                        .await;
                    let first = &page["webhookDeliveries"]["nodes"][0];
                    (first["status"] == "succeeded").then(|| first["eventId"].as_str().unwrap().to_string())
                }
            }
        };
        let mut event = None;
        eventually(20, "the delivery to be recorded as succeeded", async || {
            event = delivered().await;
            event.is_some()
        })
        .await;
        let event = event.unwrap();
        assert_eq!(event, message, "{surface:?}: the delivery names the message the receiver got");
        match surface {
            Surface::Rest => {
                let path = owner.org_path(&format!("/webhooks/{endpoint}/redeliveries"));
                owner.post::<Value>(&path, json!({ "event_id": event })).await.expect(StatusCode::ACCEPTED);
            }
            Surface::Grpc => {
                let again = pb::RedeliverWebhookEventRequest {
                    org: org.clone(),
                    webhook_endpoint: endpoint.clone(),
                    event_id: event.clone(),
                    ..Default::default()
                };
                grpc.redeliver_webhook_event(again).await.unwrap();
            }
            Surface::Graphql => {
                s.graphql_data(
                    "mutation($org: ID!, $e: ID!, $event: String!) { redeliverWebhookEvent(org: $org, \
                     endpoint: $e, input: { eventId: $event }) { id } }",
                    json!({ "org": org, "e": endpoint, "event": event }),
                )
                .await;
            }
        }
        eventually(20, "the redelivery", async || receiver.requests().len() == 2).await;
        let again = &receiver.requests()[1];
        assert_eq!(again.header("webhook-id"), Some(message.as_str()), "{surface:?}: the same message again");
        assert!(again.signed_with(&secret), "{surface:?}");

        match surface {
            Surface::Rest => {
                owner.delete::<Value>(&format!("{endpoints}/{endpoint}")).await.expect(StatusCode::NO_CONTENT);
            }
            Surface::Grpc => {
                let delete = pb::DeleteWebhookEndpointRequest { org: org.clone(), webhook_endpoint: endpoint.clone() };
                grpc.delete_webhook_endpoint(delete).await.unwrap();
            }
            Surface::Graphql => {
                let deleted = s
                    .graphql_data(
                        "mutation($org: ID!, $e: ID!) { deleteWebhookEndpoint(org: $org, endpoint: $e) }",
                        json!({ "org": org, "e": endpoint }),
                    )
                    .await;
                assert_eq!(deleted["deleteWebhookEndpoint"], json!(true));
            }
        }
    }

    assert_same_refusals(&bad_urls, "invalid_request", "url");
    let left: Page<WebhookEndpointView> = owner.get(&endpoints).await.expect(StatusCode::OK);
    assert!(left.items.is_empty(), "{left:?}");
    let actions = ["webhook_endpoint.create", "webhook_endpoint.redeliver", "webhook_endpoint.delete"];
    turns.assert_same_audit_trail(owner, &["webhook_endpoint."], &actions).await;
}
