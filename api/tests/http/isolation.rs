//! Tenant isolation on every route: another organization's resources are a
//! 404 with nothing of theirs in the answer. The route list comes from the
//! OpenAPI document, so a new route without a case here fails the test.

use std::collections::BTreeMap;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::TestApp;

/// Routes that serve no tenant data: catalogs, the public keys, and the
/// sign-in flows, which name no organization's resources (their secrets
/// are the credential) and have their own tests.
const PUBLIC: [&str; 17] = [
    "POST /v1/signup/confirm",
    "POST /v1/auth/sso-link/confirm",
    "POST /v1/hooks/{hook}",
    "GET /v1/regions",
    "GET /v1/kubernetes-versions",
    "GET /v1/machine-types",
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
];

/// Routes about the caller itself; checked below to show only the caller's own.
const SELF: [&str; 9] = [
    "GET /v1/orgs",
    "GET /v1/me",
    "GET /v1/me/tokens",
    "POST /v1/me/tokens",
    "POST /v1/me/sso-links/confirm",
    "GET /v1/me/sessions",
    "DELETE /v1/me/sessions",
    "DELETE /v1/me/sessions/{session}",
    "GET /v1/me/security-events",
];

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn another_orgs_resources_are_not_found_on_every_route(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let victim = t.tenant("victim").await;
    let intruder = t.tenant("intruder").await;
    let project = t.project(&victim, "secret-web").await;
    let (cluster, op) = t.cluster(&victim, &project, "secret-prod").await;
    let (pool, _) = t.node_pool(&victim, &project, &cluster, "secret-pool", 1).await;
    let (deployment, _) =
        t.deployment(&victim, &project, &cluster, "secret-app", json!({ "image": "registry.example/app:1" })).await;
    let (_, service) = t
        .post(
            &format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/services"),
            &victim.token,
            json!({ "name": "secret-svc", "spec": { "selector": { "app": "secret-app" }, "ports": [{ "port": 80 }] } }),
        )
        .await;
    let service = service["id"].as_str().unwrap_or_else(|| panic!("{service}")).to_string();
    let (_, hook) = t
        .post(
            &format!("/v1/projects/{project}/hooks"),
            &victim.token,
            json!({ "name": "secret-hook", "target": { "cluster": "secret-prod", "deployment": "secret-app" } }),
        )
        .await;
    let hook = hook["id"].as_str().unwrap_or_else(|| panic!("{hook}")).to_string();
    let (_, webhook) = t
        .post(
            &format!("/v1/orgs/{}/webhooks", victim.org),
            &victim.token,
            json!({ "url": "https://secret.example.invalid/", "event_types": ["*"] }),
        )
        .await;
    let webhook = webhook["id"].as_str().unwrap_or_else(|| panic!("{webhook}")).to_string();
    let (_, token) = t
        .post(
            &format!("/v1/orgs/{}/tokens", victim.org),
            &victim.token,
            json!({ "name": "secret-token", "role": "viewer" }),
        )
        .await;
    let token = token["id"].as_str().unwrap().to_string();
    let (victim_user, victim_session) = t.member(&victim, "secret-person@victim.test", "admin").await;
    let (_, personal) = t.post("/v1/me/tokens", &victim_session, json!({ "name": "secret-personal" })).await;
    let personal = personal["id"].as_str().unwrap().to_string();
    let (_, account) = t
        .post(
            &format!("/v1/orgs/{}/service-accounts", victim.org),
            &victim.token,
            json!({ "name": "secret-robot", "role": "member" }),
        )
        .await;
    let account = account["id"].as_str().unwrap().to_string();
    let (_, policy) = t
        .post(
            &format!("/v1/orgs/{}/service-accounts/{account}/trust-policies", victim.org),
            &victim.token,
            json!({ "issuer": "https://ci.example", "audience": "moke", "claims": { "repository": "victim/app" } }),
        )
        .await;
    let policy = policy["id"].as_str().unwrap().to_string();
    let (_, invitation) = t
        .post(
            &format!("/v1/orgs/{}/invitations", victim.org),
            &victim.token,
            json!({ "email": "secret-invitee@victim.test", "role": "viewer" }),
        )
        .await;
    let invitation = invitation["id"].as_str().unwrap().to_string();
    let (status, _) = t
        .post(
            &format!("/v1/orgs/{}/domains", victim.org),
            &victim.token,
            json!({ "domain": "secret-domain.example.com" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = t
        .send(
            t.request(Method::PUT, &format!("/v1/projects/{project}/members/{victim_user}"), &victim.token)
                .json(&json!({ "role": "developer" })),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let org = victim.org.clone();
    let op = op["id"].as_str().unwrap().to_string();

    let cluster_body = json!({ "name": "x", "spec": { "region": "eu-central-1" } });
    let pool_body = json!({ "name": "x", "spec": { "machine_type": "bm.small", "count": 1 } });
    let mut cases: BTreeMap<String, Vec<(String, Option<Value>)>> = BTreeMap::new();
    let mut case = |route: &str, path: String, body: Option<Value>| {
        cases.entry(route.to_string()).or_default().push((path, body));
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
        case("GET /v1/projects/{project}/deploy-policy", format!("/v1/projects/{p}/deploy-policy"), None);
        case(
            "PUT /v1/projects/{project}/deploy-policy",
            format!("/v1/projects/{p}/deploy-policy"),
            Some(json!({ "allowed_image_prefixes": ["x.example/a/"], "allowed_branches": ["main"] })),
        );
        case("GET /v1/projects/{project}/hooks", format!("/v1/projects/{p}/hooks"), None);
        case(
            "POST /v1/projects/{project}/hooks",
            format!("/v1/projects/{p}/hooks"),
            Some(json!({ "name": "x", "target": { "cluster": "secret-prod", "deployment": "secret-app" } })),
        );
        case("DELETE /v1/projects/{project}/hooks/{hook}", format!("/v1/projects/{p}/hooks/{hook}"), None);
        case(
            "POST /v1/projects/{project}/hooks/{hook}/rotate-secret",
            format!("/v1/projects/{p}/hooks/{hook}/rotate-secret"),
            Some(json!({})),
        );
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
            case("GET /v1/projects/{project}/clusters/{cluster}/kubeconfig", format!("{cp}/kubeconfig"), None);
            case("GET /v1/projects/{project}/clusters/{cluster}/nodes", format!("{cp}/nodes"), None);
            case("GET /v1/projects/{project}/clusters/{cluster}/metrics", format!("{cp}/metrics"), None);
            case("POST /v1/projects/{project}/clusters/{cluster}/credentials", format!("{cp}/credentials"), None);
            case(
                "POST /v1/projects/{project}/clusters/{cluster}/credentials/revoke",
                format!("{cp}/credentials/revoke"),
                None,
            );
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
            let ns = format!("{cp}/namespaces");
            case("GET /v1/projects/{project}/clusters/{cluster}/namespaces", ns.clone(), None);
            case("POST /v1/projects/{project}/clusters/{cluster}/namespaces", ns.clone(), Some(json!({ "name": "x" })));
            case(
                "DELETE /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}",
                format!("{ns}/default"),
                None,
            );
            let deps = format!("{ns}/default/deployments");
            let route = |suffix: &str| {
                format!("/v1/projects/{{project}}/clusters/{{cluster}}/namespaces/{{namespace}}/deployments{suffix}")
            };
            case(&format!("GET {}", route("")), deps.clone(), None);
            case(
                &format!("POST {}", route("")),
                deps.clone(),
                Some(json!({ "name": "x", "spec": { "image": "registry.example/x:1" } })),
            );
            let svcs = format!("{ns}/default/services");
            let sroute = |suffix: &str| {
                format!("/v1/projects/{{project}}/clusters/{{cluster}}/namespaces/{{namespace}}/services{suffix}")
            };
            case(&format!("GET {}", sroute("")), svcs.clone(), None);
            case(
                &format!("POST {}", sroute("")),
                svcs.clone(),
                Some(json!({ "name": "x", "spec": { "selector": { "app": "x" }, "ports": [{ "port": 80 }] } })),
            );
            for s in [service.clone(), "secret-svc".to_string()] {
                let sp = format!("{svcs}/{s}");
                case(&format!("GET {}", sroute("/{service}")), sp.clone(), None);
                case(&format!("PATCH {}", sroute("/{service}")), sp.clone(), Some(json!({ "labels": { "a": "b" } })));
                case(&format!("DELETE {}", sroute("/{service}")), sp, None);
            }
            for d in [deployment.clone(), "secret-app".to_string()] {
                let dp = format!("{deps}/{d}");
                case(&format!("GET {}", route("/{deployment}")), dp.clone(), None);
                case(
                    &format!("PATCH {}", route("/{deployment}")),
                    dp.clone(),
                    Some(json!({ "spec": { "replicas": 2 } })),
                );
                case(&format!("DELETE {}", route("/{deployment}")), dp.clone(), None);
                case(&format!("GET {}", route("/{deployment}/revisions")), format!("{dp}/revisions"), None);
                case(
                    &format!("POST {}", route("/{deployment}/scale")),
                    format!("{dp}/scale"),
                    Some(json!({ "replicas": 2 })),
                );
                case(&format!("POST {}", route("/{deployment}/rollback")), format!("{dp}/rollback"), Some(json!({})));
                for action in ["pause", "resume", "restart"] {
                    case(
                        &format!("POST {}", route(&format!("/{{deployment}}/{action}"))),
                        format!("{dp}/{action}"),
                        None,
                    );
                }
            }
        }
    }
    let hooks = format!("/v1/orgs/{org}/webhooks");
    case("GET /v1/orgs/{org}/webhooks", hooks.clone(), None);
    case(
        "POST /v1/orgs/{org}/webhooks",
        hooks.clone(),
        Some(json!({ "url": "https://hooks.example.invalid/", "event_types": ["*"] })),
    );
    case("DELETE /v1/orgs/{org}/webhooks/{endpoint}", format!("{hooks}/{webhook}"), None);
    case("GET /v1/orgs/{org}/webhooks/{endpoint}/deliveries", format!("{hooks}/{webhook}/deliveries"), None);
    case(
        "POST /v1/orgs/{org}/webhooks/{endpoint}/redeliveries",
        format!("{hooks}/{webhook}/redeliveries"),
        Some(json!({ "event_id": "msg_01a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6" })),
    );
    case("GET /v1/orgs/{org}/members", format!("/v1/orgs/{org}/members"), None);
    let member = format!("/v1/orgs/{org}/members/{victim_user}");
    case("PATCH /v1/orgs/{org}/members/{user}", member.clone(), Some(json!({ "role": "viewer" })));
    case("DELETE /v1/orgs/{org}/members/{user}", member, None);
    case("GET /v1/orgs/{org}/invitations", format!("/v1/orgs/{org}/invitations"), None);
    case(
        "POST /v1/orgs/{org}/invitations",
        format!("/v1/orgs/{org}/invitations"),
        Some(json!({ "email": "x@y.test", "role": "viewer" })),
    );
    case("DELETE /v1/orgs/{org}/invitations/{invitation}", format!("/v1/orgs/{org}/invitations/{invitation}"), None);
    let accounts = format!("/v1/orgs/{org}/service-accounts");
    case("GET /v1/orgs/{org}/service-accounts", accounts.clone(), None);
    case("POST /v1/orgs/{org}/service-accounts", accounts.clone(), Some(json!({ "name": "x", "role": "viewer" })));
    case("GET /v1/orgs/{org}/service-accounts/{service_account}", format!("{accounts}/{account}"), None);
    case("DELETE /v1/orgs/{org}/service-accounts/{service_account}", format!("{accounts}/{account}"), None);
    case(
        "POST /v1/orgs/{org}/service-accounts/{service_account}/tokens",
        format!("{accounts}/{account}/tokens"),
        Some(json!({ "name": "x" })),
    );
    let policies = format!("{accounts}/{account}/trust-policies");
    case("GET /v1/orgs/{org}/service-accounts/{service_account}/trust-policies", policies.clone(), None);
    case(
        "POST /v1/orgs/{org}/service-accounts/{service_account}/trust-policies",
        policies.clone(),
        Some(json!({ "issuer": "https://ci.example", "audience": "x", "claims": { "repository": "x/y" } })),
    );
    case(
        "DELETE /v1/orgs/{org}/service-accounts/{service_account}/trust-policies/{policy}",
        format!("{policies}/{policy}"),
        None,
    );
    case("GET /v1/orgs/{org}/sso", format!("/v1/orgs/{org}/sso"), None);
    case(
        "PUT /v1/orgs/{org}/sso",
        format!("/v1/orgs/{org}/sso"),
        Some(json!({ "issuer": "https://idp.example", "client_id": "x", "client_secret": "y",
                     "allowed_domains": ["example.com"], "default_role": "viewer" })),
    );
    case("DELETE /v1/orgs/{org}/sso", format!("/v1/orgs/{org}/sso"), None);
    case("GET /v1/orgs/{org}/audit-events/export", format!("/v1/orgs/{org}/audit-events/export"), None);
    case("GET /v1/orgs/{org}/domains", format!("/v1/orgs/{org}/domains"), None);
    case("POST /v1/orgs/{org}/domains", format!("/v1/orgs/{org}/domains"), Some(json!({ "domain": "x.example.com" })));
    case(
        "POST /v1/orgs/{org}/domains/{domain}/verify",
        format!("/v1/orgs/{org}/domains/secret-domain.example.com/verify"),
        None,
    );
    case("DELETE /v1/orgs/{org}/domains/{domain}", format!("/v1/orgs/{org}/domains/secret-domain.example.com"), None);
    case("GET /v1/orgs/{org}/credential-policy", format!("/v1/orgs/{org}/credential-policy"), None);
    case(
        "PUT /v1/orgs/{org}/credential-policy",
        format!("/v1/orgs/{org}/credential-policy"),
        Some(json!({ "require_verified_email": true })),
    );
    case("DELETE /v1/me/tokens/{token}", format!("/v1/me/tokens/{personal}"), None);
    case("POST /v1/invitations/accept", "/v1/invitations/accept".to_string(), Some(json!({ "token": "guess" })));
    for p in [project.clone(), "secret-web".to_string()] {
        case("GET /v1/projects/{project}/members", format!("/v1/projects/{p}/members"), None);
        let pm = format!("/v1/projects/{p}/members/{victim_user}");
        case("PUT /v1/projects/{project}/members/{principal}", pm.clone(), Some(json!({ "role": "viewer" })));
        case("DELETE /v1/projects/{project}/members/{principal}", pm, None);
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
        if PUBLIC.contains(&route.as_str()) || SELF.contains(&route.as_str()) {
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
            // Only people accept invitations (by secret token); the intruder is a service account.
            let expected =
                if route.contains("invitations/accept") { StatusCode::FORBIDDEN } else { StatusCode::NOT_FOUND };
            assert_eq!(status, expected, "{route} at {path} answered {status}: {answer}");
            // Nothing of the victim's beyond what the intruder itself sent.
            let text = answer.to_string();
            for secret in [
                "secret-web",
                "secret-prod",
                "secret-pool",
                "secret-token",
                "secret-person",
                "secret-robot",
                "secret-invitee",
                "secret-personal",
                &project,
                &cluster,
                &pool,
                &op,
                &victim_user,
                &account,
            ] {
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
    // The caller's own account and tokens only.
    let (_, me) = t.get("/v1/me", &intruder.token).await;
    assert_eq!(me["organization"], intruder.org.as_str());
    let (intruder_user, intruder_session) = t.member(&intruder, "intruder@intruder.test", "owner").await;
    let (_, mine) = t.get("/v1/me/tokens", &intruder_session).await;
    assert_eq!(mine["items"].as_array().unwrap().len(), 0, "{mine}");
    let (status, made) = t.post("/v1/me/tokens", &intruder_session, json!({ "name": "mine" })).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(made["user"], intruder_user.as_str());
    let (_, me) = t.get("/v1/me", &intruder_session).await;
    assert_eq!(me["memberships"].as_array().unwrap().len(), 1, "{me}");

    // Nothing of the victim's changed.
    let (status, view) = t.get(&format!("/v1/projects/{project}/clusters/{cluster}"), &victim.token).await;
    assert_eq!(status, StatusCode::OK);
    assert!(view["labels"].as_object().unwrap().is_empty());
    assert!(view["deletion_requested_at"].is_null());
    let (status, token_view) = t.get(&format!("/v1/orgs/{org}/tokens/{token}"), &victim.token).await;
    assert_eq!(status, StatusCode::OK);
    assert!(token_view["revoked_at"].is_null());
    assert_eq!(t.count("projects").await, 1);
    assert_eq!(t.count("service_accounts WHERE name = 'secret-robot'").await, 1);
    assert_eq!(t.count("trust_policies").await, 1);
    assert_eq!(t.count("invitations WHERE revoked_at IS NULL").await, 1);
    assert_eq!(t.count("memberships WHERE role = 'admin'").await, 1);
    assert_eq!(t.count("project_members WHERE role = 'developer'").await, 1);
    assert_eq!(t.count("org_domains").await, 1);
    assert_eq!(t.count("org_credential_policies").await, 0);
}
