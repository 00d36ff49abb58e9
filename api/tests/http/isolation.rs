//! Tenant isolation on every route: another organization's resources are a
//! 404 (never a 403 that would confirm they exist) with nothing of theirs
//! in the answer, and a refused write changes nothing. One table of rows
//! (route, body) is played by an intruder, naming the victim's resources
//! by id and by name; the route list comes from the OpenAPI document, so a
//! new route without a row fails [`every_route_has_a_row_or_is_public`].

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{Client, Tenant, TestApp};
use moke_api::model::{
    ClusterView, DeployHookCreated, InvitationView, MeView, OrgView, Page, TokenCreated, TokenView, TrustPolicyView,
    WebhookEndpointCreated,
};

/// Routes that serve no tenant data: catalogs, the public keys, and the
/// sign-in flows, which name no organization's resources (their secrets
/// are the credential) and have their own tests.
const PUBLIC: [&str; 20] = [
    "POST /v1/signup/confirm",
    "POST /v1/auth/sso-link/confirm",
    "POST /v1/hooks/{hook}",
    "GET /v1/regions",
    "GET /v1/kubernetes-versions",
    "GET /v1/machine-types",
    "GET /v1/plans",
    "GET /.well-known/jwks.json",
    "POST /v1/signup",
    "POST /v1/auth/login",
    "POST /v1/auth/refresh",
    "POST /v1/auth/logout",
    "POST /v1/auth/verify-email",
    "POST /v1/auth/password-reset",
    "POST /v1/auth/password-reset/confirm",
    "POST /v1/auth/token-exchange",
    "GET /v1/sso/{org}/login",
    "GET /v1/sso/callback",
    "POST /v1/device/auth",
    "POST /v1/device/token",
];

/// Routes about the caller itself; [`self_routes_show_only_the_callers_own`] checks them.
const SELF: [&str; 12] = [
    "GET /v1/orgs",
    "POST /v1/orgs",
    "GET /v1/me",
    "GET /v1/me/tokens",
    "POST /v1/me/tokens",
    "POST /v1/me/sso-links/confirm",
    "GET /v1/me/sessions",
    "DELETE /v1/me/sessions",
    "DELETE /v1/me/sessions/{session}",
    "GET /v1/me/security-events",
    "POST /v1/device/confirm",
    "POST /v1/device/deny",
];

/// One row: a route the intruder calls on the victim's resources.
struct Row {
    /// `METHOD /path/{placeholder}` exactly as in the OpenAPI document.
    route: &'static str,
    /// The path when it is not the route's own (a query, another placeholder).
    at: Option<&'static str>,
    body: Option<Value>,
    /// 404 unless said otherwise.
    expect: StatusCode,
}

fn row(route: &'static str) -> Row {
    Row { route, at: None, body: None, expect: StatusCode::NOT_FOUND }
}

impl Row {
    fn body(self, body: Value) -> Row {
        Row { body: Some(body), ..self }
    }
    fn at(self, at: &'static str) -> Row {
        Row { at: Some(at), ..self }
    }
    fn expect(self, expect: StatusCode) -> Row {
        Row { expect, ..self }
    }
    fn method(&self) -> Method {
        Method::from_bytes(self.route.split(' ').next().unwrap().as_bytes()).unwrap()
    }
}

fn rows() -> Vec<Row> {
    vec![
        row("GET /v1/orgs/{org}"),
        row("PATCH /v1/orgs/{org}").body(json!({ "name": "taken-over", "display_name": "Taken over" })),
        row("DELETE /v1/orgs/{org}"),
        row("GET /v1/orgs/{org}/quotas"),
        row("GET /v1/orgs/{org}/audit-events"),
        row("GET /v1/orgs/{org}/audit-events/export"),
        row("GET /v1/orgs/{org}/tokens"),
        row("POST /v1/orgs/{org}/tokens").body(json!({ "name": "x", "role": "viewer" })),
        row("GET /v1/orgs/{org}/tokens/{token}"),
        row("DELETE /v1/orgs/{org}/tokens/{token}"),
        row("GET /v1/orgs/{org}/projects"),
        row("POST /v1/orgs/{org}/projects").body(json!({ "name": "x" })),
        row("GET /v1/projects/{project}"),
        row("PATCH /v1/projects/{project}").body(json!({ "labels": { "a": "b" } })),
        row("DELETE /v1/projects/{project}"),
        row("GET /v1/projects/{project}/clusters"),
        row("GET /v1/projects/{project}/deploy-policy"),
        row("PUT /v1/projects/{project}/deploy-policy")
            .body(json!({ "allowed_image_prefixes": ["x.example/a/"], "allowed_branches": ["main"] })),
        row("GET /v1/projects/{project}/hooks"),
        row("POST /v1/projects/{project}/hooks")
            .body(json!({ "name": "x", "target": { "cluster": "secret-prod", "deployment": "secret-app" } })),
        row("DELETE /v1/projects/{project}/hooks/{hook}"),
        row("POST /v1/projects/{project}/hooks/{hook}/rotate-secret").body(json!({})),
        row("POST /v1/projects/{project}/clusters").body(json!({ "name": "x", "spec": { "region": "eu-central-1" } })),
        row("POST /v1/projects/{project}/clusters/estimate")
            .body(json!({ "cluster": { "name": "x", "spec": { "region": "eu-central-1" } } })),
        row("GET /v1/projects/{project}/clusters/{cluster}"),
        row("PATCH /v1/projects/{project}/clusters/{cluster}").body(json!({ "labels": { "a": "b" } })),
        row("GET /v1/projects/{project}/clusters/{cluster}/upgrades"),
        row("POST /v1/projects/{project}/clusters/{cluster}/upgrade").body(json!({ "kubernetes_version": "1.33" })),
        row("GET /v1/projects/{project}/clusters/{cluster}/snapshots"),
        row("POST /v1/projects/{project}/clusters/{cluster}/snapshots"),
        row("POST /v1/projects/{project}/clusters/{cluster}/snapshots/{snapshot}/restore"),
        row("DELETE /v1/projects/{project}/clusters/{cluster}"),
        row("GET /v1/projects/{project}/clusters/{cluster}/node-pools"),
        row("GET /v1/projects/{project}/clusters/{cluster}/kubeconfig"),
        row("GET /v1/projects/{project}/clusters/{cluster}/nodes"),
        row("GET /v1/projects/{project}/clusters/{cluster}/operations"),
        row("GET /v1/projects/{project}/clusters/{cluster}/events"),
        row("GET /v1/projects/{project}/clusters/{cluster}/revisions"),
        row("GET /v1/projects/{project}/clusters/{cluster}/revisions/{generation}/diff"),
        row("GET /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}/revisions"),
        row("GET /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}/revisions/{generation}/diff"),
        row("GET /v1/projects/{project}/clusters/{cluster}/metrics"),
        row("POST /v1/projects/{project}/clusters/{cluster}/credentials"),
        row("POST /v1/projects/{project}/clusters/{cluster}/credentials/revoke"),
        row("POST /v1/projects/{project}/clusters/{cluster}/node-pools")
            .body(json!({ "name": "x", "spec": { "machine_type": "bm.small", "count": 1 } })),
        row("GET /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}"),
        row("PATCH /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}")
            .body(json!({ "spec": { "count": 2 } })),
        row("POST /v1/projects/{project}/clusters/{cluster}/node-pools/estimate")
            .body(json!({ "name": "x", "spec": { "machine_type": "bm.small", "count": 1 } })),
        row("POST /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}/estimate")
            .body(json!({ "spec": { "count": 2 } })),
        row("POST /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}/recycle").body(json!({})),
        row("DELETE /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}/nodes/{node}"),
        row("DELETE /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}"),
        row("GET /v1/projects/{project}/clusters/{cluster}/namespaces"),
        row("GET /v1/projects/{project}/clusters/{cluster}/unmanaged-deployments"),
        row("POST /v1/projects/{project}/clusters/{cluster}/namespaces").body(json!({ "name": "x" })),
        row("DELETE /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}"),
        row("GET /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments"),
        row("POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments")
            .body(json!({ "name": "x", "spec": { "image": "registry.example/x:1" } })),
        row("GET /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services"),
        row("POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services")
            .body(json!({ "name": "x", "spec": { "selector": { "app": "x" }, "ports": [{ "port": 80 }] } })),
        row("GET /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services/{service}"),
        row("PATCH /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services/{service}")
            .body(json!({ "labels": { "a": "b" } })),
        row("DELETE /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services/{service}"),
        row("GET /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}"),
        row("PATCH /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}")
            .body(json!({ "spec": { "replicas": 2 } })),
        row("DELETE /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}"),
        row("GET /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/revisions"),
        row("POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/scale")
            .body(json!({ "replicas": 2 })),
        row("POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/rollback")
            .body(json!({})),
        row("POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/pause"),
        row("POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/resume"),
        row("POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/restart"),
        row("GET /v1/orgs/{org}/webhooks"),
        row("POST /v1/orgs/{org}/webhooks")
            .body(json!({ "url": "https://hooks.example.invalid/", "event_types": ["*"] })),
        row("GET /v1/orgs/{org}/webhooks/{endpoint}"),
        row("PATCH /v1/orgs/{org}/webhooks/{endpoint}")
            .body(json!({ "url": "https://intruder.example.invalid/", "event_types": ["*"], "enabled": true })),
        row("POST /v1/orgs/{org}/webhooks/{endpoint}/rotate-secret").body(json!({})),
        row("DELETE /v1/orgs/{org}/webhooks/{endpoint}"),
        row("GET /v1/orgs/{org}/billing/balance"),
        row("GET /v1/orgs/{org}/billing/plan"),
        row("GET /v1/orgs/{org}/billing/usage"),
        row("GET /v1/orgs/{org}/billing/usage/csv"),
        row("PUT /v1/orgs/{org}/billing/plan").body(json!({ "plan": "free" })),
        row("GET /v1/orgs/{org}/billing/credits"),
        row("GET /v1/orgs/{org}/billing/budgets"),
        row("POST /v1/orgs/{org}/billing/budgets").body(json!({ "name": "x", "amount": "1.00" })),
        row("GET /v1/orgs/{org}/billing/budgets/{budget}"),
        row("PATCH /v1/orgs/{org}/billing/budgets/{budget}").body(json!({ "amount": "2.00" })),
        row("DELETE /v1/orgs/{org}/billing/budgets/{budget}"),
        row("GET /v1/orgs/{org}/billing/invoices"),
        row("GET /v1/orgs/{org}/billing/invoices/{invoice}"),
        row("GET /v1/orgs/{org}/billing/invoices/{invoice}/csv"),
        row("GET /v1/orgs/{org}/billing/invoices/{invoice}/pdf"),
        row("GET /v1/orgs/{org}/webhooks/{endpoint}/deliveries"),
        row("POST /v1/orgs/{org}/webhooks/{endpoint}/redeliveries")
            .body(json!({ "event_id": "msg_01a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6" })),
        row("GET /v1/orgs/{org}/members"),
        row("PATCH /v1/orgs/{org}/members/{user}").body(json!({ "role": "viewer" })),
        row("DELETE /v1/orgs/{org}/members/{user}"),
        row("GET /v1/orgs/{org}/invitations"),
        row("POST /v1/orgs/{org}/invitations").body(json!({ "email": "x@y.test", "role": "viewer" })),
        row("DELETE /v1/orgs/{org}/invitations/{invitation}"),
        row("GET /v1/orgs/{org}/service-accounts"),
        row("POST /v1/orgs/{org}/service-accounts").body(json!({ "name": "x", "role": "viewer" })),
        row("GET /v1/orgs/{org}/service-accounts/{service_account}"),
        row("DELETE /v1/orgs/{org}/service-accounts/{service_account}"),
        row("POST /v1/orgs/{org}/service-accounts/{service_account}/tokens").body(json!({ "name": "x" })),
        row("GET /v1/orgs/{org}/service-accounts/{service_account}/trust-policies"),
        row("POST /v1/orgs/{org}/service-accounts/{service_account}/trust-policies")
            .body(json!({ "issuer": "https://ci.example", "audience": "x", "claims": { "repository": "x/y" } })),
        row("DELETE /v1/orgs/{org}/service-accounts/{service_account}/trust-policies/{policy}"),
        row("GET /v1/orgs/{org}/sso"),
        row("PUT /v1/orgs/{org}/sso").body(json!({
            "issuer": "https://idp.example", "client_id": "x", "client_secret": "y",
            "allowed_domains": ["example.com"], "default_role": "viewer",
        })),
        row("DELETE /v1/orgs/{org}/sso"),
        row("GET /v1/orgs/{org}/domains"),
        row("POST /v1/orgs/{org}/domains").body(json!({ "domain": "x.example.com" })),
        row("POST /v1/orgs/{org}/domains/{domain}/verify"),
        row("DELETE /v1/orgs/{org}/domains/{domain}"),
        row("GET /v1/orgs/{org}/credential-policy"),
        row("GET /v1/orgs/{org}/policy"),
        row("GET /v1/orgs/{org}/policy/versions"),
        row("PUT /v1/orgs/{org}/policy").body(json!({ "limits": { "max_per_cluster": 1 } })),
        row("PUT /v1/orgs/{org}/credential-policy").body(json!({ "require_verified_email": true })),
        row("DELETE /v1/me/tokens/{token}").at("/v1/me/tokens/{personal}"),
        // Only people accept invitations (by their secret token); the intruder is a service account.
        row("POST /v1/invitations/accept").body(json!({ "token": "guess" })).expect(StatusCode::FORBIDDEN),
        row("GET /v1/projects/{project}/members"),
        row("PUT /v1/projects/{project}/members/{principal}").body(json!({ "role": "viewer" })),
        row("DELETE /v1/projects/{project}/members/{principal}"),
        row("GET /v1/operations/{operation}"),
        row("GET /v1/operations/{operation}").at("/v1/operations/{operation}?wait=1s"),
        row("GET /v1/operations/{operation}/steps"),
        row("POST /v1/operations/{operation}/cancel"),
        row("GET /v1/operations/{operation}/approval"),
        row("POST /v1/operations/{operation}/approve").body(json!({})),
        row("POST /v1/operations/{operation}/reject").body(json!({})),
        row("GET /v1/projects/{project}/operations"),
    ]
}

/// The victim's organization, full of things named `secret-…`.
struct Victim {
    org: Tenant,
    project: String,
    cluster: String,
    pool: String,
    deployment: String,
    service: String,
    hook: String,
    webhook: String,
    /// An organization API token.
    token: String,
    /// An admin person of the victim's.
    user: String,
    /// That person's personal access token.
    personal: String,
    account: String,
    policy: String,
    invitation: String,
    /// The cluster's create operation.
    op: String,
    /// The organization's draft invoice.
    invoice: String,
    budget: String,
}

impl Victim {
    async fn make(t: &TestApp) -> Victim {
        let org = t.tenant("victim").await;
        let owner = t.client(&org);
        let project = owner.create_project("secret-web").await.id.to_string();
        let (cluster, op) = owner.create_cluster(&project, "secret-prod", json!({ "region": "eu-central-1" })).await;
        let cluster = cluster.id.to_string();
        let (pool, _) = owner.create_node_pool(&project, &cluster, "secret-pool", 1).await;
        let image = json!({ "image": "registry.example/app:1" });
        let (deployment, _) = owner.create_deployment(&project, &cluster, "secret-app", image).await;
        let spec = json!({ "selector": { "app": "secret-app" }, "ports": [{ "port": 80 }] });
        let service = owner.create_service(&project, &cluster, "secret-svc", spec).await;
        let hook = json!({ "name": "secret-hook", "target": { "cluster": "secret-prod", "deployment": "secret-app" } });
        let hook: DeployHookCreated =
            owner.post(&format!("/v1/projects/{project}/hooks"), hook).await.expect(StatusCode::CREATED);
        let webhook = json!({ "url": "https://secret.example.invalid/", "event_types": ["*"] });
        let webhook: WebhookEndpointCreated =
            owner.post(&owner.org_path("/webhooks"), webhook).await.expect(StatusCode::CREATED);
        let token = owner.create_token("secret-token", "viewer").await;
        let (user, session) = t.member(&org, "secret-person@victim.test", "admin").await;
        let personal: TokenCreated = owner
            .with_token(&session)
            .post("/v1/me/tokens", json!({ "name": "secret-personal" }))
            .await
            .expect(StatusCode::CREATED);
        let account = owner.create_service_account("secret-robot", "member").await.id.to_string();
        let policy =
            json!({ "issuer": "https://ci.example", "audience": "moke", "claims": { "repository": "victim/app" } });
        let policy: TrustPolicyView = owner
            .post(&owner.org_path(&format!("/service-accounts/{account}/trust-policies")), policy)
            .await
            .expect(StatusCode::CREATED);
        let invitation = json!({ "email": "secret-invitee@victim.test", "role": "viewer" });
        let invitation: InvitationView =
            owner.post(&owner.org_path("/invitations"), invitation).await.expect(StatusCode::CREATED);
        let domain = json!({ "domain": "secret-domain.example.com" });
        owner.post::<Value>(&owner.org_path("/domains"), domain).await.expect(StatusCode::CREATED);
        owner.grant_project_role(&project, &user, "developer").await;
        let now = chrono::Utc::now();
        let invoice = t
            .report_usage(&cluster, Some(&pool.id.to_string()), "secret-node", now - chrono::Duration::minutes(1), now)
            .await;
        let budget = json!({ "name": "secret-budget", "amount": "10.00" });
        let budget: Value = owner.post(&owner.org_path("/billing/budgets"), budget).await.expect(StatusCode::CREATED);
        Victim {
            budget: budget["id"].as_str().unwrap().to_string(),
            invoice,
            project,
            cluster,
            pool: pool.id.to_string(),
            deployment: deployment.id.to_string(),
            service: service.id.to_string(),
            hook: hook.hook.id.to_string(),
            webhook: webhook.endpoint.id.to_string(),
            token: token.view.id.to_string(),
            user,
            personal: personal.view.id.to_string(),
            account,
            policy: policy.id.to_string(),
            invitation: invitation.id.to_string(),
            op: op.id.to_string(),
            org,
        }
    }

    /// Every path naming the victim's resources that `row` stands for: each
    /// project, cluster, service and deployment named by id and by name.
    fn paths(&self, row: &Row) -> Vec<String> {
        let template = row.at.unwrap_or_else(|| row.route.split_once(' ').unwrap().1);
        let by_id_and_name = [
            ("{project}", [self.project.as_str(), "secret-web"]),
            ("{cluster}", [self.cluster.as_str(), "secret-prod"]),
            ("{service}", [self.service.as_str(), "secret-svc"]),
            ("{deployment}", [self.deployment.as_str(), "secret-app"]),
        ];
        let mut paths = vec![template.to_string()];
        for (placeholder, names) in by_id_and_name {
            paths = paths
                .into_iter()
                .flat_map(|path| {
                    if path.contains(placeholder) {
                        names.iter().map(|name| path.replace(placeholder, name)).collect()
                    } else {
                        vec![path]
                    }
                })
                .collect();
        }
        let one = [
            ("{org}", self.org.org.as_str()),
            ("{node_pool}", &self.pool),
            ("{node}", "secret-pool-node-0"),
            ("{snapshot}", "secret-etcd-1"),
            ("{generation}", "1"),
            ("{namespace}", "default"),
            ("{hook}", &self.hook),
            ("{endpoint}", &self.webhook),
            ("{token}", &self.token),
            ("{personal}", &self.personal),
            ("{user}", &self.user),
            ("{principal}", &self.user),
            ("{invitation}", &self.invitation),
            ("{service_account}", &self.account),
            ("{policy}", &self.policy),
            ("{domain}", "secret-domain.example.com"),
            ("{operation}", &self.op),
            ("{invoice}", &self.invoice),
            ("{budget}", &self.budget),
        ];
        for path in &mut paths {
            for (placeholder, value) in one {
                *path = path.replace(placeholder, value);
            }
            assert!(!path.contains('{'), "unfilled placeholder in {path}");
        }
        paths
    }

    /// What no answer to an intruder may contain (unless the intruder sent it).
    fn secrets(&self) -> Vec<&str> {
        vec![
            "secret-web",
            "secret-prod",
            "secret-pool",
            "secret-token",
            "secret-person",
            "secret-robot",
            "secret-invitee",
            "secret-personal",
            "secret-node",
            "secret-credit",
            "secret-budget",
            &self.invoice,
            &self.project,
            &self.cluster,
            &self.pool,
            &self.op,
            &self.user,
            &self.account,
        ]
    }
}

/// Plays `rows` as `intruder` on `victim`'s resources; fails listing every
/// path that answered other than the row expects or leaked a secret.
async fn intrude(intruder: &Client<'_>, victim: &Victim, rows: &[Row]) {
    let mut failures = Vec::new();
    let mut requests = 0;
    for row in rows {
        for path in victim.paths(row) {
            requests += 1;
            let answer = intruder.call::<Value>(row.method(), &path, row.body.as_ref()).await;
            if answer.status != row.expect {
                failures.push(format!("row {} at {path}: expected {}, {answer:?}", row.route, row.expect));
                continue;
            }
            // Nothing of the victim's beyond what the intruder itself sent.
            let text = answer.body.to_string();
            for secret in victim.secrets() {
                if !path.contains(secret) && text.contains(secret) {
                    failures.push(format!("row {} at {path} leaked {secret}: {text}", row.route));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {requests} intrusions went wrong:\n{}", failures.len(), failures.join("\n"));
}

fn is_read(row: &Row) -> bool {
    row.method() == Method::GET
}

#[test]
fn every_route_has_a_row_or_is_public() {
    let rows = rows();
    let spec = serde_json::to_value(moke_api::http::openapi()).unwrap();
    for (path, item) in spec["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let route = format!("{} {path}", method.to_uppercase());
            if PUBLIC.contains(&route.as_str()) || SELF.contains(&route.as_str()) {
                continue;
            }
            assert!(rows.iter().any(|r| r.route == route), "route {route} has no tenant-isolation row: add one");
        }
    }
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn cross_tenant_reads_answer_404_and_leak_nothing(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let victim = Victim::make(&t).await;
    let intruder = t.tenant("intruder").await;
    let reads: Vec<Row> = rows().into_iter().filter(is_read).collect();
    intrude(&t.client(&intruder), &victim, &reads).await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn cross_tenant_writes_answer_404_and_change_nothing(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let victim = Victim::make(&t).await;
    let intruder = t.tenant("intruder").await;
    let writes: Vec<Row> = rows().into_iter().filter(|r| !is_read(r)).collect();
    intrude(&t.client(&intruder), &victim, &writes).await;

    // Nothing of the victim's changed.
    let owner = t.client(&victim.org);
    let cluster: ClusterView =
        owner.get(&format!("/v1/projects/{}/clusters/{}", victim.project, victim.cluster)).await.expect(StatusCode::OK);
    assert!(cluster.labels.is_empty(), "{cluster:?}");
    assert!(cluster.deletion_requested_at.is_none(), "{cluster:?}");
    let token: TokenView =
        owner.get(&owner.org_path(&format!("/tokens/{}", victim.token))).await.expect(StatusCode::OK);
    assert!(token.revoked_at.is_none(), "{token:?}");
    assert_eq!(t.count("projects").await, 1);
    assert_eq!(t.count("service_accounts WHERE name = 'secret-robot'").await, 1);
    assert_eq!(t.count("trust_policies").await, 1);
    assert_eq!(t.count("invitations WHERE revoked_at IS NULL").await, 1);
    assert_eq!(t.count("memberships WHERE role = 'admin'").await, 1);
    assert_eq!(t.count("project_members WHERE role = 'developer'").await, 1);
    assert_eq!(t.count("org_domains").await, 1);
    assert_eq!(t.count("org_credential_policies").await, 0);
}

/// The same writes as dry runs: another organization's resources are as
/// absent to a dry run as to the real call.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn cross_tenant_dry_runs_answer_404(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let victim = Victim::make(&t).await;
    let intruder = t.tenant("intruder").await;
    let writes: Vec<Row> = rows()
        .into_iter()
        .filter(|r| !is_read(r))
        .map(|r| {
            let path = r.at.unwrap_or_else(|| r.route.split_once(' ').unwrap().1);
            let glue = if path.contains('?') { '&' } else { '?' };
            let at: &'static str = Box::leak(format!("{path}{glue}dry_run=true").into_boxed_str());
            Row { at: Some(at), ..r }
        })
        .collect();
    let audit_events = t.count("audit_events").await;
    intrude(&t.client(&intruder), &victim, &writes).await;
    assert_eq!(t.count("audit_events").await, audit_events, "a refused dry run records nothing");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn self_routes_show_only_the_callers_own(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let victim = Victim::make(&t).await;
    let intruder = t.tenant("intruder").await;
    let robot = t.client(&intruder);

    // org_list shows only the caller's organization.
    let orgs: Page<OrgView> = robot.get("/v1/orgs").await.expect(StatusCode::OK);
    let ids: Vec<String> = orgs.items.iter().map(|o| o.id.to_string()).collect();
    assert_eq!(ids, [intruder.org.as_str()]);
    assert!(!ids.contains(&victim.org.org));
    // The caller's own account and tokens only.
    let me: MeView = robot.get("/v1/me").await.expect(StatusCode::OK);
    assert_eq!(me.organization.to_string(), intruder.org);
    let (intruder_user, session) = t.member(&intruder, "intruder@intruder.test", "owner").await;
    let person = robot.with_token(&session);
    let mine: Page<TokenView> = person.get("/v1/me/tokens").await.expect(StatusCode::OK);
    assert_eq!(mine.items.len(), 0, "{mine:?}");
    let made: TokenCreated = person.post("/v1/me/tokens", json!({ "name": "mine" })).await.expect(StatusCode::CREATED);
    assert_eq!(made.view.user.map(|u| u.to_string()), Some(intruder_user));
    let me: MeView = person.get("/v1/me").await.expect(StatusCode::OK);
    assert_eq!(me.memberships.len(), 1, "{me:?}");
    assert_eq!(me.memberships[0].organization.to_string(), intruder.org);
    // A device sign-in approved into the victim's organization: as if it did not exist.
    let device: Value = t.anonymous().post("/v1/device/auth", json!({})).await.expect(StatusCode::OK);
    let code = device["user_code"].as_str().unwrap();
    let confirm = json!({ "user_code": code, "organization": victim.org.org });
    person.post::<Value>("/v1/device/confirm", confirm).await.refused_with(StatusCode::NOT_FOUND, "not_found");
}
