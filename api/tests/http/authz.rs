//! The authorization matrix: every route × every organization role × own
//! organization and another one. What a role may do comes from the one
//! permission table (`moke_iam::role_allows`); the route list comes from the
//! OpenAPI document, so a new route without an entry here fails the test.

use moke_iam::{Action, OrgRole};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{OidcProvider, Tenant, TestApp};

/// Routes outside the matrix, and why.
const OUTSIDE: [(&str, &str); 21] = [
    ("POST /v1/signup/confirm", "the mailed token is the credential"),
    ("POST /v1/auth/sso-link/confirm", "the mailed token is the credential"),
    ("POST /v1/hooks/{hook}", "the delivery's signature is the credential"),
    ("GET /v1/regions", "public catalog"),
    ("GET /v1/kubernetes-versions", "public catalog"),
    ("GET /v1/machine-types", "public catalog"),
    ("GET /.well-known/jwks.json", "public keys"),
    ("POST /v1/signup", "no caller yet"),
    ("POST /v1/auth/login", "no caller yet"),
    ("POST /v1/auth/refresh", "the refresh token is the credential"),
    ("POST /v1/auth/logout", "the refresh token is the credential"),
    ("POST /v1/auth/verify-email", "the mailed token is the credential"),
    ("POST /v1/auth/password-reset", "no caller"),
    ("POST /v1/auth/password-reset/confirm", "the mailed token is the credential"),
    ("POST /v1/auth/token-exchange", "the CI ID token is the credential"),
    ("GET /v1/sso/{org}/login", "no caller yet"),
    ("GET /v1/sso/callback", "the provider's answer is the credential"),
    ("GET /v1/orgs", "the caller's own organization"),
    ("GET /v1/me", "the caller itself"),
    ("GET /v1/me/tokens", "the caller's own tokens"),
    ("POST /v1/me/tokens", "the caller's own tokens"),
];
const SELF_ONLY: [&str; 7] = [
    "DELETE /v1/me/tokens/{token}",
    "POST /v1/invitations/accept",
    "POST /v1/me/sso-links/confirm",
    "GET /v1/me/sessions",
    "DELETE /v1/me/sessions",
    "DELETE /v1/me/sessions/{session}",
    "GET /v1/me/security-events",
];

/// Something made fresh by the owner before a request, because the request
/// (in an allowed role) consumes it.
#[derive(Clone, Copy)]
enum Fresh {
    Nothing,
    Token,
    Project,
    Member,
    ServiceAccount,
    TrustPolicy,
    Invitation,
    ProjectGrant,
    Sso,
    Namespace,
    Hook,
    Webhook,
    Service,
    Domain,
}

struct Case {
    route: &'static str,
    action: Action,
    path: String,
    body: Option<Value>,
    fresh: Fresh,
}

struct World {
    org: Tenant,
    project: String,
    cluster: String,
    pool: String,
    deployment: String,
    event: String,
    op: String,
    token: String,
    account: String,
    idp: String,
}

async fn make(t: &TestApp, fresh: Fresh, w: &World, n: usize) -> String {
    let org = &w.org.org;
    let owner = &w.org.token;
    let id = |v: &Value| v["id"].as_str().unwrap_or_else(|| panic!("{v}")).to_string();
    match fresh {
        Fresh::Nothing => String::new(),
        Fresh::Token => {
            id(&t.post(&format!("/v1/orgs/{org}/tokens"), owner, json!({ "name": "t", "role": "viewer" })).await.1)
        }
        Fresh::Project => {
            id(&t.post(&format!("/v1/orgs/{org}/projects"), owner, json!({ "name": format!("gone-{n}") })).await.1)
        }
        Fresh::Member => t.member(&w.org, &format!("fresh-{n}@{org}.test"), "viewer").await.0,
        Fresh::ServiceAccount => id(&t
            .post(
                &format!("/v1/orgs/{org}/service-accounts"),
                owner,
                json!({ "name": format!("sa-{n}"), "role": "viewer" }),
            )
            .await
            .1),
        Fresh::TrustPolicy => id(&t
            .post(
                &format!("/v1/orgs/{org}/service-accounts/{}/trust-policies", w.account),
                owner,
                json!({ "issuer": "https://ci.example", "audience": "a", "claims": { "repository": "r" } }),
            )
            .await
            .1),
        Fresh::Invitation => id(&t
            .post(
                &format!("/v1/orgs/{org}/invitations"),
                owner,
                json!({ "email": format!("i{n}@x.test"), "role": "viewer" }),
            )
            .await
            .1),
        Fresh::ProjectGrant => {
            let (user, _) = t.member(&w.org, &format!("grant-{n}@{org}.test"), "viewer").await;
            let request = t
                .request(Method::PUT, &format!("/v1/projects/{}/members/{user}", w.project), owner)
                .json(&json!({ "role": "viewer" }));
            assert_eq!(t.send(request).await.0, StatusCode::OK);
            user
        }
        Fresh::Service => {
            let path = format!("/v1/projects/{}/clusters/{}/namespaces/default/services", w.project, w.cluster);
            let body = json!({ "name": format!("svc-{n}"), "spec": { "selector": { "app": "x" }, "ports": [{ "port": 80 }] } });
            id(&t.post(&path, owner, body).await.1)
        }
        Fresh::Webhook => {
            let body = json!({ "url": "https://hooks.example.invalid/", "event_types": ["*"] });
            id(&t.post(&format!("/v1/orgs/{org}/webhooks"), owner, body).await.1)
        }
        Fresh::Hook => {
            let path = format!("/v1/projects/{}/hooks", w.project);
            let body =
                json!({ "name": format!("hook-{n}"), "target": { "cluster": w.cluster, "deployment": "hooked" } });
            let (status, created) = t.post(&path, owner, body).await;
            assert_eq!(status, StatusCode::CREATED, "{created}");
            id(&created)
        }
        Fresh::Namespace => {
            let path = format!("/v1/projects/{}/clusters/{}/namespaces", w.project, w.cluster);
            let (status, body) = t.post(&path, owner, json!({ "name": format!("ns-{n}") })).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
            format!("ns-{n}")
        }
        Fresh::Domain => {
            let (status, body) = t
                .post(&format!("/v1/orgs/{org}/domains"), owner, json!({ "domain": format!("d{n}.example.com") }))
                .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
            body["domain"].as_str().unwrap().to_string()
        }
        Fresh::Sso => {
            let request = t.request(Method::PUT, &format!("/v1/orgs/{org}/sso"), owner).json(&json!({
                "issuer": w.idp, "client_id": "moke-sso", "client_secret": "moke-sso-secret",
                "allowed_domains": [], "default_role": "viewer",
            }));
            let (status, body) = t.send(request).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            String::new()
        }
    }
}

fn cases(w: &World) -> Vec<Case> {
    let (org, p, c, np, dep) = (&w.org.org, &w.project, &w.cluster, &w.pool, &w.deployment);
    let mut all = Vec::new();
    let mut case = |route: &'static str, action: Action, path: String, body: Option<Value>, fresh: Fresh| {
        all.push(Case { route, action, path, body, fresh });
    };
    use Action::*;
    use Fresh::*;
    case("GET /v1/orgs/{org}", Read, format!("/v1/orgs/{org}"), None, Nothing);
    case("GET /v1/orgs/{org}/quotas", ReadQuotas, format!("/v1/orgs/{org}/quotas"), None, Nothing);
    case("GET /v1/orgs/{org}/audit-events", ReadAudit, format!("/v1/orgs/{org}/audit-events"), None, Nothing);
    case(
        "GET /v1/orgs/{org}/audit-events/export",
        ReadAudit,
        format!("/v1/orgs/{org}/audit-events/export?format=ndjson"),
        None,
        Nothing,
    );
    case("GET /v1/orgs/{org}/tokens", ReadCredentials, format!("/v1/orgs/{org}/tokens"), None, Nothing);
    case(
        "POST /v1/orgs/{org}/tokens",
        ManageCredentials,
        format!("/v1/orgs/{org}/tokens"),
        Some(json!({ "name": "m", "role": "viewer" })),
        Nothing,
    );
    case(
        "GET /v1/orgs/{org}/tokens/{token}",
        ReadCredentials,
        format!("/v1/orgs/{org}/tokens/{}", w.token),
        None,
        Nothing,
    );
    case(
        "DELETE /v1/orgs/{org}/tokens/{token}",
        ManageCredentials,
        format!("/v1/orgs/{org}/tokens/{{fresh}}"),
        None,
        Token,
    );
    case("GET /v1/orgs/{org}/projects", Read, format!("/v1/orgs/{org}/projects"), None, Nothing);
    case(
        "POST /v1/orgs/{org}/projects",
        ManageResources,
        format!("/v1/orgs/{org}/projects"),
        Some(json!({ "name": "{n}" })),
        Nothing,
    );
    case("GET /v1/projects/{project}", Read, format!("/v1/projects/{p}"), None, Nothing);
    case(
        "PATCH /v1/projects/{project}",
        ManageResources,
        format!("/v1/projects/{p}"),
        Some(json!({ "labels": { "a": "b" } })),
        Nothing,
    );
    case("DELETE /v1/projects/{project}", ManageResources, "/v1/projects/{fresh}".into(), None, Project);
    case("GET /v1/projects/{project}/clusters", Read, format!("/v1/projects/{p}/clusters"), None, Nothing);
    case("GET /v1/projects/{project}/deploy-policy", Read, format!("/v1/projects/{p}/deploy-policy"), None, Nothing);
    case(
        "PUT /v1/projects/{project}/deploy-policy",
        ManageCredentials,
        format!("/v1/projects/{p}/deploy-policy"),
        Some(json!({ "allowed_image_prefixes": ["registry.example/a/"], "allowed_branches": ["main"] })),
        Nothing,
    );
    case("GET /v1/projects/{project}/hooks", ReadCredentials, format!("/v1/projects/{p}/hooks"), None, Nothing);
    case(
        "POST /v1/projects/{project}/hooks",
        ManageCredentials,
        format!("/v1/projects/{p}/hooks"),
        Some(json!({ "name": "{n}", "target": { "cluster": c, "deployment": "hooked" } })),
        Nothing,
    );
    case(
        "DELETE /v1/projects/{project}/hooks/{hook}",
        ManageCredentials,
        format!("/v1/projects/{p}/hooks/{{fresh}}"),
        None,
        Hook,
    );
    case(
        "POST /v1/projects/{project}/hooks/{hook}/rotate-secret",
        ManageCredentials,
        format!("/v1/projects/{p}/hooks/{{fresh}}/rotate-secret"),
        Some(json!({ "previous_secret_valid_seconds": 60 })),
        Hook,
    );
    case(
        "POST /v1/projects/{project}/clusters",
        ManageResources,
        format!("/v1/projects/{p}/clusters"),
        Some(json!({ "name": "{n}", "spec": { "region": "eu-central-1" } })),
        Nothing,
    );
    let cp = format!("/v1/projects/{p}/clusters/{c}");
    case("GET /v1/projects/{project}/clusters/{cluster}", Read, cp.clone(), None, Nothing);
    case(
        "PATCH /v1/projects/{project}/clusters/{cluster}",
        ManageResources,
        cp.clone(),
        Some(json!({ "labels": { "a": "b" } })),
        Nothing,
    );
    case("GET /v1/projects/{project}/clusters/{cluster}/node-pools", Read, format!("{cp}/node-pools"), None, Nothing);
    case("GET /v1/projects/{project}/clusters/{cluster}/kubeconfig", Read, format!("{cp}/kubeconfig"), None, Nothing);
    case("GET /v1/projects/{project}/clusters/{cluster}/nodes", Read, format!("{cp}/nodes"), None, Nothing);
    case("GET /v1/projects/{project}/clusters/{cluster}/metrics", Read, format!("{cp}/metrics"), None, Nothing);
    case(
        "POST /v1/projects/{project}/clusters/{cluster}/credentials",
        Read,
        format!("{cp}/credentials"),
        None,
        Nothing,
    );
    case(
        "POST /v1/projects/{project}/clusters/{cluster}/credentials/revoke",
        AdministerClusters,
        format!("{cp}/credentials/revoke"),
        None,
        Nothing,
    );
    case(
        "POST /v1/projects/{project}/clusters/{cluster}/node-pools",
        ManageResources,
        format!("{cp}/node-pools"),
        Some(json!({ "name": "{n}", "spec": { "machine_type": "bm.small", "count": 1 } })),
        Nothing,
    );
    let pp = format!("{cp}/node-pools/{np}");
    case("GET /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}", Read, pp.clone(), None, Nothing);
    case(
        "PATCH /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}",
        ManageResources,
        pp.clone(),
        Some(json!({ "labels": { "a": "b" } })),
        Nothing,
    );
    let ns = format!("{cp}/namespaces");
    case("GET /v1/projects/{project}/clusters/{cluster}/namespaces", Read, ns.clone(), None, Nothing);
    case(
        "POST /v1/projects/{project}/clusters/{cluster}/namespaces",
        ManageResources,
        ns.clone(),
        Some(json!({ "name": "{n}" })),
        Nothing,
    );
    case(
        "DELETE /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}",
        ManageResources,
        format!("{ns}/{{fresh}}"),
        None,
        Namespace,
    );
    let deps = format!("{ns}/default/deployments");
    case(
        "GET /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments",
        Read,
        deps.clone(),
        None,
        Nothing,
    );
    case(
        "POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments",
        ManageResources,
        deps.clone(),
        Some(json!({ "name": "{n}", "spec": { "image": "registry.example/app:1" } })),
        Nothing,
    );
    let svcs = format!("{ns}/default/services");
    case(
        "GET /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services",
        Read,
        svcs.clone(),
        None,
        Nothing,
    );
    case(
        "POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services",
        ManageResources,
        svcs.clone(),
        Some(json!({ "name": "{n}", "spec": { "selector": { "app": "x" }, "ports": [{ "port": 80 }] } })),
        Nothing,
    );
    let sp = format!("{svcs}/svc");
    case(
        "GET /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services/{service}",
        Read,
        sp.clone(),
        None,
        Nothing,
    );
    case(
        "PATCH /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services/{service}",
        ManageResources,
        sp.clone(),
        Some(json!({ "labels": { "a": "b" } })),
        Nothing,
    );
    case(
        "DELETE /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services/{service}",
        ManageResources,
        format!("{svcs}/{{fresh}}"),
        None,
        Service,
    );
    let dp = format!("{deps}/{dep}");
    case(
        "GET /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}",
        Read,
        dp.clone(),
        None,
        Nothing,
    );
    case(
        "GET /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/revisions",
        Read,
        format!("{dp}/revisions"),
        None,
        Nothing,
    );
    case(
        "PATCH /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}",
        ManageResources,
        dp.clone(),
        Some(json!({ "labels": { "a": "b" } })),
        Nothing,
    );
    case(
        "POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/scale",
        ManageResources,
        format!("{dp}/scale"),
        Some(json!({ "replicas": 2 })),
        Nothing,
    );
    case(
        "POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/rollback",
        ManageResources,
        format!("{dp}/rollback"),
        Some(json!({ "revision": 1 })),
        Nothing,
    );
    case(
        "POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/pause",
        ManageResources,
        format!("{dp}/pause"),
        None,
        Nothing,
    );
    case(
        "POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/resume",
        ManageResources,
        format!("{dp}/resume"),
        None,
        Nothing,
    );
    case(
        "POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/restart",
        ManageResources,
        format!("{dp}/restart"),
        None,
        Nothing,
    );
    // Deletes last among the cluster's cases: a deleting pool or cluster still answers (409 or 202).
    case(
        "DELETE /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}",
        ManageResources,
        dp,
        None,
        Nothing,
    );
    case("DELETE /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}", ManageResources, pp, None, Nothing);
    case("DELETE /v1/projects/{project}/clusters/{cluster}", ManageResources, cp, None, Nothing);
    case("GET /v1/operations/{operation}", Read, format!("/v1/operations/{}", w.op), None, Nothing);
    let hooks = format!("/v1/orgs/{org}/webhooks");
    case("GET /v1/orgs/{org}/webhooks", ReadCredentials, hooks.clone(), None, Nothing);
    case(
        "POST /v1/orgs/{org}/webhooks",
        ManageCredentials,
        hooks.clone(),
        Some(json!({ "url": "https://hooks.example.invalid/", "event_types": ["*"] })),
        Nothing,
    );
    case(
        "GET /v1/orgs/{org}/webhooks/{endpoint}/deliveries",
        ReadCredentials,
        format!("{hooks}/{{fresh}}/deliveries"),
        None,
        Webhook,
    );
    case(
        "POST /v1/orgs/{org}/webhooks/{endpoint}/redeliveries",
        ManageCredentials,
        format!("{hooks}/{{fresh}}/redeliveries"),
        Some(json!({ "event_id": w.event })),
        Webhook,
    );
    case("DELETE /v1/orgs/{org}/webhooks/{endpoint}", ManageCredentials, format!("{hooks}/{{fresh}}"), None, Webhook);
    case("GET /v1/orgs/{org}/members", ReadMembers, format!("/v1/orgs/{org}/members"), None, Nothing);
    case(
        "PATCH /v1/orgs/{org}/members/{user}",
        ManageMembers,
        format!("/v1/orgs/{org}/members/{{fresh}}"),
        Some(json!({ "role": "viewer" })),
        Member,
    );
    case(
        "DELETE /v1/orgs/{org}/members/{user}",
        ManageMembers,
        format!("/v1/orgs/{org}/members/{{fresh}}"),
        None,
        Member,
    );
    case("GET /v1/orgs/{org}/invitations", ReadMembers, format!("/v1/orgs/{org}/invitations"), None, Nothing);
    case(
        "POST /v1/orgs/{org}/invitations",
        ManageMembers,
        format!("/v1/orgs/{org}/invitations"),
        Some(json!({ "email": "{n}@x.test", "role": "viewer" })),
        Nothing,
    );
    case(
        "DELETE /v1/orgs/{org}/invitations/{invitation}",
        ManageMembers,
        format!("/v1/orgs/{org}/invitations/{{fresh}}"),
        None,
        Invitation,
    );
    let sa = format!("/v1/orgs/{org}/service-accounts");
    case("GET /v1/orgs/{org}/service-accounts", ReadCredentials, sa.clone(), None, Nothing);
    case(
        "POST /v1/orgs/{org}/service-accounts",
        ManageCredentials,
        sa.clone(),
        Some(json!({ "name": "{n}", "role": "viewer" })),
        Nothing,
    );
    case(
        "GET /v1/orgs/{org}/service-accounts/{service_account}",
        ReadCredentials,
        format!("{sa}/{}", w.account),
        None,
        Nothing,
    );
    case(
        "DELETE /v1/orgs/{org}/service-accounts/{service_account}",
        ManageCredentials,
        format!("{sa}/{{fresh}}"),
        None,
        ServiceAccount,
    );
    case(
        "POST /v1/orgs/{org}/service-accounts/{service_account}/tokens",
        ManageCredentials,
        format!("{sa}/{}/tokens", w.account),
        Some(json!({ "name": "t" })),
        Nothing,
    );
    let tp = format!("{sa}/{}/trust-policies", w.account);
    case(
        "GET /v1/orgs/{org}/service-accounts/{service_account}/trust-policies",
        ReadCredentials,
        tp.clone(),
        None,
        Nothing,
    );
    case(
        "POST /v1/orgs/{org}/service-accounts/{service_account}/trust-policies",
        ManageCredentials,
        tp.clone(),
        Some(json!({ "issuer": "https://ci.example", "audience": "a", "claims": { "repository": "r" } })),
        Nothing,
    );
    case(
        "DELETE /v1/orgs/{org}/service-accounts/{service_account}/trust-policies/{policy}",
        ManageCredentials,
        format!("{tp}/{{fresh}}"),
        None,
        TrustPolicy,
    );
    case("GET /v1/orgs/{org}/sso", Read, format!("/v1/orgs/{org}/sso"), None, Sso);
    case(
        "PUT /v1/orgs/{org}/sso",
        ManageSso,
        format!("/v1/orgs/{org}/sso"),
        Some(json!({ "issuer": w.idp, "client_id": "moke-sso", "client_secret": "moke-sso-secret",
                     "allowed_domains": [], "default_role": "viewer" })),
        Nothing,
    );
    case("DELETE /v1/orgs/{org}/sso", ManageSso, format!("/v1/orgs/{org}/sso"), None, Sso);
    case("GET /v1/orgs/{org}/domains", Read, format!("/v1/orgs/{org}/domains"), None, Nothing);
    case(
        "POST /v1/orgs/{org}/domains",
        ManageSso,
        format!("/v1/orgs/{org}/domains"),
        Some(json!({ "domain": "{n}.example.com" })),
        Nothing,
    );
    case(
        "POST /v1/orgs/{org}/domains/{domain}/verify",
        ManageSso,
        format!("/v1/orgs/{org}/domains/{{fresh}}/verify"),
        None,
        Domain,
    );
    case(
        "DELETE /v1/orgs/{org}/domains/{domain}",
        ManageSso,
        format!("/v1/orgs/{org}/domains/{{fresh}}"),
        None,
        Domain,
    );
    case("GET /v1/orgs/{org}/credential-policy", Read, format!("/v1/orgs/{org}/credential-policy"), None, Nothing);
    case(
        "PUT /v1/orgs/{org}/credential-policy",
        ManageSso,
        format!("/v1/orgs/{org}/credential-policy"),
        Some(json!({ "max_token_lifetime_seconds": null })),
        Nothing,
    );
    case("GET /v1/projects/{project}/members", Read, format!("/v1/projects/{p}/members"), None, Nothing);
    case(
        "PUT /v1/projects/{project}/members/{principal}",
        ManageProjectMembers,
        format!("/v1/projects/{p}/members/{{fresh}}"),
        Some(json!({ "role": "developer" })),
        ProjectGrant,
    );
    case(
        "DELETE /v1/projects/{project}/members/{principal}",
        ManageProjectMembers,
        format!("/v1/projects/{p}/members/{{fresh}}"),
        None,
        ProjectGrant,
    );
    all
}

async fn world(t: &TestApp, name: &str, idp: &str) -> World {
    let org = t.tenant(name).await;
    let project = t.project(&org, "web").await;
    let (cluster, op) = t.cluster(&org, &project, "prod").await;
    let (pool, _) = t.node_pool(&org, &project, &cluster, "pool", 1).await;
    let (deployment, _) =
        t.deployment(&org, &project, &cluster, "app", json!({ "image": "registry.example/app:1" })).await;
    // A finished Operation (a label change), so the organization has an event to redeliver.
    let (status, _) = t
        .patch(&format!("/v1/projects/{project}/clusters/{cluster}"), &org.token, json!({ "labels": { "x": "y" } }))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let event: uuid::Uuid = sqlx::query_scalar(
        "SELECT id FROM events WHERE org_id = (SELECT id FROM organizations WHERE name = $1) LIMIT 1",
    )
    .bind(name)
    .fetch_one(&t.pool)
    .await
    .unwrap();
    let event = moke_api::ids::EventId::from_uuid(event).to_string();
    // A service the read and update cases use (deletes take fresh ones).
    let (status, body) = t
        .post(
            &format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/services"),
            &org.token,
            json!({ "name": "svc", "spec": { "selector": { "app": "app" }, "ports": [{ "port": 80 }] } }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // Hooks point at a deployment no case deletes.
    t.deployment(&org, &project, &cluster, "hooked", json!({ "image": "registry.example/app:1" })).await;
    let (_, token) =
        t.post(&format!("/v1/orgs/{}/tokens", org.org), &org.token, json!({ "name": "x", "role": "viewer" })).await;
    let (_, account) = t
        .post(
            &format!("/v1/orgs/{}/service-accounts", org.org),
            &org.token,
            json!({ "name": "robot", "role": "viewer" }),
        )
        .await;
    let account = account["id"].as_str().unwrap().to_string();
    World {
        project,
        cluster,
        pool,
        deployment,
        event,
        op: op["id"].as_str().unwrap().to_string(),
        token: token["id"].as_str().unwrap().to_string(),
        account,
        idp: idp.to_string(),
        org,
    }
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn every_route_for_every_role_in_own_and_other_org(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let t = TestApp::start_with(options, connect, |c| {
        c.auth.allow_insecure_issuers = true;
        c.rate_limits.login_burst = 10_000;
        c.rate_limits.per_principal_burst = 10_000;
        c.rate_limits.per_ip_burst = 10_000;
        c.quotas.max_clusters = 1000;
        (c.quotas.max_webhook_endpoints, c.quotas.max_service_accounts, c.quotas.max_api_tokens) = (1000, 1000, 1000);
        (c.quotas.max_trust_policies, c.quotas.max_deploy_hooks, c.quotas.max_namespaces_per_cluster) =
            (1000, 1000, 1000);
        (c.quotas.max_pending_invitations, c.quotas.max_invitations_per_hour) = (1000, 1000);
        // Nothing answers DNS here: a verification fails fast (409), as the matrix allows.
        c.auth.dns_resolver = "127.0.0.1:9".into();
    })
    .await;
    let own = world(&t, "acme", &idp.issuer).await;
    let other = world(&t, "other", &idp.issuer).await;
    let all = cases(&own);

    // The matrix covers every route.
    let spec = serde_json::to_value(moke_api::http::openapi()).unwrap();
    for (path, item) in spec["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let route = format!("{} {path}", method.to_uppercase());
            let known = OUTSIDE.iter().any(|(r, _)| *r == route)
                || SELF_ONLY.contains(&route.as_str())
                || all.iter().any(|c| c.route == route);
            assert!(known, "route {route} has no authorization-matrix entry: add one");
        }
    }

    let mut n = 0;
    let mut failures = Vec::new();
    for role in OrgRole::ALL {
        let (_, mine) = t.member(&own.org, &format!("{}@acme.test", role.as_str()), role.as_str()).await;
        let (_, theirs) = t.member(&other.org, &format!("{}@other.test", role.as_str()), role.as_str()).await;
        for case in &all {
            for (token, own_org) in [(&mine, true), (&theirs, false)] {
                n += 1;
                let fresh = make(&t, case.fresh, &own, n).await;
                let path = case.path.replace("{fresh}", &fresh);
                let method = Method::from_bytes(case.route.split(' ').next().unwrap().as_bytes()).unwrap();
                let mut request = t.request(method, &path, token);
                if let Some(body) = &case.body {
                    request = request.json(
                        &serde_json::from_str::<Value>(&body.to_string().replace("{n}", &format!("n{n}"))).unwrap(),
                    );
                }
                let (status, body) = t.send(request).await;
                let allowed = moke_iam::role_allows(role, case.action);
                let ok = match (own_org, allowed) {
                    (false, _) => status == StatusCode::NOT_FOUND,
                    (true, false) => status == StatusCode::FORBIDDEN,
                    (true, true) => status.is_success() || status == StatusCode::CONFLICT,
                };
                if !ok {
                    failures.push(format!(
                        "{} as {} of {} org: {status} {body}",
                        case.route,
                        role.as_str(),
                        if own_org { "own" } else { "other" }
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {n} requests broke the permission table:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
