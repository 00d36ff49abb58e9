//! The security suite: each test performs an attack through a public
//! surface and shows it fails (SECURITY.md maps them to the OWASP API
//! Security Top 10). Holes of IAM and single sign-on have their own files
//! (`security_iam.rs`, `security_sso.rs`).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use moke_api::model::{
    DeployHookCreated, ExecCredential, KubeconfigView, MemberView, Page, ProjectView, QuotasView, ServiceAccountView,
    SessionTokens, SessionsEnded, SignupResponse, TokenCreated, TrustPolicyView, WebhookEndpointCreated,
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::common::{Client, OidcProvider, SmtpServer, TestApp, eventually, unique};
use crate::kubeconfig::{Kubectl, agent, serving_cluster, until};

/// A personal token of an owner of `owner`'s organization, limited to `project`, to reading, and to ten minutes.
async fn narrowed_token(t: &TestApp, owner: &Client<'_>, project: &str) -> String {
    let tenant = crate::common::Tenant { org: owner.org.clone(), token: owner.token.clone() };
    let (_, session) = t.member(&tenant, &format!("narrow-{}@acme.test", unique()), "owner").await;
    let body = json!({ "name": "narrow", "project": project, "scopes": ["read"], "expires_in_seconds": 600 });
    personal_token(&owner.with_token(&session), body).await.token
}

/// Creates a personal token as `caller` (201).
async fn personal_token(caller: &Client<'_>, body: Value) -> TokenCreated {
    caller.post("/v1/me/tokens", body).await.expect(StatusCode::CREATED)
}

/// A JSON answer of the `moke-server` under test, read as the view it promises.
#[track_caller]
fn view<T: serde::de::DeserializeOwned>(answer: Value) -> T {
    serde_json::from_value(answer.clone())
        .unwrap_or_else(|e| panic!("not a {} ({e}): {answer}", std::any::type_name::<T>()))
}

/// Whether an operation of the OpenAPI document creates or widens a
/// credential: it takes a role, scopes or claims, or answers with a secret
/// (a token, a signing secret, a kubeconfig, client certificates).
fn confers_credentials(spec: &Value, method: &str, operation: &Value) -> bool {
    let schema_of = |reference: &Value| -> Value {
        match reference["$ref"].as_str().and_then(|r| r.rsplit('/').next()) {
            Some(name) => spec["components"]["schemas"][name].clone(),
            None => reference.clone(),
        }
    };
    // The property names of a schema, through `$ref` and `allOf` (flattened structs).
    fn names(spec: &Value, schema: &Value, out: &mut Vec<String>) {
        let resolved = match schema["$ref"].as_str().and_then(|r| r.rsplit('/').next()) {
            Some(name) => spec["components"]["schemas"][name].clone(),
            None => schema.clone(),
        };
        out.extend(resolved["properties"].as_object().into_iter().flat_map(|p| p.keys().cloned()));
        for part in resolved["allOf"].as_array().into_iter().flatten() {
            names(spec, part, out);
        }
    }
    let properties = |schema: &Value| -> Vec<String> {
        let mut out = Vec::new();
        names(spec, schema, &mut out);
        out
    };
    let request = schema_of(&operation["requestBody"]["content"]["application/json"]["schema"]);
    let grants =
        properties(&request).iter().any(|p| ["role", "default_role", "scopes", "claims"].contains(&p.as_str()));
    let mut secret = false;
    for (status, response) in operation["responses"].as_object().into_iter().flatten() {
        if !status.starts_with('2') {
            continue;
        }
        let reference = &response["content"]["application/json"]["schema"];
        let name = reference["$ref"].as_str().unwrap_or_default();
        let fields = properties(&schema_of(reference));
        secret |= name.ends_with("/ExecCredential")
            || fields.iter().any(|f| {
                ["token", "secret", "access_token", "refresh_token", "kubeconfig", "link_token"].contains(&f.as_str())
            });
    }
    // Reads only count when they hand out a secret (a kubeconfig).
    secret || (method != "get" && grants)
}

/// Every operation that creates or widens a credential, walked with a
/// narrowed credential (one project, reading only, ten minutes): none
/// confers more than it. A new such operation without a case here fails.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn no_route_lets_a_narrowed_credential_confer_more_than_it_has(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let idp = OidcProvider::start().await;
    let t = TestApp::start_with(options, connect, |c| c.auth.allow_insecure_issuers = true).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let cluster = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await.0.id.to_string();
    owner.create_deployment(&project, &cluster, "app", json!({ "image": "registry.example/app:1" })).await;
    let account = owner.create_service_account("robot", "viewer").await.id.to_string();
    let (person, _) = t.member(&acme, "person@acme.test", "viewer").await;
    let hook: DeployHookCreated = owner
        .post(
            &format!("/v1/projects/{project}/hooks"),
            json!({ "name": "ci", "target": { "cluster": cluster, "deployment": "app" } }),
        )
        .await
        .expect(StatusCode::CREATED);
    let hook = hook.hook.id.to_string();
    let narrow = owner.with_token(&narrowed_token(&t, &owner, &project).await);
    let org = &acme.org;
    let cp = format!("/v1/projects/{project}/clusters/{cluster}");
    let endpoint: WebhookEndpointCreated = owner
        .post(
            &format!("/v1/orgs/{org}/webhooks"),
            json!({ "url": "https://hooks.example.com/x", "event_types": ["*"] }),
        )
        .await
        .expect(StatusCode::CREATED);
    let endpoint = endpoint.endpoint.id.to_string();

    // (operation id, method, path, body); each must be refused.
    let refused: Vec<(&str, Method, String, Value)> = vec![
        ("personal_token_create", Method::POST, "/v1/me/tokens".into(), json!({ "name": "wider" })),
        ("token_create", Method::POST, format!("/v1/orgs/{org}/tokens"), json!({ "name": "x", "role": "viewer" })),
        (
            "service_account_create",
            Method::POST,
            format!("/v1/orgs/{org}/service-accounts"),
            json!({ "name": "x", "role": "viewer" }),
        ),
        (
            "service_account_token_create",
            Method::POST,
            format!("/v1/orgs/{org}/service-accounts/{account}/tokens"),
            json!({ "name": "x" }),
        ),
        (
            "trust_policy_create",
            Method::POST,
            format!("/v1/orgs/{org}/service-accounts/{account}/trust-policies"),
            json!({ "issuer": idp.issuer, "audience": "moke", "claims": { "repository": "acme/web" } }),
        ),
        (
            "invitation_create",
            Method::POST,
            format!("/v1/orgs/{org}/invitations"),
            json!({ "email": "new@acme.test", "role": "viewer" }),
        ),
        ("member_update", Method::PATCH, format!("/v1/orgs/{org}/members/{person}"), json!({ "role": "admin" })),
        (
            "project_member_update",
            Method::PUT,
            format!("/v1/projects/{project}/members/{person}"),
            json!({ "role": "admin" }),
        ),
        (
            "sso_config_update",
            Method::PUT,
            format!("/v1/orgs/{org}/sso"),
            json!({ "issuer": idp.issuer, "client_id": "moke-sso", "client_secret": "s", "allowed_domains": [],
                    "default_role": "viewer" }),
        ),
        (
            "deploy_hook_create",
            Method::POST,
            format!("/v1/projects/{project}/hooks"),
            json!({ "name": "x", "target": { "cluster": cluster, "deployment": "app" } }),
        ),
        (
            "deploy_hook_secret_rotate",
            Method::POST,
            format!("/v1/projects/{project}/hooks/{hook}/rotate-secret"),
            json!({}),
        ),
        (
            "webhook_endpoint_create",
            Method::POST,
            format!("/v1/orgs/{org}/webhooks"),
            json!({ "url": "https://hooks.example.com/x", "event_types": ["*"] }),
        ),
        (
            "webhook_endpoint_secret_rotate",
            Method::POST,
            format!("/v1/orgs/{org}/webhooks/{endpoint}/rotate-secret"),
            json!({}),
        ),
        ("cluster_kubeconfig_view", Method::GET, format!("{cp}/kubeconfig?expiry_seconds=86400"), Value::Null),
        ("invitation_accept", Method::POST, "/v1/invitations/accept".into(), json!({ "token": "x" })),
        ("sso_link_confirm", Method::POST, "/v1/me/sso-links/confirm".into(), json!({ "token": "x" })),
        // Approving a device mints it a personal token: a person's session only.
        (
            "device_authorization_confirm",
            Method::POST,
            "/v1/device/confirm".into(),
            json!({ "user_code": "BCDF-GHJK" }),
        ),
    ];
    // Allowed, and bounded: what they give lives no longer than the narrowed token.
    let bounded = ["cluster_credentials_create"];
    // Not reachable with a credential, and why.
    let exempt = [
        ("account_create", "no caller: asks for an account by e-mail"),
        ("account_confirm", "the mailed token is the credential; the account is new"),
        ("session_create", "signing in with a password is the root of a person's authority"),
        ("session_refresh", "renews the same session, in its organization (an SSO one never leaves it)"),
        ("sso_login_finish", "the identity provider's answer is the credential; acts in its organization only"),
        ("sso_link_mail_confirm", "the mailed token is the credential; acts in the provider's organization only"),
        ("token_exchange", "bounded by the trust policy, which was bounded by its creator"),
        (
            "device_token_create",
            "the device code is the credential; the token is the approving session's personal token, \
             and only a session approves (device_authorization_confirm)",
        ),
    ];

    let spec = serde_json::to_value(moke_api::http::openapi()).unwrap();
    let mut conferring = Vec::new();
    for item in spec["paths"].as_object().unwrap().values() {
        for (method, operation) in item.as_object().unwrap() {
            if confers_credentials(&spec, method, operation) {
                conferring.push(operation["operationId"].as_str().unwrap().to_string());
            }
        }
    }
    for id in &conferring {
        let known = refused.iter().any(|(r, ..)| r == id)
            || bounded.contains(&id.as_str())
            || exempt.iter().any(|(e, _)| e == id);
        assert!(known, "{id} creates or widens a credential and has no narrowed-credential case: add one");
    }
    assert!(conferring.len() >= 15, "the classifier found {conferring:?}");

    for (id, method, path, body) in refused {
        let answer = narrow.call::<Value>(method, &path, (!body.is_null()).then_some(&body)).await;
        let status = answer.status;
        let problem = answer.about(format!("{id} with a narrowed credential")).refused(status);
        assert!(
            matches!(status, StatusCode::FORBIDDEN | StatusCode::NOT_FOUND)
                || (status == StatusCode::BAD_REQUEST
                    && problem.errors.first().map(|e| e.code.as_str()) == Some("exceeds_credential")),
            "{id} with a narrowed credential answered {status}: {problem:?}"
        );
    }
    assert_eq!(t.count("api_tokens WHERE name IN ('wider', 'x')").await, 0);
    assert_eq!(t.count("service_accounts WHERE name = 'x'").await, 0);
    assert_eq!(t.count("trust_policies").await, 0);
    assert_eq!(t.count("invitations").await, 0);

    // A wide credential that expires: nothing it makes lasts longer than it.
    let (_, wide_session) = t.member(&acme, "wide@acme.test", "owner").await;
    let wide_session = owner.with_token(&wide_session);
    let expiring = personal_token(&wide_session, json!({ "name": "expiring", "expires_in_seconds": 600 })).await;
    let expiring = owner.with_token(&expiring.token);
    let lasting: Vec<(&str, Method, String, Value)> = vec![
        ("personal_token_create", Method::POST, "/v1/me/tokens".into(), json!({ "name": "forever" })),
        (
            "service_account_token_create",
            Method::POST,
            format!("/v1/orgs/{org}/service-accounts/{account}/tokens"),
            json!({ "name": "forever" }),
        ),
        (
            "service_account_create",
            Method::POST,
            format!("/v1/orgs/{org}/service-accounts"),
            json!({ "name": "lasting", "role": "viewer" }),
        ),
        (
            "invitation_create",
            Method::POST,
            format!("/v1/orgs/{org}/invitations"),
            json!({ "email": "new@acme.test", "role": "viewer" }),
        ),
        ("member_update", Method::PATCH, format!("/v1/orgs/{org}/members/{person}"), json!({ "role": "member" })),
        (
            "project_member_update",
            Method::PUT,
            format!("/v1/projects/{project}/members/{person}"),
            json!({ "role": "developer" }),
        ),
        (
            "sso_config_update",
            Method::PUT,
            format!("/v1/orgs/{org}/sso"),
            json!({ "issuer": idp.issuer, "client_id": "moke-sso", "client_secret": "s", "allowed_domains": [],
                    "default_role": "viewer" }),
        ),
        (
            "deploy_hook_create",
            Method::POST,
            format!("/v1/projects/{project}/hooks"),
            json!({ "name": "lasting", "target": { "cluster": cluster, "deployment": "app" } }),
        ),
        (
            "deploy_hook_secret_rotate",
            Method::POST,
            format!("/v1/projects/{project}/hooks/{hook}/rotate-secret"),
            json!({}),
        ),
        (
            "webhook_endpoint_create",
            Method::POST,
            format!("/v1/orgs/{org}/webhooks"),
            json!({ "url": "https://hooks.example.com/x", "event_types": ["*"] }),
        ),
        (
            "webhook_endpoint_secret_rotate",
            Method::POST,
            format!("/v1/orgs/{org}/webhooks/{endpoint}/rotate-secret"),
            json!({}),
        ),
        (
            "webhook_endpoint_update",
            Method::PATCH,
            format!("/v1/orgs/{org}/webhooks/{endpoint}"),
            json!({ "url": "https://hooks.example.com/elsewhere" }),
        ),
    ];
    for (id, method, path, body) in lasting {
        expiring
            .call::<Value>(method, &path, Some(&body))
            .await
            .about(id)
            .refused_with(StatusCode::FORBIDDEN, "exceeds_credential");
    }
    // A credential limited to managing credentials may not make a hook,
    // whose secret deploys (manage_resources).
    let keeper =
        personal_token(&wide_session, json!({ "name": "keeper", "scopes": ["read", "manage_credentials"] })).await;
    let body = json!({ "name": "deployer", "target": { "cluster": cluster, "deployment": "app" } });
    owner
        .with_token(&keeper.token)
        .post::<DeployHookCreated>(&format!("/v1/projects/{project}/hooks"), body)
        .await
        .refused_with(StatusCode::FORBIDDEN, "exceeds_credential");
    // A trust policy it makes ends with it.
    let policy: TrustPolicyView = expiring
        .post(
            &format!("/v1/orgs/{org}/service-accounts/{account}/trust-policies"),
            json!({ "issuer": "https://ci.example", "audience": "moke", "claims": { "repository": "acme/web" } }),
        )
        .await
        .expect(StatusCode::CREATED);
    assert!(policy.expires_at.is_some(), "{policy:?}");

    // Exec credentials end with the credential that asked for them (ten minutes, not an hour).
    let narrow_expires = chrono::Utc::now() + chrono::Duration::seconds(600);
    let credential: ExecCredential = narrow.post(&format!("{cp}/credentials"), json!({})).await.expect(StatusCode::OK);
    let expires = credential.status.expiration_timestamp;
    assert!(expires <= narrow_expires + chrono::Duration::seconds(1), "{expires} outlives {narrow_expires}");
}

/// Removing or demoting a member, or revoking a service account's token,
/// ends the principal's kubectl access within seconds; others keep theirs.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn removed_and_demoted_principals_lose_cluster_access(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let region = agent(&t);
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let cluster = serving_cluster(&t, &region, &acme, &project, "prod").await;
    let kubectl = Kubectl::new();
    let kubeconfig = async |token: &str, name: &str| {
        let view: KubeconfigView =
            owner.with_token(token).get(&format!("{cluster}/kubeconfig")).await.expect(StatusCode::OK);
        // Certificates live a day unless asked otherwise.
        let expires = view.expires_at.unwrap_or_else(|| panic!("no expiry: {view:?}"));
        assert!(expires <= chrono::Utc::now() + chrono::Duration::seconds(86_400 + 60), "{expires}");
        kubectl.write(name, &view.kubeconfig)
    };
    let works = async |file: &std::path::Path| kubectl.run(file, &["get", "nodes", "-o", "name"]).await.0;

    let (leaver, leaver_token) = t.member(&acme, "leaver@acme.test", "admin").await;
    let (demoted, demoted_token) = t.member(&acme, "demoted@acme.test", "admin").await;
    let (_, stayer_token) = t.member(&acme, "stayer@acme.test", "admin").await;
    let account = owner.create_service_account("ci", "admin").await.id.to_string();
    let sat = owner.create_account_token(&account, "ci", json!({})).await;
    let files = [
        kubeconfig(&leaver_token, "leaver.yaml").await,
        kubeconfig(&demoted_token, "demoted.yaml").await,
        kubeconfig(&sat.token, "robot.yaml").await,
        kubeconfig(&stayer_token, "stayer.yaml").await,
    ];
    for file in &files {
        assert!(works(file).await, "{file:?} works before");
    }

    let removed = Instant::now();
    owner.delete::<()>(&owner.org_path(&format!("/members/{leaver}"))).await.expect(StatusCode::NO_CONTENT);
    owner
        .patch::<MemberView>(&owner.org_path(&format!("/members/{demoted}")), json!({ "role": "viewer" }))
        .await
        .expect(StatusCode::OK);
    owner.delete::<()>(&owner.org_path(&format!("/tokens/{}", sat.view.id))).await.expect(StatusCode::NO_CONTENT);
    for file in &files[..3] {
        until(&t, &region, &format!("{file:?} refused"), async || !works(file).await).await;
    }
    assert!(removed.elapsed() < Duration::from_secs(15), "took {:?}", removed.elapsed());
    println!("kubectl refused the removed, demoted and revoked principals {:?} after the changes", removed.elapsed());
    let (ok, _, err) = kubectl.run(&files[0], &["get", "nodes"]).await;
    assert!(!ok, "{err}");
    assert!(works(&files[3]).await, "others keep their access");
    // The demoted member's new kubeconfig carries the new role and works.
    let fresh = kubeconfig(&demoted_token, "demoted-again.yaml").await;
    assert!(works(&fresh).await);
    owner
        .with_token(&demoted_token)
        .get::<KubeconfigView>(&format!("{cluster}/kubeconfig?access=admin"))
        .await
        .refused(StatusCode::FORBIDDEN);
}

/// A member moved to billing (fewer cluster rights, though billing is not
/// "below" member), a person who ends their other sessions, a person who
/// resets their password, and a project admin whose project role is
/// lowered all lose the cluster access they had.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn billing_session_ends_and_resets_end_cluster_access(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let region = agent(&t);
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let cluster = serving_cluster(&t, &region, &acme, &project, "prod").await;
    let kubectl = Kubectl::new();
    let kubeconfig = async |token: &str, name: &str| {
        let view: KubeconfigView =
            owner.with_token(token).get(&format!("{cluster}/kubeconfig")).await.expect(StatusCode::OK);
        kubectl.write(name, &view.kubeconfig)
    };
    let works = async |file: &std::path::Path| kubectl.run(file, &["get", "nodes", "-o", "name"]).await.0;

    let (editor, editor_token) = t.member(&acme, "editor@acme.test", "member").await;
    let (_, stolen_session) = t.member(&acme, "traveller@acme.test", "admin").await;
    let own_session = t.session("traveller@acme.test", crate::common::MEMBER_PASSWORD, Some(&acme.org)).await;
    let (_, resetter_token) = t.member(&acme, "resetter@acme.test", "member").await;
    // A viewer who administers the project's clusters through a project role.
    let (project_admin, project_admin_token) = t.member(&acme, "lead@acme.test", "viewer").await;
    owner.grant_project_role(&project, &project_admin, "admin").await;
    let files = [
        kubeconfig(&editor_token, "editor.yaml").await,
        kubeconfig(&stolen_session, "stolen.yaml").await,
        kubeconfig(&resetter_token, "resetter.yaml").await,
        kubeconfig(&project_admin_token, "lead.yaml").await,
    ];
    for file in &files {
        assert!(works(file).await, "{file:?} works before");
    }
    owner
        .patch::<MemberView>(&owner.org_path(&format!("/members/{editor}")), json!({ "role": "billing" }))
        .await
        .expect(StatusCode::OK);
    let ended: SessionsEnded =
        owner.with_token(&own_session.access_token).delete("/v1/me/sessions").await.expect(StatusCode::OK);
    assert_eq!(ended.ended, 1, "{ended:?}");
    let anonymous = t.anonymous();
    anonymous
        .post::<()>("/v1/auth/password-reset", json!({ "email": "resetter@acme.test" }))
        .await
        .expect(StatusCode::ACCEPTED);
    let reset = t.mailed_token("password_reset", "resetter@acme.test").await;
    anonymous
        .post::<()>("/v1/auth/password-reset/confirm", json!({ "token": reset, "password": "a brand new long secret" }))
        .await
        .about("a reset works in an organization with clusters")
        .expect(StatusCode::NO_CONTENT);
    owner.grant_project_role(&project, &project_admin, "viewer").await;
    for file in &files {
        until(&t, &region, &format!("{file:?} refused"), async || !works(file).await).await;
    }
}

/// Region reports reach only their own region's resources, and only a
/// plain https endpoint ever reaches a kubeconfig, which is serialized.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn region_reports_cannot_inject_into_other_regions_or_kubeconfigs(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    use moke_api::app::region::observations::ResourceObservation;
    use moke_proto::region::{self as pb, status::Message as StatusMessage};
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, _) = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    let (id, cluster) = (cluster.id.uuid(), cluster.id.to_string());
    let report = |region: &str, endpoint: &str| ResourceObservation {
        region: region.into(),
        kind: moke_api::app::region::command::ResourceKind::Cluster,
        resource_id: id,
        observed_generation: 1,
        phase: "running".into(),
        conditions: vec![],
        gone: false,
        endpoint: Some(endpoint.into()),
        workload: None,
        nodes: None,
        snapshots: None,
        unmanaged: None,
        namespaces: None,
    };
    let kubeconfig = format!("/v1/projects/{project}/clusters/{cluster}/kubeconfig");
    // A hostile endpoint from the cluster's own region, and a clean one from another region.
    let hostile = "https://10.0.0.1:6443\nusers:\n- name: evil\n  user:\n    token: stolen";
    t.app.record_observation(report("eu-central-1", hostile)).await.unwrap();
    t.app.record_observation(report("eu-central-1", "http://plain.example:80")).await.unwrap();
    t.app.record_observation(report("us-east-1", "https://127.0.0.1:6443")).await.unwrap();
    owner.get::<KubeconfigView>(&kubeconfig).await.refused_with(StatusCode::CONFLICT, "not_ready");
    // The region's own, plain endpoint: a kubeconfig of one cluster and one user.
    t.app.record_observation(report("eu-central-1", "https://127.0.0.1:6443")).await.unwrap();
    let view: KubeconfigView = owner.get(&kubeconfig).await.expect(StatusCode::OK);
    let text = view.kubeconfig.as_str();
    assert!(!text.contains("evil") && !text.contains("stolen"), "{text}");
    let parsed: Value = serde_norway::from_str(text).unwrap();
    assert_eq!(parsed["clusters"][0]["cluster"]["server"], "https://127.0.0.1:6443");
    let counts = ["clusters", "users", "contexts"].map(|k| parsed[k].as_array().unwrap().len());
    assert_eq!(counts, [1, 1, 1], "{text}");

    // A serving-certificate request for this cluster from another region is ignored.
    let csr = |region: &str| pb::Status {
        region: region.into(),
        message: Some(StatusMessage::ServingCsr(pb::ServingCertificateRequest {
            cluster_id: cluster.clone(),
            csr_pem: format!("-----BEGIN CERTIFICATE REQUEST-----\n{region}\n-----END CERTIFICATE REQUEST-----\n"),
        })),
    };
    t.app.apply_region_status(csr("us-east-1")).await.unwrap();
    let stored: Option<String> = sqlx::query_scalar("SELECT serving_csr FROM cluster_cas WHERE cluster_id = $1")
        .bind(id)
        .fetch_one(&t.pool)
        .await
        .unwrap();
    assert!(stored.is_none_or(|csr| !csr.contains("us-east-1")), "another region filed a CSR");
}

/// Tenant-created resources have quotas, enforced in the write's
/// transaction and shown in `quota_view`; invitation mail is limited per hour.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn what_tenants_create_is_limited(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let org: moke_api::ids::OrgId = acme.org.parse().unwrap();
    let limits = moke_api::config::QuotaDefaults {
        max_webhook_endpoints: 1,
        max_pending_invitations: 5,
        max_invitations_per_hour: 2,
        max_service_accounts: 2,
        max_api_tokens: 2,
        max_trust_policies: 1,
        max_deploy_hooks: 1,
        max_namespaces_per_cluster: 2,
        ..t.app.config().quotas
    };
    t.app.set_quota_overrides(org, limits).await.unwrap();
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let cluster = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await.0.id.to_string();
    owner.create_deployment(&project, &cluster, "app", json!({ "image": "registry.example/app:1" })).await;
    let o = &acme.org;
    let exceeded = async |path: String, bodies: Vec<Value>, quota: &str| {
        let mut last = None;
        for body in bodies {
            last = Some(owner.post::<Value>(&path, body).await);
        }
        let problem = last.expect("a request").refused_with(StatusCode::CONFLICT, "quota_exceeded");
        assert!(problem.detail.contains(quota), "{problem:?}");
    };
    // The bootstrap owner is one service account with one token already.
    exceeded(
        format!("/v1/orgs/{o}/service-accounts"),
        vec![json!({ "name": "a", "role": "viewer" }), json!({ "name": "b", "role": "viewer" })],
        "service_accounts",
    )
    .await;
    let accounts: Page<ServiceAccountView> =
        owner.get(&format!("/v1/orgs/{o}/service-accounts")).await.expect(StatusCode::OK);
    let account = accounts.items.last().expect("a service account").id.to_string();
    exceeded(
        format!("/v1/orgs/{o}/service-accounts/{account}/tokens"),
        vec![json!({ "name": "t1" }), json!({ "name": "t2" })],
        "api_tokens",
    )
    .await;
    let policy = json!({ "issuer": "https://ci.example", "audience": "a", "claims": { "repository": "r" } });
    exceeded(
        format!("/v1/orgs/{o}/service-accounts/{account}/trust-policies"),
        vec![policy.clone(), policy],
        "trust_policies",
    )
    .await;
    let endpoint = json!({ "url": "https://hooks.example.com/x", "event_types": ["*"] });
    exceeded(format!("/v1/orgs/{o}/webhooks"), vec![endpoint.clone(), endpoint], "webhook_endpoints").await;
    let hook = |n: &str| json!({ "name": n, "target": { "cluster": cluster, "deployment": "app" } });
    exceeded(format!("/v1/projects/{project}/hooks"), vec![hook("h1"), hook("h2")], "deploy_hooks").await;
    exceeded(
        format!("/v1/projects/{project}/clusters/{cluster}/namespaces"),
        vec![json!({ "name": "one" }), json!({ "name": "two" })],
        "namespaces_per_cluster",
    )
    .await;
    let invite = |n: u32| json!({ "email": format!("i{n}@example.com"), "role": "viewer" });
    exceeded(format!("/v1/orgs/{o}/invitations"), vec![invite(1), invite(2), invite(3)], "invitations_per_hour").await;

    let quotas: QuotasView = owner.get(&format!("/v1/orgs/{o}/quotas")).await.expect(StatusCode::OK);
    for (quota, item, limit, usage) in [
        ("webhook_endpoints", &quotas.webhook_endpoints, 1, 1),
        ("service_accounts", &quotas.service_accounts, 2, 2),
        ("api_tokens", &quotas.api_tokens, 2, 2),
        ("trust_policies", &quotas.trust_policies, 1, 1),
        ("deploy_hooks", &quotas.deploy_hooks, 1, 1),
        ("namespaces_per_cluster", &quotas.namespaces_per_cluster, 2, 2),
        ("invitations_per_hour", &quotas.invitations_per_hour, 2, 2),
        ("pending_invitations", &quotas.pending_invitations, 5, 2),
    ] {
        assert_eq!((item.limit, item.usage), (limit, usage), "{quota}: {quotas:?}");
    }
}

/// What the sign-in, reset, invitation, token, hook, webhook and SSO flows
/// show their callers once never reaches the gateway's logs (at debug) or
/// any table; mail goes out through a real SMTP server and keeps no body.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn secrets_never_reach_the_logs_or_the_database(_options: PgPoolOptions, connect: PgConnectOptions) {
    let smtp = SmtpServer::start().await;
    let idp = OidcProvider::start().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let database = format!(
        "postgres://{}@{}:{}/{}",
        connect.get_username(),
        connect.get_host(),
        connect.get_port(),
        connect.get_database().unwrap_or("postgres")
    );
    let mut child = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_moke-server"))
            .args(["dev", "--no-regions", "--org", "secrets", "--listen", &format!("127.0.0.1:{port}")])
            .arg("--database-url")
            .arg(&database)
            .env("MOKE_TELEMETRY__LOG_FILTER", "debug,h2=info,hyper=info,hyper_util=info,rustls=info,tower=info")
            .env("MOKE_MAIL__SENDER", "smtp")
            .env("MOKE_MAIL__SMTP_URL", &smtp.url)
            .env("MOKE_AUTH__ALLOW_INSECURE_ISSUERS", "true")
            .env("MOKE_OUTBOUND__ALLOW_PRIVATE_TARGETS", "[\"127.0.0.1/32\"]")
            .env("MOKE_RATE_LIMITS__LOGIN_BURST", "100")
            .env("MOKE_VAULT__KV_PATH", format!("moke-secrets-{}", unique()))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let child = &mut child.0;
    let log = Arc::new(Mutex::new(String::new()));
    for stream in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let log = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let mut log = log.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
    }
    let base = format!("http://127.0.0.1:{port}");
    moke_api::install_crypto_provider();
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while client.get(format!("{base}/readyz")).send().await.ok().map(|r| r.status()) != Some(StatusCode::OK) {
        assert!(Instant::now() < deadline, "server did not come up: {}", log.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // `dev` prints its bootstrap owner token to the terminal by design: the
    // one secret that may appear, and it is not scanned for.
    let (org, owner) = {
        let text = log.lock().unwrap().clone();
        let org = text.lines().find_map(|l| l.trim().strip_prefix("organization:")).unwrap();
        let org = org.split('(').nth(1).unwrap().trim_end_matches(')').to_string();
        let owner = text.lines().find_map(|l| l.trim().strip_prefix("owner token:")).unwrap();
        (org, owner.split_whitespace().next().unwrap().to_string())
    };
    let call = async |method: Method, path: &str, token: Option<&str>, body: Value| -> Value {
        let mut request = client.request(method, format!("{base}{path}"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if !body.is_null() {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        assert!(status.is_success(), "{path}: {status} {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    };
    let mut secrets: Vec<String> = Vec::new();
    let password = "hidden orchard lantern 77";
    let new_password = "second hidden lantern 88";
    secrets.extend([password.to_string(), new_password.to_string(), "moke-sso-secret".to_string()]);

    // Sign-up through the mailed link, a reset, a sign-in and a refresh.
    call(
        Method::POST,
        "/v1/signup",
        None,
        json!({ "email": "ada@example.com", "password": password, "display_name": "Ada", "organization_name": "ada" }),
    )
    .await;
    let signup = smtp.token("ada@example.com", "signup/confirm").await;
    let made: SignupResponse =
        view(call(Method::POST, "/v1/signup/confirm", None, json!({ "token": signup, "password": password })).await);
    secrets.extend([signup, made.session.access_token, made.session.refresh_token]);
    call(Method::POST, "/v1/auth/password-reset", None, json!({ "email": "ada@example.com" })).await;
    let reset = smtp.token("ada@example.com", "reset-password").await;
    call(Method::POST, "/v1/auth/password-reset/confirm", None, json!({ "token": reset, "password": new_password }))
        .await;
    let session: SessionTokens = view(
        call(Method::POST, "/v1/auth/login", None, json!({ "email": "ada@example.com", "password": new_password }))
            .await,
    );
    let refreshed: SessionTokens =
        view(call(Method::POST, "/v1/auth/refresh", None, json!({ "refresh_token": session.refresh_token })).await);
    let access = refreshed.access_token.clone();
    secrets.extend([reset, session.access_token, session.refresh_token, access.clone(), refreshed.refresh_token]);
    let ada_org = refreshed.organization.to_string();

    // An invitation, tokens, a hook, a webhook endpoint, SSO.
    call(
        Method::POST,
        &format!("/v1/orgs/{ada_org}/invitations"),
        Some(&access),
        json!({ "email": "bob@example.com", "role": "viewer" }),
    )
    .await;
    secrets.push(smtp.token("bob@example.com", "invitations/accept").await);
    let pat: TokenCreated = view(call(Method::POST, "/v1/me/tokens", Some(&access), json!({ "name": "laptop" })).await);
    secrets.push(pat.token);
    let account: ServiceAccountView = view(
        call(
            Method::POST,
            &format!("/v1/orgs/{org}/service-accounts"),
            Some(&owner),
            json!({ "name": "ci", "role": "member" }),
        )
        .await,
    );
    let sat: TokenCreated = view(
        call(
            Method::POST,
            &format!("/v1/orgs/{org}/service-accounts/{}/tokens", account.id),
            Some(&owner),
            json!({ "name": "ci" }),
        )
        .await,
    );
    secrets.push(sat.token);
    let project: ProjectView =
        view(call(Method::POST, &format!("/v1/orgs/{org}/projects"), Some(&owner), json!({ "name": "web" })).await);
    let project = project.id;
    call(
        Method::POST,
        &format!("/v1/projects/{project}/clusters"),
        Some(&owner),
        json!({ "name": "prod", "spec": { "region": "eu-central-1" } }),
    )
    .await;
    call(
        Method::POST,
        &format!("/v1/projects/{project}/clusters/prod/namespaces/default/deployments"),
        Some(&owner),
        json!({ "name": "web", "spec": { "image": "registry.example/web:1" } }),
    )
    .await;
    let hook: DeployHookCreated = view(
        call(
            Method::POST,
            &format!("/v1/projects/{project}/hooks"),
            Some(&owner),
            json!({ "name": "ci", "target": { "cluster": "prod", "deployment": "web" } }),
        )
        .await,
    );
    secrets.push(hook.secret);
    let rotated: DeployHookCreated = view(
        call(
            Method::POST,
            &format!("/v1/projects/{project}/hooks/{}/rotate-secret", hook.hook.id),
            Some(&owner),
            json!({}),
        )
        .await,
    );
    secrets.push(rotated.secret);
    let endpoint: WebhookEndpointCreated = view(
        call(
            Method::POST,
            &format!("/v1/orgs/{org}/webhooks"),
            Some(&owner),
            json!({ "url": "https://hooks.example.com/x", "event_types": ["*"] }),
        )
        .await,
    );
    secrets.push(endpoint.secret);
    let request = client.put(format!("{base}/v1/orgs/{org}/sso")).bearer_auth(&owner).json(&json!({
        "issuer": idp.issuer, "client_id": "moke-sso", "client_secret": "moke-sso-secret", "allowed_domains": [], "default_role": "viewer" }));
    assert_eq!(request.send().await.unwrap().status(), StatusCode::OK);
    assert!(secrets.iter().all(|s| s.len() >= 12), "{secrets:?}");

    // Every mail went out; none keeps a body.
    let pool = sqlx::PgPool::connect(&database).await.unwrap();
    eventually(20, "every mail sent", async || {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM mail_outbox WHERE sent_at IS NULL")
            .fetch_one(&pool)
            .await
            .unwrap()
            == 0
    })
    .await;
    let kept: i64 =
        sqlx::query_scalar("SELECT count(*) FROM mail_outbox WHERE text_body IS NOT NULL OR text_body_enc IS NOT NULL")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(kept, 0, "a sent message keeps no body");
    assert!(smtp.messages().len() >= 3);

    // Stop the server (its last lines are in), then scan the logs and every table.
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait();
    let logs = log.lock().unwrap().clone();
    assert!(
        logs.contains("mail sent") || logs.contains("POST") || logs.lines().count() > 20,
        "the logs were captured: {logs}"
    );
    let tables: Vec<String> =
        sqlx::query_scalar("SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'")
            .fetch_all(&pool)
            .await
            .unwrap();
    let mut dump = String::new();
    for table in tables {
        let rows: Vec<String> = sqlx::query_scalar(&format!("SELECT row_to_json(t)::text FROM \"{table}\" t"))
            .fetch_all(&pool)
            .await
            .unwrap();
        dump.push_str(&rows.join("\n"));
    }
    for secret in &secrets {
        assert!(!logs.contains(secret.as_str()), "the logs hold a secret ({}…)", &secret[..8]);
        assert!(!dump.contains(secret.as_str()), "the database holds a secret ({}…)", &secret[..8]);
    }
    pool.close().await;
}

/// A child process that dies with the test, even a failing one.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Every HTML answer carries a strict CSP, no framing, nosniff and no
/// referrer; HSTS when the public URL is https. JSON answers are nosniff.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn html_answers_carry_security_headers(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, |c| c.http.public_url = "https://moke.example".into()).await;
    for path in ["/docs", "/graphql"] {
        let response = t.client.get(format!("{}{path}", t.base)).send().await.unwrap();
        let header =
            |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
        assert!(header("content-type").starts_with("text/html"), "{path}");
        let csp = header("content-security-policy");
        assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
        assert!(
            !csp.contains("'unsafe-inline'")
                || !csp.split(';').any(|d| d.trim().starts_with("script-src") && d.contains("unsafe-inline")),
            "{csp}"
        );
        assert_eq!(header("x-frame-options"), "DENY");
        assert_eq!(header("x-content-type-options"), "nosniff");
        assert_eq!(header("referrer-policy"), "no-referrer");
        assert!(header("strict-transport-security").starts_with("max-age="), "{path}");
    }
    let response = t.client.get(format!("{}/v1/regions", t.base)).send().await.unwrap();
    assert_eq!(response.headers()["x-content-type-options"], "nosniff");
    assert_eq!(response.headers()["cache-control"], "no-store");
    // A client's request id reaches logs and the audit log only when short and plain.
    for (sent, kept) in [("abc-123:x.y_z", true), (&*"x".repeat(200), false), ("evil\u{7f}id", false)] {
        let response = t.client.get(format!("{}/v1/regions", t.base)).header("x-request-id", sent).send().await;
        let Ok(response) = response else { continue };
        let echoed = response.headers()["x-request-id"].to_str().unwrap().to_string();
        assert_eq!(echoed == sent, kept, "{sent:?} -> {echoed}");
    }
}

/// Readiness says whether, never why: database errors go to the log only.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn readiness_tells_strangers_nothing(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    assert_eq!(t.client.get(format!("{}/readyz", t.base)).send().await.unwrap().status(), StatusCode::OK);
    sqlx::query("DELETE FROM _sqlx_migrations WHERE version = (SELECT max(version) FROM _sqlx_migrations)")
        .execute(&t.pool)
        .await
        .unwrap();
    let response = t.client.get(format!("{}/readyz", t.base)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.text().await.unwrap(), "not ready");
}

/// gRPC accepts no larger message than a REST body.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn grpc_messages_are_bounded_like_rest_bodies(options: PgPoolOptions, connect: PgConnectOptions) {
    use moke_proto::v1::CreateProjectRequest;
    use moke_proto::v1::project_service_client::ProjectServiceClient;
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let channel = tonic::transport::Channel::from_shared(t.base.clone()).unwrap().connect().await.unwrap();
    let mut client = ProjectServiceClient::new(channel).max_encoding_message_size(8 << 20);
    let big = "x".repeat(t.app.config().http.max_body_bytes + 1024);
    let mut request =
        tonic::Request::new(CreateProjectRequest { org: acme.org.clone(), name: big, ..Default::default() });
    request.metadata_mut().insert("authorization", format!("Bearer {}", acme.token).parse().unwrap());
    let status = client.create_project(request).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::OutOfRange, "{status:?}");
}

type Incoming = futures::stream::SplitStream<
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
>;

/// The next text message of a socket, or None when it closed or stayed silent.
async fn next_text(incoming: &mut Incoming) -> Option<Value> {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), incoming.next()).await.ok()?? {
            Ok(Message::Text(text)) => return serde_json::from_str(&text).ok(),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => continue,
        }
    }
}

/// The GraphQL WebSocket checks the credential at every subscription and
/// while it streams, caps subscriptions per socket, and bounds messages.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn graphql_subscriptions_end_with_their_credential(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (_, op) = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    let op_id = op.id.to_string();
    let created = owner.create_token("ws", "viewer").await;
    let connect_socket = async |token: &str| {
        let mut request = format!("{}/graphql/ws", t.base.replace("http", "ws")).into_client_request().unwrap();
        request.headers_mut().insert("sec-websocket-protocol", "graphql-transport-ws".parse().unwrap());
        let (socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
        let (mut out, mut incoming) = socket.split();
        let init = json!({ "type": "connection_init", "payload": { "authorization": format!("Bearer {token}") } });
        out.send(Message::Text(init.to_string().into())).await.unwrap();
        let ack = incoming.next().await.unwrap().unwrap();
        assert!(ack.to_text().unwrap().contains("connection_ack"), "{ack:?}");
        (out, incoming)
    };
    let subscribe = |id: usize| {
        Message::Text(
            json!({ "id": id.to_string(), "type": "subscribe", "payload": {
                "query": "subscription($id: ID!) { operation(id: $id) { status } }", "variables": { "id": op_id } } })
            .to_string()
            .into(),
        )
    };

    // A revoked token ends the stream it had started.
    let (mut out, mut incoming) = connect_socket(&created.token).await;
    out.send(subscribe(1)).await.unwrap();
    let first = next_text(&mut incoming).await.unwrap();
    assert_eq!(first["payload"]["data"]["operation"]["status"], "PENDING", "{first}");
    owner.delete::<()>(&owner.org_path(&format!("/tokens/{}", created.view.id))).await.expect(StatusCode::NO_CONTENT);
    let ended = next_text(&mut incoming).await;
    let ends = |m: &Value| {
        m["type"] == "complete"
            || m["type"] == "error"
            || m["payload"]["errors"][0]["extensions"]["code"] == "unauthenticated"
    };
    assert!(ended.as_ref().is_none_or(ends), "{ended:?}");
    // Queries and mutations over the socket are refused: they belong on
    // HTTP, where every request authenticates and counts.
    out.send(Message::Text(
        json!({ "id": "m", "type": "subscribe", "payload": {
            "query": "mutation($org: ID!) { createToken(org: $org, input: { name: \"x\", role: \"admin\" }) { secret } }",
            "variables": { "org": acme.org } } })
        .to_string()
        .into(),
    ))
    .await
    .unwrap();
    let mut answers = Vec::new();
    while let Some(message) = next_text(&mut incoming).await {
        let done = message["id"] == "m" && matches!(message["type"].as_str(), Some("complete" | "error"));
        answers.push(message);
        if done {
            break;
        }
    }
    let about_m: Vec<&Value> = answers.iter().filter(|m| m["id"] == "m").collect();
    assert!(about_m.iter().any(|m| m.to_string().contains("only subscriptions run over the WebSocket")), "{answers:?}");
    assert!(
        !answers
            .iter()
            .any(|m| m.to_string().contains("secret\":\"whsec") || m["payload"]["data"]["createToken"].is_object())
    );
    // And no new subscription starts on that socket.
    out.send(subscribe(2)).await.unwrap();
    let refused = next_text(&mut incoming).await;
    let is_refusal = |m: &Value| m["type"] == "error" || m["payload"]["errors"][0]["extensions"]["code"].is_string();
    assert!(refused.as_ref().is_none_or(is_refusal), "{refused:?}");

    // Subscriptions per socket are capped.
    let (mut out, mut incoming) = connect_socket(&acme.token).await;
    let cap = moke_api::graphql::MAX_SUBSCRIPTIONS_PER_SOCKET;
    for id in 0..cap {
        out.send(subscribe(id)).await.unwrap();
        assert_eq!(next_text(&mut incoming).await.unwrap()["type"], "next");
    }
    out.send(subscribe(cap)).await.unwrap();
    let over = next_text(&mut incoming).await.unwrap();
    assert!(is_refusal(&over), "{over}");

    // An oversized message closes the socket.
    let huge = "x".repeat(moke_api::graphql::MAX_WS_MESSAGE_BYTES * 2);
    let _ = out.send(Message::Text(huge.into())).await;
    let mut closed = false;
    for _ in 0..50 {
        match tokio::time::timeout(Duration::from_secs(5), incoming.next()).await {
            Ok(None) | Ok(Some(Err(_))) | Ok(Some(Ok(Message::Close(_)))) | Err(_) => {
                closed = true;
                break;
            }
            Ok(Some(Ok(_))) => continue,
        }
    }
    assert!(closed, "the socket stayed open after an oversized message");
}
